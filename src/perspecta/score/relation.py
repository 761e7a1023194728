"""Question-aware relation check: a mention of an option inside a statement of the other relation is no answer.

When the question asks which object stands in a relation ("Which object is on the left?", "Which is
farther from you: the sink or the washing machine?", "Which object is closest to the box?"), a reply
that names an object only to say it stands in the *opposite* relation ("The laptop is on the right.")
or in some other relation ("The chair is behind me." to "which object is on your left?") has not
answered; reading "laptop" there credits a model for the wrong object. So, before the grammar runs,
each clause of the reply that names an option and asserts a relation other than the asked one (or the
asked one negated: "The cylinder is not on the left.") is dropped, and in a clause that asserts the
asked relation the reference object ("… to the left *of the teddy bear*", "closest *to the box*") is
dropped too: it is the landmark, not the answer. Only the item's question and option texts are used,
never the gold. Items whose options are themselves relations ("closer" / "farther", "left" / "right")
are untouched: there the relation word *is* the answer.
"""

from __future__ import annotations

import functools
import re

# Relation poles, matched in normalised text (lower case, no articles, "counterclockwise" one word).
_RIGHT_BEFORE = r"(?:on|to|at|toward|my|your|its|his|her|their|further|farther|more|far|lower|upper|bottom|top)"
_POLES: dict[str, str] = {
    "left": r"\bleft(?:most|ward|wards|-hand)?\b",
    "right": rf"(?:\b{_RIGHT_BEFORE}\s+right\b|\bright(?=\s+(?:side|hand|edge|half|of|wall|corner)\b)|"
             r"\bright(?:most|ward|wards|-hand)\b|^right\b|\bright$)",  # "Right: cylinder", "cylinder (right)"
    "front": r"\bin front\b|\bfront(?:most)?\b|\bforeground\b|\bahead\b",
    "behind": r"\bbehind\b|\bback\b|\brear\b|\bbackground\b",
    "closer": r"\bclos(?:e|er|est)\b|\bnear(?:er|est|by)?\b|\bnext to\b|\bbeside\b|\badjacent\b",
    "farther": r"\bfar(?:ther|thest)?\b|\bfurthe(?:r|st)\b|\bdistant\b",
    "above": r"\babove\b|\bhigher\b|\bhighest\b|\bon top\b",
    "below": r"\bbelow\b|\bbeneath\b|\bunder(?:neath)?\b|\blower\b|\blowest\b",
    "clockwise": r"(?<!counter)\bclockwise\b",
    "counterclockwise": r"\bcounterclockwise\b",
}
_POLE_RE = {pole: re.compile(p) for pole, p in _POLES.items()}
_POLE_WORD = re.compile(r"left|right|front|ahead|behind|back|rear|clos|near|next|beside|adjacent|far|furth|distant|"
                        r"above|high|top|below|beneath|under|low|clockwise")  # a cheap prefilter on raw text
_ANY_POLE = re.compile("|".join(f"(?:{p})" for p in _POLES.values()))
# "which (object|of the two objects|…) is/appears … <relation> …?": the question's asking clause.
_ASKING = re.compile(r"\bwhich\b(?:\s+[\w',]+){0,6}?\s+(?:is|are|appears?|would\s+be|lies|sits|stands|seems)\b"
                     r"([^?]*)\?", re.IGNORECASE)
_NEGATED_POLE = r"\b(?:not|never|neither|nor)\s+(?:\w+\s+){0,2}$"
# A clause ends at a sentence stop, a comma, a closing bracket ("teddy bear (left), cylinder (right)"), an
# answer tag, or a conjunction that starts a new statement.
_CLAUSE_SPLIT = re.compile(r"[.;!?\n]+(?=\s|$)|[,)]|</?answer>"
                           r"|\b(?:and|but|while|whereas|whilst|so|because|since|then)\b"
                           r"|->|→", re.IGNORECASE)


