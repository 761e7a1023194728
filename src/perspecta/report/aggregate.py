"""One streaming pass over scored records into compact per-group counters.

A run is one (model, prompt mode, dataset fingerprint): the same model evaluated on two
datasets — e.g. DORI's structured and unstructured prompts, which differ in their suite
configuration and so in their manifest — is two runs, never one replacing the other.
For each run the aggregator keeps counts keyed by (level, group, repeat) — enough for
accuracy, coverage, chance level, a bootstrap CI (binomial resampling from counts) and
the mean ± SEM over repeats — plus the per-suite state the suite metrics need:
SpinBench's per-group variant outcomes (a small bitmask per (repeat, group), since
consistency needs pairs), the label confusion for Cohen's kappa, DORI's soft credit,
error confusion pairs and compound-rotation components, PCSR strict/relaxed sums and
LRR task counts, and per (suite, task, knob, value) counts for the psychometric curves.
Per-record scores reuse the suites' own scorers when a record lacks them.

Later records of the same (model, mode, dataset, repeat, item) replace earlier ones (a resumed
run re-asks failed items): the first pass stores one 8-byte hash per line; only when a
hash repeats is a second pass made that skips the superseded lines.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from perspecta.report.load import ReportInputError, iter_lines
from perspecta.score.records import ScoredRecord
from perspecta.suites.dori import scoring as dori_scoring
from perspecta.suites.lrr import scoring as lrr_scoring
from perspecta.suites.pcsr import scoring as pcsr_scoring
from perspecta.suites.spin.metrics import NO_ANSWER, VARIANT_ORDER

HUMAN_PREFIX = "human:"
_MASK = (1 << 64) - 1
# one accuracy cell: n, answered, ok, unparsed, correct, sum of chance rates, records with a chance rate
N, ANSWERED, OK, UNPARSED, CORRECT, CHANCE_SUM, CHANCE_N = range(7)


def _cell() -> list[float]:
    return [0, 0, 0, 0, 0, 0.0, 0]


@dataclass
class RunState:
    """Everything kept for one (model, prompt mode); sizes grow with groups, not records."""

    model: str
    prompt_mode: str
    dataset: str = ""  # the dataset fingerprint its records carry ("" for records without one)
    # (suite, task, subtype, granularity, category, source, repeat, status, correct, n_options, answer_type) -> count
    classes: dict[tuple[Any, ...], int] = field(default_factory=dict)
    _cells: dict[tuple[str, str, int], list[float]] | None = None
    spin_kappa: dict[str, list[float]] = field(default_factory=dict)  # sub -> [n, correct, sum 1/k, min k]
    spin_confusion: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    spin_groups: dict[tuple[int, str], int] = field(default_factory=dict)  # bit 2i seen, 2i+1 correct
    spin_gap: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0.0]))
    dori_soft: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0.0]))
    # (task, granularity, repeat) -> [n, hard, soft]: Table 2's cells and appendix K's error bars
    dori_tg: dict[tuple[str, str, int], list[float]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0.0]))
    dori_errors: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    dori_error_patterns: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)
    dori_compound: dict[int, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0, 0, 0]))
    dori_n_options: dict[int, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    dori_prompt_styles: set[str] = field(default_factory=set)  # the items' prompt_style (Table 7's ablation)
    pcsr: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0.0, 0.0, 0]))
    lrr: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0.0]))
    lrr_error: str | None = None
    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0.0, 0]))
    # (suite, task, knob, value) -> [n, correct, sum of chance rates]: psychometric curves, every
    # asked record (failed and unparsed count wrong, as in the headline accuracy)
    knobs: dict[tuple[str, str, str, float], list[float]] = field(default_factory=dict)

    @property
    def is_human(self) -> bool:
        return self.model.startswith(HUMAN_PREFIX)

    @property
    def cells(self) -> dict[tuple[str, str, int], list[float]]:
        """Accuracy counts per (level, group, repeat), rolled up from the record classes once."""
        if self._cells is None:
            self._cells = _roll_up(self.classes)
        return self._cells


def _roll_up(classes: dict[tuple[Any, ...], int]) -> dict[tuple[str, str, int], list[float]]:
    """Levels: all, suite, task, subtype, dori_tg, category, source (DORI), and kappa_pool — the
    records with a chance rate (1/k, or 1/2 for yes/no), one rate each, per suite and overall."""
    cells: dict[tuple[str, str, int], list[float]] = defaultdict(_cell)
    for (suite, task, subtype, gran, category, source, repeat, status, correct, n_opt, answer_type), k in classes.items():
        answered = status != "failed"
        keys = [("all", "all"), ("suite", suite), ("task", f"{suite}/{task}"), ("subtype", f"{suite}/{task}/{subtype}")]
        if suite == "dori":
            keys.append(("dori_tg", f"{task}/{gran}"))
            keys += [(level, str(v)) for level, v in (("category", category), ("source", source)) if v is not None]
        # as accuracy_block: a yes/no record with options counts both rates
        chance = (1.0 / n_opt if n_opt else 0.0) + (0.5 if answer_type == "yesno" else 0.0)
        chance_n = (1 if n_opt else 0) + (1 if answer_type == "yesno" else 0)
        for level, name in keys:
            c = cells[(level, name, repeat)]
            c[N] += k
            c[CHANCE_SUM] += k * chance  # chance is the item's, asked or not
            c[CHANCE_N] += k * chance_n
            if answered:
                c[ANSWERED] += k
                c[CORRECT] += k * correct
                c[OK if status == "ok" else UNPARSED] += k
        if chance_n:  # every asked record: a failed one counts wrong, as in the headline accuracy
            for name in (suite, "all"):
                c = cells[("kappa_pool", name, repeat)]
                c[N] += k
                c[ANSWERED] += k * answered
                c[CORRECT] += k * (correct and answered)
                c[CHANCE_SUM] += k * (1.0 / n_opt if n_opt else 0.5)
                c[CHANCE_N] += k
    return dict(cells)


class Aggregator:
    """Folds record dicts (one line of results.jsonl each) into :class:`RunState` counters."""

    def __init__(self, *, per_item: bool = False) -> None:
        self.runs: dict[tuple[str, str, str], RunState] = {}
        self.variants: dict[str, int] = {v: i for i, v in enumerate(VARIANT_ORDER)}
        self.per_item = per_item
        # item_id -> [suite, task, correct runs, wrong runs, failed runs] (model runs only; for the gallery)
        self.items: dict[str, list[Any]] = {}
        self.n_records = 0

    def run(self, model: str, mode: str, dataset: str = "") -> RunState:
        key = (model, mode, dataset)
        st = self.runs.get(key)
        if st is None:
            st = self.runs[key] = RunState(model, mode, dataset)
        return st

    def add(self, r: dict[str, Any]) -> None:
        self.n_records += 1
        suite, task, status = r["suite"], r["task"], r["status"]
        st = self.run(r["model"], r.get("prompt_mode", "direct"), r.get("dataset") or "")
        repeat = int(r.get("repeat", 0))
        subtype = r.get("subtype", "") or ""
        correct = bool(r.get("correct"))
        answered = status != "failed"
        n_opt = int(r.get("n_options") or 0)
        answer_type = r.get("answer_type", "mcq")
        md = r.get("metadata") or {}
        granularity = r.get("granularity")
        if suite == "dori":
            category, source = md.get("category"), md.get("source")
            category, source = (None if v is None else str(v) for v in (category, source))
        else:
            category = source = None
        # one counter per distinct record class; accuracy cells are rolled up from them at the end
        cls = (suite, task, subtype, granularity, category, source, repeat, status, correct, n_opt, answer_type)
        st.classes[cls] = st.classes.get(cls, 0) + 1
        knobs = md.get("knobs")
        if knobs:
            _count_knobs(st, suite, task, knobs, answered and correct, n_opt, answer_type)
        if st.is_human and answered and r.get("latency_s") is not None:
            lat = st.latency[f"{suite}/{task}/{subtype}"]
            lat[0] += float(r["latency_s"])
            lat[1] += 1
        if self.per_item and not st.is_human:
            it = self.items.get(r["item_id"])
            if it is None:
                it = self.items[r["item_id"]] = [suite, task, 0, 0, 0]
            it[2 if answered and correct else 3 if answered else 4] += 1
        if suite == "spin":
            self._spin(st, r, md, subtype, task, repeat, answered and r.get("correct") is not None, correct, n_opt)
        elif suite == "dori":
            self._dori(st, r, md, task, repeat, answered, correct, n_opt)
        elif suite == "pcsr":
            self._pcsr(st, r, task, answer_type)
        elif suite == "lrr":
            self._lrr(st, r, task, answer_type, correct)

    # ------------------------------------------------------------------ suites

    def _spin(self, st: RunState, r: dict[str, Any], md: dict[str, Any], subtype: str, task: str,
              repeat: int, scored: bool, correct: bool, n_opt: int) -> None:
        if not scored:
            return
        sub = subtype or task
        k = st.spin_kappa.get(sub)
        if k is None:
            k = st.spin_kappa[sub] = [0, 0, 0.0, n_opt]
        k[0] += 1
        k[1] += correct
        k[2] += 1.0 / n_opt if n_opt else 0.0
        k[3] = min(k[3], n_opt)
        st.spin_confusion[(sub, str(r.get("answer")), str(r.get("prediction") or NO_ANSWER))] += 1
        group = r.get("group") or ""
        if group:
            variant = r.get("variant", "base")
            i = self.variants.setdefault(variant, len(self.variants))
            key = (repeat, group)
            mask = st.spin_groups.get(key, 0)
            if mask >> (2 * i) & 1:
                raise ReportInputError(f"group {group!r} (repeat {repeat}) of {st.model} has two records of "
                                       f"variant {variant!r}")
            st.spin_groups[key] = mask | (1 << 2 * i) | (int(correct) << (2 * i + 1))
        if task == "relation_transformation" and isinstance(md.get("premise"), bool):
            self._gap(st, "premise/with" if md["premise"] else "premise/without", correct, n_opt)
        if task in ("dynamic_rotation", "canonical_view") and md.get("domain") == "person":
            frame = {"object": "own", "viewer": "viewer"}.get(md.get("frame_of_reference"))
            if frame:
                self._gap(st, f"frame_of_reference/{task}/{frame}", correct, n_opt)

    @staticmethod
    def _gap(st: RunState, key: str, correct: bool, n_opt: int) -> None:
        g = st.spin_gap[key]
        g[0] += 1
        g[1] += correct
        g[2] += 1.0 / n_opt if n_opt else 0.0

    def _dori(self, st: RunState, r: dict[str, Any], md: dict[str, Any], task: str, repeat: int,
              answered: bool, correct: bool, n_opt: int) -> None:
        if md.get("prompt_style"):
            st.dori_prompt_styles.add(str(md["prompt_style"]))
        if not answered:
            return
        kind = r.get("subtype") or f"{task}_{r.get('granularity')}"
        scores = r.get("scores") or {}
        soft = scores["soft"] if "soft" in scores else dori_scoring.soft_score(ScoredRecord.from_dict(r)).get("soft", 0.0)
        s = st.dori_soft[kind]
        s[0] += 1
        s[1] += correct
        s[2] += soft
        tg = st.dori_tg[(task, str(r.get("granularity")), repeat)]
        tg[0] += 1
        tg[1] += correct
        tg[2] += soft
        no = st.dori_n_options[int(n_opt or md.get("n_options", 0))]
        no[0] += 1
        no[1] += correct
        values = md.get("option_values") or {}
        gold = md.get("answer_value")
        pred_label = r.get("prediction")
        ok = pred_label is not None and pred_label in values
        pred = values[pred_label] if ok else None
        if ok and not correct:
            key = (kind, dori_scoring._text_of(gold), dori_scoring._text_of(pred))
            st.dori_errors[key] += 1
            if key not in st.dori_error_patterns:
                st.dori_error_patterns[key] = dori_scoring.patterns_of(task, r.get("granularity"), gold, pred)
        if task == "compound_rotation" and r.get("granularity") == "granular" and gold is not None:
            c = st.dori_compound[repeat]
            p = pred if ok else None
            c[0] += 1
            c[1] += p is not None and gold[0] != gold[1] and list(p) == [gold[1], gold[0]]
            c[2] += p is not None and p[0] == gold[0]
            c[3] += p is not None and p[1] == gold[1]
            c[4] += p is None or (p[0] != gold[0] and p[1] != gold[1])

    @staticmethod
    def _pcsr(st: RunState, r: dict[str, Any], task: str, answer_type: str) -> None:
        scores = r.get("scores") or {}
        s = scores if "strict" in scores else pcsr_scoring.pcsr_record_scores(ScoredRecord.from_dict(r))
        for key in (task, f"{task}/{answer_type}", "overall"):
            acc = st.pcsr[key]
            acc[0] += s["strict"]
            acc[1] += s["relaxed"]
            acc[2] += 1

    @staticmethod
    def _lrr(st: RunState, r: dict[str, Any], task: str, answer_type: str, correct: bool) -> None:
        if answer_type != "yesno":
            st.lrr_error = (f"ValueError: record {r['item_id']}: LRR scores yes/no items, "
                            f"got answer_type {answer_type!r}")
            return
        key = task if r.get("variant", "base") in ("", "base") else f"{task}/{r['variant']}"
        paper = (r.get("scores") or {}).get("paper_rule_correct")
        if paper is None:
            paper = lrr_scoring.paper_rule(ScoredRecord.from_dict(r)).get("paper_rule_correct", 0.0)
        t = st.lrr[key]
        t[0] += 1
        t[1] += correct
        t[2] += paper

    def variant_names(self) -> list[str]:
        return sorted(self.variants, key=self.variants.__getitem__)


def _count_knobs(st: RunState, suite: str, task: str, knobs: dict[str, Any], correct: bool, n_opt: int,
                 answer_type: str) -> None:
    """Count the record at each numeric knob value it was generated with (non-numbers are skipped:
    a curve needs an axis). Chance: 1/2 for yes/no, 1/k for k options, 0 for open answers."""
    chance = 0.5 if answer_type == "yesno" else 1.0 / n_opt if n_opt else 0.0
    for name, value in knobs.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            continue
        key = (suite, task, str(name), float(value))
        c = st.knobs.get(key)
        if c is None:
            c = st.knobs[key] = [0, 0, 0.0]
        c[0] += 1
        c[1] += correct
        c[2] += chance


def _record_key(r: dict[str, Any]) -> tuple[Any, ...]:
    return (r["model"], r.get("prompt_mode", "direct"), r.get("dataset") or "", int(r.get("repeat", 0)), r["item_id"])


def _record_key_hash(r: dict[str, Any]) -> int:
    return hash(_record_key(r)) & _MASK


def _superseded(hashes: array) -> tuple[set[int], set[int]]:
    """(line indices replaced by a later line with the same key hash, the repeated hashes)."""
    h = np.frombuffer(hashes, dtype=np.uint64) if len(hashes) else np.zeros(0, dtype=np.uint64)
    order = np.argsort(h, kind="stable")
    s = h[order]
    dup = s[:-1] == s[1:]
    return set(order[:-1][dup].tolist()), set(s[:-1][dup].tolist())


def aggregate(files: Iterable[Path], known_suites: set[str], *, per_item: bool = False) -> Aggregator:
    """Stream every record of ``files`` into an :class:`Aggregator`, last record per key winning."""
    files = list(files)
    agg = Aggregator(per_item=per_item)
    hashes = array("Q")
    for line in iter_lines(files, known_suites):
        hashes.append(_record_key_hash(line.record))
        agg.add(line.record)
    superseded, dup_hashes = _superseded(hashes)
    del hashes
    if not superseded:
        return agg
    agg = Aggregator(per_item=per_item)
    owner: dict[int, tuple[Any, ...]] = {}
    for line in iter_lines(files, known_suites):
        r = line.record
        h = _record_key_hash(r)
        if h in dup_hashes:
            key = _record_key(r)
            if owner.setdefault(h, key) != key:  # two different keys, one 64-bit hash: never guess
                raise ReportInputError(f"{line.path}:{line.lineno}: record key hash collision; report cannot "
                                       "tell replaced records apart (please report this)")
        if line.index not in superseded:
            agg.add(r)
    return agg
