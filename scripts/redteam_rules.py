#!/usr/bin/env python
"""Red-team DORI's readability rules: can cheap, visible metadata predict the answer class?

Usage: redteam_rules.py DATASET [DATASET ...] [--json OUT]

Why: since round 5 DORI restricts which assets, views and poses an item may use depending
on its task and class (no tipped animals, frontless flat sides never square to the camera,
per-asset elevation windows, ...). A rule that depends on the class can leak it through a
cue a model sees without the skill. Each family below is a multinomial logistic regression
from item-level features to the answer *class* (answer text), cross-fitted by scene cluster
exactly like ``perspecta audit`` (``audit.crossfit``: coarse and granular items of a unit
share a cluster, five seeded folds). Several datasets are pooled (clusters stay per dataset)
for power. Compared with the best constant answer (largest in-sample class share: an upper
bound for any constant), 95% cluster-bootstrap interval (``audit.stats``).

Families (what a model could read off the picture without the skill):
  cat     category, asset id and whether the target has a front (A and B in a pair)
  geom    camera elevation, target pixel area and box, camera distance / target size,
          apparent obliqueness (|egocentric facing| folded to 0-90: how side-on, not which
          way) -- for frontless targets the angle to the nearest flat side instead
  tags    where the target's outline box or the pair's letter tags sit in the image
  tip     compound rotation: whether the asset's heading reads when tipped (marks)
  all     everything above together
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from scipy import sparse
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier

from perspecta.audit import crossfit
from perspecta.audit.stats import share_interval
from perspecta.dataset.io import read_items, read_scenes
from perspecta.suites.dori import marks
from perspecta.world.oracle import camera_elevation, egocentric_facing

FAMILIES = ("front", "cat", "cam", "size", "obl", "tags", "tip", "nonobl")
CBD = "Cannot be determined"


def _fold90(a: float) -> float:
    a = abs(a) % 180.0
    return min(a, 180.0 - a)


def _oblique(scene, oid: str) -> tuple[str, float | None]:
    """(kind, degrees): folded |egocentric facing| for a target with a front, else the
    angle to its nearest flat side (0 = a side square to the camera)."""
    obj, cam = scene.object(oid), scene.camera("main")
    to_cam = np.asarray(cam.position, dtype=float) - obj.center()
    if obj.has_front:
        try:
            return "front", _fold90(egocentric_facing(obj, cam))
        except ValueError:
            return "front", None
    f = obj.front_vector()
    a = abs(math.degrees(math.atan2(to_cam[0] * f[1] - to_cam[1] * f[0], to_cam[0] * f[0] + to_cam[1] * f[1]))) % 90
    return "nofront", min(a, 90 - a)


def features(it, scene) -> dict[str, dict[str, str | float]]:
    """Per family, the item's features (strings are categories, floats are numbers)."""
    md = it.metadata
    cam = scene.camera("main")
    ids = md.get("object_ids") or [md.get("object_id", "obj0")]
    objs = [scene.object(i) for i in ids]
    cat: dict[str, str | float] = {}
    for tag, o in zip("AB", objs):
        cat[f"category_{tag}"] = o.category
        cat[f"asset_{tag}"] = o.asset_id
        cat[f"has_front_{tag}"] = str(o.has_front)
    camf: dict[str, str | float] = {"elevation": float(camera_elevation(cam))}
    dist = float(np.linalg.norm(np.asarray(cam.position) - np.asarray(cam.look_at)))
    camf["dist_over_size"] = dist / max(1e-6, float(np.linalg.norm(objs[0].size)))
    camf["fov"] = float(cam.fov_y)
    size: dict[str, str | float] = {}
    read = (md.get("readability") or {}).get("objects") or {}
    for tag, rec in zip("AB", read.values()):
        size[f"pixels_{tag}"] = math.log(max(1.0, float(rec.get("pixels", 0))))
        w, h = rec.get("box", [0, 0])
        size[f"box_w_{tag}"], size[f"box_h_{tag}"] = float(w), float(h)
        size[f"aspect_{tag}"] = math.log(max(1.0, w) / max(1.0, h))
    obl: dict[str, str | float] = {}
    for tag, o in zip("AB", objs):
        kind, deg = _oblique(scene, o.id)
        if deg is not None:
            obl[f"oblique_{kind}_{tag}"] = deg
    tags: dict[str, str | float] = {}
    boxes = md.get("tags") or ([md["bbox"]] if md.get("bbox") else [])
    side = float(cam.width)
    for tag, b in zip("AB", boxes):
        tags[f"x_{tag}"] = (b[0] + b[2]) / 2 / side
        tags[f"y_{tag}"] = (b[1] + b[3]) / 2 / side
    if len(boxes) == 2:
        tags["a_left_of_b"] = str(tags["x_A"] < tags["x_B"])
        tags["a_above_b"] = str(tags["y_A"] < tags["y_B"])
    tip: dict[str, str | float] = {}
    if it.task == "compound_rotation":
        o = objs[0]
        tip["tip_readable"] = "frontless" if not o.has_front else str(marks.tip_readable(o.asset_id, o.category))
    fam = {"front": {k: v for k, v in cat.items() if k.startswith("has_front")}, "cat": cat, "cam": camf,
           "size": size, "obl": obl, "tags": tags, "tip": tip}
    fam["nonobl"] = {k: v for f in (cat, camf, size, tags, tip) for k, v in f.items()}
    return fam


