"""Answer extraction: from a model's free text to an option label, yes/no or an open answer.

Extraction is a small grammar (written out with examples in ``docs/scoring.md``). It
reads a reply the way a careful person does and never looks at the gold answer: only
the item's *format* (answer type, option labels and texts, and for open items the
candidate answers listed in ``metadata["candidates"]``) and its question are used, so changing
the gold answer can never change what is read. The question serves one purpose: when it asks
which object stands in a relation ("which object is on the left?"), a clause naming an option
in another relation ("The laptop is on the right.") is dropped before reading
(:mod:`perspecta.score.relation`). Levels, most explicit first; the first level
that finds an answer decides:

1. ``<answer>…</answer>`` tags (after dropping ``<think>…</think>`` reasoning);
2. a JSON ``"answer"`` field (and ``"choice"``-like keys, which must agree with it; so must the
   reasoning beside it and beside ``<answer>`` tags: "…, so the correct choice is B" overrules it);
3. an explicit answer phrase: ``final answer``, ``answer:``, ``the answer is``, ``the
   correct option is``, ``I choose``;
4. ``\\boxed{…}``;
5. the answer position: a reply that *starts* with a label, option text (or its short form:
   "Clockwise." for "Clockwise (seen from above)") or yes/no, or whose last line is only the
   answer or a conclusion ("so C", "therefore, no");
6. bare option text: exactly one option (or, for open items, one candidate) named
   without negation in a sentence that asserts it (not a question, condition or hypothesis:
   "If it were facing the camera…" names no answer).

A level that finds two or more different answers, or a hedge ("A or B", "yes and no",
"not sure", "Maybe C", "about 3", "<answer>2?</answer>"), makes the reply ``unparsed``: counted
wrong, never guessed; so does an answer of the two implicit levels (5, 6) that the reply takes
back ("A. Actually, wait — B.", "so C… though perhaps A"), and an explicit one followed by a
second thought or a live alternative ("Answer: C. Wait, …", "However, D is also plausible").
A short reply that reads as nothing is read once more with its typos mended against the options'
words ("rigth", "clokwise"). Option letters
count only as standalone tokens in an answer position, so reasoning that mentions other
options ("Option A and option C do not match") never overrides an explicit answer.
"""

from __future__ import annotations

import functools
import json
import re
import string
from dataclasses import dataclass
from typing import Any

from perspecta.dataset.item import Item
from perspecta.score.relation import filter_relations

_WORDS = {"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
          "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10",
          "eleven": "11", "twelve": "12", "forty-five": "45", "ninety": "90",
          # counts in Spanish and German, the fall-back languages seen in replies
          "cero": "0", "uno": "1", "dos": "2", "tres": "3", "cuatro": "4", "cinco": "5", "seis": "6",
          "eins": "1", "zwei": "2", "drei": "3", "vier": "4", "fünf": "5", "sechs": "6"}
_ARTICLES = {"a", "an", "the"}
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
MAX_OPEN_WORDS = 6  # an explicit open answer longer than this is prose, not an answer
MAX_BARE_OPEN_WORDS = 3  # a whole reply naming no known candidate: a phrase ("fridge"), not a sentence

LEVELS = ("tag", "json", "phrase", "boxed", "position", "bare")


class _Ambiguous:
    """A span that commits to two or more answers, or explicitly declines to answer."""

    def __repr__(self) -> str:
        return "AMBIGUOUS"


AMBIGUOUS = _Ambiguous()
Reading = str | _Ambiguous | None  # an answer, AMBIGUOUS, or None = nothing here


@dataclass(frozen=True)
class Parse:
    """What extraction concluded: ``answer`` (None = unparsed) and the grammar rule that decided."""

    answer: str | None
    rule: str  # one of LEVELS, "ambiguous:<level>" or "none"


_COUNTER = re.compile(r"\b(?:counter|anti)[\s-]?clockwise\b")
# Turns said as fractions ("a quarter turn clockwise") are the degrees the options spell out.
_TURNS = ((re.compile(r"\b(?:a\s+)?three[\s-]quarters?(?:\s+of\s+a)?[\s-]turn\b"), " 270 degrees "),
          (re.compile(r"\b(?:a\s+)?quarter[\s-]turn\b"), " 90 degrees "),
          (re.compile(r"\b(?:a\s+)?half[\s-]turn\b"), " 180 degrees "))
# Direction words of the languages multilingual models fall back to (Spanish, German, Chinese), as
# the English word the options use; German "links"/"rechts" and a lone 左/右 only as a whole answer.
_FOREIGN = ((re.compile(r"gegen\s+den\s+uhrzeigersinn|(?:en\s+)?sentido\s+antihorario|\bantihorario\b|逆时针"),
             " counterclockwise "),
            (re.compile(r"\bim\s+uhrzeigersinn\b|(?:en\s+)?sentido\s+horario|\bhorario\b|顺时针"), " clockwise "),
            (re.compile(r"\b(?:a\s+la\s+)?izquierda\b|左(?:边|侧|面)"), " left "),
            (re.compile(r"\b(?:a\s+la\s+)?derecha\b|右(?:边|侧|面)"), " right "),
            (re.compile(r"\bdetr[aá]s\b|\batr[aá]s\b|后面|后方|背后"), " behind "),
            (re.compile(r"\bdelante\b|前面|前方"), " front "))
_FOREIGN_HINT = re.compile(r"turn|uhrzeigersinn|horario|izquierda|derecha|tr[aá]s|delante|[\u4e00-\u9fff]")
_FOREIGN_WHOLE = {"links": "left", "nach links": "left", "rechts": "right", "nach rechts": "right", "左": "left",
                  "右": "right", "hinten": "behind", "vorne": "front", "后": "behind", "前": "front",
                  "back": "behind", "at my back": "behind", "at your back": "behind",
                  **{f"{c}{u}": str(n) for n, c in enumerate("零一两三四五六七八九十") for u in ("", "个")}, "二": "2"}
_PUNCT = str.maketrans({c: " " for c in string.punctuation if c not in ".-"})


@functools.lru_cache(maxsize=1 << 16)  # option texts and short answers repeat across items
def normalise(text: str) -> str:
    """Lower case, no punctuation or articles, number words as digits, single spaces."""
    text = text.lower().replace("°", " degrees ").replace("’", "'").replace("~", " about ")
    if "-" in text or "–" in text or "—" in text:
        text = re.sub(r"(\d)\s*[–—-]\s*(?=\d)", r"\1 to ", text)  # "0–15 degrees" is "0 to 15 degrees"
    if _FOREIGN_HINT.search(text):
        for pattern, words in _TURNS + _FOREIGN:
            text = pattern.sub(words, text)
    text = re.sub(r"n't\b", " not", text)  # "doesn't need C" keeps its negation once apostrophes go
    text = re.sub(r"(\d)\s*\+", r"\1 or more", text)  # "3+" is a bound, not 3
    text = re.sub(r"\btowards\b", "toward", text)
    text = re.sub(r"\bfac(?:es|ing)\s+(?=toward|away)", "facing ", text)  # "It faces toward the camera"
    text = _COUNTER.sub("counterclockwise", text)  # one spelling, so "clockwise" is never read inside it
    text = re.sub(r"\bccw\b", "counterclockwise", re.sub(r"\bcw\b", "clockwise", text))
    text = re.sub(r"\b(left|right)wards?\b", r"\1", text)  # "Leftward." answers "to the left"
    text = text.translate(_PUNCT)
    words = []
    for w in text.split():
        w = w.strip(".-")
        if not w or w in _ARTICLES:
            continue
        words.append(_WORDS.get(w, w))
    joined = " ".join(words)
    return _FOREIGN_WHOLE.get(joined, joined)


# ---------------------------------------------------------------------- text clean-up

