"""The ``perspecta`` command line. Each command is a thin wrapper over a library call."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

app = typer.Typer(help="Spatial-reasoning benchmarks for VLMs from exact 3D ground truth.", no_args_is_help=True)
assets_app = typer.Typer(help="Inspect the asset library.", no_args_is_help=True)
bench_app = typer.Typer(help="Performance benchmarks (figures, not tests).", no_args_is_help=True)
app.add_typer(assets_app, name="assets")
app.add_typer(bench_app, name="bench")
console = Console()


def _register_commands() -> None:
    """Each area keeps its commands in its own ``cli_<area>.py`` with a ``register(app)``."""
    from perspecta import cli_audit, cli_eval, cli_human, cli_interop, cli_report, cli_train

    for module in (cli_eval, cli_audit, cli_report, cli_human, cli_interop, cli_train):
        module.register(app)


_register_commands()

RUN_DEFAULTS = {"n": 3, "seed": 0, "out": "perspecta-run"}


def _progress() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TimeRemainingColumn(), console=console,
    )


def _fail(message: str) -> typer.Exit:
    console.print(f"[red]error:[/] {message}", highlight=False)
    return typer.Exit(2)


def _generate(out: Path | str, suites: list[str], n: int, seed: int, workers: int | None, renderer: str,
              image_size: int | None, resume: bool, splits: dict[str, float] | None = None,
              tasks: list[str] | None = None, suite_config: dict | None = None, *,
              executor: str = "local", ray_address: str | None = None, difficulty: str = "standard",
              sweep: dict | None = None, with_depth: bool = False) -> dict:
    """Run a generation with a progress bar; user errors become one clear line and exit 2."""
    from perspecta.dataset.generate import UnitFailed

    if workers is not None and workers < 1:
        raise _fail(f"--workers must be at least 1, got {workers}")
    try:
        return _generate_with_progress(out, suites, n, seed, workers, renderer, image_size, resume,
                                       splits or {"test": 1.0}, tasks, suite_config or {},
                                       executor=executor, ray_address=ray_address, difficulty=difficulty,
                                       sweep=sweep, with_depth=with_depth)
    except UnitFailed as e:
        console.print(f"[red]error:[/] generation stopped: {e}\n"
                      "the units finished before it are kept; change the settings (--difficulty, --sweep, "
                      "--suite-config) or the seed and rerun with --resume", highlight=False)
        raise typer.Exit(1) from None
    except (FileExistsError, KeyError, ValueError) as e:
        raise _fail(e.args[0] if isinstance(e, KeyError) and e.args else str(e)) from None
    except OSError as e:  # an --out that is a file, or a place that cannot be written
        raise _fail(f"--out {out}: cannot write the dataset ({e.strerror or e})") from None


def _generate_with_progress(out: Path | str, suites: list[str], n: int, seed: int, workers: int | None,
                            renderer: str, image_size: int | None, resume: bool, splits: dict[str, float],
                            tasks: list[str] | None, suite_config: dict, *, executor: str = "local",
                            ray_address: str | None = None, difficulty: str = "standard",
                            sweep: dict | None = None, with_depth: bool = False) -> dict:
    from perspecta.dataset.generate import GenerationConfig, generate_dataset

    config = GenerationConfig(suites=suites, n=n, seed=seed, renderer=renderer, image_size=image_size,
                              splits=splits, tasks=tasks, suite_config=suite_config, difficulty=difficulty,
                              sweep=sweep, with_depth=with_depth)
    start = time.perf_counter()
    with _progress() as progress:
        bar = progress.add_task("generating units", total=None, rate="")

        def update(done: int, total: int) -> None:
            elapsed = time.perf_counter() - start
            progress.update(bar, completed=done, total=total, rate=f"{done / elapsed:.1f} units/s" if elapsed > 0 else "")

        manifest = generate_dataset(out, config, workers=workers, resume=resume, on_progress=update,
                                    executor=executor, ray_address=ray_address)
    manifest["_seconds"] = time.perf_counter() - start
    return manifest


def _summary(out: Path, manifest: dict) -> None:
    table = Table(title=f"dataset {out}")
    table.add_column("task")
    table.add_column("items", justify="right")
    for key, count in manifest["counts"]["by_task"].items():
        table.add_row(key, str(count))
    table.add_row("[bold]total", f"[bold]{manifest['counts']['items']}")
    console.print(table)
    secs = manifest.get("_seconds")
    extra = f" in {secs:.1f} s" if secs else ""
    console.print(f"{manifest['counts']['images']} images, {manifest['counts']['scenes']} scenes, "
                  f"renderer {manifest['renderer']['name']} ({manifest['renderer']['version']}){extra}")


@app.command()
def generate(
    out: str = typer.Option(..., "--out", "-o",
                            help="Dataset directory to create, or an fsspec URL (file://, s3://… with its plugin)."),
    suite: list[str] = typer.Option(None, "--suite", "-s", help="Suite(s) to generate; default: every registered suite."),
    n: int = typer.Option(20, "--n", help="Units (scenes) per task; each unit yields one or more items."),
    seed: int = typer.Option(0, "--seed", help="Root seed; the same seed gives the same dataset."),
    workers: Optional[int] = typer.Option(None, "--workers", "-w",
                                          help="Worker processes (default 1); with --executor ray, Ray tasks at "
                                               "once (default: every CPU of the cluster)."),
    renderer: str = typer.Option("gl", "--renderer", help="gl (default, moderngl/EGL) or blender (Cycles)."),
    image_size: Optional[int] = typer.Option(None, "--image-size",
                                             help="Side of perspective images in pixels (default: each suite's own)."),
    resume: bool = typer.Option(False, "--resume", help="Continue an interrupted generation in OUT."),
    split: str = typer.Option("test=1", "--split", help="Split fractions by scene, e.g. train=0.8,test=0.2."),
    task: list[str] = typer.Option(None, "--task", "-t", help="Only these tasks (suite/task, repeatable)."),
    suite_config: list[str] = typer.Option(None, "--suite-config", "-c",
                                           help="Per-suite setting suite.key=value, e.g. dori.prompt_style=unstructured."),
    executor: str = typer.Option("local", "--executor", help="local (processes on this machine) or ray."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address",
                                              help="With --executor ray: cluster to join (default: start a local one)."),
    difficulty: str = typer.Option("standard", "--difficulty",
                                   help="Preset of every task's difficulty knobs: easy, standard or hard."),
    sweep: Optional[str] = typer.Option(None, "--sweep",
                                        help="Span one knob evenly, KNOB=a:b:n (unit i takes value i mod n)."),
    with_depth: bool = typer.Option(False, "--with-depth",
                                    help="Also store each view's ground-truth depth as a 16-bit PNG beside it."),
) -> None:
    """Generate a benchmark dataset (same seed, same bytes, whatever the executor)."""
    from perspecta.dataset.generate import parse_splits, parse_suite_config, parse_sweep
    from perspecta.suites import registry

    suites = suite or registry.suites()
    try:
        splits = parse_splits(split)
        configs = parse_suite_config(suite_config or [])
        sweep_spec = parse_sweep(sweep) if sweep else None
    except ValueError as e:
        raise _fail(str(e)) from None
    if task:
        suites = sorted({t.split("/", 1)[0] for t in task} | set(suite or []))
    if executor == "local" and workers is None:
        workers = 1
    manifest = _generate(out, suites, n, seed, workers, renderer, image_size, resume, splits, task or None, configs,
                         executor=executor, ray_address=ray_address, difficulty=difficulty, sweep=sweep_spec,
                         with_depth=with_depth)
    _summary(out, manifest)


@app.command()
def validate(
    directory: Path = typer.Argument(..., help="Dataset directory."),
    no_derive: bool = typer.Option(False, "--no-derive", help="Skip re-deriving answers from geometry."),
) -> None:
    """Audit a dataset: schema, images, options, groups, splits, checksums and every answer."""
    from perspecta.dataset.validate import format_report, validate_dataset

    report = validate_dataset(directory, derive_answers=not no_derive)
    console.print(format_report(report), markup=False, highlight=False)
    raise typer.Exit(0 if report.ok else 1)


@app.command()
def run(
    out: Path = typer.Option(Path(RUN_DEFAULTS["out"]), "--out", "-o", help="Where the run writes its outputs."),
    n: int = typer.Option(RUN_DEFAULTS["n"], "--n", help="Units per task of the default benchmark."),
    seed: int = typer.Option(RUN_DEFAULTS["seed"], "--seed"),
    workers: int = typer.Option(0, "--workers", "-w", help="Worker processes (0 = one per core)."),
) -> None:
    """The main job: generate a small default benchmark of every suite, validate it, evaluate the
    built-in baselines (and PERSPECTA_MODEL when set), summarise and write the HTML report.

    Re-running continues (or reuses) the dataset in OUT when its configuration matches.
    """
    from perspecta.dataset.generate import default_workers
    from perspecta.dataset.validate import validate_dataset
    from perspecta.suites import registry

    data = out / "dataset"
    manifest = _generate(data, registry.suites(), n, seed, workers or default_workers(), "gl", None, resume=True)
    _summary(data, manifest)
    report = validate_dataset(data)
    if not report.ok:
        console.print(f"[red]validation failed with {len(report.errors)} error(s):")
        for e in report.errors[:20]:
            console.print(f"  {e}", markup=False)
        raise typer.Exit(1)
    console.print(f"[green]validated[/]: every answer of {manifest['counts']['items']} items re-derived from geometry.")

    from perspecta.cli_audit import audit_for_run

    audit_for_run(data, console)

    from perspecta.cli_eval import run_main_job

    summary, table = run_main_job(data, out / "results")
    console.print(table)
    src = summary.get("prior_source")
    if src:
        console.print(f"baseline:prior learned from a {src['kind']} ({src['items']} items"
                      + (f", seed {src['seed']}" if src.get("seed") is not None else "")
                      + f", {src['dataset']}), never from the items it is scored on", highlight=False)
    if not summary["oracle_ok"]:
        console.print("[red]the oracle baseline did not score 100%: an answer key or the extraction is wrong")
        raise typer.Exit(1)

    from perspecta.report.build import build_report
    from perspecta.report.context import ReportOptions

    built = build_report([out / "results"], out / "report", ReportOptions(dataset=data, examples=2))
    console.print(f"report: {built.out / 'index.html'} ({built.n_records} scored records, "
                  f"{sum(v == 'rendered' for v in built.sections.values())}/{len(built.sections)} sections with data)")


@app.command("suites")
def list_suites() -> None:
    """List registered suites and their tasks."""
    from perspecta.suites import registry

    table = Table()
    table.add_column("suite")
    table.add_column("task")
    table.add_column("description")
    for s in registry.suites():
        for t in registry.tasks(s):
            table.add_row(s, t.name, t.description)
    console.print(table)


@assets_app.command("list")
def assets_list(
    category: Optional[str] = typer.Option(None, "--category", "-c"),
    source: Optional[str] = typer.Option(None, "--source"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON records instead of a table."),
    user_dir: list[Path] = typer.Option(None, "--user-dir", help="Extra folder(s) with sidecar-annotated meshes."),
) -> None:
    """List available assets (procedural, SH3D furniture, user folders)."""
    from perspecta.assets.library import AssetLibrary

    lib = AssetLibrary.default(user_dirs=user_dir or None)
    infos = [a for a in lib.all() if (category is None or a.category == category) and (source is None or a.source == source)]
    if as_json:
        for a in infos:
            sys.stdout.write(json.dumps(a.to_dict()) + "\n")
        return
    table = Table(title=f"{len(infos)} assets")
    table.add_column("asset_id", overflow="fold", ratio=3)
    for col in ("category", "front", "size (m)", "license"):
        table.add_column(col, overflow="fold", ratio=1)
    for a in infos:
        table.add_row(a.asset_id, a.category, "yes" if a.has_front else "none",
                      " x ".join(f"{v:.2f}" for v in a.size), a.license)
    console.print(table)


@assets_app.command("thumb")
def assets_thumb(
    asset_id: str = typer.Argument(..., help="Asset id, e.g. proc:car or sh3d:..."),
    out: Path = typer.Option(..., "--out", "-o", help="PNG to write."),
    size: int = typer.Option(256, "--size", help="Side of each of the four views."),
    user_dir: list[Path] = typer.Option(None, "--user-dir"),
) -> None:
    """Render a 4-view sheet (front, left, back, right) with the canonical axes drawn."""
    from perspecta.assets.library import AssetLibrary
    from perspecta.assets.thumb import thumbnail_sheet

    lib = AssetLibrary.default(user_dirs=user_dir or None)
    thumbnail_sheet(lib, asset_id, out, size=size)
    console.print(f"wrote {out}")


@bench_app.callback(invoke_without_command=True, no_args_is_help=False)
def bench_default(ctx: typer.Context) -> None:
    """Performance benchmarks (figures, not tests); with no subcommand, all of them (`bench all`)."""
    if ctx.invoked_subcommand is None:
        bench_all(quick=False, out=None)


@bench_app.command("all")
def bench_all(
    quick: bool = typer.Option(False, "--quick", help="Tiny sizes: checks that everything runs, in seconds."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the Markdown report to this file."),
) -> None:
    """Every benchmark in one run: render, generation (local and Ray, 1→2 workers), harness overhead,
    scoring and report throughput on 1M records; one Markdown table."""
    from perspecta.bench import BenchSizes, run_all

    report = run_all(BenchSizes.quick() if quick else BenchSizes(),
                     say=lambda msg: console.print(msg, style="dim", highlight=False, markup=False))
    if out is not None:
        out.write_text(report, encoding="utf-8")
    typer.echo(report, nl=False)


@bench_app.command("render")
def bench_render(
    frames: int = typer.Option(30, "--frames", help="Frames per measurement."),
    renderers: list[str] = typer.Option(["gl"], "--renderer", help="gl and/or blender."),
    units: int = typer.Option(60, "--units", help="Units of the shorter end-to-end run (the longer one has 4x)."),
) -> None:
    """Images/s at 256² and 512², panorama seconds, and end-to-end generate items/s."""
    from perspecta.bench import run_render_bench

    console.print(run_render_bench(frames=frames, renderers=renderers, units=units))


@bench_app.command("generate")
def bench_generate(
    units: int = typer.Option(4, "--units", help="Units per task of every run."),
    suites: Optional[list[str]] = typer.Option(None, "--suite", help="Suites to measure (default: every registered one)."),
    quick: bool = typer.Option(False, "--quick", help="One unit per task, one raw frame per size: checks the plumbing."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the Markdown report to this file."),
) -> None:
    """Every suite at its defaults: items/s and images/s with 1 and 2 local workers, the raw renderer on
    the same frames, and where each unit's CPU goes (sampling, render passes, remap, masks, PNG, writing)."""
    from perspecta.bench_generate import run_generate_bench

    report = run_generate_bench(1 if quick else units, suites=suites, repeats=1 if quick else 3,
                                say=lambda msg: console.print(msg, style="dim", highlight=False, markup=False))
    if out is not None:
        out.write_text(report + "\n", encoding="utf-8")
    typer.echo(report)


