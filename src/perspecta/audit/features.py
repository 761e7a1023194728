"""What a skill-free predictor may look at: answer candidates and five feature families.

Every item is turned into one row per answer *candidate* (the options of an MCQ, yes/no,
or the task's answer vocabulary for open answers); a classifier scores the rows and the
best-scoring candidate is the prediction. Item-level features are crossed with the
candidate's text and letter, so one linear model can learn "when the question says
*back*, the answer is *no*" or "odd unit index -> option A".

Families (each also contains the prior's features, so it reads "prior + X"):

``prior``     the candidate itself (answer text, option letter) and the subtype: the
              cross-fitted answer prior.
``text``      words and word pairs of the question (markers removed; words every item
              of the task shares are dropped) and of the option texts, plus where a
              numeric or long option ranks among the offered ones.
``ids``       leaks outside the content: unit index (parity, mod 3/4) and suffix in the
              item id, variant, tokens of image file names, option order.
``images``    byte-identical or near-identical images within the item (sha256, 8x8
              difference hash): which pairs match, which option image repeats another,
              which option images are the most alike pair and which is the odd one out.
``features``  cheap non-skill metadata: object categories, asset ids and sources named
              in ``metadata``, image sizes, number of images and options, and whatever
              the suite declares with ``audit_features(item_dict)``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import numpy as np

from perspecta.audit.images import FingerprintStore, hamming
from perspecta.dataset.item import IMAGE_MARKER, Item

FAMILIES = ("prior", "text", "ids", "images", "features")
FAMILY_TITLES = {
    "prior": "answer prior",
    "text": "text only",
    "ids": "ids & order",
    "images": "image identity",
    "features": "cheap features",
}
NEAR_DHASH = 4  # difference-hash bits apart that still look the same at thumbnail scale
MAX_OPEN_VOCAB = 40  # open answers: candidates are the task's most frequent answer texts
MAX_IMAGES = 6  # image pairs/sizes are described for the first images only
NUMERIC_BINS = 5

# metadata keys that name *what* an object is (not where it is or how it is turned)
_META_KEY = re.compile(r"^(category|categories|asset|assets|asset_id|asset_ids|source|sources)(_[a-z0-9]+)?$")
_WORD = re.compile(r"[a-z0-9]+")
_NUMBER = re.compile(r"^\s*[-+]?\d+(\.\d+)?\s*$")

Features = dict[str, float]
SuiteFeatures = Callable[[dict[str, Any]], dict[str, Any]]


class AuditInputError(ValueError):
    """A dataset or a suite hook gives the audit something it cannot use (one-line message)."""


@dataclass(frozen=True)
class Candidate:
    key: str  # compared with the item's answer (option label, or normalised answer text)
    text: str  # normalised text shown for it ("" for an image option)
    letter: str  # option label for MCQ, else ""
    image: int | None = None  # index into the item's images for an image option


def norm(text: str) -> str:
    return " ".join(text.lower().split())


def open_vocabulary(items: Iterable[Item]) -> list[str]:
    """The answer vocabulary of open items: most frequent normalised answers first."""
    counts = Counter(norm(it.answer) for it in items if it.answer_type == "open")
    return [a for a, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_OPEN_VOCAB]]


def candidates(item: Item, vocab: list[str]) -> list[Candidate]:
    if item.answer_type == "mcq":
        return [Candidate(o.label, norm(o.text) if o.text is not None else "", o.label, o.image) for o in item.options]
    if item.answer_type == "yesno":
        return [Candidate("yes", "yes", ""), Candidate("no", "no", "")]
    return [Candidate(v, v, "") for v in vocab]


def is_correct(item: Item, cand: Candidate) -> bool:
    if item.answer_type == "open":
        return cand.key == norm(item.answer) or cand.key in {norm(a) for a in item.answer_aliases}
    return cand.key == item.answer


def answer_text(item: Item) -> str:
    """The answer as a model would read it: the correct option's text (or "image X")."""
    if item.answer_type == "mcq":
        o = item.option(item.answer)
        return norm(o.text) if o.text is not None else f"image option {o.label}"
    return norm(item.answer)


