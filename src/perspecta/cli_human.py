"""``perspecta human serve|results``: the human-evaluation web app and its summary.

Heavy imports (Starlette, uvicorn, the dataset) happen inside the commands so
``perspecta --help`` stays fast.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

console = Console()
human_app = typer.Typer(help="Human evaluation: a local web app for annotators, and their results.",
                        no_args_is_help=True)


def _fail(message: str) -> typer.Exit:
    console.print(f"[red]error:[/] {message}", highlight=False)
    return typer.Exit(2)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@human_app.command("serve")
def serve_command(
    dataset: Path = typer.Argument(..., help="Dataset directory (from `perspecta generate`)."),
    out: Path = typer.Option(Path("perspecta-human"), "--out", "-o",
                             help="Directory of the response store (responses.sqlite); reuse it to resume."),
    plan: str = typer.Option("full", "--plan", help="full (every item) or balanced (N per subtype)."),
    per_subtype: int = typer.Option(0, "--per-subtype", "-n", help="Balanced plan: items per subtype and annotator."),
    seed: int = typer.Option(0, "--seed", help="Seed of the per-annotator sampling and order."),
    split: str = typer.Option("test", "--split", help="Split to show ('all' for every split)."),
    feedback: bool = typer.Option(False, "--feedback", help="Show correct/incorrect after each answer."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (default: this machine only)."),
    port: int = typer.Option(8765, "--port", help="TCP port."),
) -> None:
    """Serve the annotation app; annotators open http://HOST:PORT/ and enter their id."""
    import uvicorn

    from perspecta.human.app import Session, create_app
    from perspecta.human.plan import PlanSettings

    try:
        settings = PlanSettings(kind=plan, per_subtype=per_subtype, seed=seed,
                                split=None if split == "all" else split)
        session = Session.open(dataset, out, settings, feedback=feedback)
    except (FileNotFoundError, ValueError) as e:
        raise _fail(str(e)) from None
    if not _is_loopback(host):
        console.print(f"[yellow]warning:[/] binding {host}: anyone who can reach this address can answer "
                      "and read the dataset's images (there is no login).", highlight=False)
    console.print(f"human evaluation of {dataset} -> {session.store.path}\n"
                  f"open http://{host}:{port}/  (Ctrl-C stops; answers are saved as they come)", highlight=False)
    uvicorn.run(create_app(session), host=host, port=port, log_level="warning")


@human_app.command("results")
def results_command(
    store: Path = typer.Argument(Path("perspecta-human"), help="The --out directory of `perspecta human serve`."),
    dataset: Optional[Path] = typer.Option(None, "--dataset", help="Dataset directory (default: the one served)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Where to write (default: the store directory)."),
) -> None:
    """Human accuracy ± SD and response times per subtype (JSON + Markdown), flags, and results.jsonl."""
    from rich.table import Table

    from perspecta.human.results import RESULTS, SUMMARY_JSON, SUMMARY_MD, write_results

    try:
        summary = write_results(store, out, dataset)
    except (FileNotFoundError, ValueError) as e:
        raise _fail(str(e)) from None
    table = Table(title=f"human evaluation in {store}")
    for col in ("group", "annotators", "responses", "accuracy % (mean ± SD)", "RT mean s", "RT median s", "interrupted"):
        table.add_column(col, justify="left" if col == "group" else "right")

    def fmt(x: Optional[float], scale: float = 1.0) -> str:
        return "—" if x is None else f"{x * scale:.1f}"

    for name, b in [("all", summary["overall"]), *summary["by_subtype"].items()]:
        table.add_row(name, str(b["n_annotators"]), str(b["n_responses"]),
                      f"{fmt(b['accuracy_mean'], 100)} ± {fmt(b['accuracy_sd'], 100)}",
                      fmt(b["rt"]["mean_s"]), fmt(b["rt"]["median_s"]), str(b["interruptions"]))
    console.print(table)
    if summary["overall"].get("with_feedback"):
        console.print(f"[yellow]{summary['overall']['with_feedback']} of {summary['overall']['n_responses']} answers "
                      "were given with feedback[/] (serve --feedback): not a baseline measurement", highlight=False)
    for a, b in summary["by_annotator"].items():
        if b.get("unanswered"):
            console.print(f"{a}: answered {b['n_responses']} of {b['planned']} planned items "
                          f"({b['unanswered']} unanswered, in no accuracy above)", highlight=False)
    for f in summary["flags"]:
        console.print(f"flagged by {f['n']}: {f['item_id']} ({', '.join(f['annotators'])})", highlight=False)
    where = out or store
    console.print(f"wrote {where / SUMMARY_JSON}, {where / SUMMARY_MD} and {where / RESULTS}", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(human_app, name="human")


if __name__ == "__main__":  # pragma: no cover
    human_app()
