"""What every report section sees: the streamed runs, the options, and where to write.

A section is built from a :class:`Context` and returns a :class:`Section` — tables,
figures and notes, or only an ``omitted`` note saying which data it would need.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perspecta.report.aggregate import Aggregator, RunState
from perspecta.report.tables import Table

# a size like 7b, 0.5B, 72b, 8x7b (before it: the family); "-v2", "2.5" versions also end a family
_SIZE = re.compile(r"(?<![a-z])(\d+(?:\.\d+)?)\s*([bm])(?![a-z])", re.IGNORECASE)
_VERSION = re.compile(r"[-_ ]?v?\d+(\.\d+)*$", re.IGNORECASE)


@dataclass
class Figure:
    slug: str
    title: str
    file: str  # relative to the report folder
    caption: str = ""


@dataclass
class Gallery:
    """Example items: images copied into ``examples/``, question, answer and each run's response."""

    examples: list[dict[str, Any]]


Block = Table | Figure | Gallery


@dataclass
class Section:
    slug: str
    title: str
    intro: str = ""
    blocks: list[Block] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # visible remarks (e.g. a sub-part lacking data)
    omitted: str | None = None  # set: the whole section is omitted, and this says why


@dataclass
class ReportOptions:
    examples: int = 2  # gallery items per task (0 = no gallery)
    model_sizes: dict[str, float] = field(default_factory=dict)  # model -> parameters in billions
    families: dict[str, str] = field(default_factory=dict)  # model -> family
    dataset: Path | None = None
    audit: Path | None = None  # audit JSON (default: audit.json inside the dataset directory)


@dataclass
class Context:
    agg: Aggregator
    runs: list[dict[str, Any]]  # summarize-shaped, model runs only, sorted by (model, mode)
    states: list[RunState]  # the same runs' counters, same order
    human: list[RunState]  # human:<annotator> runs
    options: ReportOptions
    out: Path
    files: list[Path]
    dataset: Any = None  # EvalDataset when the dataset was found
    run_info: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (fingerprint, model) -> run file

    def label(self, run: dict[str, Any] | RunState) -> str:
        """A run's name: ``model``, plus ``[mode]`` when the model ran in several prompt modes (or
        not direct), plus what tells its dataset apart when it ran on several (the suite settings
        that differ, e.g. ``{dori.prompt_style=unstructured}``, else the fingerprint)."""
        model, mode, ds = ((run["model"], run["prompt_mode"], run.get("dataset", "")) if isinstance(run, dict)
                           else (run.model, run.prompt_mode, run.dataset))
        modes = {s.prompt_mode for s in self.states if s.model == model}
        text = model if len(modes) == 1 and mode == "direct" else f"{model} [{mode}]"
        datasets = sorted({s.dataset for s in self.states if s.model == model})
        if len(datasets) > 1:
            text += " {" + self._dataset_tag(model, ds, datasets) + "}"
        return text

    def _dataset_tag(self, model: str, ds: str, datasets: list[str]) -> str:
        configs = {d: _flat_config(self.run_info.get((d, model), {}).get("suite_config") or {}) for d in datasets}
        keys = sorted({k for c in configs.values() for k in c if len({c2.get(k) for c2 in configs.values()}) > 1})
        if keys:
            return ", ".join(f"{k}={configs[ds].get(k, 'default')}" for k in keys)
        return f"dataset {ds or '?'}"

    def info(self, run: dict[str, Any] | RunState) -> dict[str, Any]:
        """The run file of a run (empty when it was not found beside its results)."""
        model, ds = (run["model"], run.get("dataset", "")) if isinstance(run, dict) else (run.model, run.dataset)
        return self.run_info.get((ds, model), {})

    def figure(self, slug: str, title: str, caption: str = "") -> tuple[Path, Figure]:
        """Where to save a figure and the block that shows it."""
        rel = f"figures/{slug}.png"
        return self.out / rel, Figure(slug, title, rel, caption)

    def with_suite(self, suite: str) -> list[tuple[dict[str, Any], RunState]]:
        return [(r, s) for r, s in zip(self.runs, self.states) if suite in r["by_suite"]]

    def size_of(self, model: str) -> float | None:
        if model in self.options.model_sizes:
            return self.options.model_sizes[model]
        return None

    def family_of(self, model: str) -> str:
        """``--family`` when given, else the name (after ``backend:``) up to its size or version."""
        if model in self.options.families:
            return self.options.families[model]
        name = model.split(":", 1)[-1]
        m = _SIZE.search(name)
        if m:  # the prefix before the size
            name = name[: m.start()]
        else:  # no size: the prefix before a trailing version
            name = _VERSION.sub("", name.rstrip("-_ ."))
        return name.rstrip("-_ .") or model


def _flat_config(config: dict[str, Any]) -> dict[str, str]:
    """``{"mysuite": {"prompt_style": "x"}}`` -> ``{"mysuite.prompt_style": "x"}``."""
    return {f"{suite}.{k}": str(v) for suite, settings in config.items() if isinstance(settings, dict)
            for k, v in settings.items()}


def parse_size(text: str) -> float:
    """``7B`` -> 7.0, ``500M`` -> 0.5, ``13`` -> 13.0 (billions of parameters)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([bBmM]?)\s*", text)
    if not m:
        raise ValueError(f"model size {text!r}: expected a number of parameters like 7B, 0.5B or 500M")
    value = float(m.group(1))
    return value / 1000.0 if m.group(2).lower() == "m" else value


__all__ = ["Block", "Context", "Figure", "Gallery", "ReportOptions", "Section", "parse_size"]
