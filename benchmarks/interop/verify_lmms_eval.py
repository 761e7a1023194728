"""Load a `perspecta export --to lmms-eval` task folder with lmms-eval's own task loader.

Run with the python of a venv that has lmms-eval installed (not perspecta), e.g.

    bash benchmarks/harness/setup_peers.sh lmms-eval
    ~/.cache/perspecta/bench-peers/lmms-eval/bin/python benchmarks/interop/verify_lmms_eval.py TASK_DIR TASK [--expect N]

It indexes TASK_DIR with ``TaskManager(include_path=...)``, builds the task with
``get_task_dict`` (which loads the parquet through ``datasets``), and passes every test
document through the YAML's doc_to_visual / doc_to_text / doc_to_target /
process_results and the metric's aggregation, feeding the gold answer as the response
(so the quick score must be 1.0). Prints a JSON report; exit 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("task_dir")
    p.add_argument("task")
    p.add_argument("--expect", type=int, help="number of test documents expected")
    args = p.parse_args()
    t0 = time.perf_counter()
    import lmms_eval
    from importlib.metadata import version
    from lmms_eval.tasks import TaskManager, get_task_dict

    manager = TaskManager(include_path=args.task_dir, include_defaults=False)
    task = get_task_dict([args.task], manager)[args.task]
    docs = list(task.test_docs())
    problems, images, scores = [], 0, []
    for i, doc in enumerate(docs):
        visuals = task.doc_to_visual(doc)
        text = task.doc_to_text(doc)
        target = task.doc_to_target(doc)
        if len(visuals) != len(doc["image_paths"]) or not all(hasattr(v, "size") for v in visuals):
            problems.append(f"doc {i}: {len(visuals)} visuals for {len(doc['image_paths'])} images")
        if "<image>" in text or not text.strip():
            problems.append(f"doc {i}: text still has <image> markers or is empty")
        if target != doc["answer"]:
            problems.append(f"doc {i}: target {target!r} != answer {doc['answer']!r}")
        result = task.process_results(doc, [f"<answer>{target}</answer>"])
        logged = result["perspecta_exact_match"]
        if logged["id"] != doc["id"]:
            problems.append(f"doc {i}: logged id {logged['id']!r} != {doc['id']!r}")
        scores.append(logged)
        images += len(visuals)
    agg = task.aggregation()["perspecta_exact_match"](scores)
    if agg != 1.0:
        problems.append(f"gold responses scored {agg}, expected 1.0")
    if args.expect is not None and len(docs) != args.expect:
        problems.append(f"{len(docs)} documents, expected {args.expect}")
    report = {"lmms_eval": version("lmms_eval"), "datasets": version("datasets"), "task": args.task,
              "docs": len(docs), "images": images, "gold_score": agg, "problems": problems,
              "seconds": round(time.perf_counter() - t0, 2), "lmms_eval_path": os.path.dirname(lmms_eval.__file__)}
    print(json.dumps(report))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
