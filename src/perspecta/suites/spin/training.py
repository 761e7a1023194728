"""SpinBench's GRPO recipe (spinbench.txt App. E, Table 9) as ``perspecta train`` presets.

The paper trains Qwen3-VL-4B/8B-Instruct with GRPO for 6 epochs on four basic skills
(mental rotation, canonical view, identity matching, dynamic rotation) and validates on
perspective taking, a task it never trains on: 5 rollouts per prompt at temperature 1.0,
top-p 0.99, global batch 128, gradient clipping 1.0, AdamW lr 1e-6, weight decay 1e-2.
It does not state LoRA versus full fine-tuning, the KL weight, the completion length or
its reward weights; those are our defaults (LoRA so that one GPU suffices).
"""

from __future__ import annotations

from typing import Any

NOT_STATED = "perspecta default (not stated in the SpinBench paper)"
TRAIN_TASKS = ["spin/mental_rotation", "spin/canonical_view", "spin/identity_matching", "spin/dynamic_rotation"]
# validation in the paper: perspective taking, never trained on
TRANSFER_TASKS = ["spin/view_selection", "spin/relation_transformation"]


def _grpo(model: str) -> dict[str, Any]:
    app = "SpinBench App. E.3"
    return {
        "kind": "grpo",
        "model": model,
        "tasks": TRAIN_TASKS,
        "lora": {"r": 64, "alpha": 128, "dropout": 0.05, "target_modules": "all-linear"},
        "num_train_epochs": 6,
        "num_generations": 5,
        "temperature": 1.0,
        "top_p": 0.99,
        "per_device_train_batch_size": 5,  # one prompt's 5 rollouts per micro-batch ...
        "gradient_accumulation_steps": 128,  # ... x 128 = the paper's global batch of 128 prompts
        "max_grad_norm": 1.0,
        "learning_rate": 1e-6,
        "weight_decay": 1e-2,
        "max_completion_length": 512,
        "beta": 0.0,
        "reward_weights": {"accuracy": 0.6, "format": 0.2, "reasoning": 0.2},
        "bf16": True,
        "sources": {
            "model": f"{app}: Qwen3-VL-4B/8B-Instruct",
            "tasks": "SpinBench App. E: mental rotation, canonical view, identity matching, dynamic rotation",
            "num_train_epochs": "SpinBench App. E: 6 epochs",
            "num_generations": f"{app}: n=5 rollouts per prompt",
            "temperature": f"{app}: rollout temperature 1.0", "top_p": f"{app}: top-p 0.99",
            "per_device_train_batch_size": f"{app}: global batch 128 prompts (5 x 128 accumulated on one GPU)",
            "gradient_accumulation_steps": f"{app}: global batch 128 prompts (5 x 128 accumulated on one GPU)",
            "max_grad_norm": f"{app}: gradient norm clipping 1.0",
            "learning_rate": f"{app}: AdamW lr 1e-6", "weight_decay": f"{app}: weight decay 1e-2",
            "lora": NOT_STATED + "; LoRA fits one GPU, --set lora=null trains all weights",
            "max_completion_length": NOT_STATED, "beta": NOT_STATED,
            "reward_weights": NOT_STATED + "; PCSR's main weights, reasoning reward applies to PCSR items only",
        },
    }


TRAINING_PRESETS: dict[str, dict[str, Any]] = {
    "grpo-4b": _grpo("Qwen/Qwen3-VL-4B-Instruct"),
    "grpo-8b": _grpo("Qwen/Qwen3-VL-8B-Instruct"),
}