@functools.lru_cache(maxsize=1 << 12)
def asked_pole(question: str) -> str | None:
    """The relation the question asks for ("left", "farther", …), or None when it asks none or several."""
    from perspecta.score.extract import normalise  # a late import: extract imports this module

    m = None
    for m in _ASKING.finditer(question):
        pass  # the last asking clause: a premise may come first ("In the front view the box is on the left.")
    if m is None:
        return None
    clause = normalise(m.group(1))
    poles = {pole for pole, rx in _POLE_RE.items() if rx.search(clause)}
    if len(poles) > 1:  # "further back", "further to the right": the direction qualifies the distance
        poles -= {"farther"}
    return poles.pop() if len(poles) == 1 else None


def relational(names: tuple[str, ...]) -> bool:
    """Whether any option text or candidate (normalised) is itself a relation ("left", "closer")."""
    return any(_ANY_POLE.search(n) for n in names)


_PREPOSITION_POLES = {"behind", "above", "below", "beneath", "under", "underneath", "next to", "beside", "near"}


@functools.lru_cache(maxsize=1 << 10)
def _names_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for all the names as written (case, hyphens and runs of spaces aside), longest first."""
    forms = [r"[\s\-]+".join(map(re.escape, n.split())) for n in sorted(names, key=len, reverse=True)]
    return re.compile(rf"(?<!\w)(?:{'|'.join(forms)})(?!\w)", re.IGNORECASE)


def _raw_mentions(clause: str, names: tuple[str, ...]) -> list[tuple[int, int]]:
    """Where the names occur in the clause as written."""
    return [(m.start(), m.end()) for m in _names_pattern(names).finditer(clause)]


def _landmark(before: str, asked: str) -> bool:
    """Whether an option named after ``before`` (normalised) is the asked relation's reference object:
    "left of X", "closest to X", "farther from me than X", "behind X"."""
    for m in _POLE_RE[asked].finditer(before):
        between = before[m.end():] + " "
        if re.fullmatch(r"\s*(?:\w+\s+){0,3}?(?:of|than|to|from)\s+", between) or (
                m.group(0) in _PREPOSITION_POLES and not between.strip()):
            return True
    return False


def _clause_fix(clause: str, asked: str, names: tuple[str, ...]) -> str | None:
    """The clause as the grammar should see it: unchanged (None), or with option mentions cut out."""
    from perspecta.score.extract import normalise

    mentions = _raw_mentions(clause, names)
    if not mentions:
        return None
    norm = normalise(clause)
    poles = [(pole, m) for pole, rx in _POLE_RE.items() for m in rx.finditer(norm)]
    if not poles:
        return None
    asked_hits = [m for pole, m in poles if pole == asked and not re.search(_NEGATED_POLE, norm[:m.start()])]
    if not asked_hits:  # the options are named only as standing in another relation (or not in the asked one)
        return "".join(re.findall(r"<[^<>]*>", clause))  # the whole statement goes; answer tags stay
    mentions = [(s, e) for s, e in mentions if _landmark(normalise(clause[:s]), asked)]  # only the landmark goes
    if not mentions:
        return None
    for s, e in sorted(mentions, reverse=True):
        clause = clause[:s] + clause[e:]
    return clause


def filter_relations(text: str, question: str, names: tuple[str, ...]) -> str:
    """``text`` without the option mentions that answer another relation than the question's (module doc)."""
    if not names or "which" not in question.lower():
        return text
    asked = asked_pole(question)
    if asked is None or relational(names):
        return text
    low = text.lower()
    if not any(n.split()[0] in low for n in names) or not _POLE_WORD.search(low):
        return text  # the common case, cheaply: no option named, or no relation stated
    out, last = [], 0
    for m in list(_CLAUSE_SPLIT.finditer(text)) + [None]:
        end = m.start() if m else len(text)
        fixed = _clause_fix(text[last:end], asked, names)
        out.append(text[last:end] if fixed is None else fixed)
        if m:
            out.append(m.group(0))
            last = m.end()
    return "".join(out)
