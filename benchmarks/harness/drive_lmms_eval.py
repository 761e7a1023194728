"""Benchmark driver: our items through lmms-eval's ``async_openai`` model (run in its own venv).

Configuration is what a user would write for a custom task: a task directory passed as
``include_path`` with a YAML config over a local JSONL file (HF ``datasets`` json
loader), ``doc_to_visual`` opening the item's PNG with PIL, ``doc_to_text`` returning our
prompt, exact-match scoring; the model's ``num_cpus`` is its request concurrency.
Writing the task files is dataset preparation and is timed as start-up, not run.
"""

from __future__ import annotations

import json
import os

import peer_common as pc

args = pc.parse_args()
task_dir = args.work / "lmms_task"
task_dir.mkdir(parents=True, exist_ok=True)
os.environ.setdefault("HF_HOME", str(args.work / "hf"))  # no reuse of a previous run's Arrow cache
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

with open(task_dir / "items.jsonl", "w", encoding="utf-8") as fh:
    for item in pc.load_items(args.dataset):
        if len(item["images"]) != 1:
            raise SystemExit(f"{item['id']}: this driver expects one image per item, got {len(item['images'])}")
        fh.write(json.dumps({"id": item["id"], "prompt": pc.prompt_text(item), "image": item["images"][0],
                             "answer": item["answer"]}) + "\n")
(task_dir / "perspecta_bench_utils.py").write_text(
    "from PIL import Image\n\n\n"
    "def doc_to_visual(doc):\n    return [Image.open(doc['image']).convert('RGB')]\n\n\n"
    "def doc_to_text(doc, lmms_eval_specific_kwargs=None):\n    return doc['prompt']\n"
)
(task_dir / "perspecta_bench.yaml").write_text(f"""task: perspecta_bench
dataset_path: json
dataset_kwargs:
  data_files:
    test: {task_dir / 'items.jsonl'}
test_split: test
output_type: generate_until
doc_to_visual: !function perspecta_bench_utils.doc_to_visual
doc_to_text: !function perspecta_bench_utils.doc_to_text
doc_to_target: answer
generation_kwargs:
  max_new_tokens: 16
  temperature: 0
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
""")

from lmms_eval.evaluator import simple_evaluate
from lmms_eval.tasks import TaskManager

startup = (pc.cpu_seconds(), pc.time.perf_counter() - pc.T0)

c0, t0 = pc.cpu_seconds(), pc.time.perf_counter()
results = simple_evaluate(
    model="async_openai",
    model_args=f"model_version=bench,base_url={args.base_url},api_key=bench,num_cpus={args.concurrency}",
    tasks=["perspecta_bench"],
    task_manager=TaskManager(include_path=str(task_dir)),
    log_samples=True,
)
samples = (results or {}).get("samples", {}).get("perspecta_bench", [])
with open(args.work / "lmms_results.json", "w", encoding="utf-8") as fh:  # as the CLI's --log_samples would
    json.dump(results, fh, default=str)
run = (pc.cpu_seconds() - c0, pc.time.perf_counter() - t0)
pc.write_result(args.result, startup, run, samples=len(samples))
