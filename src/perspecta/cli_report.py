"""``perspecta report``: the HTML/Markdown report over scored results.

Thin wrapper over :func:`perspecta.report.build.build_report` (and, with ``--bench N``,
:func:`perspecta.report.bench.run_report_bench`); heavy imports stay inside the command
so ``perspecta --help`` stays fast.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

console = Console()


def _fail(message: str) -> typer.Exit:
    console.print(f"[red]error:[/] {message}", highlight=False)
    return typer.Exit(2)


def _pairs(values: list[str], flag: str) -> dict[str, str]:
    out = {}
    for v in values:
        name, sep, value = v.rpartition("=")
        if not sep or not name or not value:
            raise ValueError(f"{flag} {v!r}: expected NAME=VALUE")
        out[name] = value
    return out


def _sizes(model_size: list[str], sizes_file: Path | None) -> dict[str, float]:
    """Sizes from ``--sizes FILE`` (JSON object or NAME=SIZE lines) then ``--model-size`` (which wins)."""
    from perspecta.report.context import parse_size

    raw: dict[str, str] = {}
    if sizes_file is not None:
        text = sizes_file.read_text(encoding="utf-8")
        if text.lstrip().startswith("{"):
            raw.update({k: str(v) for k, v in json.loads(text).items()})
        else:
            raw.update(_pairs([ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")],
                              str(sizes_file)))
    raw.update(_pairs(model_size, "--model-size"))
    return {name: parse_size(v) for name, v in raw.items()}


def report_command(
    results: list[Path] = typer.Argument(None, help="Results directories (from `perspecta eval`) or results.jsonl files."),
    out: Path = typer.Option(Path("report"), "--out", "-o", help="Report folder to write (index.html, report.md, ...)."),
    dataset: Optional[Path] = typer.Option(None, "--dataset", help="Dataset directory for the example gallery "
                                           "(default: the one named by run-*.json beside the results)."),
    examples: int = typer.Option(2, "--examples", help="Gallery items per task (0 = no gallery)."),
    model_size: list[str] = typer.Option([], "--model-size", help="NAME=SIZE, e.g. openai:qwen2.5-vl-7b=7B (repeat)."),
    sizes: Optional[Path] = typer.Option(None, "--sizes", help="File of model sizes: JSON object or NAME=SIZE lines."),
    family: list[str] = typer.Option([], "--family", help="NAME=FAMILY to override the family parsed from a name."),
    audit: Optional[Path] = typer.Option(None, "--audit", help="Audit JSON from `perspecta audit --json` "
                                         "(default: audit.json inside the dataset directory, if any)."),
    bench: Optional[int] = typer.Option(None, "--bench", help="Instead of a report: time a report over N "
                                        "synthetic records (and N/4) and print seconds and peak memory."),
) -> None:
    """Write an offline HTML report (with Markdown tables and PNG figures) of one or more results logs."""
    if bench is not None:
        from perspecta.report.bench import run_report_bench

        console.print_json(json.dumps(run_report_bench(bench)))
        return
    from perspecta.report.build import build_report
    from perspecta.report.context import ReportOptions
    from perspecta.report.load import ReportInputError

    if not results:
        raise _fail("give at least one results directory or results.jsonl")
    if examples < 0:
        raise _fail(f"--examples must be 0 or more, got {examples}")
    if audit is not None and not audit.is_file():
        raise _fail(f"--audit {audit}: no such file")
    try:
        options = ReportOptions(examples=examples, model_sizes=_sizes(model_size, sizes),
                                families=_pairs(family, "--family"), dataset=dataset, audit=audit)
        result = build_report(results, out, options)
    except (ReportInputError, ValueError, FileNotFoundError, OSError) as e:
        raise _fail(str(e)) from None
    for slug, state in result.sections.items():
        console.print(f"  {slug:<12} {state}", highlight=False, markup=False)
    console.print(f"{result.n_records} records, {len(result.runs)} runs -> {result.out / 'index.html'} "
                  f"({result.seconds:.1f} s)", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``perspecta report`` to the main app."""
    app.command("report")(report_command)
