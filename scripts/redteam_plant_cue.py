#!/usr/bin/env python
"""Usage: redteam_plant_cue.py DATASET P TASK[,TASK]

Plant a weak text cue (with probability p the question carries a token naming the answer
letter) into real, answer-balanced items and see whether the audit's text predictor finds it."""
import sys, random, copy
from pathlib import Path
import numpy as np
from perspecta.audit.core import audit_items
from perspecta.audit.images import FingerprintStore
from perspecta.run.dataset import load_dataset

root = Path(sys.argv[1]); p = float(sys.argv[2]); tasks = sys.argv[3].split(",")
ds = load_dataset(root)
rng = random.Random(7)
items = []
for it in ds.items:
    if it.task not in tasks:
        continue
    it = copy.deepcopy(it)
    if rng.random() < p:
        it.question = it.question + f" ref{it.answer.lower()}x"
    else:
        it.question = it.question + f" ref{rng.choice([o.label for o in it.options]).lower()}x" if it.options else it.question
    items.append(it)
store = FingerprintStore(root, ds.manifest.get("checksums"))
res = audit_items(items, store, dataset=str(root))
for c in res.cells:
    pr = c.predictors
    print(f"{c.key:<60} chance={c.chance:.2f} prior={pr['prior'].value:.2f} text={pr['text'].value:.2f}[{pr['text'].lo:.2f},{pr['text'].hi:.2f}] fail={c.fail}")
