"""One streaming pass over scored records into compact per-group counters.

A run is one (model, prompt mode, dataset fingerprint): the same model evaluated on two
datasets — e.g. DORI's structured and unstructured prompts, which differ in their suite
configuration and so in their manifest — is two runs, never one replacing the other.
For each run the aggregator keeps counts keyed by (level, group, repeat) — enough for
accuracy, coverage, chance level, a bootstrap CI (binomial resampling from counts) and
the mean ± SEM over repeats — plus one metric accumulator per suite, made by the suite's
spec (:class:`perspecta.suites.spec.Suite` ``metrics``), and per (suite, task, knob,
value) counts for the psychometric curves. ``perspecta score`` and the report both fold
records through this one aggregator, so every figure is computed once.

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
from perspecta.suites.registry import suite_spec
from perspecta.suites.spec import Accumulator

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
    # (suite, task, subtype, suite facets, repeat, status, correct, n_options, answer_type) -> count
    classes: dict[tuple[Any, ...], int] = field(default_factory=dict)
    _cells: dict[tuple[str, str, int], list[float]] | None = None
    suites: dict[str, Accumulator] = field(default_factory=dict)  # suite -> its spec's metric accumulator
    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0.0, 0]))
    # (suite, task, knob, value) -> [n, correct, sum of chance rates, {repeat: n}]: psychometric
    # curves, every asked record (failed and unparsed count wrong, as in the headline accuracy); the
    # per-repeat counts give the number of items behind the n records (repeats are not new items)
    knobs: dict[tuple[str, str, str, float], list[Any]] = field(default_factory=dict)

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
    """Levels: all, suite, task, subtype, the levels a suite's ``accuracy_facets`` add, and
    kappa_pool — the records with a chance rate (1/k, or 1/2 for yes/no), one rate each, per
    suite, per subtype (``suite/task/subtype``) and overall."""
    cells: dict[tuple[str, str, int], list[float]] = defaultdict(_cell)
    for (suite, task, subtype, facets, repeat, status, correct, n_opt, answer_type), k in classes.items():
        answered = status != "failed"
        keys = [("all", "all"), ("suite", suite), ("task", f"{suite}/{task}"), ("subtype", f"{suite}/{task}/{subtype}")]
        keys += facets
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
            # per subtype too: a subtype may mix open answers (no chance rate) with options, and
            # its kappa must compare the options' accuracy with the options' chance, not all records'
            for name in (suite, "all", f"{suite}/{task}/{subtype}"):
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
        self.per_item = per_item
        # item_id -> [suite, task, correct runs, wrong runs, failed runs] (model runs only; for the gallery)
        self.items: dict[str, list[Any]] = {}
        self.n_records = 0
        self._hooks: dict[str, tuple[Any, Any]] = {}  # suite -> (accuracy_facets, metrics factory)

    def _suite_hooks(self, suite: str) -> tuple[Any, Any]:
        """The suite's spec hooks, looked up once per suite (the lookup is per record otherwise)."""
        hooks = self._hooks.get(suite)
        if hooks is None:
            spec = suite_spec(suite)
            hooks = self._hooks[suite] = (None, None) if spec is None else (spec.accuracy_facets, spec.metrics)
        return hooks

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
        facets_of, metrics = self._suite_hooks(suite)
        facets = facets_of(r) if facets_of is not None else ()
        # one counter per distinct record class; accuracy cells are rolled up from them at the end
        cls = (suite, task, subtype, facets, repeat, status, correct, n_opt, answer_type)
        st.classes[cls] = st.classes.get(cls, 0) + 1
        knobs = md.get("knobs")
        if knobs:
            _count_knobs(st, suite, task, knobs, answered and correct, n_opt, answer_type, repeat)
        if st.is_human and answered and r.get("latency_s") is not None:
            lat = st.latency[f"{suite}/{task}/{subtype}"]
            lat[0] += float(r["latency_s"])
            lat[1] += 1
        if self.per_item and not st.is_human:
            it = self.items.get(r["item_id"])
            if it is None:
                it = self.items[r["item_id"]] = [suite, task, 0, 0, 0]
            it[2 if answered and correct else 3 if answered else 4] += 1
        if metrics is not None:
            acc = st.suites.get(suite)
            if acc is None:
                acc = st.suites[suite] = metrics()
            try:
                acc.add(r)
            except ValueError as e:  # records a suite's metric cannot take (e.g. a group's variant twice)
                raise ReportInputError(f"{st.model} ({st.prompt_mode}), record {r.get('item_id')}: {e}") from None


