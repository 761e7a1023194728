"""lmms-eval export: a task folder over the ``hf`` export, run with ``--include_path``.

Layout::

    OUT/data/<split>.parquet     the hf export (images embedded)
    OUT/<task>.yaml              dataset_path: parquet, data_files -> the parquet (absolute path)
    OUT/perspecta_utils.py       doc_to_visual / doc_to_text / doc_to_target / process_results

Run: ``python -m lmms_eval --model ... --tasks <task> --include_path OUT --log_samples
--output_path LOGS`` then ``perspecta import-predictions LOGS/.../*_samples_<task>.jsonl
--format lmms-eval --dataset DATASET``. The YAML's ``data_files`` path is absolute (lmms-eval
passes it to ``datasets`` relative to the working directory): re-export after moving OUT.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from perspecta.interop.common import open_dataset, split_items
from perspecta.interop.export_hf import export_hf

UTILS_MODULE = "perspecta_utils"
MAX_NEW_TOKENS = 1024  # enough for the think/answer layouts some suites ask for


def default_task_name(dataset: str | Path) -> str:
    stem = re.sub(r"[^a-z0-9]+", "_", Path(dataset).resolve().name.lower()).strip("_") or "dataset"
    return f"perspecta_{stem}"


def task_yaml(task: str, parquet: Path, split: str) -> str:
    return f"""task: {task}
dataset_path: parquet
dataset_kwargs:
  data_files:
    {split}: "{parquet.resolve().as_posix()}"
test_split: {split}
output_type: generate_until
doc_to_visual: !function {UTILS_MODULE}.doc_to_visual
doc_to_text: !function {UTILS_MODULE}.doc_to_text
doc_to_target: !function {UTILS_MODULE}.doc_to_target
process_results: !function {UTILS_MODULE}.process_results
generation_kwargs:
  max_new_tokens: {MAX_NEW_TOKENS}
  temperature: 0
  do_sample: false
metric_list:
  - metric: perspecta_exact_match
    aggregation: !function {UTILS_MODULE}.aggregate_exact_match
    higher_is_better: true
lmms_eval_specific_kwargs:
  default:
    pre_prompt: ""
    post_prompt: ""
metadata:
  - version: 0.0
"""


def export_lmms_eval(dataset: str | Path, out: str | Path, *, split: str = "test",
                     task: str | None = None) -> dict[str, Any]:
    ds = open_dataset(dataset)
    n = len(split_items(ds, split))  # fails clearly when the split is absent
    out = Path(out)
    export_hf(dataset, out)
    task = task or default_task_name(dataset)
    (out / f"{task}.yaml").write_text(task_yaml(task, out / "data" / f"{split}.parquet", split), encoding="utf-8")
    shutil.copyfile(Path(__file__).with_name("lmms_eval_task_utils.py"), out / f"{UTILS_MODULE}.py")
    return {"task": task, "split": split, "items": n, "path": str(out)}
