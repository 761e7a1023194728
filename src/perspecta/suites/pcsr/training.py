"""PCSR-Bench's GRPO recipe (pcsr-bench.txt §5.1-5.2, Table 2) as a ``perspecta train`` preset.

The paper fine-tunes Qwen2.5-VL-7B-Instruct on its training split for one epoch with the
360-R1 rewards (R_acc, R_fmt, R_reason; main weights 0.6/0.2/0.2), completions up to 512
tokens, images up to 652,680 pixels, bf16, effective batch 32 (1 per device x 4
accumulation x 8 A800 GPUs, full fine-tuning). Its Appendix D (rollouts, learning rate,
KL weight) is not in our copy of the paper; those values are our defaults, and LoRA
replaces full fine-tuning so that one GPU suffices.
"""

from __future__ import annotations

from typing import Any

from perspecta.suites.pcsr.rewards import WEIGHTS

NOT_STATED = "perspecta default (PCSR App. D not available)"

TRAINING_PRESETS: dict[str, dict[str, Any]] = {
    "grpo": {
        "kind": "grpo",
        "model": "Qwen/Qwen2.5-VL-7B-Instruct",
        "suites": ["pcsr"],
        "lora": {"r": 64, "alpha": 128, "dropout": 0.05, "target_modules": "all-linear"},
        "num_train_epochs": 1,
        "max_completion_length": 512,
        "max_pixels": 652680,
        "num_generations": 8,
        "per_device_train_batch_size": 8,  # one prompt's group per micro-batch ...
        "gradient_accumulation_steps": 32,  # ... x 32 = the paper's effective batch of 32 prompts
        "learning_rate": 1e-6,
        "beta": 0.04,
        "temperature": 1.0,
        "reward_weights": dict(zip(("accuracy", "format", "reasoning"), WEIGHTS["main"])),
        "bf16": True,
        "sources": {
            "model": "PCSR §5.1: Qwen2.5-VL-7B-Instruct",
            "suites": "PCSR §5.1: the training split, all eight tasks",
            "num_train_epochs": "PCSR §5.1: one epoch",
            "max_completion_length": "PCSR §5.1: maximum completion length 512",
            "max_pixels": "PCSR §5.1: max_pixels=652,680",
            "per_device_train_batch_size": "PCSR §5.1: effective batch 32 (accumulated on one GPU)",
            "gradient_accumulation_steps": "PCSR §5.1: effective batch 32 (accumulated on one GPU)",
            "reward_weights": "PCSR §5.2 / Table 2: main full-reward variant 0.6:0.2:0.2",
            "bf16": "PCSR §5.1: bfloat16",
            "lora": NOT_STATED + "; the paper trains all weights on 8 GPUs, LoRA fits one",
            "num_generations": NOT_STATED, "learning_rate": NOT_STATED, "beta": NOT_STATED,
            "temperature": NOT_STATED,
        },
    },
}
