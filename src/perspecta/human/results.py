"""``perspecta human results``: human accuracy and response times, and scored records.

Accuracy per group is the mean over annotators of each annotator's accuracy on that
group, ± the standard deviation across annotators (SpinBench's Table 7), beside the
pooled accuracy over all responses. Response times are the server-measured ``rt_s``
(first serve of the item to that annotator -> answer received); responses slower than
180 s are interruptions and are left out of every response-time statistic (and get
``latency_s = None`` in ``results.jsonl``), but their answers still count for accuracy.
The browser-measured time is summarised beside it as ``client_rt``.

``results.jsonl`` holds one :class:`ScoredRecord` per response with model
``human:<annotator>``, so ``perspecta score`` and the report read people like models.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from perspecta.dataset.io import sha256_file, write_json_atomic, write_jsonl_atomic
from perspecta.dataset.item import Item
from perspecta.human.answers import score_human
from perspecta.human.store import INTERRUPTION_S, STORE_NAME, Response, Store
from perspecta.run.dataset import load_dataset
from perspecta.score.records import ScoredRecord

SUMMARY_JSON = "human_summary.json"
SUMMARY_MD = "human_summary.md"
RESPONSES = "responses.jsonl"
RESULTS = "results.jsonl"


def _stats(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0, "mean_s": None, "median_s": None, "sd_s": None}
    return {"n": len(values), "mean_s": statistics.fmean(values), "median_s": statistics.median(values),
            "sd_s": statistics.stdev(values) if len(values) > 1 else None}


def block(rows: list[tuple[Response, ScoredRecord]]) -> dict[str, Any]:
    """Accuracy across annotators and response-time statistics of one group of responses."""
    per_annotator: dict[str, list[bool]] = defaultdict(list)
    for resp, rec in rows:
        per_annotator[resp.annotator].append(bool(rec.correct))
    accs = [sum(v) / len(v) for v in per_annotator.values()]
    kept = [resp for resp, _ in rows if not resp.interrupted]
    relaxed = [rec.scores["relaxed"] for _, rec in rows if "relaxed" in rec.scores]
    out: dict[str, Any] = {
        "n_responses": len(rows),
        "n_annotators": len(per_annotator),
        "accuracy_pooled": sum(bool(rec.correct) for _, rec in rows) / len(rows) if rows else None,
        "accuracy_mean": statistics.fmean(accs) if accs else None,
        "accuracy_sd": statistics.stdev(accs) if len(accs) > 1 else None,
        "interruptions": len(rows) - len(kept),
        # answers given while the right answer was shown after each one (serve --feedback): the
        # person may have learnt the items' answers (a group's variants, a scene's other question)
        "with_feedback": sum(resp.feedback_shown for resp, _ in rows),
        "rt": _stats([r.rt_s for r in kept]),
        "client_rt": _stats([r.client_rt_s for r in kept if r.client_rt_s is not None]),
    }
    if relaxed:
        out["relaxed_accuracy_pooled"] = sum(relaxed) / len(relaxed)
    return out


def _grouped(rows: list[tuple[Response, ScoredRecord]], key: Callable[[ScoredRecord], str]) -> dict[str, Any]:
    groups: dict[str, list[tuple[Response, ScoredRecord]]] = defaultdict(list)
    for row in rows:
        groups[key(row[1])].append(row)
    return {k: block(v) for k, v in sorted(groups.items())}


def collect(store_dir: str | Path, dataset_dir: str | Path | None = None) -> tuple[dict[str, Any], list[ScoredRecord], list[Response]]:
    """(summary, scored records, raw responses) of the evaluation stored in ``store_dir``."""
    store = Store(Path(store_dir) / STORE_NAME, readonly=True)
    try:
        bound = store.get_meta("dataset")
        plan = store.get_meta("plan")
        items_sha = store.get_meta("items_sha256")
        responses = store.responses()
        flags = store.flags()
    finally:
        store.close()
    root = Path(dataset_dir or bound or "")
    ds = load_dataset(root)
    if items_sha and sha256_file(root / "items.jsonl") != items_sha:
        raise ValueError(f"{root}/items.jsonl changed since the evaluation started (sha256 differs); "
                         "pass the dataset the annotators saw with --dataset")
    items: dict[str, Item] = {it.id: it for it in ds.items}
    missing = sorted({r.item_id for r in responses} - set(items))
    if missing:
        raise ValueError(f"{len(missing)} answered items are not in {root} (e.g. {missing[0]})")
    rows = []
    for resp in responses:
        latency = None if resp.interrupted else resp.rt_s
        rows.append((resp, score_human(items[resp.item_id], resp.annotator, resp.answer, latency)))
    records = [rec for _, rec in rows]
    completion = _completion(ds.items, plan, responses)
    flagged: dict[str, list[str]] = defaultdict(list)
    for f in flags:
        flagged[f["item_id"]].append(f["annotator"])
    summary: dict[str, Any] = {
        "dataset": str(root), "plan": plan, "interruption_threshold_s": INTERRUPTION_S,
        "rt_source": "server: first serve of the item to the annotator -> answer received",
        "overall": block(rows),
        "by_annotator": {a: block([r for r in rows if r[0].annotator == a]) | completion.get(a, {})
                         for a in sorted({r[0].annotator for r in rows})},
        "unanswered": sum(c["unanswered"] for c in completion.values()),
        "by_suite": _grouped(rows, lambda r: r.suite),
        "by_task": _grouped(rows, lambda r: f"{r.suite}/{r.task}"),
        "by_subtype": _grouped(rows, lambda r: f"{r.suite}/{r.task}/{r.subtype}"),
        "flags": [{"item_id": i, "task": f"{items[i].suite}/{items[i].task}" if i in items else "",
                   "subtype": items[i].subtype if i in items else "", "n": len(a), "annotators": sorted(a)}
                  for i, a in sorted(flagged.items())],
    }
    return summary, records, responses


def _completion(items: list[Item], plan: dict[str, Any] | None, responses: list[Response]) -> dict[str, dict[str, int]]:
    """Per annotator: items in their plan and how many of them have no answer.

    Accuracy is over the answers given; an annotator who stopped after 4 of 40 items is
    averaged like one who finished. The plan is a pure function of the items, its settings
    and the annotator, so the unanswered count is shown beside every accuracy rather than
    dropped silently."""
    from perspecta.human.plan import PlanSettings, build_plan

    if not plan:
        return {}
    settings = PlanSettings(**plan)
    answered: dict[str, set[str]] = defaultdict(set)
    for r in responses:
        answered[r.annotator].add(r.item_id)
    out = {}
    for a, done in sorted(answered.items()):
        ids = build_plan(items, settings, a)
        out[a] = {"planned": len(ids), "unanswered": sum(i not in done for i in ids)}
    return out


def _fmt(x: float | None, scale: float = 1.0, digits: int = 1) -> str:
    return "—" if x is None else f"{x * scale:.{digits}f}"


def markdown(summary: dict[str, Any]) -> str:
    lines = ["# Human evaluation", "",
             f"Dataset `{summary['dataset']}`; plan `{summary['plan']}`. Accuracy: mean ± SD across annotators "
             f"(pooled in brackets). Response time: server-measured, responses over "
             f"{summary['interruption_threshold_s']:.0f} s excluded as interruptions.", "",
             "| group | annotators | responses | accuracy % | RT mean s | RT median s | interruptions |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    rows = [("**all**", summary["overall"])] + list(summary["by_task"].items()) + list(summary["by_subtype"].items())
    for name, b in rows:
        acc = f"{_fmt(b['accuracy_mean'], 100)} ± {_fmt(b['accuracy_sd'], 100)} ({_fmt(b['accuracy_pooled'], 100)})"
        lines.append(f"| {name} | {b['n_annotators']} | {b['n_responses']} | {acc} | {_fmt(b['rt']['mean_s'])} "
                     f"| {_fmt(b['rt']['median_s'])} | {b['interruptions']} |")
    fb = summary["overall"].get("with_feedback", 0)
    if fb:
        lines += ["", f"**{fb} of {summary['overall']['n_responses']} answers were given with feedback** (the right "
                  "answer shown after each one, `serve --feedback`): a training session, not a baseline — later "
                  "items may be answered from what earlier feedback taught."]
    lines += ["", "## Annotators", "", "Accuracy is over the answers each annotator gave; unanswered items of "
              "their plan are in no accuracy and are counted here.", "",
              "| annotator | answered | planned | unanswered | accuracy % |", "|---|---:|---:|---:|---:|"]
    for a, b in summary["by_annotator"].items():
        lines.append(f"| {a} | {b['n_responses']} | {b.get('planned', '—')} | {b.get('unanswered', '—')} "
                     f"| {_fmt(b['accuracy_pooled'], 100)} |")
    lines += ["", "## Flagged items", ""]
    if summary["flags"]:
        lines += ["| item | task | subtype | flags | annotators |", "|---|---|---|---:|---|"]
        lines += [f"| `{f['item_id']}` | {f['task']} | {f['subtype']} | {f['n']} | {', '.join(f['annotators'])} |"
                  for f in summary["flags"]]
    else:
        lines.append("No item was flagged.")
    return "\n".join(lines) + "\n"


def write_results(store_dir: str | Path, out_dir: str | Path | None = None,
                  dataset_dir: str | Path | None = None) -> dict[str, Any]:
    """Write results.jsonl, responses.jsonl, human_summary.json/.md into ``out_dir`` (default: the store dir)."""
    summary, records, responses = collect(store_dir, dataset_dir)
    out = Path(out_dir or store_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl_atomic(out / RESULTS, [r.to_dict() for r in records])
    write_jsonl_atomic(out / RESPONSES, [r.to_dict() for r in responses])
    write_json_atomic(out / SUMMARY_JSON, summary)
    (out / SUMMARY_MD).write_text(markdown(summary))
    return summary
