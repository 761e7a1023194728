"""``perspecta train sft|grpo|presets``: the papers' fine-tuning recipes on a dataset's train split.

Heavy imports (torch, TRL, peft) happen inside the commands, so ``perspecta --help``
stays fast and a missing ``[train]`` extra is one clear line.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

console = Console()
train_app = typer.Typer(help="Fine-tune a VLM on a dataset's train split: LoRA SFT or GRPO, from the papers' recipes.",
                        no_args_is_help=True)


def _fail(message: str) -> typer.Exit:
    from rich.markup import escape

    console.print(f"[red]error:[/] {escape(message)}", highlight=False)
    return typer.Exit(2)


def _run(kind: str, dataset: Path, out: Path, preset: str, model: str | None, suite: list[str] | None,
         task: list[str] | None, settings: list[str] | None) -> None:
    from perspecta.train.recipes import MissingTrainExtra, train
    from perspecta.train.settings import parse_value, resolve

    overrides = {}
    for pair in settings or []:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise _fail(f"--set expects key=value, got {pair!r}")
        overrides[key.strip()] = parse_value(value)
    if model:
        overrides["model"] = model
    if suite:
        overrides["suites"] = list(suite)
    if task:
        overrides["tasks"] = list(task)
    try:
        resolved = resolve(kind, preset, overrides)
        record = train(resolved, dataset, out, command="perspecta " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    except MissingTrainExtra as e:
        raise _fail(str(e)) from None
    except (FileNotFoundError, FileExistsError, ValueError, TypeError) as e:
        raise _fail(str(e)) from None
    r = record["result"]
    console.print(f"{kind}: {r['steps']} steps in {r['seconds']:.1f} s ({r['seconds_per_step']:.2f} s/step), "
                  f"train loss {r['train_loss']:.4g}; {record['dataset']['items']} train items")
    for name, value in r["rewards"].items():
        console.print(f"  {name}: {value}", highlight=False)
    console.print(f"adapter and training.yaml in {out}; evaluate with: perspecta eval DATASET --model hf:{out}")


_DATASET = typer.Argument(..., help="Dataset directory with a train split (generate --split train=0.8,test=0.2).")
_OUT = typer.Option(..., "--out", "-o", help="New folder for the adapter, processor and training.yaml.")
_MODEL = typer.Option(None, "--model", help="Base model (hub id or path); default: the preset's.")
_SUITE = typer.Option(None, "--suite", "-s", help="Train on these suites only (default: the preset's).")
_TASK = typer.Option(None, "--task", "-t", help="Train on these suite/task keys only (default: the preset's).")
_PRESET = typer.Option(..., "--preset", help="Recipe, e.g. tiny-sft or <suite>/<name> (see perspecta train presets).")
_SET = typer.Option(None, "--set", help="Override a setting, e.g. --set max_steps=100 --set learning_rate=5e-5.")


@train_app.command("sft")
def sft_command(dataset: Path = _DATASET, out: Path = _OUT,
                preset: str = _PRESET,
                model: Optional[str] = _MODEL, suite: Optional[list[str]] = _SUITE,
                task: Optional[list[str]] = _TASK, settings: Optional[list[str]] = _SET) -> None:
    """Supervised fine-tuning with a LoRA adapter (TRL SFTTrainer + peft); loss on the answer only."""
    _run("sft", dataset, out, preset, model, suite, task, settings)


@train_app.command("grpo")
def grpo_command(dataset: Path = _DATASET, out: Path = _OUT,
                 preset: str = _PRESET,
                 model: Optional[str] = _MODEL, suite: Optional[list[str]] = _SUITE,
                 task: Optional[list[str]] = _TASK, settings: Optional[list[str]] = _SET) -> None:
    """GRPO (TRL GRPOTrainer) with each suite's rewards: answer accuracy, format, PCSR reasoning."""
    _run("grpo", dataset, out, preset, model, suite, task, settings)


@train_app.command("presets")
def presets_command() -> None:
    """The recipes: model, data and main settings of each preset, and where each value comes from."""
    from perspecta.train.settings import presets

    table = Table(title="perspecta train presets")
    for col in ("preset", "kind", "model", "data", "steps / epochs", "lr", "LoRA r"):
        table.add_column(col, no_wrap=col == "preset")
    for name, p in sorted(presets().items()):
        data = ", ".join(p.get("tasks") or p.get("suites") or ["every suite"])
        steps = str(p["max_steps"]) if p.get("max_steps", -1) > 0 else f"{p.get('num_train_epochs', 1)} epochs"
        lora = str(p["lora"]["r"]) if p.get("lora") else "full"
        table.add_row(name, p["kind"], p["model"], data, steps, f"{p.get('learning_rate', 1e-4):g}", lora)
    console.print(table)
    console.print("Each setting's source (paper section or perspecta default) is written to OUT/training.yaml.")


def register(app: typer.Typer) -> None:
    app.add_typer(train_app, name="train")
