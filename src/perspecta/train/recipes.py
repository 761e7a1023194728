"""``perspecta train sft|grpo``: TRL's SFTTrainer / GRPOTrainer with a peft LoRA adapter,
on a dataset's train split only, every setting recorded in ``OUT/training.yaml``.

Output folder (``OUT``), loadable for evaluation as ``--model hf:OUT``::

    training.yaml               settings (with their sources), dataset, versions, then the result
    adapter_config.json, adapter_model.safetensors   the LoRA adapter (or the full model without LoRA)
    processor/tokenizer files   the processor as trained (e.g. its max_pixels)
    train_log.jsonl             TRL's log history, one line per logging step
    base-model/                 only for the tiny smoke model, built here offline

Why the adapter goes at the top of ``OUT``: then ``hf:OUT`` is all a user types to
evaluate it, and the training record sits beside the weights it describes.
"""

from __future__ import annotations

import importlib
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from perspecta.train.settings import TINY_MODEL, TrainSettings, read_yaml, write_yaml

TRAINING_YAML = "training.yaml"
LOG = "train_log.jsonl"
SPLIT = "train"
EXTRA_MODULES = ("torch", "transformers", "trl", "peft", "datasets")


class MissingTrainExtra(ImportError):
    pass


def require_extra() -> dict[str, str]:
    """Versions of the training stack; a one-line error naming what is missing."""
    versions, missing = {}, []
    for name in EXTRA_MODULES:
        try:
            versions[name] = str(importlib.import_module(name).__version__)
        except ImportError:
            missing.append(name)
    if missing:
        raise MissingTrainExtra(f"perspecta train needs the train extra (missing: {', '.join(missing)}): "
                                "pip install 'perspecta[train]'")
    return versions


def _rows(settings: TrainSettings, dataset: Path) -> list[dict[str, Any]]:
    if settings.kind == "sft":
        from perspecta.interop.export_sft import prompt_completion_rows

        return prompt_completion_rows(dataset, SPLIT, settings.suites, settings.tasks)
    from perspecta.interop.grpo import prompt_rows

    return prompt_rows(dataset, SPLIT, settings.suites, settings.tasks)


def _texts(rows: list[dict[str, Any]]) -> list[str]:
    """Every text of the rows (the tiny model's tokenizer is trained on them)."""
    out = []
    for row in rows:
        for msg in row["prompt"] + row.get("completion", []):
            out += [p["text"] for p in msg["content"] if p["type"] == "text"]
    return out


def _load(settings: TrainSettings, out: Path, rows: list[dict[str, Any]]) -> tuple[Any, Any, str, bool]:
    """(model, processor, model path, on GPU)."""
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor

    path = settings.model
    if path == TINY_MODEL:
        from perspecta.interop.tiny_vlm import build_tiny_llava

        path = str(build_tiny_llava(out / "base-model", corpus=_texts(rows), seed=settings.seed).resolve())
    gpu = torch.cuda.is_available()
    processor = AutoProcessor.from_pretrained(path)
    if settings.max_pixels is not None:
        image_processor = getattr(processor, "image_processor", None)
        if image_processor is None or not hasattr(image_processor, "max_pixels"):
            raise ValueError(f"max_pixels={settings.max_pixels}: the processor of {settings.model} has no max_pixels")
        image_processor.max_pixels = settings.max_pixels
        if isinstance(getattr(image_processor, "size", None), dict) and "longest_edge" in image_processor.size:
            image_processor.size["longest_edge"] = settings.max_pixels
    dtype = torch.bfloat16 if gpu and settings.bf16 else torch.float32
    model = AutoModelForImageTextToText.from_pretrained(path, dtype=dtype)
    return model, processor, path, gpu


def _peft_config(settings: TrainSettings) -> Any:
    if settings.lora is None:
        return None
    from peft import LoraConfig

    return LoraConfig(r=settings.lora.r, lora_alpha=settings.lora.alpha, lora_dropout=settings.lora.dropout,
                      target_modules=settings.lora.target_modules, task_type="CAUSAL_LM")


def _common_args(settings: TrainSettings, out: Path, gpu: bool) -> dict[str, Any]:
    return dict(output_dir=str(out / "checkpoints"), max_steps=settings.max_steps,
                num_train_epochs=settings.num_train_epochs, learning_rate=settings.learning_rate,
                weight_decay=settings.weight_decay, max_grad_norm=settings.max_grad_norm,
                warmup_steps=settings.warmup_steps, per_device_train_batch_size=settings.per_device_train_batch_size,
                gradient_accumulation_steps=settings.gradient_accumulation_steps, seed=settings.seed,
                bf16=gpu and settings.bf16, use_cpu=not gpu, logging_steps=1, save_strategy="no", report_to="none",
                dataloader_num_workers=0)