_THINK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.IGNORECASE | re.DOTALL)
_JSON = re.compile(r"""["'](?:final[ _]?)?answer["']\s*:\s*(?:"([^"\n]*)"|'([^'\n]*)'|(-?\d+(?:\.\d+)?|true|false))""",
                   re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_PHRASE = re.compile(
    r"(?:\bfinal\s+answer\b|\b(?:correct|right|best|final|selected|chosen)\s+(?:option|choice|answer|one)\b"
    r"|\b(?:the\s+|my\s+|la\s+)?(?:answer|choice|guess|respuesta|r[ée]ponse|antwort|risposta|resposta)\b"
    r"(?:\s+(?:final|finale|correcta|correcte|richtige))?|答案|回答"  # "Respuesta final: B"
    r"|\b(?:(?:la\s+)?opci[oó]n|alternativa)\s+correcta\b|\bodd\s+one(?:\s+out)?\b)"  # "La opción correcta es la C"
    r"\s*(?:(?:(?:is|would\s+be|will\s+be|should\s+be|est|es|ist|[èé])\b|是|为)\s*:?|[:=：]|\s[-–—](?=\s))"
    r"\s*([^\n]*)"
    r"|(?:\bI(?:'d|\s+would|\s+will|'ll)?\s+(?:choose|pick|select|go\s+with|opt\s+for|say)\b|我?选择?(?!项))"
    r":?\s*([^\n]*)",
    re.IGNORECASE,
)
_FINAL = re.compile(r"\bfinal\s+(?:answer|option|choice)\b", re.IGNORECASE)
_CONCLUSION = re.compile(r"(?:^|[\s,;:.(])(?:so|therefore|thus|hence)\b,?\s*(?:it(?:'s|\s+is)\s+|the\s+answer\s+is\s+)?"
                         r"([^\n]*)$", re.IGNORECASE)
_HEDGE_LEAD = re.compile(
    r"^(?:(?:i\s+(?:think|believe|guess|would\s+say)|i'd\s+say|it(?:'s|\s+is)\s+(?:probably|likely)|"
    r"probably|likely|most\s+likely|definitely|clearly|certainly|"
    r"sure|okay|ok|well|hmm+|alright|(?:based\s+on|looking\s+at|from|in)\s+(?:the|this|these|both)\s+"
    r"(?:images?|pictures?|frames?|scenes?|views?))[\s,:!.]+)+", re.IGNORECASE)
# A tentative opening offers an answer without committing to it ("Maybe C", "I'd lean towards B").
_TENTATIVE = re.compile(
    r"^(?:maybe|perhaps|possibly|conceivably|(?:it\s+)?(?:might|could|may)\s+be|"
    r"i(?:'d|\s+would)?\s+lean|leaning|i(?:'m|\s+am)\s+leaning|i(?:'d|\s+would)\s+tentatively|tentatively)\b",
    re.IGNORECASE)
_DECLINE = re.compile(
    r"\b(?:no\s+idea|no\s+clue|not\s+sure|unsure|uncertain|don'?t\s+know|do\s+not\s+know|not\s+certain|"
    r"(?:can'?t|cannot)\s+(?:tell|say|determine|be\s+(?:sure|certain))|impossible\s+to\s+(?:tell|say|determine|know)|"
    r"hard\s+to\s+(?:tell|say)|unclear|unknown|no\s+way\s+to\s+(?:tell|know)|"
    r"too\s+\w+\s+to\s+(?:tell|say|judge|be\s+sure|determine)|"
    r"(?:yes|no)\s+(?:and|or|/)\s+(?:yes|no)|either\s+way|both\s+(?:yes|no))\b",
    re.IGNORECASE)
_NEGATION = re.compile(r"(?:\bnot|n't|\bnever|\bnor|\bexcept|\brather\s+than|\binstead\s+of|\bunlike|\brule\s+out|"
                       r"\bruled\s+out|\beliminate|\bexclude|\bneither)\W*(?:\w+\W+){0,2}$", re.IGNORECASE)
_AFTER_NEGATIVE = re.compile(r"^\s*(?:(?:is|are|seems|looks|would\s+be)\s+(?:not\b|wrong|incorrect|unlikely|"
                             r"ruled\s+out|implausible|eliminated|excluded)|[:,\-]?\s*(?:wrong|incorrect|unlikely|"
                             r"ruled\s+out|eliminated|excluded)\b|[:,\-]?\s*[❌✗✘✖])", re.IGNORECASE)  # "C ❌": crossed out


def _strip_markup(text: str) -> str:
    """Markdown emphasis, code ticks, headings and quote marks off; whitespace kept."""
    text = re.sub(r"\*\*|__|`+", "", text)
    text = re.sub(r"(?<!\w)\*(?=\S)|(?<=\S)\*(?!\w)", "", text)
    text = re.sub(r"^[ \t]*(?:#+|>+|[-•]\s)[ \t]*", "", text, flags=re.MULTILINE)
    # a Markdown table: rule lines go, a row's cells read as "cell: cell" ("| Answer | C |" -> "Answer: C")
    text = re.sub(r"^[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|?)+[ \t]*$", "", text, flags=re.MULTILINE)
    text = re.sub(r"^[ \t]*\|(.*)\|[ \t]*$", lambda m: ": ".join(c.strip() for c in m.group(1).split("|")), text,
                  flags=re.MULTILINE)
    return text


def _body(response: str) -> str:
    """The reply without reasoning blocks: ``<think>…</think>`` removed; an unclosed ``<think>``
    hides the rest, and a closing ``</think>`` without an opening one hides what precedes it."""
    text = _THINK.sub(" ", response)
    low = text.lower()
    if "</think>" in low:
        text = text[low.rfind("</think>") + len("</think>"):]
        low = text.lower()
    if "<think>" in low:
        text = text[:low.find("<think>")]
    return text


def _tentative(span: str) -> bool:
    """Whether a span opens by offering its answer tentatively ("Maybe C", "It might be B", "I'd lean towards A")."""
    span = _strip_markup(span).strip().strip(" \t\"'“”‘’[]{}")
    return bool(_TENTATIVE.match(span) or _TENTATIVE.match(_HEDGE_LEAD.sub("", span)))


def _clean_span(span: str) -> str:
    span = _strip_markup(span).strip()
    span = re.sub(r"^\\text\{(.*)\}$", r"\1", span)
    span = span.strip(" \t\"'“”‘’[]{}")
    span = _HEDGE_LEAD.sub("", span).strip(" \t\"'“”")
    return span


def _clause(text: str) -> str:
    """The text up to the end of its first sentence or line."""
    m = re.search(r"(?:(?<!\.)\.|[!?;\n])(?:\s|$)|\n", text)  # "..." goes on: "C... or D" is one clause
    return text[: m.start()] if m else text


def _negated(text: str, start: int, end: int) -> bool:
    """Whether the mention text[start:end] is denied ("not C", "C is wrong", "rather than C")."""
    before = text[max(0, start - 40):start]
    return bool(_NEGATION.search(before) or re.search(r"\bno\s+$", before, re.IGNORECASE)
                or _AFTER_NEGATIVE.match(text[end:end + 30]))


_INEXACT = re.compile(r"(?:\b(?:about|approximately|approx|roughly|around|nearly|almost|circa|some|between|from)"
                      r"|\d\s*(?:-|to|and|or))\s*$")


def _compound_direction(norm: str, start: int, end: int) -> bool:
    """Whether a direction is half of a compound one ("back left", "front-left", "right rear")."""
    word = r"(?:left|right|back|rear|front|forward|behind)"
    return bool(re.fullmatch(word, norm[start:end]) and (
        re.search(rf"\b{word}[\s-]*$", norm[max(0, start - 10):start])
        or re.match(rf"[\s-]*{word}\b", norm[end:end + 10])))


def _inexact(norm: str, start: int) -> bool:
    """Whether a number at norm[start] is an estimate or a range end ("about 3", "between 90 and 135")."""
    return norm[start:start + 1].isdigit() and bool(_INEXACT.search(norm[max(0, start - 20):start]))


# ---------------------------------------------------------------------- readers per answer type


class _Reader:
    """Reads an answer of one item format from a span (explicit level) or from a position."""

    def __init__(self, item: Item) -> None:
        self.item = item

    def span(self, span: str) -> Reading:
        raise NotImplementedError

    def names(self) -> tuple[str, ...]:
        """The normalised option texts or candidates a reply may name (for the relation check)."""
        return ()

    def lead(self, text: str) -> Reading:
        return None

    def conclusion(self, span: str) -> Reading:
        """What a conclusion inside prose ("…, so C") names."""
        return self.span(span)

    def tail(self, line: str) -> Reading:
        """A reply's last line: a conclusion phrase ("so the answer is X") read as a span,
        else the format's own reading of a line that is nothing but an answer."""
        line = _clean_span(line)
        m = _CONCLUSION.search(line)
        if m:
            got = self.conclusion(m.group(1))
            if got is not None:
                return got
        got = self.last_line(line)
        if got is None and ":" in line:  # "After careful analysis: No", "Verdict: C"
            got = self.last_line(line.rsplit(":", 1)[1].strip())
        return got

    def last_line(self, line: str) -> Reading:
        return None

    def opens(self, line: str) -> Reading:
        """The answer a line states by itself, outside any answer phrase ("D.", "Yes, it is.")."""
        return self.last_line(line)

    def lists(self, lines: list[str]) -> bool:
        """Whether the reply's lines enumerate several answers (the options quoted back) rather than pick one."""
        return False

    def quotes(self, line: str) -> bool:
        """Whether a line is one of the item's options quoted exactly as the question gives it."""
        return False

    def bare(self, text: str) -> Reading:
        return None


_LABEL_AT = re.compile(r"\(?\[?([A-Za-z])\]?\)?(?=$|[\s.:,;)\]!?\-–—*。，（])")
_LEAD_FOLLOW = re.compile(r"^(?:$|[.:,;)\]!?*]|\s*[-–—(]|\s+(?:because|since|as|is\s+(?:correct|right|the\b)|"
                          r"would\s+be|seems|looks|fits|matches)\b|\s*\n|\s*[✅✔✓☑\U0001F300-\U0001FAFF]|[（。，：；！])",
                          re.IGNORECASE)  # "C ✅", "**C** 🚗": a check mark or an emoji after the label
_VERDICT = re.compile(r"(?<![A-Za-z0-9])\(?([A-Z])\)?\s*[:.)\-–—=]+\s*"
                      r"(yes|no|correct|incorrect|wrong|true|false|right|✓|✔|✗|✘)"
                      r"(?![A-Za-z])", re.IGNORECASE)
# A check or cross per option ("A ❌ B ✅ C ❌", a table "| B | ✅ |"), and a table row whose last
# cell is the verdict ("| D | No change | Yes |", read after clean-up as "D: No change: Yes").
_CHECK_CHARS = re.compile(r"[✅❌✓✔✗✘☑✖]")
_VERDICT_MARK = re.compile(r"(?<![A-Za-z0-9])\(?([A-Z])\)?[ \t]*[:.)\-–—=]*[ \t]*(✅|❌|✓|✔|✗|✘|☑|✖)")
# a line per option with its text, then its mark: "A. Cannot be determined ❌", "C (No, …): ✅"
_VERDICT_LINE = re.compile(r"^[ \t]*\(?([A-Z])\)?(?:[.):]|[ \t](?=\())[^\n✅❌✓✔✗✘☑✖]{0,120}?(✅|❌|✓|✔|✗|✘|☑|✖)", re.MULTILINE)
_VERDICT_ROW = re.compile(r"^[ \t]*\(?([A-Z])\)?[ \t]*:[ \t]*[^:\n]{1,80}:[ \t]*"
                          r"(yes|no|correct|incorrect|wrong|true|false)\W*$", re.IGNORECASE | re.MULTILINE)
# A concession after the choice names a runner-up, not a second answer ("I'd go with B, though A is close");
# one that calls the other option also right ("though A is also plausible") stays a live alternative.
_CONCESSION = re.compile(r"[,;]?\s*\b(?:though|although|even\s+though|while|but)\b(?![^.;\n]*\b(?:also|equally)\b)"
                         r"[^.;\n]*\b(?:close|tempting|a\s+near\s+miss|runner[\s-]up|second\s+(?:choice|best))\b.*",
                         re.IGNORECASE)
_PLAIN_LABEL = re.compile(r"\s*\(?([A-Za-z])\)?[.。]?\s*")
_LETTER_TOKEN = re.compile(r"(?<![A-Za-z0-9'’])\(?([A-Z])\)?(?![A-Za-z0-9'’])")


class _ChoiceReader(_Reader):
    def __init__(self, item: Item) -> None:
        super().__init__(item)
        self.labels = [o.label for o in item.options]

    def names(self) -> tuple[str, ...]:
        return tuple(self.texts.values())

    @functools.cached_property
    def texts(self) -> dict[str, str]:
        """Option label -> normalised option text (computed only when a level needs texts)."""
        return {o.label: normalise(o.text) for o in self.item.options if o.text and normalise(o.text)}

    # -- labels

    def _other_labels(self, clause: str, chosen: str) -> bool:
        """Whether a clause also affirms a different label ("B or A", "C, maybe A")."""
        for m in _LETTER_TOKEN.finditer(clause):
            lab = m.group(1)
            if lab == chosen or lab not in self.labels:
                continue
            if lab in ("A", "I") and re.match(r"\s+[a-z]", clause[m.end():]):  # "a car", "I think"
                continue
            if _negated(clause, m.start(), m.end()):
                continue
            return True
        return False

    def _leading_label(self, text: str, *, strict: bool) -> Reading:
        """A label at the very start of ``text``; ``strict`` (reply start) also requires it to be followed
        by punctuation, the end or a connective, so "A car is…" and "I think…" are not labels."""
        text = re.sub(r"^(?:it(?:'s|’s|\s+is)\s+|la\s+|el\s+)?(?:option|choice|letter|image|view|picture|candidate)?\s*:?\s*", "", text,
                      flags=re.IGNORECASE)  # "Option B", "It's C", "It is option C"
        m = _LABEL_AT.match(text)
        if not m:
            return None
        raw = m.group(1)
        lab = raw.upper()
        if lab not in self.labels:
            return None
        rest = text[m.end():]
        if re.fullmatch(rf"(?:[\s,.;!]+\(?{lab}\)?)+[.!]?\s*", rest):
            return lab  # "C C C", "C. C.": one answer repeated
        if raw.islower() and not re.match(r"^(?:$|[.:)\]]|\s*\n|\s*$)", rest):
            return None  # a lower-case "a"/"b" is a label only when alone
        bracketed = m.group(0).endswith((")", "]"))  # "(C)", "[C]", "C)": a label, never a word
        if not bracketed and (strict or lab in ("A", "I")) and not _LEAD_FOLLOW.match(rest):
            return None  # "A car…", "I cannot…": an article or a pronoun, not a label
        if _AFTER_NEGATIVE.match(rest):
            return None  # "B is wrong"
        follow_text = re.sub(r"^[\s.:)\]\-–—]+", "", rest)
        follow = normalise(_clause(follow_text))  # the text after "B. "
        own = self.texts.get(lab, "\0")
        # "C. <C's text>… or toward it": the option's own sentence is the answer's clause
        clause = _clause(follow_text) if follow.startswith(own) else _clause(rest)
        clause = _CONCESSION.sub("", clause)  # "C, though B is close": B conceded, not chosen
        affirmed = re.sub(r"(?:\bnot\b|n't\b|\bnever\b).*", "", clause, flags=re.IGNORECASE)
        if re.search(r"\bor\b|/", affirmed, re.IGNORECASE) or self._other_labels(clause, lab):
            return AMBIGUOUS
        for other, t in self.texts.items():
            if other != lab and follow.startswith(t) and not follow.startswith(own):
                return AMBIGUOUS  # "B. Facing toward the camera" when that is A's text
        gloss = re.match(r"\s*[(\-–—:]\s*([^()\n]{1,60}?)\s*\)?\s*(?:[.;,!]|$)", rest)
        if gloss and self._leading_text(gloss.group(1)) not in (None, lab):
            return AMBIGUOUS  # "B (counter-clockwise)" when that is C's text: the letter and its gloss disagree
        return lab

    # -- option texts

    def _mentions(self, text: str, heads: bool = False) -> dict[str, list[tuple[int, int]]]:
        """Where each option's text (``heads``: or head) occurs in ``text`` (normalised); a text inside a
        longer option's text only counts where that longer text does not."""
        norm = normalise(text)
        spans: dict[str, list[tuple[int, int]]] = {}
        for lab, t in (self._named_forms if heads else self.texts.items()):
            for m in re.finditer(rf"(?<!\w){re.escape(t)}(?!\w)", norm):
                spans.setdefault(lab, []).append((m.start(), m.end()))
        for lab in list(spans):
            kept = [(s, e) for s, e in spans[lab] if not any(
                o != lab and any(os_ <= s and e <= oe and (oe - os_) > (e - s) for os_, oe in spans[o])
                for o in spans)]
            if kept:
                spans[lab] = kept
            else:
                del spans[lab]
        return spans

    @functools.cached_property
    def _named_forms(self) -> list[tuple[str, str]]:
        """(label, text) pairs a reply may name an option by: its text, and its head when the head says
        more than yes/no ("It needs to turn clockwise." names "Clockwise (seen from above)")."""
        heads = [(lab, h) for lab, h in self.heads.items()
                 if set(h.split()) - _LITTLE_WORDS - _NEGATORS - {"yes"}]
        # and the rest after a head cut off by a comma, an apposition that says something of its own
        # ("Turned sideways, perpendicular to the camera"); not what follows a colon ("No change needed: …")
        commas = {o.label for o in self.item.options if o.text and re.match(r"[^,:(]*,", o.text)}
        tails = [(lab, self.texts[lab][len(h):].strip()) for lab, h in self.heads.items()
                 if lab in commas and self.texts[lab].startswith(h + " ")
                 and len(set(self.texts[lab][len(h):].split()) - _LITTLE_WORDS) >= 2]
        return list(self.texts.items()) + heads + tails + list(self._glosses.items())

    @functools.cached_property
    def _option_texts(self) -> tuple[tuple[str, str], ...]:
        return tuple((o.label, o.text) for o in self.item.options if o.text)

    @functools.cached_property
    def _glosses(self) -> dict[str, str]:
        """Option label -> its bracketed gloss ("to the back" of "away from the viewer (to the back)"), for
        glosses no other option shares ("(seen from above)" on both rotations names neither)."""
        return _glosses_of(self._option_texts, tuple(self.texts.values()))

    @functools.cached_property
    def _unglossed(self) -> dict[str, str]:
        """Normalised option text without its bracketed gloss -> label ("rotate 90 degrees clockwise then
        flip vertically" for "…, then flip vertically (mirror top-bottom)"), where that is unique."""
        return _unglossed_of(self._option_texts, tuple(self.texts.values()))

    def _affirmed(self, text: str, heads: bool = False) -> set[str]:
        """``heads``: an option may be named by its head too, unless qualified ("slightly leftward")."""
        norm = normalise(text)
        return {lab for lab, where in self._mentions(text, heads).items()
                if any(not (_negated(norm, s, e) or _inexact(norm, s) or _compound_direction(norm, s, e)
                            or (heads and _QUALIFIED.search(norm[max(0, s - 20):s])))
                       for s, e in where)}

    def _labelled(self, text: str, *, any_kind: bool = False) -> set[str]:
        """Labels a sentence names as the choice, outside an answer phrase: "Image C shows the right side",
        "matches candidate D", "**B** is correct". "Option A"/"Image A" read so only where the options are
        images (for text options it is reasoning about option A); ``any_kind``: every such label."""
        images = any_kind or any(o.image is not None for o in self.item.options)
        found = {m.group(2) or m.group(3) for m in _LABELLED.finditer(text)
                 if (m.group(2) or m.group(3)) in self.labels
                 and (images or m.group(2) is None or _POINTER.search(text[max(0, m.start() - 20):m.start()]))
                 and not _negated(text, m.start(), m.end()) and not _EXAMINED.search(text[max(0, m.start() - 30):m.start()])}
        if images:
            found |= {self.labels[k] for m in _ORDINAL.finditer(text)
                      if (k := _ORDINALS.index(m.group(1).lower())) < len(self.labels)
                      and not _negated(text, m.start(), m.end()) and not _EXAMINED.search(text[max(0, m.start() - 34):m.start()])}
        return found

    @functools.cached_property
    def _cores(self) -> dict[str, set[str]]:
        """Option label -> the words that set the option apart: those of its head (or whole text) minus
        little words and the vocabulary of the option set (words in more than half of the options, e.g.
        "face" in "They face opposite directions")."""
        words = {lab: set(t.split()) for lab, t in self.texts.items()}
        common = {w for w in set().union(*words.values()) if 2 * sum(w in ws for ws in words.values()) > len(words)}
        cores = {}
        for lab, t in self.texts.items():
            core = set(self.heads.get(lab, t).split()) - common - _LITTLE_WORDS
            if core:
                cores[lab] = core
        return cores

    def _short_form(self, norm: str) -> Reading:
        """A reply of a few words that names what sets exactly one option apart, and at least half of it,
        keeping its negation ("Clockwise." for "Clockwise (seen from above)", "Right." for "to their own
        right", "Sideways." for "Turned sideways, perpendicular to the camera", "No." for "No, the image
        is not in its canonical orientation"); never "Rotation." for "No rotation"."""
        words = set(norm.split())
        if not words or len(norm.split()) > 3 or words & _NOT_SHORT_FORM or re.search(r"\d", norm):
            return None
        fits = {}
        for lab, core in self._cores.items():
            said = words - _LITTLE_WORDS - (set(self.texts[lab].split()) - core - _NEGATORS)
            if said and said <= core:
                fits[lab] = said
        exact = [lab for lab, said in fits.items() if said == self._cores[lab]]
        if len(fits) > 1 and len(exact) == 1 and all(
                self._cores[exact[0]] < self._cores[o] for o in fits if o != exact[0]):
            fits = {exact[0]: fits[exact[0]]}  # "Same direction." is "the same direction", not "partially the same …"
        if len(fits) != 1:
            return None  # "Same." fits "the same direction" and "partially the same direction"
        lab, said = fits.popitem()
        if re.search(r"\d", self.texts[lab]):
            return None  # an option with a number is read only as written
        negators = set(self.heads.get(lab, self.texts[lab]).split()) & _NEGATORS
        return lab if 2 * len(said) >= len(self._cores[lab]) and negators <= words else None

    @functools.cached_property
    def heads(self) -> dict[str, str]:
        """Option label -> the option's head, the words before its first comma, colon or bracket ("No" of
        "No, the object has not rotated"), for heads that no other option shares and whose rest only
        elaborates: "Flip horizontally (mirror left-right), then rotate 90 degrees" has a second step,
        so "Flip horizontally." is not that option."""
        raw = {o.label: normalise(re.split(r"[,:(]", o.text)[0]) for o in self.item.options if o.text}
        rests = {o.label: o.text[len(re.split(r"[,:(]", o.text)[0]):] for o in self.item.options if o.text}
        return {lab: h for lab, h in raw.items()
                if h and h != self.texts.get(lab) and list(raw.values()).count(h) == 1
                and not re.search(r"\b(?:then|and|plus|followed\s+by)\b", rests[lab], re.IGNORECASE)}

    def _leading_head(self, text: str) -> Reading:
        """A reply that opens with one option's head and a pause: "No, it has not rotated." for "No, the
        object has not rotated"; another option's head, or "or", in the same clause makes it no answer."""
        m = re.match(r"\s*([^,.:;!?\n(]+?)(?:\s+[-–—]\s+|\s*[,.:;!]|\s*$)", text)  # "No - it was flipped."
        lab = next((lab for lab, h in self.heads.items() if m and normalise(m.group(1)) == h), None)
        if lab is None:
            return None
        clause = _clause(text[m.end():])
        others = {h for other, h in self.heads.items() if other != lab}
        names_other = any(re.search(rf"(?<!\w){re.escape(h)}(?!\w)", normalise(clause)) for h in others)
        if re.search(r"\bor\b", clause, re.IGNORECASE) or _DECLINE.search(clause) or names_other or (
                self._affirmed(clause) - {lab}):
            return AMBIGUOUS
        return lab

    def _leading_text(self, text: str, *, short: bool = True) -> Reading:
        """An option text at the start of ``text``; ``short``: also a whole reply or span in short form."""
        norm = normalise(text)
        starts = [lab for lab, t in self.texts.items() if norm == t or norm.startswith(t + " ")]
        if not starts and self._unglossed and normalise(_clause(text)) in self._unglossed:
            return self._unglossed[normalise(_clause(text))]  # the option as written, its gloss left out
        if not starts:
            got = self._leading_head(text)
            if got is None and short and normalise(_clause(text)) == norm:
                got = self._short_form(norm)
            return got
        lab = max(starts, key=lambda lab: len(self.texts[lab]))
        clause = normalise(_clause(text))
        rest = clause[len(self.texts[lab]):] if clause.startswith(self.texts[lab]) else ""
        if _AFTER_NEGATIVE.match(rest):
            return None  # "Counter-clockwise ❌", "Facing away from the camera is wrong"
        if re.search(r"\bor\b", rest) or (self._affirmed(rest) - {lab}):
            return AMBIGUOUS
        return lab

    # -- levels

    def conclusion(self, span: str) -> Reading:
        # "…, so it is turned" (cut off): a short form needs a whole reply, or a sentence that ends ("…, so sideways.")
        return self.span(span, short=bool(re.search(r"[.!]\s*$", span)))

    def span(self, span: str, *, short: bool = True) -> Reading:
        """``short``: whether a short form of an option ("Right.") may be read, as in a whole span."""
        plain = _PLAIN_LABEL.fullmatch(span)  # the common case, "C" or "(C)": no clean-up needed
        if plain and plain.group(1).upper() in self.labels and (plain.group(1).isupper() or len(span.strip()) <= 2):
            return plain.group(1).upper()
        span = _clean_span(span)
        if not span or re.match(r"(?:not|none)\b", span, re.IGNORECASE):
            return None
        got = self._leading_label(span, strict=False)
        if got is not None:
            return got
        got = self._leading_text(span, short=short)
        if got is not None:
            return got
        clause = _clause(span)
        if len(normalise(clause).split()) > 12:
            return None
        found = self._affirmed(clause)
        if len(found) > 1 or (found and re.search(r"\bor\b", clause, re.IGNORECASE)):
            return AMBIGUOUS
        return found.pop() if found else None

    def _verdicts(self, text: str) -> Reading:
        """A verdict per option ("A: no. B: yes. C: no.", "A) no  B) no  C) yes"): the one option marked
        right, AMBIGUOUS if none or several are; None when the reply is not such a list."""
        marks = {m.group(1): m.group(2).lower() for m in _VERDICT.finditer(text) if m.group(1) in self.labels}
        checks = _CHECK_CHARS.search(text) is not None
        for pattern in ((_VERDICT_MARK, _VERDICT_LINE) if checks else ()) + ((_VERDICT_ROW,) if text.count(":") >= 4 else ()):
            found = {m.group(1).upper(): m.group(2).lower() for m in pattern.finditer(text)
                     if m.group(1).upper() in self.labels}
            if len(found) >= 2 and set(found) - set(marks):
                marks = found
        if len(marks) < 2:
            return self._checked_texts(text) if checks else None
        right = [lab for lab, v in marks.items() if v in ("yes", "correct", "true", "right", "✓", "✔", "✅", "☑")]
        if not right and not _VERDICT.match(text.lstrip()):
            return None  # "**B**\nA: wrong …\nC: wrong …": the other options ruled out after the answer
        return right[0] if len(right) == 1 else AMBIGUOUS

    def _checked_texts(self, text: str) -> Reading:
        """Options written out with a mark on one line each ("| clockwise | ✔ |" as "clockwise: ✔"): the one
        option checked, AMBIGUOUS if several are; None when no line both names an option and checks it."""
        checked = set()
        for line in text.splitlines():
            if re.search(r"[✅✔✓☑]", line) and not re.search(r"[❌✗✘✖]", line):
                got = self._leading_text(re.sub(r"[✅✔✓☑\ufe0f:|]+", " ", line).strip(), short=False)
                if got is not None:
                    checked.add(got)
        return (checked.pop() if len(checked) == 1 else AMBIGUOUS) if checked else None

    def lead(self, text: str) -> Reading:
        text = _clean_span(text)
        got = self._verdicts(text)
        if got is not None:
            return got
        got = self._leading_label(text, strict=True)
        if got is None:
            got = self._glossed_label(text)
        return got if got is not None else self._leading_text(text)

    def _glossed_label(self, text: str) -> Reading:
        """A short reply that says its answer in words and then labels it: "Nach links (B).", "Cylindre (A)";
        words that name another option, deny, hedge or ask make it no answer."""
        m = re.fullmatch(r"([^()\n?]{1,40}?)\s*\(([A-Z])\)\s*[.!]?", text) if text.endswith((")", ").", ")!")) else None
        if not m or m.group(2) not in self.labels:
            return None
        words, lab = m.group(1), m.group(2)
        if re.search(r"\b(?:not|no|never|or|maybe|perhaps|probably|possibly|if)\b", words, re.IGNORECASE):
            return None
        named = self._affirmed(words, heads=True) | ({self._leading_text(words)} - {None})
        return lab if named <= {lab} else AMBIGUOUS

    def last_line(self, line: str) -> Reading:
        m = re.fullmatch(r"(?:option\s*)?\(?([A-Za-z])\)?(?:[.!]?|[.:)]?\s+(.*))", line, re.IGNORECASE)
        labelled = m is not None and m.group(1).upper() in self.labels and (
            m.group(2) is None or normalise(m.group(2)) == self.texts.get(m.group(1).upper()))
        if labelled or normalise(line) in self.texts.values():  # "C", "C. <its text>" or a text alone
            return self.lead(line)
        last = re.split(r"(?<=[.!?;])\s+", line.strip())[-1]  # "Not C. Not E. It is B.", "Neither A nor B; it is C."
        m = re.fullmatch(r"(?:(?:it(?:'s|’s|\s+is)|answer:?)\s+(?:option\s+)?)?\(?([A-Z])\)?[.!]?(?:\s*[✅✔✓☑])?", last,
                         re.IGNORECASE)
        if m and m.group(1) in self.labels and last != line.strip() and (m.group(1).isupper() or len(last) > 3):
            before = _asserted(line.strip()[: -len(last)])
            if self._affirmed(before, heads=True) - {m.group(1)}:
                return AMBIGUOUS  # "The front points leftward; answer E.": the words and the label disagree
            return m.group(1)  # "…, so both ways are 180 degrees. D": the line's last sentence is a label
        return None

    def quotes(self, line: str) -> bool:
        m = re.fullmatch(r"\s*\(?([A-Z])[.):]\s*(.*?)\s*", _strip_markup(line))
        if not m or m.group(1) not in self.labels:
            return False
        option = next(o for o in self.item.options if o.label == m.group(1))
        return normalise(m.group(2)) == normalise(option.text) if option.text else m.group(2) == "<image>"

    def lists(self, lines: list[str]) -> bool:
        if self._verdicts("\n".join(lines)) is not None:
            return False  # a verdict per option picks one (or none): read by ``lead``
        return len({self._leading_label(_clean_span(ln), strict=True) for ln in lines} - {None, AMBIGUOUS}) > 1

    def bare(self, text: str) -> Reading:
        found = self._affirmed(text, heads=True) | self._labelled(text)
        if found and self._labelled(text, any_kind=True) - found:
            return AMBIGUOUS  # "The front points leftward; answer E."
        if found and (_DECLINE.search(text) or any(
                re.search(r"\bor\b", s, re.IGNORECASE) and self._affirmed(s, heads=True)
                for s in re.split(r"[.!?;\n]", text))):
            return AMBIGUOUS  # "135°, clockwise or counterclockwise, I cannot tell"
        if len(found) > 1:
            return AMBIGUOUS
        return found.pop() if found else None


@functools.lru_cache(maxsize=4096)  # option sets repeat across items
def _glosses_of(options: tuple[tuple[str, str], ...], texts: tuple[str, ...]) -> dict[str, str]:
    found = {lab: normalise(m.group(1)) for lab, text in options
             for m in [re.search(r"\(([^()]+)\)\s*$", text)]  # a gloss on the whole option, of one step
             if m and not re.search(r"\b(?:then|and|followed\s+by)\b", text, re.IGNORECASE)}
    return {lab: g for lab, g in found.items() if list(found.values()).count(g) == 1
            and set(g.split()) - _LITTLE_WORDS and g not in texts}


@functools.lru_cache(maxsize=4096)
def _unglossed_of(options: tuple[tuple[str, str], ...], texts: tuple[str, ...]) -> dict[str, str]:
    found = {lab: normalise(re.sub(r"\([^()]*\)", " ", text)) for lab, text in options if "(" in text}
    return {t: lab for lab, t in found.items() if t and list(found.values()).count(t) == 1 and t not in texts}


_QUALIFIED = re.compile(r"\b(?:slightly|somewhat|bit|little|partly|partially|mostly|rather)\s+$")
# "…, i.e. option H": a pointer from the reply's words to the label it picks (for text options too)
_POINTER = re.compile(r"(?:\bi\.?\s?e\.?|\bthat\s+is|\bnamely|\bhence|\bthus|\btherefore|\bwhich\s+is)\s*,?\s*$",
                      re.IGNORECASE)
# "The second candidate", "the third one": the option at that place in the list (image options only)
_ORDINAL = re.compile(r"\b(first|second|third|fourth|fifth|sixth)\s+(?:candidate|option|choice|one)\b", re.IGNORECASE)
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")
_LABELLED = re.compile(r"\b(?i:(answer|option|choice|candidate|image|picture))\s*:?\s*\(?([A-Z])\)?(?![\w'’])"
                       r"|(?<![\w'’])\(?([A-Z])\)?\s+(?i:is|seems|looks)\s+(?i:the\s+)?"
                       r"(?i:correct|right|best|odd\s+one(?:\s+out)?|different\s+one)\b")  # "A is the odd one out"
# "Looking at candidate A, …", "In image B the person …": the candidate examined, not the one chosen
_EXAMINED = re.compile(r"\b(?:look(?:ing)?\s+at|consider(?:ing)?|compar(?:e|ing)(?:\s+it\s+with)?|check(?:ing)?|"
                       r"examin(?:e|ing)|inspect(?:ing)?|between|than|versus|vs\.?|like|unlike)\s+$",
                       re.IGNORECASE)
_LITTLE_WORDS = {"to", "of", "in", "on", "at", "by", "for", "with", "as", "from", "and", "then", "so", "it", "its",
                 "is", "are", "be", "their", "his", "her", "they", "them", "s", "about", "already"}
_NEGATORS = {"no", "not", "cannot", "never", "without"}
_NOT_SHORT_FORM = {"either", "neither", "both", "none", "not", "nor", "or", "and", "all", "any", "cannot", "maybe"}
_YES = {"yes": "yes", "yeah": "yes", "yep": "yes", "true": "yes", "no": "no", "nope": "no", "false": "no",
        # the same answer in the languages multilingual models fall back to
        "sí": "yes", "si": "yes", "oui": "yes", "ja": "yes", "是": "yes", "是的": "yes", "对": "yes",
        "non": "no", "nein": "no", "否": "no", "不是": "no", "不": "no"}
_ENGLISH_YN = {"yes", "yeah", "yep", "true", "no", "nope", "false"}
_YN = "|".join(sorted(map(re.escape, _YES), key=len, reverse=True))
_YN_WORD = re.compile(rf"\b({_YN})\b", re.IGNORECASE)


# Yes and no said another way. "Correct."/"That's right." affirm the question's statement, "Negative."/
# "Not really." deny it; "Certainly."/"Of course." count only as the whole reply (as openers they are chat:
# "Certainly! Let me look at the image…"), and "Right." only standing alone ("Right, so…" is a pause).
_SYNONYM_NO = (r"incorrect|negative|not\s+really|(?:absolutely|definitely|certainly|of\s+course|surely)\s+not|"
               r"not\s+at\s+all|that(?:'s|\s+is)\s+(?:wrong|incorrect|false|not\s+(?:right|correct|true))")
_SYNONYM_YES = r"correct|affirmative|that(?:'s|\s+is)\s+(?:right|correct|true)|yup"
_SYNONYM = re.compile(rf"(?:({_SYNONYM_NO})|({_SYNONYM_YES}))(?=\s*(?:$|[.!;,:]|[—–]|\s-\s))"
                      r"|(?:definitely|absolutely|certainly|of\s+course|indeed|right)(?=[.!]?\s*$)()", re.IGNORECASE)
_MARKS = "✅❌✔✓✗✘☑✖👍👎\ufe0f"


class _YesNoReader(_Reader):
    def _synonym(self, text: str) -> Reading:
        """A reply opening with yes or no said another way ("Correct — …", "Negative.", "Not really.")."""
        text = text.strip().strip(" \t\"'“”‘’[]{}" + _MARKS)
        if text[:1] in "*_`#>|-•":
            text = _strip_markup(text).strip().strip(" \t\"'“”‘’[]{}" + _MARKS)  # "**Correct.**"
        m = _SYNONYM.match(text)
        if not m:
            return None
        value = "no" if m.group(1) else "yes"
        clause = _clause(text[m.end():])
        if re.search(r"\bor\b|\bbut\b", clause, re.IGNORECASE) or {_YES[w.lower()] for w in _YN_WORD.findall(clause)} - {value}:
            return AMBIGUOUS
        return value

    def _word_at_start(self, text: str) -> Reading:
        m = re.match(rf"\(?({_YN})\b\)?(.*)", text, re.IGNORECASE | re.DOTALL)
        if not m:
            return None
        value = _YES[m.group(1).lower()]
        rest = m.group(2)
        if m.group(1).lower() not in _ENGLISH_YN and not re.match(r"\s*(?:[.!,;:。，！]|$)", rest):
            return None  # "Non-canonical…": another language's word counts only standing alone
        if value == "no" and re.match(r"\s+[a-z]", rest) and not re.match(
                r"\s+(?:it|they|the|this|that|there|he|she|i|we|you|because|since|as|not)\b", rest, re.IGNORECASE):
            return None  # "No sheep is visible", "No objects…": a determiner, not the answer
        clause = re.sub(r"\bno\s+(?:doubt|question)\b", "", _clause(rest), flags=re.IGNORECASE)  # "Yes - no doubt"
        opposite = {_YES[w.lower()] for w in _YN_WORD.findall(clause)} - {value}
        if opposite and value == "yes" and not re.search(r"\bno\b", clause, re.IGNORECASE):
            opposite = set()  # "Yes, there is no doubt": a later "no" is not the other answer unless bare
        if opposite or re.search(r"\bor\b", clause, re.IGNORECASE):
            return AMBIGUOUS
        return value

    def opens(self, line: str) -> Reading:
        return self._word_at_start(line)

    def _declines(self, text: str) -> bool:
        return bool(_DECLINE.search(_clause(text)))

    def span(self, span: str) -> Reading:
        got = self._synonym(span)
        if got is not None:
            return got
        span = _clean_span(span).strip(_MARKS + " ")
        if not span:
            return None
        if self._declines(span):
            return AMBIGUOUS
        got = self._word_at_start(span)
        if got is not None:
            return got
        clause = _clause(span)
        words = {_YES[w.lower()] for w in _YN_WORD.findall(clause)}
        if len(words) > 1:
            return AMBIGUOUS
        if words and len(clause.split()) <= 4:
            return words.pop()
        return None

    def lead(self, text: str) -> Reading:
        got = self._synonym(text)
        if got is not None:
            return got
        text = _clean_span(text).strip(_MARKS + " ")
        if self._declines(text):
            return AMBIGUOUS if _YN_WORD.match(text) or re.match(r"(?:not|i)\b", text, re.IGNORECASE) else None
        got = self._word_at_start(text)
        if got is None:
            return None
        # a later sentence that opens with the other answer: "Yes, it moved left. No, it did not move forward."
        later = re.split(r"(?<=[.!?;])\s+|\n+", text)[1:]
        if any(self._word_at_start(_clean_span(s)) not in (None, got) for s in later):
            return AMBIGUOUS
        return got

    def last_line(self, line: str) -> Reading:
        for part in (line, re.split(r"(?<=[.!?;])\s+", line.strip())[-1]):  # the line, or its last sentence
            if re.fullmatch(rf"\(?(?:{_YN})\)?[.!]?", part.strip(), re.IGNORECASE):
                return _YES[re.sub(r"[\s().!]", "", part).lower()]
        return None


_NONE_COUNT = re.compile(r"\b(?:there\s+(?:is|are)|i\s+(?:see|count)|see|count|contains?|has|have)\s+(?:no|none)\b"
                         r"|^none\b|^no\s+\w+s$")
_MEASURE = re.compile(r"\d\s*(?:m|cm|mm|km|ft|in|meters?|metres?|centimet(?:er|re)s?|feet|foot|inch(?:es)?|"
                      r"degrees?|deg|rad|seconds?|s|minutes?|min|kg|g|%|percent)\b")
_BOUND = re.compile(r"\b(?:at\s+(?:least|most)|more\s+than|fewer\s+than|less\s+than|up\s+to|over|under)\s+\d"
                    r"|\d\s+or\s+(?:more|fewer|less)\b")


class _OpenReader(_Reader):
    def __init__(self, item: Item) -> None:
        super().__init__(item)
        cands = item.metadata.get("candidates") if isinstance(item.metadata, dict) else None
        self.candidates = {normalise(str(c)): str(c) for c in (cands or []) if normalise(str(c))}
        self.numeric = bool(self.candidates) and all(_NUMBER.fullmatch(c) for c in self.candidates)

    def names(self) -> tuple[str, ...]:
        return () if self.numeric else tuple(self.candidates)

    def _named(self, text: str) -> set[str]:
        norm = normalise(text)
        if self.numeric:
            named = {m.group() for m in _NUMBER.finditer(norm) if not _negated(norm, m.start(), m.end())}
            if _MEASURE.search(norm):
                return named | {"<measure>"}  # "2 m", "3 degrees": a length or an angle, not how many
            if any(_inexact(norm, m.start()) for m in _NUMBER.finditer(norm)):
                return named | {"<estimate>"}  # "about 3", "2-3" name no single count
            single = re.search(r"\bsingle\b", norm)
            if single and "1" in self.candidates and not _negated(norm, single.start(), single.end()):
                named.add("1")  # "there is a single wardrobe"
            if "0" in self.candidates and _NONE_COUNT.search(norm) and not _DECLINE.search(norm):
                named.add("0")  # "there are no chairs", "none": a count of zero
            if named and _BOUND.search(norm):
                return named | {"<bound>"}  # "at least 3" names no single count
            return named
        hits: dict[str, list[tuple[int, int]]] = {}
        for c in self.candidates:
            for m in re.finditer(rf"(?<!\w){re.escape(c)}(?!\w)", norm):
                hits.setdefault(c, []).append((m.start(), m.end()))
        named = set()
        for c, where in hits.items():
            inside = any(o != c and len(o) > len(c) and any(os_ <= s and e <= oe for os_, oe in hits[o] for s, e in where)
                         for o in hits)
            if not inside and any(not (_negated(norm, s, e) or _compound_direction(norm, s, e)) for s, e in where):
                named.add(c)
        return named

    def span(self, span: str, *, free_words: int = MAX_OPEN_WORDS) -> Reading:
        """``free_words``: how long a span naming no candidate may be and still be read as the answer."""
        span = _clean_span(span)
        zero = self.numeric and "0" in self.candidates and re.match(r"(?:none|no\s+\w+)\W*$", span, re.IGNORECASE)
        if not span or (re.match(r"(?:not|none)\b", span, re.IGNORECASE) and not zero):
            return None
        if _DECLINE.search(span) or re.match(r"(?:neither|nothing|n/?a|unanswerable|indeterminate|both|all\s+of\s+them)\b", span, re.I):
            return AMBIGUOUS
        clause = _clause(span) or span
        if re.search(r"\bor\b|\beither\b|/", clause, re.IGNORECASE):
            return AMBIGUOUS
        norm = normalise(clause)
        if norm in self.candidates:
            return self.candidates[norm]  # the candidate as the item spells it ("TV", not "tv")
        named = self._named(clause)
        if self.numeric and len(named) > 1 and not any(n.startswith("<") for n in named):
            # "2 (two wardrobes: one on the left wall, one on the right)": a count, then how it was counted
            m = re.match(r"\s*(\w+)\s*(?:\(|[-–—:]\s)(.*)", clause)
            lead = normalise(m.group(1)) if m else ""
            first = _NUMBER.search(normalise(m.group(2))) if m else None
            if lead in named and (first is None or first.group() == lead):
                return lead
        if len(named) > 1:  # "chair (next to the lamp)": naming two candidates is no single answer
            return AMBIGUOUS
        if named:
            return self._spelled(named.pop())
        if self.numeric:
            return None
        return norm if 0 < len(norm.split()) <= free_words else None

    def lead(self, text: str) -> Reading:
        text = _clean_span(text)
        if len(normalise(text).split()) <= MAX_OPEN_WORDS and "\n" not in text.strip():
            if _DECLINE.search(text) or re.search(r"\b(?:sorry|cannot|can't|unable)\b", text, re.IGNORECASE):
                return None
            # a whole reply naming no known candidate is an answer only when it is a short phrase
            return self.span(text, free_words=MAX_BARE_OPEN_WORDS)
        norm = normalise(_clause(text))
        starts = [c for c in self.candidates if norm == c or norm.startswith(c + " ")]
        if starts:
            return self.span(_clause(text))
        return None

    def tail(self, line: str) -> Reading:
        return super().tail(line) if self.candidates else None

    def bare(self, text: str) -> Reading:
        if not self.candidates:
            return None
        named = self._named(text)
        if len(named) > 1:
            return AMBIGUOUS
        return self._spelled(named.pop()) if named else None

    def _spelled(self, norm: str) -> str:
        return self.candidates.get(norm, norm)


def _reader(item: Item) -> _Reader:
    if item.answer_type == "mcq":
        return _ChoiceReader(item)
    if item.answer_type == "yesno":
        return _YesNoReader(item)
    return _OpenReader(item)


# ---------------------------------------------------------------------- the grammar


def _combine(readings: list[Reading]) -> Reading:
    """One level's verdict: any ambiguous span, or two different answers, is ambiguous."""
    found = [r for r in readings if r is not None]
    if any(r is AMBIGUOUS for r in found):
        return AMBIGUOUS
    distinct = set(found)
    if len(distinct) > 1:
        return AMBIGUOUS
    return distinct.pop() if distinct else None


def _innermost(m: re.Match[str]) -> str:
    """The span after the last of nested phrases ("Final Answer: The final answer is C" -> "C")."""
    span = m.group(1) if m.group(1) is not None else m.group(2)
    while (inner := _PHRASE.search(span)) is not None:
        span = inner.group(1) if inner.group(1) is not None else inner.group(2)
    return span


def _phrases(text: str, reader: _Reader) -> Reading:
    """The explicit answer phrases' reading (a ``final answer`` outranks a plain one), unless the reply
    takes it back after the last of them ("Answer: C. Wait, looking again, …")."""
    matches = list(_PHRASE.finditer(text))
    final = [m for m in matches if _FINAL.search(m.group(0)[:40])]
    for group in (final, matches):
        got = _combine([_span(reader, _innermost(m)) for m in group])
        if got is not None:
            last = group[-1]
            after = text[last.start(1) if last.group(1) is not None else last.start(2):]  # the answer on
            if got is not AMBIGUOUS and after.strip() and _taken_back(after.strip(), reader, got, implicit=False):
                return AMBIGUOUS
            if got is not AMBIGUOUS and group is not final and _contradicted(text, reader, got):
                return AMBIGUOUS
            return got
    return None


def _contradicted(text: str, reader: _Reader, answer: Reading) -> bool:
    """Whether a line of the reply that is nothing but an answer ("D.", "C. <C's text>", "Yes.") or its
    concluding line ("So D.") gives another answer than its explicit phrase: "C.\n…\nTherefore, the
    answer is D." commits to neither. (A ``final answer`` is meant to supersede and is not checked.)"""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if reader.lists(lines):
        return False  # the options quoted back are no answer
    readings = [reader.opens(_clean_span(ln)) for ln in lines]
    if len(lines) > 1:
        readings.append(reader.tail(lines[-1]))
    return any(r is not None and r is not AMBIGUOUS and r != answer for r in readings)


def _json_values(text: str) -> list[str]:
    out = []
    for m in _JSON.finditer(text):
        out.append(next(g for g in m.groups() if g is not None))
    for m in re.finditer(r"\{[^{}]*\}", text):  # real JSON objects whose answer is not a string
        try:
            obj: Any = json.loads(m.group(0))
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            for k, v in obj.items():
                if k.lower() in ("answer", "final_answer") and isinstance(v, (int, float)) and not isinstance(v, bool):
                    out.append(str(v))
                elif k.lower() in _CHOICE_KEYS and isinstance(v, (str, int, float)) and not isinstance(v, bool):
                    out.append(str(v))  # {"choice": "b"}; {"answer": "B", "option_text": <C's text>} disagrees
    return out


# JSON keys other than "answer" that also state the chosen answer (and so must agree with it)
_CHOICE_KEYS = {"choice", "option", "option_text", "answer_text", "selected", "selected_option", "selection",
                "letter", "label", "final_choice", "prediction"}


_CONDITION = re.compile(r"\b(?:if|whether|unless|suppose|supposing|assuming|in\s+case)\b|^\W*were\b", re.IGNORECASE)
_MODAL = re.compile(r"\b(?:would|could|might|may|should)\b", re.IGNORECASE)


def _asserted(text: str) -> str:
    """The parts of ``text`` that assert something: a bare mention in a question ("Is it facing
    away?"), in a sentence that states a condition ("If it were facing the camera, …", "I need to check
    whether…") or in a clause with a modal ("Facing the camera would show…") is reasoning, not an
    answer; the sentence's other clauses still count ("It faces away from the camera, which would …")."""
    kept = []
    for sentence in re.split(r"(?<=[.!?;])\s+|\n+", text):
        if sentence.strip() and not sentence.rstrip().endswith("?") and not _CONDITION.search(sentence):
            kept.append(",".join(c for c in re.split(r"[,:—–]", sentence) if not _MODAL.search(c)))
    return "\n".join(kept)


def _span(reader: _Reader, span: str) -> Reading:
    """One explicit span: a tentative one ("Answer: maybe C") or one put as a question ("<answer>2?</answer>")
    commits to nothing, otherwise the format's reading."""
    got = reader.span(span)
    if got is None or got is AMBIGUOUS:
        return got
    if _tentative(span) or re.match(r"[^.!;\n]{0,60}\?", _strip_markup(span).strip()):
        return AMBIGUOUS
    return got


def _after_tags(body: str, reader: _Reader) -> Reading:
    """The ``<answer>`` tags' reading, unless a second thought after the last one takes it back
    ("<answer>C</answer> Wait, it's D.")."""
    tags = list(_TAG.finditer(body))
    if not tags:
        opened = body.lower().rfind("<answer>")
        if opened < 0 or "</answer>" in body.lower():
            return None
        return _span(reader, body[opened + len("<answer>"):])  # cut off before "</answer>": "<answer>righ"
    got = _combine([_span(reader, m.group(1)) for m in tags])
    if got is not None and got is not AMBIGUOUS:
        after = _strip_markup(body[tags[-1].end():]).strip()
        if after and _taken_back(after, reader, got, implicit=False):
            return AMBIGUOUS
        if _overruled(_TAG.sub(" ", body), reader, got):
            return AMBIGUOUS
    return got


def _from_json(body: str, reader: _Reader) -> Reading:
    """The JSON answer field's reading, unless the reply's other text (its "reasoning" field) concludes
    otherwise ({"answer": "C", "reasoning": "…, so the correct choice is B."}) or takes the answer back
    after it ({"answer": "B", "reasoning": "…, no wait, …"})."""
    got = _combine([_span(reader, v) for v in _json_values(body)])
    if got is None or got is AMBIGUOUS:
        return got
    fields = list(_JSON.finditer(body))
    if fields:
        after = _strip_markup(body[fields[-1].end():]).strip(" \t\n\"',}")
        if after and _taken_back(after, reader, got, implicit=False):
            return AMBIGUOUS
    return AMBIGUOUS if _overruled(_JSON.sub(" ", body), reader, got) else got


_IS_CORRECT = re.compile(r"(?<![\w'’])\(?([A-Z])\)?\s+(?:is|seems|looks)\s+(?:the\s+)?"
                         r"(?:correct|(?:right|best)\s+(?:answer|option|choice|one))\b")  # not "B looks right"


def _overruled(rest: str, reader: _Reader, answer: Reading) -> bool:
    """Whether the text beside an explicit answer (a JSON reasoning field, prose around ``<answer>`` tags)
    itself states a different answer: an answer phrase ("Final answer: plant"), a conclusion ("…, so the
    correct choice is B", "so yes, …") or "C is correct"."""
    if len(rest.strip()) < 4:
        return False  # nothing beside the answer: the common "<answer>C</answer>"
    rest = _strip_markup(rest)
    for m in _PHRASE.finditer(rest):
        if _span(reader, _innermost(m)) not in (None, AMBIGUOUS, answer):
            return True
    for sentence in re.split(r"(?<=[.!?;])\s+|\n+", _asserted(rest)):
        m = _CONCLUSION.search(sentence)
        # read as a reply's opening would be: "so B." or "so yes", not "so B turns …" (B the object)
        if m and not isinstance(reader, _OpenReader) and reader.lead(m.group(1)) not in (None, AMBIGUOUS, answer):
            return True
    labels = {o.label for o in reader.item.options}
    return any(m.group(1) in labels and m.group(1) != answer and not _negated(rest, m.start(), m.end())
               for m in _IS_CORRECT.finditer(rest))


def parse(response: str | None, item: Item, *, respell: bool = True) -> Parse:
    """Read ``response`` for ``item`` by the grammar in the module docstring (``respell``: whether a short
    reply that reads as nothing is re-read once with its typos mended, see :func:`_respelled`)."""
    if response is None or not response.strip():
        return Parse(None, "none")
    reader = _reader(item)
    body = filter_relations(_body(response), item.question, reader.names())
    text = functools.lru_cache(maxsize=1)(lambda: _strip_markup(body))  # only the later levels need it
    levels: list[tuple[str, Any]] = [
        ("tag", lambda: _after_tags(body, reader)),
        ("json", lambda: _from_json(body, reader)),
        ("phrase", lambda: _phrases(text(), reader)),
        ("boxed", lambda: _combine([_span(reader, s) for s in _BOXED.findall(body)])),
        ("position", lambda: _position(text(), reader)),
        ("bare", lambda: reader.bare(_asserted(text()))),
    ]
    for name, run in levels:
        got = run()
        if name in ("position", "bare") and got is not None and got is not AMBIGUOUS and _taken_back(
                text().strip(), reader, got):
            got = AMBIGUOUS  # the implicit levels read no answer that the reply takes back
        if got is AMBIGUOUS:
            return Parse(None, f"ambiguous:{name}")
        if got is not None:
            return Parse(str(got), name)
    if respell and isinstance(reader, _ChoiceReader):
        fixed = _respelled(response, reader)
        if fixed is not None:
            got_fixed = parse(fixed, item, respell=False)
            if got_fixed.answer is not None:
                return Parse(got_fixed.answer, f"respelled:{got_fixed.rule}")
    return Parse(None, "none")


MAX_RESPELL_WORDS = 12  # only a short reply is re-read with its typos mended; prose is not guessed at


def _respelled(response: str, reader: _ChoiceReader) -> str | None:
    """A short reply that reads as nothing, with each word that is one slip away from exactly one word of
    the options (a letter dropped, added, changed or two swapped, same first letter) spelled as that word:
    "rigth" -> "right", "clokwise" -> "clockwise", "lmap" -> "lamp". None when nothing changes."""
    if len(response.split()) > MAX_RESPELL_WORDS:
        return None
    vocab = _vocabulary(tuple(o.text for o in reader.item.options if o.text))
    if not vocab or re.search(r"<answer>|[{}]", response):
        return None  # typos are mended in a plain reply, not inside an explicit format that read nothing
        return None
    changed = False

    def mend(m: re.Match[str]) -> str:
        nonlocal changed
        word = m.group(0)
        low = word.lower()
        if len(low) < 4 or low in vocab.get((low[0], len(low)), ()):
            return word
        near = [v for n in (-1, 0, 1) for v in vocab.get((low[0], len(low) + n), ()) if _one_slip(low, v)]
        if len(near) != 1:
            return word
        changed = True
        return near[0]

    fixed = re.sub(r"[A-Za-z]+", mend, response)
    return fixed if changed else None


@functools.lru_cache(maxsize=1024)
def _vocabulary(texts: tuple[str, ...]) -> dict[tuple[str, int], list[str]]:
    """The words of four letters or more in an item's option texts (the words a typo may be mended to),
    by first letter and length, so a word is compared only with those one letter longer or shorter."""
    index: dict[tuple[str, int], list[str]] = {}
    for w in sorted({w for t in texts for w in re.findall(r"[a-z]+", t.lower()) if len(w) >= 4}):
        index.setdefault((w[0], len(w)), []).append(w)
    return index


def _one_slip(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one edit (insert, delete, substitute, or swap of neighbours);
    four-letter words only by a swap ("lmap"), so short words ("lift", "left") stay as written."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]:
            return True
        return len(diff) == 1 and len(a) >= 5
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    if len(short) < 4:
        return False
    i = next((k for k in range(len(short)) if short[k] != long_[k]), len(short))
    return short[i:] == long_[i + 1:]


# After an answer read from the reply's position, a second thought takes it back: a strong
# cue ("wait", "on second thought") unless what follows restates the same answer, a weak
# one ("maybe", "though perhaps", "could also be") when what follows names another answer.
_REVISE_STRONG = re.compile(r"\b(?:wait|on\s+(?:second\s+thought|reflection|closer\s+inspection)|scratch\s+that|"
                            r"looking\s+(?:again|closer|more\s+closely)|on\s+a\s+closer\s+look|"
                            r"correction|let\s+me\s+reconsider|i\s+mean|or\s+rather)\b", re.IGNORECASE)
_ACTUALLY_NO = re.compile(r"\bactually[,\s]+no\b", re.IGNORECASE)  # "I think it's B. Actually, no, it's D."
_REVISE_WEAK = re.compile(r"\b(?:actually|maybe|perhaps|possibly|though|although|could\s+(?:also\s+)?be|"
                          r"might\s+(?:also\s+)?be|or\s+else)\b", re.IGNORECASE)
# Another answer offered as a live alternative ("However, D is also plausible", "it could also be D") takes
# back even an explicit answer; a mere concession ("although D might seem plausible") does not.
_ALSO = re.compile(r"\b(?:also|equally)\s+(?:plausible|possible|likely|correct|valid|right|reasonable|an?\s+option)\b"
                   r"|\b(?:could|might|may)\s+also\s+be\b|\bor\s+(?:possibly|perhaps|maybe)\b"
                   r"|\b(?:it|this|that|the\s+answer)\s+(?:could|might|may)\s+(?:well\s+)?be\b", re.IGNORECASE)
# "C. Hmm, or A.": an "or" that opens a sentence (or follows a "hmm") offers another answer
_OR_AGAIN = re.compile(r"\bor\b(?!\s+rather\b)", re.IGNORECASE)
_OR_OPENS = re.compile(r"(?:^|[.!?;]\s*|\bhmm+,?\s*)$", re.IGNORECASE)
_CONNECTIVE = re.compile(r"^(?:however|but|though|although|yet|still|that\s+said|then\s+again|and|also)\b[\s,]*",
                         re.IGNORECASE)


def _taken_back(text: str, reader: _Reader, answer: Reading, *, implicit: bool = True) -> bool:
    """Whether ``text``, which opens with ``answer``, hedges it or revises it afterwards
    ("A. Actually, wait, B.", "so C... though perhaps A", "Yes? No.", "C. However, D is also plausible").
    An explicit answer (``implicit=False``) is taken back only by a second thought ("wait") or a live
    alternative; the weak cues and an answer put as a question apply to the implicit levels."""
    question = re.match(r"^([^\n?.!;]{1,100})\?", text) if implicit else None
    if question and reader.span(question.group(1)) == answer:
        return True  # the answer is put as a question: "A) Facing left? …", "Yes? No.", "Sofa? Or…"
    strong = ((_REVISE_STRONG, True), (_ACTUALLY_NO, True))
    cues = strong + ((_REVISE_WEAK, False),) if implicit else strong
    for pattern, strong in cues:
        for m in pattern.finditer(text):
            after = _clause(re.sub(r"^[\s,:;.!—–-]+", "", text[m.end():]))
            got = reader.span(after) if after.strip() else None
            if got is AMBIGUOUS or (got is not None and got != answer) or (strong and got != answer):
                return True
    alternatives = [m for m in _OR_AGAIN.finditer(text) if _OR_OPENS.search(text[max(0, m.start() - 8):m.start()])]
    for m in [*_ALSO.finditer(text), *alternatives]:
        begin = max(text.rfind(c, 0, m.start()) for c in ".!?;\n") + 1
        sentence = _CONNECTIVE.sub("", _clean_span(text[begin:m.start()]))
        # its subject: "I would say C, but A is also possible" -> "A"
        sentence = re.split(r"[,;:]|\b(?:but|however|though|although|yet|and)\b", sentence)[-1].strip()
        sentence = re.sub(r"\s+(?:is|are|seems?|looks?|would\s+be|might\s+be|could\s+be)$", "", sentence, flags=re.I)
        after = _clause(re.sub(r"^[\s,:;—–-]+", "", text[m.end():]))
        for alternative in (sentence, after):
            got = reader.span(alternative) if alternative.strip() else None
            if got is AMBIGUOUS or (got is not None and got != answer):
                return True
    return implicit and _doubted(text, reader, answer)


def _doubted(text: str, reader: _Reader, answer: Reading) -> bool:
    """Whether, after a sentence that gives ``answer``, a question raises another one ("It is facing away
    from the camera. Or is it facing toward it?"); a question asked before the answer is reasoning."""
    sentences = [s for s in re.split(r"(?<=[.!?;])\s+|\n+", text) if s.strip()]
    given = False
    for s in sentences:
        if s.rstrip().endswith("?"):
            if given:
                asked = re.sub(r"^(?:or|and|but)?\s*(?:is\s+it|could\s+it\s+be|would\s+it\s+be|maybe|perhaps)?\s*",
                               "", _clean_span(s.rstrip(" ?")), flags=re.I)
                got = reader.span(asked) if asked else None
                if got is None:
                    got = reader.bare(asked)
                if got is AMBIGUOUS or (got is not None and got != answer):
                    return True
        elif not given:
            given = reader.lead(s) == answer or reader.bare(s) == answer
    return False


def _position(text: str, reader: _Reader) -> Reading:
    stripped = text.strip()
    if not stripped:
        return None
    lines = [ln for ln in stripped.splitlines() if ln.strip()]
    if reader.lists(lines):
        rest = [ln for ln in lines if not reader.quotes(ln)]
        if rest and len(lines) - len(rest) == len(getattr(reader, "labels", ())):
            return _position("\n".join(rest), reader)  # every option quoted as given, then the reply proper
        return AMBIGUOUS  # "A. …\nB. …\nC. …": the options read back, no choice among them
    first = reader.lead(stripped)
    if first is not None and _tentative(stripped):
        return AMBIGUOUS  # "Maybe C.", "Perhaps the stove."
    last = reader.tail(lines[-1]) if len(lines) > 1 or first is None else None
    return _combine([first, last])


def extract(response: str | None, item: Item) -> str | None:
    """The answer the response gives for ``item``, or None when it gives none unambiguously."""
    return parse(response, item).answer


def yes_no(text: str | None) -> str | None:
    """The yes/no answer of a reply by the same grammar (for callers without an item)."""
    item = Item(id="", suite="", task="", question="", images=[], answer_type="yesno", answer="yes")
    return extract(text, item)


def is_correct(prediction: str, item: Item) -> bool:
    if item.answer_type == "mcq":
        return prediction == item.answer
    if item.answer_type == "yesno":
        return prediction.lower() == item.answer.strip().lower()
    gold = {normalise(a) for a in [item.answer, *item.answer_aliases]}
    if normalise(prediction) in gold:
        return True
    try:  # numeric open answers compare as numbers
        return any(abs(float(normalise(prediction)) - float(g)) < 1e-9 for g in gold if _NUMBER.fullmatch(g))
    except ValueError:
        return False
