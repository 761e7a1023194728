"""Training settings, the papers' recipes as named presets, and the YAML a run records.

A preset is a suite's own (``TRAINING_PRESETS`` in ``perspecta.suites.<suite>``, asked
for through :func:`perspecta.suites.registry.suite_setting`), named ``<suite>/<name>``,
plus the generic ``tiny-sft`` / ``tiny-grpo`` smoke presets. Each preset says, for
every setting, where its value comes from (``sources``): the paper's section, or
"perspecta default" where the paper does not state it — so a reader of the run's
``training.yaml`` can tell a reproduced setting from a filled-in one.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

KINDS = ("sft", "grpo")
TINY_MODEL = "tiny"  # a tiny random LLaVA built offline (perspecta.interop.tiny_vlm)
DEFAULT_SOURCE = "perspecta default"


@dataclass
class LoraSettings:
    r: int = 16
    alpha: int = 32
    dropout: float = 0.05
    target_modules: str | list[str] = "all-linear"


@dataclass
class TrainSettings:
    """Everything that determines a training run; written to ``OUT/training.yaml``."""

    kind: str  # sft or grpo
    model: str  # hub id or local path of the base model, or "tiny"
    preset: str = ""
    suites: list[str] | None = None  # train on these suites' items (None: every suite in the dataset)
    tasks: list[str] | None = None  # "suite/task" keys (None: every task of the suites)
    lora: LoraSettings | None = field(default_factory=LoraSettings)  # None: full fine-tuning
    max_steps: int = -1  # -1: run num_train_epochs
    num_train_epochs: float = 1.0
    learning_rate: float = 1e-4
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    warmup_steps: float = 0  # an int: steps; a float in [0, 1): fraction of the run
    per_device_train_batch_size: int = 1
    gradient_accumulation_steps: int = 1
    bf16: bool = True  # ignored on CPU
    max_pixels: int | None = None  # image processor pixel budget (Qwen-VL); None: the processor's default
    seed: int = 0
    # SFT
    max_length: int | None = 2048
    # GRPO
    num_generations: int = 8
    temperature: float = 1.0
    top_p: float = 1.0
    max_completion_length: int = 512
    beta: float = 0.0
    reward_weights: dict[str, float] = field(default_factory=lambda: {"accuracy": 0.6, "format": 0.2,
                                                                      "reasoning": 0.2})
    sources: dict[str, str] = field(default_factory=dict)  # setting -> paper section or "perspecta default"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"training kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if isinstance(self.lora, dict):
            self.lora = LoraSettings(**self.lora)
        completions = self.per_device_train_batch_size * self.gradient_accumulation_steps
        if self.kind == "grpo" and completions % self.num_generations:
            raise ValueError(f"GRPO: per_device_train_batch_size x gradient_accumulation_steps "
                             f"({self.per_device_train_batch_size} x {self.gradient_accumulation_steps}) must be a "
                             f"multiple of num_generations ({self.num_generations}): completions come in groups")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _tiny(kind: str) -> dict[str, Any]:
    """Smoke presets: two optimiser steps of a tiny random model on CPU (plumbing, not learning)."""
    return {"kind": kind, "model": TINY_MODEL, "max_steps": 2, "lora": {"r": 4, "alpha": 8, "dropout": 0.0},
            "learning_rate": 1e-3, "per_device_train_batch_size": 2, "num_generations": 2,
            "max_completion_length": 8, "max_length": 512, "bf16": False,
            "sources": {"*": "smoke test: a tiny random LLaVA built offline; it learns nothing"}}


GENERIC_PRESETS: dict[str, dict[str, Any]] = {"tiny-sft": _tiny("sft"), "tiny-grpo": _tiny("grpo")}


def presets() -> dict[str, dict[str, Any]]:
    """Every preset by name: the generic ones and each suite's ``TRAINING_PRESETS`` as ``suite/name``."""
    from perspecta.suites import registry

    out = dict(GENERIC_PRESETS)
    for suite in registry.suites():
        for name, preset in (registry.suite_setting(suite, "TRAINING_PRESETS", {}) or {}).items():
            out[f"{suite}/{name}"] = preset
    return out


def parse_value(text: str) -> Any:
    """A ``--set key=value`` value: YAML scalars and lists (``1e-5``, ``true``, ``[a, b]``), else a string."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def resolve(kind: str, preset: str, overrides: dict[str, Any]) -> TrainSettings:
    """The preset's settings with ``overrides`` applied (each override's source becomes "command line")."""
    table = presets()
    if preset not in table:
        raise ValueError(f"unknown preset {preset!r}; choose from {', '.join(sorted(table))}")
    base = dict(table[preset])
    if base["kind"] != kind:
        raise ValueError(f"preset {preset!r} is a {base['kind']} recipe; run it with `perspecta train {base['kind']}`")
    known = {f.name for f in dataclasses.fields(TrainSettings)} - {"kind", "preset", "sources"}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ValueError(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    sources = dict(base.pop("sources", {}))
    for key, value in overrides.items():
        if key == "lora" and isinstance(value, dict) and isinstance(base.get("lora"), dict):
            value = {**base["lora"], **value}
        base[key] = value
        sources[key] = "command line"
    settings = TrainSettings(**{**base, "preset": preset})
    for f in dataclasses.fields(TrainSettings):
        if f.name not in ("kind", "preset", "sources") and f.name not in sources and "*" not in sources:
            sources[f.name] = DEFAULT_SOURCE
    settings.sources = dict(sorted(sources.items()))
    return settings


def write_yaml(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".yaml.tmp")
    tmp.write_text(yaml.safe_dump(record, sort_keys=False, allow_unicode=True), encoding="utf-8")
    tmp.replace(path)


def read_yaml(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a training record (expected a YAML mapping)")
    return data