def _trainer(settings: TrainSettings, out: Path, rows: list[dict[str, Any]], dataset: Path) -> tuple[Any, Any, str]:
    from datasets import Dataset, Image, List

    model, processor, path, gpu = _load(settings, out, rows)
    train = Dataset.from_list(rows).cast_column("images", List(Image()))
    if settings.kind == "sft":
        from trl import SFTConfig, SFTTrainer

        config = SFTConfig(**_common_args(settings, out, gpu), max_length=settings.max_length,
                           completion_only_loss=True)
        return SFTTrainer(model=model, args=config, train_dataset=train, processing_class=processor,
                          peft_config=_peft_config(settings)), processor, path
    from trl import GRPOConfig, GRPOTrainer

    from perspecta.interop.grpo import reward_functions, select_items

    _, items = select_items(dataset, SPLIT, settings.suites, settings.tasks)
    funcs, weights = reward_functions(items, settings.reward_weights)
    config = GRPOConfig(**_common_args(settings, out, gpu), num_generations=settings.num_generations,
                        temperature=settings.temperature, top_p=settings.top_p,
                        max_completion_length=settings.max_completion_length, beta=settings.beta,
                        reward_weights=weights)
    return GRPOTrainer(model=model, args=config, reward_funcs=funcs, train_dataset=train,
                       processing_class=processor, peft_config=_peft_config(settings)), processor, path


def train(settings: TrainSettings, dataset: str | Path, out: str | Path, *, command: str | None = None) -> dict[str, Any]:
    """Run one recipe; return the final training record (also in ``OUT/training.yaml``)."""
    versions = require_extra()
    dataset, out = Path(dataset).resolve(), Path(out).resolve()
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty; choose another --out (a run never overwrites an adapter)")
    rows = _rows(settings, dataset)  # before anything is written: a dataset without a train split fails here
    manifest = json.loads((dataset / "manifest.json").read_text(encoding="utf-8"))
    record: dict[str, Any] = {
        "perspecta_training": 1,
        "kind": settings.kind,
        "command": command or " ".join(sys.argv),
        "dataset": {"path": str(dataset), "split": SPLIT, "items": len(rows),
                    "suites": sorted({r["id"].split("/", 1)[0] for r in rows}),
                    "tasks": sorted({"/".join(r["id"].split("/")[:2]) for r in rows}),
                    "created_by_command": manifest.get("created_by_command"),
                    "items_sha256": manifest.get("checksums", {}).get("items.jsonl")},
        "settings": settings.to_dict(),
        "versions": {"python": platform.python_version(), **versions},
    }
    out.mkdir(parents=True, exist_ok=True)
    write_yaml(out / TRAINING_YAML, record)
    trainer, processor, path = _trainer(settings, out, rows, dataset)
    record["base_model"] = path
    started = time.perf_counter()
    result = trainer.train()
    seconds = time.perf_counter() - started
    trainer.save_model(str(out))
    processor.save_pretrained(str(out))
    history = trainer.state.log_history
    with open(out / LOG, "w", encoding="utf-8") as f:
        for entry in history:
            f.write(json.dumps(entry, default=float) + "\n")
    steps = trainer.state.global_step
    losses = [e["loss"] for e in history if "loss" in e]
    record["result"] = {
        "steps": steps, "seconds": round(seconds, 3), "seconds_per_step": round(seconds / max(steps, 1), 3),
        "train_loss": float(result.training_loss), "last_loss": float(losses[-1]) if losses else None,
        "rewards": _mean_rewards(history),
        "adapter": settings.lora is not None,
    }
    write_yaml(out / TRAINING_YAML, record)
    return record


def _mean_rewards(history: list[dict[str, Any]]) -> dict[str, float | None]:
    """Each reward's mean over the logged steps (None: the reward applied to no item of the run)."""
    seen: dict[str, list[float]] = {}
    for entry in history:
        for k, v in entry.items():
            if k.startswith("rewards/") and k.endswith("/mean"):
                seen.setdefault(k, [])
                if v is not None:
                    seen[k].append(float(v))
    return {k: (sum(v) / len(v) if v else None) for k, v in seen.items()}


def training_record(directory: str | Path) -> dict[str, Any] | None:
    """The ``training.yaml`` of a trained model folder, or None when it has none."""
    path = Path(directory) / TRAINING_YAML
    return read_yaml(path) if path.is_file() else None
