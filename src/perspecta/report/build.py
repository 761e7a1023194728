"""Build a report folder from results logs: stream, summarise, run the sections, write files.

Output (same inputs, same bytes — nothing in it records when it was made)::

    OUT/index.html      self-contained page (inline CSS and a few lines of JS to sort tables)
    OUT/report.md       every table, with links to the figures
    OUT/tables/*.md     one Markdown file per table
    OUT/figures/*.png   matplotlib figures
    OUT/examples/*.png  gallery thumbnails
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perspecta.report.aggregate import aggregate
from perspecta.report.context import Context, Figure, Gallery, ReportOptions, Section
from perspecta.report.load import ReportInputError, dataset_from_runs, results_files, run_infos
from perspecta.report.missing import add_missing
from perspecta.report.summary import summarize_run
from perspecta.report.tables import Table

GENERATED_DIRS = ("figures", "tables", "examples")


@dataclass
class ReportResult:
    out: Path
    n_records: int
    runs: list[str]
    sections: dict[str, str]  # slug -> "rendered" or the omission note
    seconds: float
    files: list[Path] = field(default_factory=list)


def _load_dataset(options: ReportOptions, files: list[Path]):
    from perspecta.run.dataset import load_dataset

    path = options.dataset
    if path is not None:
        if not (path / "manifest.json").is_file():
            raise ReportInputError(f"{path}: not a dataset directory (no manifest.json)")
    else:
        path = dataset_from_runs(files)
    if path is None or options.examples <= 0:
        return None
    try:
        return load_dataset(path)
    except (FileNotFoundError, ValueError) as e:
        raise ReportInputError(f"dataset {path}: {e}") from None


def _prepare(out: Path) -> None:
    """Create OUT and empty the folders a previous report wrote, so no stale figure survives."""
    out.mkdir(parents=True, exist_ok=True)
    for sub in GENERATED_DIRS:
        shutil.rmtree(out / sub, ignore_errors=True)
        (out / sub).mkdir()


def build_report(results: list[Path], out: Path, options: ReportOptions | None = None) -> ReportResult:
    """Write the report of ``results`` (results directories or results.jsonl files) into ``out``."""
    from perspecta.report.html import render_html, render_markdown
    from perspecta.report.sections import sections as report_sections
    from perspecta.suites import registry

    started = time.perf_counter()
    options = options or ReportOptions()
    files = results_files([Path(p) for p in results])
    registry.load_builtin_suites()
    dataset = _load_dataset(options, files)
    agg = aggregate(files, set(registry.suites()), per_item=dataset is not None)
    if agg.n_records == 0:
        raise ReportInputError(f"no scored records in {', '.join(map(str, files))}")
    infos = run_infos(files)
    missing = add_missing(agg, files, infos, set(registry.suites()))  # asked but never recorded: failed
    states = sorted(agg.runs.values(), key=lambda s: (s.model, s.prompt_mode, s.dataset))
    models = [s for s in states if not s.is_human]
    ctx = Context(agg=agg, runs=[summarize_run(s) for s in models], states=models,
                  human=[s for s in states if s.is_human], options=options, out=Path(out), files=files,
                  dataset=dataset, run_info=infos)
    for run in ctx.runs:
        run["missing"] = missing.get((run["model"], run["prompt_mode"], run.get("dataset", "")), 0)
    _prepare(ctx.out)
    sections: list[Section] = [fn(ctx) for fn in report_sections()]
    written = []
    for sec in sections:
        for b in sec.blocks:
            if isinstance(b, Table):
                path = ctx.out / "tables" / f"{b.slug}.md"
                path.write_text(b.to_markdown(), encoding="utf-8")
                written.append(path)
    title = "Perspecta report"
    (ctx.out / "report.md").write_text(render_markdown(title, sections, ctx), encoding="utf-8")
    (ctx.out / "index.html").write_text(render_html(title, sections, ctx), encoding="utf-8")
    written += [ctx.out / "report.md", ctx.out / "index.html"]
    written += sorted((ctx.out / "figures").glob("*.png")) + sorted((ctx.out / "examples").glob("*.png"))
    return ReportResult(out=ctx.out, n_records=agg.n_records, runs=[ctx.label(s) for s in states],
                        sections={s.slug: s.omitted or "rendered" for s in sections},
                        seconds=time.perf_counter() - started, files=written)


def block_kind(b: Any) -> str:
    """Template helper: which partial renders a block."""
    return "table" if isinstance(b, Table) else "figure" if isinstance(b, Figure) else \
        "gallery" if isinstance(b, Gallery) else "unknown"
