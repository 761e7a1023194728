"""DORI's fine-tuning recipe (dori.txt §5 Table 4, App. H.3 Table 9, App. M Table 12) as a
``perspecta train`` preset. DORI states the model, LoRA and the step count; the LoRA rank,
learning rate and batch size are not in the paper and are marked as our defaults."""

from __future__ import annotations

from typing import Any

NOT_STATED = "perspecta default (not stated in the DORI paper)"

TRAINING_PRESETS: dict[str, dict[str, Any]] = {
    "lora-sft": {
        "kind": "sft",
        "model": "Qwen/Qwen2.5-VL-3B-Instruct",
        "suites": ["dori"],
        "lora": {"r": 16, "alpha": 32, "dropout": 0.05, "target_modules": "all-linear"},
        "max_steps": 2000,
        "learning_rate": 1e-4,
        "per_device_train_batch_size": 4,
        "gradient_accumulation_steps": 4,
        "warmup_steps": 0.03,
        "bf16": True,
        "max_length": 2048,
        "sources": {
            "model": "DORI §5 Table 4, App. M: Qwen2.5-VL-3B fine-tuned with LoRA",
            "suites": "DORI App. M: DORI items only (27K train, 7K held out); use --split train=0.8,test=0.2",
            "max_steps": "DORI App. H.3 Table 9: trained for 2000 steps",
            "lora": NOT_STATED, "learning_rate": NOT_STATED, "per_device_train_batch_size": NOT_STATED,
            "gradient_accumulation_steps": NOT_STATED, "warmup_steps": NOT_STATED, "max_length": NOT_STATED,
        },
    },
}