def unit_of(item: Item) -> tuple[int | None, str]:
    """``(unit index, suffix)`` from the id's last part, e.g. ``000012-coarse`` -> (12, "coarse")."""
    last = item.id.rsplit("/", 1)[-1]
    head, _, suffix = last.partition("-")
    return (int(head) if head.isdigit() else None), suffix


# --------------------------------------------------------------------------- families


def _words(text: str) -> list[str]:
    return _WORD.findall(text.replace(IMAGE_MARKER, " ").lower())


def templated_question(item: Item) -> str:
    """The question with each text option replaced by its letter slot (``optA``...), so
    "the box is on the left ... which is on the right? A. box B. person" and the same
    sentence about a cup and a chair read alike: a text model can then learn which
    *slot* a wording points to, whatever the objects are called."""
    q = item.question.lower()
    texts = [(o.label, norm(o.text)) for o in item.options if o.text is not None and len(norm(o.text)) >= 2]
    for label, text in sorted(texts, key=lambda lt: -len(lt[1])):  # longer names first ("red box" before "box")
        q = re.sub(rf"(?<![a-z0-9]){re.escape(text)}(?![a-z0-9])", f" opt{label.lower()} ", q)
    return q


def question_terms(item: Item) -> set[str]:
    """The text-only model's vocabulary for one item: words and adjacent word pairs of the
    question, the same of its templated form, each templated sentence, and the whole
    templated question (which lets the model memorise a wording that fixes the answer slot)."""
    words = _words(item.question)
    terms = set(words) | {f"{a}_{b}" for a, b in zip(words, words[1:])}
    if item.answer_type == "mcq":
        templated = templated_question(item)
        tw = _words(templated)
        terms |= {f"t:{a}_{b}" for a, b in zip(tw, tw[1:])}
        for sentence in re.split(r"[.?!:\n]+", templated.replace(IMAGE_MARKER, " ")):
            if sentence.strip():
                terms.add("s:" + " ".join(_words(sentence)))
        terms.add("tq:" + " ".join(tw))
    return terms


def _rank(values: list[float], i: int) -> int:
    return sum(v < values[i] for v in values)


_STOP = frozenset("the and you your which what from with that this are was were for its into now".split())
_OPTION_LINE = re.compile(r"^\s*[a-z][.)]\s.*$", re.MULTILINE)


def question_body(item: Item) -> str:
    """The question without image markers and without its option lines ("A. box")."""
    return _OPTION_LINE.sub(" ", item.question.replace(IMAGE_MARKER, " ").lower())


def _asked_words(body: str) -> list[str]:
    """Words of the question proper: the last sentence that ends in '?' (else the last one)."""
    sentences = [x for x in re.split(r"(?<=[.?!])\s+", body.strip()) if x.strip()]
    asked = [x for x in sentences if x.rstrip().endswith("?")]
    return _words((asked or sentences or [""])[-1])


def _positions(words: list[str], phrase: list[str]) -> list[int]:
    """Start indices of ``phrase`` in ``words``."""
    n = len(phrase)
    if not n:
        return []
    return [i for i, w in enumerate(words) if w == phrase[0] and words[i:i + n] == phrase]


def _mention_features(words: list[str], asked: list[str], text: str) -> Features:
    """Where a candidate is named in the question: how often, and the two words before
    and after each of its first three mentions -- alone and with each word and each pair
    of words of the asked sentence, so "farther ... [the X] or the" can point at the right
    premise slot, and "from the back ... on the right" can flip it (a pair, not a sum)."""
    cw = _words(text)
    if not cw:
        return {}
    n = len(cw)
    at = _positions(words, cw)
    f: Features = {f"mentions={min(len(at), 3)}": 1.0}
    for j, p in enumerate(at[:3]):
        for side, ctx in (("prev", "_".join(words[max(0, p - 2):p])), ("next", "_".join(words[p + n:p + n + 2]))):
            f[f"m{j}.{side}={ctx}"] = 1.0
            for w in asked:
                f[f"m{j}.{side}={ctx}|ask:{w}"] = 1.0
    return f


