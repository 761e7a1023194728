#!/usr/bin/env python
"""Usage: redteam_pair_rule.py DATASET TASK

Image-option tasks: is the answer among the two most alike option images (mean absolute grey
difference at 64 px)? A blind rule that drops the odd one out and guesses within the pair
scores 1/2 where it holds and 0 elsewhere; with three options, a pair that tells nothing
holds the answer on 2/3 of items (rule = 1/3 = chance).

Round 5, before -> after the twin fixes (per form, answer in pair / items):
  spin view_selection swapped_pair 24/24 (seed 95102) -> 16/24 (seed 95105); rule 0.44 -> 0.31
  spin canonical_view near_miss_view 17/20 + 27/30 (seeds 95102, 95106) -> 21/30 (seed 95107)
"""
import json, itertools, collections, sys
import numpy as np
from pathlib import Path
from PIL import Image
root = Path(sys.argv[1]); task = sys.argv[2]
items = [json.loads(l) for l in open(root / 'items.jsonl')]
res = collections.Counter(); score = []
for it in items:
    if it['task'] != task or not it['options'] or it['options'][0].get('image') is None:
        continue
    ims = {o['label']: np.asarray(Image.open(root / it['images'][o['image']]).convert('L').resize((64, 64)), dtype=float)
           for o in it['options']}
    d = {p: np.abs(ims[p[0]] - ims[p[1]]).mean() for p in itertools.combinations(ims, 2)}
    pair = min(d, key=d.get)
    form = it['metadata'].get('form')
    res[(form, it['answer'] in pair)] += 1
    score.append(0.5 if it['answer'] in pair else 0.0)
print(task, dict(res), f"expected pair-rule accuracy {np.mean(score):.3f} n={len(score)}")
