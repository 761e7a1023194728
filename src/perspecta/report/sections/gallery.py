"""Example gallery: a few items per task with their images, question, answer and every
run's response, so a reader sees the failures behind the numbers.

The choice is deterministic and prefers items where the runs disagree, then items every
run got wrong, then the rest (ties by item id). Images are downscaled copies in
``examples/`` so the report folder opens offline on its own.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from PIL import Image

from perspecta.dataset.item import IMAGE_MARKER
from perspecta.report.context import Context, Gallery, Section
from perspecta.report.load import iter_lines
from perspecta.suites import registry

THUMB_SIDE = 384
RESPONSE_CHARS = 800


def _rank(stats: list[Any]) -> int:
    _suite, _task, right, wrong, _failed = stats
    if right and wrong:
        return 0  # runs disagree
    if wrong and not right:
        return 1  # every run failed
    return 2


def choose(items: dict[str, list[Any]], per_task: int) -> dict[str, list[str]]:
    """``{suite/task: [item ids]}`` — up to ``per_task`` items of each task, disagreements first."""
    by_task: dict[str, list[tuple[int, str]]] = {}
    for item_id, st in items.items():
        by_task.setdefault(f"{st[0]}/{st[1]}", []).append((_rank(st), item_id))
    return {task: [i for _, i in sorted(c)[:per_task]] for task, c in sorted(by_task.items())}


def _thumb(src: Path, dest: Path) -> None:
    with Image.open(src) as im:
        im = im.convert("RGB")
        im.thumbnail((THUMB_SIDE, THUMB_SIDE))
        dest.parent.mkdir(parents=True, exist_ok=True)
        im.save(dest, format="PNG", optimize=False)


def _safe(item_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", item_id)


def build(ctx: Context) -> Section:
    sec = Section("examples", "Example gallery",
                  f"Up to {ctx.options.examples} items per task, preferring items where the runs disagree or all "
                  "fail; each run's extracted answer and raw response.")
    if ctx.options.examples <= 0:
        sec.omitted = "not requested (--examples 0)"
        return sec
    if ctx.dataset is None:
        sec.omitted = ("dataset not found (no run-*.json naming an existing dataset beside the results); "
                       "pass --dataset DIR to show example items")
        return sec
    chosen = choose(ctx.agg.items, ctx.options.examples)
    wanted = {i for ids in chosen.values() for i in ids}
    by_id = {it.id: it for it in ctx.dataset.items if it.id in wanted}
    missing = sorted(wanted - set(by_id))
    if missing:
        sec.notes.append(f"{len(missing)} chosen item(s) are not in dataset {ctx.dataset.root} (e.g. {missing[0]}); "
                         "they are left out of the gallery.")
    responses: dict[str, dict[tuple[str, str], tuple[int, dict[str, Any]]]] = {i: {} for i in by_id}
    for line in iter_lines(ctx.files, set(registry.suites())):
        r = line.record
        if r["item_id"] not in responses or r["model"].startswith("human:"):
            continue
        key = (r["model"], r.get("prompt_mode", "direct"))
        rep = int(r.get("repeat", 0))
        prev = responses[r["item_id"]].get(key)
        if prev is None or rep <= prev[0]:  # the lowest repeat, its last record
            responses[r["item_id"]][key] = (rep, r)
    examples = []
    for task, ids in chosen.items():
        for item_id in ids:
            it = by_id.get(item_id)
            if it is None:
                continue
            images = []
            for k, rel in enumerate(it.images):
                dest = f"examples/{_safe(item_id)}-{k}.png"
                _thumb(ctx.dataset.image_path(rel), ctx.out / dest)
                images.append(dest)
            options = {o.label: o.text for o in it.options}
            answer = it.answer + (f" — {options[it.answer]}" if options.get(it.answer) else "")
            rows = []
            for (model, mode), (_rep, r) in sorted(responses[item_id].items()):
                text = r.get("response") or r.get("error") or ""
                rows.append({"run": model if mode == "direct" else f"{model} [{mode}]", "status": r["status"],
                             "prediction": r.get("prediction") or "—",
                             "verdict": "failed" if r["status"] == "failed" else "right" if r.get("correct") else "wrong",
                             "response": text[:RESPONSE_CHARS] + ("…" if len(text) > RESPONSE_CHARS else "")})
            examples.append({"task": task, "id": item_id, "subtype": it.subtype, "images": images,
                             "question": it.question.replace(IMAGE_MARKER, "").strip(), "answer": answer,
                             "responses": rows})
    if not examples:
        sec.omitted = "no items of the results were found in the dataset"
        return sec
    sec.blocks.append(Gallery(examples))
    return sec
