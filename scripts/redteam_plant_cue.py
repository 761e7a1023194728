#!/usr/bin/env python
"""Usage: redteam_plant_cue.py DATASET P TASK[,TASK]

How strong must a shortcut be for ``perspecta audit`` to see it on a dataset of this size?
Into real (answer-balanced) items of TASKs, plant a text cue: the question ends with
"Note: <option text>." naming the answer with probability P and a random option otherwise,
so a reader of the note scores chance + P * (1 - chance). Prints the audit's text predictor
per cell (the items on disk are not changed).

Round-5 result (dori, --n 40, seed 95101): P = 0.4 (+27..36 points available) failed no
cell; P = 0.6 failed 7 of 10; P = 0.8 all 10.
"""
import copy
import random
import sys
from pathlib import Path

from perspecta.audit.core import audit_items
from perspecta.audit.images import FingerprintStore
from perspecta.run.dataset import load_dataset

root, p, tasks = Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3].split(",")
ds = load_dataset(root)
rng = random.Random(7)
items = []
for it in ds.items:
    if it.task not in tasks or not it.options or any(o.text is None for o in it.options):
        continue
    it = copy.deepcopy(it)
    named = it.option(it.answer) if rng.random() < p else rng.choice(it.options)
    it.question = f"{it.question} Note: {named.text}."
    items.append(it)
res = audit_items(items, FingerprintStore(root, ds.manifest.get("checksums")), dataset=str(root))
for c in res.cells:
    t = c.predictors["text"]
    print(f"{c.key:<60} n={c.n:<4} chance={c.chance:.2f} text={t.value:.2f}[{t.lo:.2f},{t.hi:.2f}] fail={c.fail}")
