"""Items a run was asked to evaluate but that have no record: counted as failed, never dropped.

A run killed before it finished leaves fewer records than it was asked for, and an
accuracy over the records present would rank it beside complete runs on other items.
``perspecta eval`` writes ``run-<model>.json`` beside the results log with the dataset
and the selection it evaluated (split, suites, per-task limit, prompt modes, repeats);
from it the expected (mode, repeat, item) keys are known. Every expected key without a
record is folded into the aggregator as a ``failed`` record (error ``no record``), so the
headline, every suite metric and the tables count it wrong and show it as failed.

Only runs whose record count in the asked suites differs from what was asked pay for the
check: a second pass over the logs collects their present keys. A run file whose dataset is
gone, or has another fingerprint, cannot say what was asked; such runs are left as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perspecta.report.aggregate import N, Aggregator, RunState
from perspecta.report.load import iter_lines

NO_RECORD = "no record: asked by the run but absent from the results log (interrupted run?)"


def _expected(info: dict[str, Any], cache: dict[str, Any]) -> tuple[list[Any], list[str], int] | None:
    """(items, prompt modes, repeats) the run file says were asked, or None when unknowable."""
    from perspecta.run.dataset import load_dataset, manifest_fingerprint

    root, cfg = info.get("dataset"), info.get("config") or {}
    if not root or not (Path(root) / "manifest.json").is_file():
        return None
    if manifest_fingerprint(root) != info.get("dataset_fingerprint"):
        return None
    if root not in cache:
        cache[root] = load_dataset(root)
    try:
        items = cache[root].select(split=cfg.get("split", "test"), suites=cfg.get("suites"), limit=cfg.get("limit"))
    except ValueError:
        return None
    return items, list(cfg.get("prompt_modes") or ["direct"]), int(cfg.get("repeats") or 1)


def _present(st: RunState, suites: set[str]) -> int:
    """Records of the run in the suites the run file asked. Counting every record let an earlier
    evaluation of another suite into the same folder (``eval --suite spin``, then ``--suite lrr``
    killed halfway) make up the numbers, so the half-finished suite's missing items went unseen."""
    return int(sum(c[N] for (lv, nm, _rep), c in st.cells.items() if lv == "suite" and nm in suites))


def add_missing(agg: Aggregator, files: list[Path], infos: dict[tuple[str, str], dict[str, Any]],
                known_suites: set[str]) -> dict[tuple[str, str, str], int]:
    """Fold a failed record into ``agg`` for every expected key without a record; return
    (model, mode, dataset) -> how many were added (runs with none missing are left out)."""
    from perspecta.score.scoring import score_response

    cache: dict[str, Any] = {}
    short: dict[tuple[str, str, str], tuple[list[Any], int]] = {}
    for (fingerprint, model), info in infos.items():
        exp = _expected(info, cache)
        if exp is None:
            continue
        items, modes, repeats = exp
        for mode in modes:
            st = agg.runs.get((model, mode, fingerprint))
            if st is None:  # asked, never answered once (killed before its first record): every item
                short[(model, mode, fingerprint)] = (items, repeats)  # is missing, not the run dropped
                continue
            if st.is_human:
                continue
            # != rather than <: records beyond the selection (an earlier, larger --limit) can make up
            # the count while items of the selection are missing; the key pass below decides
            if _present(st, {it.suite for it in items}) != len(items) * repeats:
                short[(model, mode, fingerprint)] = (items, repeats)
    if not short:
        return {}
    present: dict[tuple[str, str, str], set[tuple[int, str]]] = {k: set() for k in short}
    for line in iter_lines(files, known_suites):
        r = line.record
        key = (r["model"], r.get("prompt_mode", "direct"), r.get("dataset") or "")
        if key in present:
            present[key].add((int(r.get("repeat", 0)), r["item_id"]))
    added: dict[tuple[str, str, str], int] = {}
    for (model, mode, fingerprint), (items, repeats) in short.items():
        have = present[(model, mode, fingerprint)]
        for repeat in range(repeats):
            for it in items:
                if (repeat, it.id) in have:
                    continue
                rec = score_response(it, model=model, response=None, error=NO_RECORD, prompt_mode=mode, repeat=repeat)
                rec.dataset = fingerprint
                agg.add(rec.to_dict())
                added[(model, mode, fingerprint)] = added.get((model, mode, fingerprint), 0) + 1
    agg.n_records -= sum(added.values())  # n_records counts lines read; these were never written
    for st in agg.runs.values():
        st._cells = None  # rolled up again with the added records
    return added