def _asked_pairs(asked: list[str]) -> list[str]:
    """Unordered pairs of the asked sentence's content words (at most 12 of them)."""
    content = sorted({w for w in asked if len(w) > 2 and w not in _STOP})[:12]
    return [f"{a}+{b}" for i, a in enumerate(content) for b in content[i + 1:]]


def _text_candidate_features(item: Item, cands: list[Candidate]) -> list[Features]:
    body = question_body(item)
    words, asked = _words(body), _asked_words(body)
    asked_terms = asked + _asked_pairs(asked)
    out: list[Features] = [_mention_features(words, asked_terms, c.text) if c.text else {} for c in cands]
    texts = [c.text for c in cands]
    if item.answer_type != "mcq" or not all(texts):
        return out
    first = [float(next(iter(_positions(words, _words(t))), len(words))) for t in texts]
    numeric = [float(t) for t in texts] if all(_NUMBER.match(t) for t in texts) else None
    lengths = [float(len(t)) for t in texts]
    for i, c in enumerate(cands):
        f = out[i]
        for w in set(_words(c.text)):
            f[f"ct:{w}"] = 1.0
        f[f"first_mention_rank={_rank(first, i)}"] = 1.0
        f[f"len_rank={_rank(lengths, i)}"] = 1.0
        f[f"len_rank_rev={_rank([-v for v in lengths], i)}"] = 1.0
        if numeric is not None:
            f[f"num_rank={_rank(numeric, i)}"] = 1.0
            f[f"num_rank_rev={_rank([-v for v in numeric], i)}"] = 1.0
    return out


def _id_item_features(item: Item) -> dict[str, Any]:
    f: dict[str, Any] = {}
    unit, suffix = unit_of(item)
    if unit is not None:
        for m in (2, 3, 4):
            f[f"unit%{m}"] = str(unit % m)
    f["id_suffix"] = suffix or "-"
    f["variant"] = item.variant
    for j, rel in enumerate(item.images[:MAX_IMAGES]):
        for k, tok in enumerate(re.split(r"[_\-.]+", PurePosixPath(rel).stem)):
            if tok.isdigit():
                f[f"file{j}.{k}%2"] = str(int(tok) % 2)
                f[f"file{j}.{k}%3"] = str(int(tok) % 3)
            elif tok:
                f[f"file{j}.{k}"] = tok.lower()
    texts = [norm(o.text) for o in item.options if o.text is not None]
    if item.answer_type == "mcq" and len(texts) == len(item.options) and texts:
        f["options_alpha_sorted"] = str(texts == sorted(texts))
        f["n_options"] = str(len(texts))
    return f


def _id_candidate_features(item: Item, cands: list[Candidate]) -> list[Features]:
    texts = [c.text for c in cands]
    if item.answer_type != "mcq" or not all(texts):
        return [{} for _ in cands]
    order = sorted(texts)
    return [{f"alpha_rank={order.index(t)}": 1.0, f"position={i}": 1.0} for i, t in enumerate(texts)]


def _relation(store: FingerprintStore, a: str, b: str) -> str:
    fa, fb = store.get(a), store.get(b)
    if fa.sha256 == fb.sha256:
        return "same"
    return "near" if hamming(fa.dhash, fb.dhash) <= NEAR_DHASH else "far"


def _image_item_features(item: Item, store: FingerprintStore) -> dict[str, Any]:
    f: dict[str, Any] = {}
    imgs = item.images[:MAX_IMAGES]
    n_same = n_near = 0
    for i in range(len(imgs)):
        for j in range(i + 1, len(imgs)):
            rel = _relation(store, imgs[i], imgs[j])
            if rel != "far":
                f[f"pair{i}-{j}"] = rel
                n_same += rel == "same"
                n_near += rel == "near"
    f["identical_pairs"] = str(min(n_same, 3))
    f["near_pairs"] = str(min(n_near, 3))
    return f