@bench_app.command("harness")
def bench_harness(
    concurrency: list[int] = typer.Option([1, 16, 64], "--concurrency", "-c", help="Concurrency levels (repeat the flag)."),
    items: int = typer.Option(1000, "--items", help="One-image DORI MCQ items (generated once, then cached)."),
    dataset: Optional[Path] = typer.Option(None, "--dataset", help="Use this dataset directory as it is instead."),
    peers: list[str] = typer.Option(["lmms-eval", "inspect-ai"], "--peer",
                                    help="Peers to run beside ours (venvs from benchmarks/harness/setup_peers.sh)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the Markdown report to this file."),
) -> None:
    """Requests/s and client CPU per item against a zero-latency local server, beside lmms-eval and inspect_ai."""
    from perspecta.bench_harness import PEERS, run_harness_bench

    unknown = sorted(set(peers) - set(PEERS))
    if unknown:
        raise typer.BadParameter(f"unknown peer(s) {', '.join(unknown)}; choose from {', '.join(PEERS)}",
                                 param_hint="--peer")
    report = run_harness_bench(concurrency=tuple(concurrency), n_items=items, dataset=dataset, peers=tuple(peers),
                               progress=lambda msg: console.print(msg, style="dim", highlight=False, markup=False))
    if out is not None:
        out.write_text(report, encoding="utf-8")
    typer.echo(report, nl=False)  # plain Markdown: no wrapping, no markup


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
