"""Load a `perspecta export --to vlmevalkit` directory with VLMEvalKit's own dataset classes.

VLMEvalKit is not on PyPI: pass a checkout (e.g. ``git clone
https://github.com/open-compass/VLMEvalKit``); its code is imported from there, never
copied. Run with the python of the environment you run VLMEvalKit with (its own
requirements installed):

    python benchmarks/interop/verify_vlmevalkit.py CHECKOUT EXPORT_DIR

With ``LMUData=EXPORT_DIR`` it builds each exported name the way ``run.py`` would —
``build_dataset(name)`` for the MCQ and OpenEnded files, the ``--data-config`` class
for YORN — and checks the loader class, that ``build_prompt`` decodes every row's
images (multi-image rows included) and lists the options, and, for MCQ and Y/N, that
VLMEvalKit's own evaluator scores a prediction file of gold answers at 100%.
Prints a JSON report; exit 1 on any problem.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    checkout, export_dir = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    os.environ["LMUData"] = str(export_dir)
    sys.path.insert(0, str(checkout))
    t0 = time.perf_counter()
    import pandas as pd
    from vlmeval.dataset import build_dataset
    import vlmeval.dataset as vd

    config = json.loads((export_dir / "vlmevalkit_data_config.json").read_text())
    commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    report: dict = {"vlmevalkit_checkout": str(checkout), "commit": commit or None, "datasets": {}, "problems": []}
    problems = report["problems"]
    for name, entry in config.items():
        kind = name.rsplit("_", 1)[1]
        if kind == "YORN":  # custom Y/N data reaches ImageYORNDataset through --data-config
            ds = getattr(vd, entry["class"])(dataset=entry["dataset"])
        else:
            ds = build_dataset(name)
        if type(ds).__name__ != entry["class"]:
            problems.append(f"{name}: loaded as {type(ds).__name__}, expected {entry['class']}")
        source = pd.read_csv(export_dir / f"{name}.tsv", sep="\t")
        n_images = 0
        for i in range(len(ds)):
            msgs = ds.build_prompt(i)
            line = ds.data.iloc[i]
            paths = [m["value"] for m in msgs if m["type"] == "image"]
            # VLMEvalKit has already parsed image_path: a list for multi-image rows, else one name
            want = len(line["image_path"]) if isinstance(line["image_path"], list) else 1
            if len(paths) != want or not all(os.path.getsize(p) > 0 for p in paths):
                problems.append(f"{name} row {i}: {len(paths)} images decoded, expected {want}")
            text = "".join(m["value"] for m in msgs if m["type"] == "text")
            if kind == "MCQ" and "Options:" not in text:
                problems.append(f"{name} row {i}: no options in the prompt")
            n_images += len(paths)
        entry_report = {"class": type(ds).__name__, "rows": len(ds), "images_decoded": n_images,
                        "source_rows": len(source)}
        if kind in ("MCQ", "YORN"):  # VLMEvalKit's own scoring of gold predictions
            pred = ds.data.drop(columns=["image"]).copy()
            pred["prediction"] = [str(a) for a in pred["answer"]]
            work = export_dir / "_verify"
            work.mkdir(exist_ok=True)
            pred_file = work / f"gold_{name}.xlsx"
            pred.to_excel(pred_file, index=False)
            result = ds.evaluate(str(pred_file), model="exact_matching", nproc=1)
            overall = _overall(result)
            entry_report["gold_overall"] = overall
            if overall is None or abs(overall - (100.0 if overall > 1 else 1.0)) > 1e-9:
                problems.append(f"{name}: VLMEvalKit scored gold predictions {overall}")
        report["datasets"][name] = entry_report
    report["seconds"] = round(time.perf_counter() - t0, 2)
    print(json.dumps(report, default=str))
    return 1 if problems else 0


def _overall(result) -> float | None:
    """The 'Overall' figure of an evaluate() result (a DataFrame or a dict)."""
    import pandas as pd

    if isinstance(result, pd.DataFrame):
        for col in ("Overall", "acc", "Acc"):
            if col in result:
                return float(result[col].iloc[0])
        return None
    if isinstance(result, dict):
        for key in ("Overall", "acc"):
            if key in result:
                return float(result[key])
    return None


if __name__ == "__main__":
    sys.exit(main())
