"""Red-team the shortcut audit: skill-free predictors ``perspecta audit`` does not have.

Why: the audit's five families are what its authors thought of; an outside check should
try cues they did not. Each family here is cross-fitted exactly like the audit (same
clusters, same folds, same candidate rows, same logistic regression, each family on top
of the answer prior), so a score above chance is what a learner could reach on unseen
scenes of the same generator.

Families:
  pix      image statistics that are not the skill: file size, mean brightness, left/right
           and top/bottom brightness balance, where saturated red pixels (tags, dots) sit
           on a 3x3 grid and how many there are, number of distinct colours; for image
           options, each option image's rank among the options on those statistics.
  pairing  what the item's cluster siblings (coarse/granular items of a unit, variants of
           a group) show without their answers: group size and variant set, whether the
           candidate text appears among a sibling's options or in its question.
  optset   option-set structure: the candidate crossed with every co-offered option, the
           whole option set, numeric gaps (is it the median, the middle of an arithmetic
           run, its distance to the options' mean), word counts.
  xknn     not learned: answer of out-of-fold items showing a near-identical image or the
           same asset ids (memorising a scene or asset across splits); prior elsewhere.

Usage: python scripts/redteam_shortcuts.py DATASET [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from PIL import Image

from perspecta.audit import crossfit
from perspecta.audit.core import PREDICTOR_CONFIDENCE, TEXT_ONLY
from perspecta.audit.features import (
    NUMERIC_BINS,
    Candidate,
    _meta_values,
    build_rows,
    candidates,
    hamming,
    norm,
    open_vocabulary,
)
from perspecta.audit.images import FingerprintStore
from perspecta.audit.stats import share_interval
from perspecta.dataset.item import Item
from perspecta.run.dataset import load_dataset

MAX_IMAGES = 6
_STATS_CACHE: dict[str, dict[str, float | str]] = {}


def image_stats(path: Path) -> dict[str, float | str]:
    """Cheap pixel statistics of one image (cached by path)."""
    key = str(path)
    if key in _STATS_CACHE:
        return _STATS_CACHE[key]
    with Image.open(path) as im:
        rgb = np.asarray(im.convert("RGB").resize((96, 96), Image.Resampling.BILINEAR), dtype=np.float32)
    grey = rgb.mean(axis=2)
    h, w = grey.shape
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    red = (r > 150) & (g < 90) & (b < 90)
    n_red = int(red.sum())
    out: dict[str, float | str] = {
        "bytes": float(path.stat().st_size),
        "bright": float(grey.mean()),
        "lr": float(grey[:, : w // 2].mean() - grey[:, w // 2:].mean()),
        "tb": float(grey[: h // 2].mean() - grey[h // 2:].mean()),
        "n_red": float(n_red),
        "colours": float(len(np.unique((rgb // 64).astype(np.int32) @ np.array([16, 4, 1]))))
    }
    if n_red >= 3:
        ys, xs = np.nonzero(red)
        out["red_cell"] = f"{int(3 * ys.mean() / h)}{int(3 * xs.mean() / w)}"
        out["red_x"] = float(xs.mean() / w)
    else:
        out["red_cell"] = "none"
    _STATS_CACHE[key] = out
    return out


def _bin(per_item: list[dict]) -> None:
    names = sorted({k for f in per_item for k, v in f.items() if isinstance(v, float)})
    for name in names:
        vals = np.array([f[name] for f in per_item if isinstance(f.get(name), float)])
        edges = np.unique(np.quantile(vals, np.linspace(0, 1, NUMERIC_BINS + 1)[1:-1]))
        for f in per_item:
            if isinstance(f.get(name), float):
                f[name] = f"q{int(np.searchsorted(edges, f[name], side='right'))}"


def pix_features(root: Path, item: Item, cands: list[Candidate]) -> tuple[dict, list[dict]]:
    f: dict[str, float | str] = {}
    stats = [image_stats(root / rel) for rel in item.images[:MAX_IMAGES]]
    opt_imgs = {c.image for c in cands if c.image is not None}
    for j, s in enumerate(stats):
        if j in opt_imgs:
            continue
        for k, v in s.items():
            f[f"img{j}.{k}"] = v
        f[f"img{j}.lr_sign"] = "L" if s["lr"] > 2 else ("R" if s["lr"] < -2 else "=")
    cf: list[dict] = [{} for _ in cands]
    if opt_imgs and all(c.image is not None for c in cands):
        allstats = [image_stats(root / item.images[c.image]) for c in cands]  # type: ignore[index]
        for key in ("bytes", "bright", "lr", "tb", "n_red", "colours"):
            vals = [float(s[key]) for s in allstats]
            for k in range(len(cands)):
                cf[k][f"opt_rank_{key}={sum(v < vals[k] for v in vals)}"] = 1.0
                cf[k][f"opt_rank_rev_{key}={sum(v > vals[k] for v in vals)}"] = 1.0
        for k, s in enumerate(allstats):
            cf[k][f"opt_red_cell={s['red_cell']}"] = 1.0
    return f, cf


def pairing_features(item: Item, sibs: list[Item], cands: list[Candidate]) -> tuple[dict, list[dict]]:
    f: dict[str, str] = {
        "cluster_size": str(min(len(sibs) + 1, 8)),
        "variants": "|".join(sorted({s.variant for s in sibs} | {item.variant})),
        "sib_subtypes": "|".join(sorted({s.subtype for s in sibs})),
        "sib_gran": "|".join(sorted({str(s.granularity) for s in sibs})),
    }
    cf: list[dict] = []
    for c in cands:
        d: dict[str, float] = {}
        if c.text:
            in_opts = sum(any(o.text is not None and norm(o.text) == c.text for o in s.options) for s in sibs)
            in_q = sum(c.text in s.question.lower() for s in sibs)
            d[f"sib_opts_has={min(in_opts, 3)}"] = 1.0
            d[f"sib_q_has={min(in_q, 3)}"] = 1.0
            # words of the candidate named among siblings' options (coarse "left" vs granular "front-left")
            words = set(c.text.replace("-", " ").split())
            sib_opt_words = Counter(w for s in sibs for o in s.options if o.text
                                    for w in set(norm(o.text).replace("-", " ").split()))
            d[f"sib_word_share={min(sum(sib_opt_words[w] for w in words), 4)}"] = 1.0
        cf.append(d)
    return f, cf


def _num(t: str) -> float | None:
    try:
        return float(t.replace("°", "").strip())
    except ValueError:
        return None


def optset_features(item: Item, cands: list[Candidate]) -> tuple[dict, list[dict]]:
    texts = [c.text for c in cands]
    f = {"optset": "|".join(sorted(texts))} if item.answer_type == "mcq" and all(texts) else {}
    cf: list[dict] = [{} for _ in cands]
    if item.answer_type != "mcq" or not all(texts):
        return f, cf
    for k, c in enumerate(cands):
        for o in texts:
            if o != c.text:
                cf[k][f"with={o}"] = 1.0
        cf[k][f"nwords={min(len(c.text.split()), 5)}"] = 1.0
        cf[k][f"nchars_rank={sum(len(o) < len(c.text) for o in texts)}"] = 1.0
    nums = [_num(t) for t in texts]
    if all(v is not None for v in nums) and len(nums) >= 3:
        vals = np.array(nums, dtype=float)
        srt = np.sort(vals)
        gaps = np.diff(srt)
        sig = "|".join(f"{g / max(gaps.min(), 1e-9):.1f}" for g in gaps)
        mean = vals.mean()
        spread = max(srt[-1] - srt[0], 1e-9)
        closest_to_mean = int(np.argmin(np.abs(vals - mean)))
        for k, v in enumerate(vals):
            r = int((srt < v).sum())
            cf[k][f"gapsig={sig}|rank={r}"] = 1.0
            cf[k][f"dmean={int(4 * abs(v - mean) / spread)}"] = 1.0
            cf[k]["closest_to_mean"] = float(k == closest_to_mean)
            nb = [abs(v - w) for w in vals if w != v]
            cf[k][f"nearest_gap_rank={sum(g < min(nb) for g in gaps)}"] = 1.0 if nb else 0.0
            cf[k][f"sign={int(np.sign(v))}"] = 1.0
    return f, cf


def assemble(prior_rows: list[dict], row_item: np.ndarray, cands: list[list[Candidate]],
             item_feats: list[dict], cand_feats: list[list[dict]]) -> list[dict]:
    """Prior rows plus item features crossed with the candidate identity, plus candidate
    features (the same construction as the audit's families)."""
    out: list[dict] = []
    r = 0
    for i, cs in enumerate(cands):
        for k, c in enumerate(cs):
            ident = ([f"c={c.text}"] if c.text else []) + ([f"l={c.letter}"] if c.letter else [])
            row = dict(prior_rows[r])
            for fname, value in item_feats[i].items():
                for name in ident:
                    row[f"{fname}={value}|{name}"] = 1.0
            row.update(cand_feats[i][k])
            out.append(row)
            r += 1
    assert r == len(row_item)
    return out


def xknn_correct(items: list[Item], cands: list[list[Candidate]], label: np.ndarray, row_item: np.ndarray,
                 fold: np.ndarray, store: FingerprintStore, mode: str = "both") -> np.ndarray:
    """Out-of-fold memorisation: predict the answer text most often seen on other-fold
    items that show a near-identical image (dhash <= 4 bits) or the same asset ids."""
    hashes = [[store.get(rel).dhash for rel in it.images[:MAX_IMAGES]] for it in items]
    assets = [frozenset(v for k, v in _meta_values(it.metadata) if "asset" in k) for it in items]
    starts = np.searchsorted(row_item, np.arange(len(items)))
    answer_key = []
    for i, cs in enumerate(cands):
        ks = [c.text or c.key for c, ok in zip(cs, label[starts[i]:starts[i] + len(cs)]) if ok]
        answer_key.append(ks[0] if ks else None)
    correct = np.zeros(len(items), dtype=bool)
    for i, it in enumerate(items):
        train = [j for j in range(len(items)) if fold[j] != fold[i]]
        votes: Counter = Counter()
        for j in train:
            near = mode != "asset" and any(hamming(a, b) <= 4 for a in hashes[i] for b in hashes[j])
            same_asset = mode != "img" and bool(assets[i]) and assets[i] == assets[j]
            if (near or same_asset) and answer_key[j] is not None:
                votes[answer_key[j]] += 1
        if not votes:
            votes = Counter(answer_key[j] for j in train if answer_key[j] is not None)
        keys = [c.text or c.key for c in cands[i]]
        ranked = sorted(((votes.get(k, 0), -n) for n, k in enumerate(keys)), reverse=True)
        pick = -ranked[0][1]
        correct[i] = bool(label[starts[i] + pick])
    return correct


def run(root: Path) -> list[dict]:
    ds = load_dataset(root)
    checks = ds.manifest.get("checksums")
    store = FingerprintStore(root, checks if isinstance(checks, dict) else None)
    pops: dict[tuple[str, str, bool], list[Item]] = defaultdict(list)
    for it in ds.items:
        pops[(it.suite, it.task, it.metadata.get("control") == TEXT_ONLY)].append(it)
    results = []
    for (suite, task, control), pop in sorted(pops.items()):
        rows = build_rows(pop, store, {}, None)
        vocab = open_vocabulary(pop)
        cands = [candidates(it, vocab) for it in pop]
        cluster = crossfit.clusters(pop)
        fold = crossfit.folds(cluster, f"{suite}/{task}/{control}")
        members: dict[int, list[int]] = defaultdict(list)
        for i, c in enumerate(cluster):
            members[int(c)].append(i)
        fams: dict[str, list[dict]] = {}
        pix = [pix_features(root, it, cs) for it, cs in zip(pop, cands)]
        pix_items = [p[0] for p in pix]
        _bin(pix_items)
        fams["pix"] = assemble(rows.rows["prior"], rows.row_item, cands, pix_items, [p[1] for p in pix])
        pair = [pairing_features(it, [pop[j] for j in members[int(cluster[i])] if j != i], cands[i])
                for i, it in enumerate(pop)]
        fams["pairing"] = assemble(rows.rows["prior"], rows.row_item, cands, [p[0] for p in pair],
                                   [p[1] for p in pair])
        opt = [optset_features(it, cs) for it, cs in zip(pop, cands)]
        fams["optset"] = assemble(rows.rows["prior"], rows.row_item, cands, [p[0] for p in opt],
                                  [p[1] for p in opt])
        correct: dict[str, np.ndarray | None] = {}
        evidence: dict[str, list[str]] = {}
        for name, frows in [("prior", rows.rows["prior"])] + list(fams.items()):
            X, names = crossfit.matrix(frows)
            correct[name] = crossfit.out_of_fold_correct(X, rows.row_item, rows.label, len(pop), fold)
            if name != "prior":
                evidence[name] = crossfit.strongest_features(X, names, rows.label, k=4)
        for mode in ("img", "asset"):
            correct[f"xknn_{mode}"] = xknn_correct(pop, cands, rows.label, rows.row_item, fold, store, mode) \
                if fold.min() >= 0 else None
        chance = 1.0 / np.maximum(rows.n_candidates, 1)
        subsets = [(None, np.arange(len(pop)))]
        subs = sorted({it.subtype for it in pop})
        if len(subs) > 1:
            subsets += [(s, np.array([i for i, it in enumerate(pop) if it.subtype == s])) for s in subs]
        for sub, idx in subsets:
            cl = cluster[idx]
            rec = {"cell": f"{suite}/{task}" + (f"/{sub or '(none)'}" if sub is not None else "")
                   + (" [control]" if control else ""),
                   "n": int(len(idx)), "clusters": int(len(np.unique(cl))), "chance": float(chance[idx].mean()),
                   "pred": {}}
            for name, c in correct.items():
                if c is None:
                    continue
                e = share_interval(c[idx], cl, f"rt/{rec['cell']}/{name}", PREDICTOR_CONFIDENCE)
                rec["pred"][name] = [round(e.value, 3), round(e.lo, 3), round(e.hi, 3)]
            if sub is None:
                rec["evidence"] = evidence
                rec["excess"] = {name: (c - chance).tolist() for name, c in correct.items()
                                 if c is not None and not control}
                rec["cluster_ids"] = [f"{task}/{int(x)}" for x in cluster]
            results.append(rec)
    store.save()
    return results


def pooled_excess(ex: np.ndarray, cluster: np.ndarray) -> tuple[float, float, float]:
    """Mean of (correct - chance) over a suite's items with a 99% cluster-bootstrap
    interval: pooling tasks gives the power one 40-scene cell lacks."""
    ids, inv = np.unique(cluster, return_inverse=True)
    sums = np.bincount(inv, weights=ex, minlength=len(ids))
    counts = np.bincount(inv, minlength=len(ids)).astype(float)
    rng = np.random.default_rng(0)
    draw = rng.integers(0, len(ids), size=(4000, len(ids)))
    boot = sums[draw].sum(axis=1) / counts[draw].sum(axis=1)
    lo, hi = np.quantile(boot, [0.005, 0.995])
    return float(ex.mean()), float(lo), float(hi)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset")
    ap.add_argument("--json")
    a = ap.parse_args()
    res = run(Path(a.dataset))
    for r in res:
        best = max((v[1] - r["chance"], k) for k, v in r["pred"].items() if k != "prior")
        flag = "FLAG" if best[0] > 0.05 and r["clusters"] >= 8 else "    "
        preds = " ".join(f"{k}={v[0]:.2f}[{v[1]:.2f},{v[2]:.2f}]" for k, v in r["pred"].items())
        print(f"{flag} {r['cell']:<45} n={r['n']:<4} cl={r['clusters']:<3} chance={r['chance']:.2f} {preds}")
    pooled: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
    for r in res:
        for name, ex in r.get("excess", {}).items():
            suite = r["cell"].split("/")[0]
            pooled[(suite, name)][0].extend(ex)
            pooled[(suite, name)][1].extend(r["cluster_ids"])
    for (suite, name), (ex, cl) in sorted(pooled.items()):
        ids = {c: i for i, c in enumerate(dict.fromkeys(cl))}
        v, lo, hi = pooled_excess(np.array(ex), np.array([ids[c] for c in cl]))
        print(f"POOLED {suite:<5} {name:<8} excess over chance {v:+.3f} [{lo:+.3f},{hi:+.3f}]"
              f" n={len(ex)} clusters={len(ids)}")
    for r in res:
        r.pop("excess", None)
        r.pop("cluster_ids", None)
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
