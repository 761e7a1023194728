"""``perspecta eval`` and ``perspecta score``, plus the evaluation half of ``perspecta run``.

``register(app)`` adds the commands to the main Typer app; ``python -m
perspecta.cli_eval`` runs them standalone. Both are thin wrappers over
:func:`perspecta.run.evaluate` and :mod:`perspecta.score.metrics`.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console

console = Console()
BUILTIN_BASELINES = ("baseline:oracle", "baseline:chance", "baseline:prior")


def _finite(x: Any) -> Any:
    """NaN and ±inf as None, recursively: an undefined figure (Cohen's κ when chance agreement is
    1) is null in JSON; Python's ``NaN`` token is not JSON and breaks strict readers (jq, JS)."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def summary_json(summary: dict[str, Any]) -> str:
    """``summary.json`` text: strict JSON, undefined figures as null."""
    return json.dumps(_finite(summary), indent=2, default=str, allow_nan=False)


def _fail(message: str) -> typer.Exit:
    console.print(f"[red]error:[/] {message}", highlight=False)
    return typer.Exit(2)


def eval_command(
    dataset: Path = typer.Argument(..., help="Dataset directory (from `perspecta generate`)."),
    model: list[str] = typer.Option(..., "--model", "-m",
                                    help="openai:NAME, hf:PATH, baseline:chance|prior|oracle, or blind:<backend> "
                                         "(repeatable: several models; at once with --executor ray)."),
    out: Path = typer.Option(Path("perspecta-results"), "--out", "-o", help="Results directory (resumable)."),
    base_url: list[str] = typer.Option(None, "--base-url",
                                       help="OpenAI-compatible …/v1 URL (or OPENAI_BASE_URL); repeat it with "
                                            "--executor ray to spread requests over several endpoints."),
    concurrency: int = typer.Option(16, "--concurrency", "-c", help="Requests in flight."),
    timeout: float = typer.Option(120.0, "--timeout", help="Seconds per request attempt."),
    retries: int = typer.Option(4, "--retries", help="Retries per request on 429/5xx/timeouts/bad bodies."),
    prompt_mode: list[str] = typer.Option(["direct"], "--prompt-mode", help="direct, cot and/or think."),
    repeats: int = typer.Option(1, "--repeats", help="Repeats with seeds seed, seed+1, …"),
    seed: int = typer.Option(0, "--seed"),
    temperature: float = typer.Option(0.0, "--temperature"),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", help="Default: per suite."),
    image_max_side: Optional[int] = typer.Option(None, "--image-max-side",
                                                 help="Downscale images to this longest side (default: as "
                                                      "the suite rendered them; 256 = SpinBench's paper protocol)."),
    high_res: bool = typer.Option(False, "--high-res", help="Send every image at full resolution."),
    input_mode: str = typer.Option("rgb", "--input",
                                   help="rgb, or depth-concat: each image with its ground-truth depth map beside it "
                                        "(dataset made with generate --with-depth)."),
    split: str = typer.Option("test", "--split", help="Split to evaluate ('all' for every split)."),
    suite: list[str] = typer.Option(None, "--suite", "-s", help="Only these suites."),
    limit: Optional[int] = typer.Option(None, "--limit", help="At most this many items per task."),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Response cache file (default OUT/cache.jsonl)."),
    no_progress: bool = typer.Option(False, "--no-progress"),
    executor: str = typer.Option("local", "--executor", help="local, or ray: requests spread over Ray actors."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address",
                                              help="Ray cluster to join (default: start a local one)."),
    workers: int = typer.Option(1, "--workers", "-w", help="With --executor ray: actors per model and endpoint."),
) -> None:
    """Evaluate a model or baseline on a dataset; rerunning resumes (only missing/failed items are asked)."""
    from perspecta.models.base import SUITE_DEFAULT, InputSettings
    from perspecta.models.images import MissingDepthError
    from perspecta.run import EvalConfig, evaluate
    from perspecta.score.metrics import summarize, summary_table

    if input_mode not in ("rgb", "depth-concat"):
        raise _fail(f"--input must be rgb or depth-concat, got {input_mode!r}")
    if executor not in ("local", "ray"):
        raise _fail(f"--executor must be local or ray, got {executor!r}")
    if executor == "local" and len(base_url or []) > 1:
        raise _fail("several --base-url need --executor ray (one process talks to one endpoint)")
    try:
        cfg = EvalConfig(
            concurrency=concurrency, timeout_s=timeout, max_retries=retries, prompt_modes=list(prompt_mode),
            repeats=repeats, seed=seed, temperature=temperature, max_tokens=max_tokens,
            inputs=InputSettings(max_side=None if high_res else SUITE_DEFAULT if image_max_side is None
                                 else image_max_side, depth=input_mode == "depth-concat"),
            split=None if split == "all" else split, suites=list(suite) if suite else None, limit=limit,
            cache_path=cache, progress=not no_progress,
        )
        if executor == "ray":
            from perspecta.scale.ray_eval import evaluate_ray

            runs = evaluate_ray(dataset, model, out, cfg, base_urls=base_url, actors_per_endpoint=workers,
                                address=ray_address)
        else:
            runs = [(evaluate(dataset, m, out, config=cfg, base_url=base_url[0] if base_url else None), {})
                    for m in model]
    except (FileNotFoundError, MissingDepthError, ValueError, KeyError, OSError) as e:
        raise _fail(e.args[0] if isinstance(e, KeyError) and e.args else str(e)) from None
    all_failed = []
    for result, served in runs:
        records = result.records()
        summary = summarize(records)
        console.print(summary_table(summary, level="by_subtype", title=f"{result.model} on {dataset}"))
        c = result.counts
        console.print(f"{c.get('requested', 0)} requested, {c.get('cached', 0)} from cache, "
                      f"{c.get('resumed', 0)} already done, {c.get('retries', 0)} retries, "
                      f"{c.get('failed', 0)} failed in {result.seconds:.1f} s -> {result.results_path}")
        if served:
            console.print("answered per Ray actor: " + ", ".join(f"{k} {v}" for k, v in served.items()),
                          highlight=False)
        n = len(records)
        failed = sum(r.status == "failed" for r in records)
        items = len({r.item_id for r in records})
        # with --repeats or several prompt modes a record is one (item, mode, repeat), not an item
        unit = "items" if items == n else f"requests ({items} items × repeats/modes)"
        share = f"{failed} of {n} {unit} failed ({100 * failed / n:.1f}%)" if n else "no items"
        console.print(f"[bold]{result.model}[/]: {share}; failed items count as wrong in the accuracy",
                      style="red" if failed else None, highlight=False)
        if n and failed == n:
            errors = Counter(r.error or "unknown error" for r in records)
            all_failed.append(f"{result.model}: every request failed (most common error: {errors.most_common(1)[0][0]})")
    if all_failed:
        for line in all_failed:
            console.print(f"[red]error:[/] {line}", highlight=False)
        raise typer.Exit(1)


