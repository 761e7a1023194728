"""``perspecta export`` / ``perspecta import-predictions``: interop with lmms-eval, VLMEvalKit, Hugging Face and TRL.

Thin wrappers over :mod:`perspecta.interop`; heavy imports happen inside the commands.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

console = Console()


def _fail(message: str) -> typer.Exit:
    console.print(f"[red]error:[/] {message}", highlight=False)
    return typer.Exit(2)


def export_command(
    dataset: Path = typer.Argument(..., help="Dataset directory (from `perspecta generate`)."),
    to: str = typer.Option(..., "--to", help="hf, vlmevalkit, lmms-eval, spinbench or sft."),
    out: Path = typer.Option(..., "--out", "-o", help="Output directory (spinbench/sft: a .jsonl file is fine)."),
    split: str = typer.Option("test", "--split", help="Split for vlmevalkit and lmms-eval (hf: all; sft: train)."),
) -> None:
    """Export a dataset for another tool: HF datasets, VLMEvalKit, lmms-eval, SpinBench JSONL, TRL SFT."""
    from perspecta.interop import export

    try:
        result = export(dataset, to, out, split=split)
    except (FileNotFoundError, ValueError, KeyError) as e:
        raise _fail(str(e)) from None
    except OSError as e:  # an --out that is a file, or a place that cannot be written
        raise _fail(f"--out {out}: cannot write ({e.strerror or e})") from None
    console.print(json.dumps(result), highlight=False)


def import_command(
    file: Path = typer.Argument(..., help="lmms-eval --log_samples JSONL or VLMEvalKit prediction .tsv/.csv/.xlsx."),
    dataset: Path = typer.Option(..., "--dataset", help="The dataset the predictions were made on."),
    fmt: str = typer.Option(..., "--format", help="lmms-eval or vlmevalkit."),
    model: str = typer.Option(..., "--model", help="Model name to record (e.g. lmms-eval:qwen2_5_vl)."),
    out: Path = typer.Option(..., "--out", "-o", help="Results directory (writes results.jsonl) or a .jsonl path."),
    split: str = typer.Option("test", "--split", help="Exported split (for rows identified by position only)."),
) -> None:
    """Score predictions made by lmms-eval or VLMEvalKit into our results.jsonl (then `perspecta score`)."""
    from perspecta.interop.import_predictions import import_predictions

    try:
        result = import_predictions(file, dataset=dataset, fmt=fmt, model=model, out=out, split=split)
    except (FileNotFoundError, ValueError) as e:
        raise _fail(str(e)) from None
    except OSError as e:
        raise _fail(f"--out {out}: cannot write ({e.strerror or e})") from None
    console.print(json.dumps(result), highlight=False)


def register(app: typer.Typer) -> None:
    """Add this area's commands to the main app."""
    app.command("export")(export_command)
    app.command("import-predictions")(import_command)