def design(rows: list[dict[str, str | float]]) -> sparse.csr_matrix:
    """One-hot categories; numbers as quintile indicators plus a standardised value."""
    cols: dict[str, int] = {}
    data, ind, ptr = [], [], [0]
    nums = sorted({k for r in rows for k, v in r.items() if isinstance(v, float)})
    edges, stats = {}, {}
    for k in nums:
        vals = np.array([r[k] for r in rows if isinstance(r.get(k), float)])
        edges[k] = np.unique(np.quantile(vals, [0.2, 0.4, 0.6, 0.8]))
        stats[k] = (vals.mean(), vals.std() or 1.0)
    for r in rows:
        for k, v in r.items():
            if isinstance(v, float):
                q = int(np.searchsorted(edges[k], v, side="right"))
                for name, val in ((f"{k}=q{q}", 1.0), (f"{k}#z", (v - stats[k][0]) / stats[k][1])):
                    ind.append(cols.setdefault(name, len(cols)))
                    data.append(val)
            else:
                ind.append(cols.setdefault(f"{k}={v}", len(cols)))
                data.append(1.0)
        ptr.append(len(ind))
    return sparse.csr_matrix((data, ind, ptr), shape=(len(rows), max(1, len(cols))))


def oof_correct(X: sparse.csr_matrix, y: np.ndarray, fold: np.ndarray) -> np.ndarray:
    correct = np.zeros(len(y), dtype=bool)
    for k in np.unique(fold):
        tr, te = fold != k, fold == k
        if len(set(y[tr])) < 2:
            correct[te] = y[te] == y[tr][0]
            continue
        m = OneVsRestClassifier(LogisticRegression(C=1.0, solver="liblinear"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            m.fit(X[tr], y[tr])
        correct[te] = m.predict(X[te]) == y[te]
    return correct


def load(paths: list[str]):
    cells: dict[tuple[str, str], list] = defaultdict(list)
    for p in paths:
        root = Path(p)
        scenes = read_scenes(root / "scenes.jsonl")
        for it in read_items(root / "items.jsonl"):
            if it.suite != "dori":
                continue
            cells[(it.task, it.subtype or "")].append((str(root), it, scenes[it.scene_id]))
    return cells


def run(paths: list[str]) -> list[dict]:
    out = []
    cells = load(paths)
    for (task, sub), rows in sorted(cells.items()):
        out += run_cell(task, sub, rows)
        answerable = [r for r in rows if r[1].metadata.get("answer_text", r[1].answer) != CBD]
        if len(answerable) < len(rows):
            out += run_cell(task, sub + " [answerable]", answerable)
    return out


def run_cell(task: str, sub: str, rows: list) -> list[dict]:
    out = []
    items = [r[1] for r in rows]
    # clusters within each dataset (a unit's coarse and granular items), kept apart across datasets
    cl = np.zeros(len(rows), dtype=np.int64)
    offset = 0
    for name in dict.fromkeys(r[0] for r in rows):
        idx = [i for i, r in enumerate(rows) if r[0] == name]
        c = crossfit.clusters([items[i] for i in idx])
        cl[idx] = c + offset
        offset += int(c.max()) + 1
    fold = crossfit.folds(cl, f"rules/{task}/{sub}")
    y = np.array([it.metadata.get("answer_text", it.answer) for it in items])
    const = Counter(y).most_common(1)[0][1] / len(y)
    feats = [features(it, sc) for _, it, sc in rows]
    rec = {"task": task, "subtype": sub, "n": len(y), "clusters": int(len(np.unique(cl))),
           "classes": len(set(y)), "constant": round(const, 3), "pred": {}}
    for fam in FAMILIES:
        frows = [f[fam] for f in feats]
        if not any(frows):
            continue
        ok = oof_correct(design(frows), y, fold)
        e = share_interval(ok, cl, f"rules/{task}/{sub}/{fam}")
        rec["pred"][fam] = [round(e.value, 3), round(e.lo, 3), round(e.hi, 3)]
    out.append(rec)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("datasets", nargs="+")
    ap.add_argument("--json")
    a = ap.parse_args()
    res = run(a.datasets)
    for r in res:
        flags = [f for f, v in r["pred"].items() if v[1] > r["constant"]]
        preds = " ".join(f"{f}={v[0]:.2f}[{v[1]:.2f},{v[2]:.2f}]" for f, v in r["pred"].items())
        print(f"{'FLAG' if flags else '    '} {r['subtype']:<42} n={r['n']:<4} cl={r['clusters']:<4} "
              f"k={r['classes']:<3} const={r['constant']:.2f} {preds}")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