def _count_knobs(st: RunState, suite: str, task: str, knobs: dict[str, Any], correct: bool, n_opt: int,
                 answer_type: str, repeat: int = 0) -> None:
    """Count the record at each numeric knob value it was generated with (non-numbers are skipped:
    a curve needs an axis). Chance: 1/2 for yes/no, 1/k for k options, 0 for open answers. The
    record's repeat is counted too, so the curves can take their intervals at the items."""
    chance = 0.5 if answer_type == "yesno" else 1.0 / n_opt if n_opt else 0.0
    for name, value in knobs.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            continue
        key = (suite, task, str(name), float(value))
        c = st.knobs.get(key)
        if c is None:
            c = st.knobs[key] = [0, 0, 0.0, {}]
        c[0] += 1
        c[1] += correct
        c[2] += chance
        c[3][repeat] = c[3].get(repeat, 0) + 1


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
    refused: ReportInputError | None = None
    for line in iter_lines(files, known_suites):
        hashes.append(_record_key_hash(line.record))
        if refused is None:
            try:
                agg.add(line.record)
            except ReportInputError as e:
                # a suite metric may refuse a record its superseded twin already filled (a resumed
                # run re-asks a failed SpinBench variant: the group holds that variant twice until
                # the older line is dropped); decide after the pass, once superseded lines are known
                refused = e
    superseded, dup_hashes = _superseded(hashes)
    del hashes
    if not superseded:
        if refused is not None:
            raise refused
        return agg
    agg = Aggregator(per_item=per_item)
    owner: dict[int, tuple[Any, ...]] = {}
    source: dict[int, tuple[Path, int, str]] = {}
    for line in iter_lines(files, known_suites):
        r = line.record
        h = _record_key_hash(r)
        if h in dup_hashes:
            key = _record_key(r)
            if owner.setdefault(h, key) != key:  # two different keys, one 64-bit hash: never guess
                raise ReportInputError(f"{line.path}:{line.lineno}: record key hash collision; report cannot "
                                       "tell replaced records apart (please report this)")
            _same_evaluation(source, h, line)
        if line.index not in superseded:
            agg.add(r)
    return agg


def _same_evaluation(source: dict[int, tuple[Path, int, str]], h: int, line: Any) -> None:
    """Refuse a record that would replace one of another results log made another way.

    Within one log a later record of the same key is a resumed run's re-ask. Across logs it
    is another evaluation — the same model at another image size, or an import beside an
    eval — and letting the last file win silently mixed the two into one row (some items
    answered one way, some the other) whose *Runs* entry described only one of them. The
    same request in two logs (a copied folder) is the same answer and is let through."""
    rk = line.record.get("request_key") or ""
    first = source.setdefault(h, (line.path, line.lineno, rk))
    if first[0] != line.path and not (rk and rk == first[2]):
        r = line.record
        raise ReportInputError(
            f"{r['model']} ({r.get('prompt_mode', 'direct')}) item {r['item_id']} (repeat {int(r.get('repeat', 0))}) "
            f"is in both {first[0]}:{first[1]} and {line.path}:{line.lineno}, asked another way (other settings, "
            "prompts or an import): a report reads one record per item, so it would mix the two evaluations; "
            "report the folders separately")