def _image_candidate_features(item: Item, cands: list[Candidate], store: FingerprintStore) -> list[Features]:
    out: list[Features] = [{} for _ in cands]
    option_images = [c.image for c in cands]
    if item.answer_type != "mcq" or any(i is None for i in option_images):
        return out
    shown = [i for i in range(len(item.images)) if i not in option_images]
    for k, c in enumerate(cands):
        assert c.image is not None
        mine = item.images[c.image]
        for s in shown[:2]:  # the reference image(s) the options are compared with
            out[k][f"vs_shown{s}={_relation(store, mine, item.images[s])}"] = 1.0
        others = [_relation(store, mine, item.images[o]) for o in option_images if o != c.image]
        out[k][f"vs_options_same={min(others.count('same'), 2)}"] = 1.0
        out[k][f"vs_options_near={min(others.count('near'), 2)}"] = 1.0
    for k, name in enumerate(_alike_ranks(item, option_images, store)):  # type: ignore[arg-type]
        out[k][name] = 1.0
    return out


def _alike_ranks(item: Item, option_images: list[int], store: FingerprintStore) -> list[str]:
    """Per image option, how alike it is to its closest fellow option, ranked among the
    options (difference-hash bits, ties share a rank): ``alike_rank=0`` for the two most
    alike, ``odd_one_out`` for the one farthest from all others. A near-miss distractor
    built as a twin of the answer (a swapped pair, the same side turned a little) makes
    the answer one of the look-alikes even when the twin is far past the ``near`` bits;
    a twin of a distractor makes it the odd one out (red-team round 5)."""
    if len(option_images) < 3:
        return []
    hashes = [store.get(item.images[i]).dhash for i in option_images]
    nearest = [min(hamming(h, g) for j, g in enumerate(hashes) if j != i) for i, h in enumerate(hashes)]
    top = max(nearest)
    odd = nearest.count(top) == 1
    return [f"alike_rank={min(sum(v < d for v in nearest), 2)}" + ("|odd_one_out" if odd and d == top else "")
            for d in nearest]


def _meta_values(metadata: dict[str, Any], keys: frozenset[str] | None = None) -> Iterable[tuple[str, str]]:
    """``(key, value)`` of metadata fields naming an object's category, asset or source
    (at any depth; lists give one pair per element). ``keys`` replaces the default
    choice of fields (a suite's ``AUDIT_METADATA_KEYS``)."""
    stack: list[Any] = [metadata]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                if isinstance(k, str) and (k in keys if keys is not None else _META_KEY.match(k)):
                    values = v if isinstance(v, list) else [v]
                    for x in values:
                        if isinstance(x, (str, int, bool)) and not isinstance(x, float):
                            yield k, str(x).lower()
                elif isinstance(v, (dict, list)):
                    stack.append(v)
        elif isinstance(node, list):
            stack.extend(x for x in node if isinstance(x, (dict, list)))


def _generic_item_features(item: Item, store: FingerprintStore, keys: frozenset[str] | None) -> dict[str, Any]:
    f: dict[str, Any] = {}
    for k, v in sorted(set(_meta_values(item.metadata, keys))):
        f[f"meta:{k}={v}"] = "1"
    f["n_images"] = str(len(item.images))
    f["n_options"] = str(len(item.options))
    for j, rel in enumerate(item.images[:MAX_IMAGES]):
        fp = store.get(rel)
        f[f"size{j}"] = f"{fp.width}x{fp.height}"
    return f


def _generic_candidate_features(item: Item, cands: list[Candidate], keys: frozenset[str] | None) -> list[Features]:
    names = {v for _, v in _meta_values(item.metadata, keys)}
    return [{"cand_is_meta_name": 1.0} if c.text and c.text in names else {} for c in cands]


def suite_item_features(item: Item, fn: SuiteFeatures | None) -> dict[str, Any]:
    """The suite's declared cheap features, checked: a mapping of names to str/number."""
    if fn is None:
        return {}
    try:
        got = fn(item.to_dict())
    except Exception as e:  # a suite hook bug must name the item, not crash the table
        raise AuditInputError(f"{item.suite}.audit_features failed on {item.id}: {type(e).__name__}: {e}") from None
    if not isinstance(got, dict):
        raise AuditInputError(f"{item.suite}.audit_features returned {type(got).__name__} for {item.id}, "
                              "expected a dict of name -> str | number")
    out: dict[str, Any] = {}
    for k, v in got.items():
        if isinstance(v, bool) or isinstance(v, str):
            out[f"suite:{k}"] = str(v)
        elif isinstance(v, (int, float)) and math.isfinite(v):
            out[f"suite:{k}"] = float(v)
        elif v is not None:
            raise AuditInputError(f"{item.suite}.audit_features[{k!r}] for {item.id} is {type(v).__name__}, "
                                  "expected str or a finite number")
    return out