def score_command(
    results: Path = typer.Argument(..., help="results.jsonl or the directory holding it."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Summary JSON (default: next to the results)."),
    level: str = typer.Option("by_subtype", "--level", help="Table rows: by_suite, by_task or by_subtype."),
) -> None:
    """Score a results log: accuracy with 95% CI per suite/task/subtype and every suite metric."""
    from perspecta.score.metrics import summarize_file, summary_table

    if level not in ("by_suite", "by_task", "by_subtype"):
        raise _fail(f"--level must be by_suite, by_task or by_subtype, got {level!r}")
    try:  # streamed: memory grows with groups, not records
        summary = summarize_file(results)
    except (FileNotFoundError, ValueError) as e:
        raise _fail(str(e)) from None
    if not summary["runs"]:  # as `perspecta report`: an empty table would read as a score of nothing
        raise _fail(f"no scored records in {results}")
    path = json_out or (results if results.is_dir() else results.parent) / "summary.json"
    try:
        path.write_text(summary_json(summary))
    except OSError as e:  # a directory, or a place that cannot be written
        raise _fail(f"--json {path}: cannot write the summary ({e.strerror or e})") from None
    console.print(summary_table(summary, level=level, title=str(results)))
    for run in summary["runs"]:
        if run.get("missing"):
            console.print(f"[red]{run['model']}[/] {run['prompt_mode']}: {run['missing']} of {run['n']} items asked "
                          "have no record (interrupted run?); counted as failed above", highlight=False)
    for run in summary["runs"]:
        for suite, metrics in run["suite_metrics"].items():
            console.print(f"[bold]{run['model']}[/] {run['prompt_mode']} {suite}: "
                          + json.dumps(_finite(metrics), default=str)[:2000], highlight=False)
    console.print(f"summary written to {path}")


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
    app.command("score")(score_command)


def run_main_job(dataset_dir: Path, out_dir: Path, *, models: list[str] | None = None,
                 progress: bool = True) -> tuple[dict[str, Any], Any]:
    """Evaluate the built-in baselines (and ``PERSPECTA_MODEL`` if set, e.g. ``openai:NAME`` with
    ``OPENAI_BASE_URL``) on a dataset; write ``OUT/summary.json``; return (summary, rich table).

    The summary carries ``oracle_ok``: whether the oracle scored 100% on every answered item,
    the self-check of the answer keys and of extraction.
    """
    from perspecta.run import evaluate
    from perspecta.score.metrics import read_records, summarize, summary_table

    specs = list(models or BUILTIN_BASELINES)
    extra = os.environ.get("PERSPECTA_MODEL")
    if extra and extra not in specs:
        specs.append(extra)
    for spec in specs:
        evaluate(dataset_dir, spec, out_dir, progress=progress)
    summary = summarize([r for r in read_records(out_dir) if r.model in specs])
    oracle = [r for r in summary["runs"] if r["model"] == "baseline:oracle"]
    summary["oracle_ok"] = bool(oracle) and all(r["accuracy"] == 1.0 and r["failed"] == 0 for r in oracle)
    prior_file = Path(out_dir) / "run-baseline_prior.json"
    if prior_file.is_file():
        summary["prior_source"] = json.loads(prior_file.read_text()).get("prior_source")
    Path(out_dir, "summary.json").write_text(summary_json(summary))
    return summary, summary_table(summary, level="by_suite", title=f"baselines on {dataset_dir} (per-task: perspecta score)")


app = typer.Typer(help="Evaluate and score (standalone entry point).", no_args_is_help=True)
register(app)

if __name__ == "__main__":  # pragma: no cover
    app()