# --------------------------------------------------------------------------- assembly


def _bin_numbers(per_item: list[dict[str, Any]]) -> None:
    """Replace numeric feature values by their quantile bin over the population (in
    place), so sizes in pixels and ratios enter the linear model as categories."""
    names = sorted({k for f in per_item for k, v in f.items() if isinstance(v, float)})
    for name in names:
        values = np.array([f[name] for f in per_item if isinstance(f.get(name), float)])
        edges = np.unique(np.quantile(values, np.linspace(0, 1, NUMERIC_BINS + 1)[1:-1]))
        for f in per_item:
            v = f.get(name)
            if isinstance(v, float):
                f[name] = f"q{int(np.searchsorted(edges, v, side='right'))}"


@dataclass
class Rows:
    """One population's candidate rows for each family: ``rows[family]`` is a list of
    feature dicts, row ``r`` belongs to item ``row_item[r]``, ``label[r]`` says whether
    it is the right answer."""

    rows: dict[str, list[Features]]
    row_item: np.ndarray
    label: np.ndarray
    n_candidates: np.ndarray  # per item


def build_rows(items: list[Item], store: FingerprintStore, suite_features: dict[str, SuiteFeatures | None],
               metadata_keys: dict[str, frozenset[str] | None] | None = None) -> Rows:
    """Candidate rows of every family for one population (a task's items, or its
    text-only controls). Token filters and numeric bins use the population's questions
    and features only -- never the answers. ``metadata_keys[suite]`` (None = default)
    names the metadata fields the generic ``features`` predictor reads."""
    keys = metadata_keys or {}
    vocab = open_vocabulary(items)
    cands = [candidates(it, vocab) for it in items]
    terms = [question_terms(it) for it in items]
    df = Counter(t for ts in terms for t in ts)
    n = len(items)
    keep = {t for t, c in df.items() if c >= 2 and c < n}  # shared by all items = no information
    item_feats: dict[str, list[dict[str, Any]]] = {
        "text": [{f"q:{t}": "1" for t in sorted(ts & keep)} for ts in terms],
        "ids": [_id_item_features(it) for it in items],
        "images": [_image_item_features(it, store) for it in items],
        "features": [_generic_item_features(it, store, keys.get(it.suite))
                     | suite_item_features(it, suite_features.get(it.suite)) for it in items],
    }
    _bin_numbers(item_feats["features"])
    cand_feats: dict[str, list[list[Features]]] = {
        "text": [_text_candidate_features(it, cs) for it, cs in zip(items, cands)],
        "ids": [_id_candidate_features(it, cs) for it, cs in zip(items, cands)],
        "images": [_image_candidate_features(it, cs, store) for it, cs in zip(items, cands)],
        "features": [_generic_candidate_features(it, cs, keys.get(it.suite)) for it, cs in zip(items, cands)],
    }
    rows: dict[str, list[Features]] = {fam: [] for fam in FAMILIES}
    row_item: list[int] = []
    label: list[bool] = []
    for i, (it, cs) in enumerate(zip(items, cands)):
        for k, c in enumerate(cs):
            ident = [f"c={c.text}"] if c.text else []
            if c.letter:
                ident.append(f"l={c.letter}")
            prior = {name: 1.0 for name in ident}
            prior.update({f"sub={it.subtype}|{name}": 1.0 for name in ident})
            rows["prior"].append(prior)
            for fam in FAMILIES[1:]:
                r = dict(prior)
                for fname, value in item_feats[fam][i].items():
                    for name in ident:
                        r[f"{fname}={value}|{name}"] = 1.0
                r.update(cand_feats[fam][i][k])
                rows[fam].append(r)
            row_item.append(i)
            label.append(is_correct(it, c))
    return Rows(rows, np.array(row_item, dtype=np.int64), np.array(label, dtype=bool),
                np.array([len(cs) for cs in cands], dtype=np.int64))
