"""``perspecta audit DATASET``: what a model could score on each task without the skill.

Thin wrapper over :func:`perspecta.audit.core.audit_dataset`; exit 0 when no task or
subtype has a skill-free score confidently above chance, 1 when one has, 2 on bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

console = Console()


#: exit code of ``perspecta audit`` when no cell could be judged (too few scene clusters):
#: neither a pass (0) nor a shortcut (1), so scripts cannot read "nothing judged" as "clean".
NOT_JUDGED_EXIT = 3

def _wide_console(base: Console | None = None, width: int = 200) -> Console:
    """A console wide enough for the audit table even when output is piped."""
    base = base or console
    return base if base.is_terminal else Console(width=width)


def print_result(result, out: Console) -> None:  # noqa: ANN001 (AuditResult; import kept lazy)
    from perspecta.audit.render import cells_table, evidence_lines, readability_table, worst_table

    out.print(cells_table(result))
    out.print(worst_table(result))
    lines = evidence_lines(result)
    if lines:
        out.print("[bold]strongest features of the failing predictors[/] (fitted on all items, for reading):")
        for line in lines:
            out.print(f"  {line}", markup=False, highlight=False)
    table = readability_table(result)
    if table is not None:
        out.print(table)


def audit_command(
    dataset: Path = typer.Argument(..., help="Dataset directory (from `perspecta generate`)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the audit as JSON to this file "
                                            "(DATASET/audit.json is where the report looks for it)."),
    threshold: float = typer.Option(5.0, "--threshold", help="Points above chance the lower end of a 95% "
                                    "interval may reach before the audit fails."),
    min_clusters: int = typer.Option(8, "--min-clusters", help="Cells with fewer independent clusters "
                                     "(scenes/groups) are shown but not judged."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the per-suite summary."),
) -> None:
    """Measure, per task and subtype, what a model could score WITHOUT the skill: answer
    prior, text-only model, id/order leaks, identical images and cheap features, each
    cross-validated by scene/group with bootstrap intervals. Exit 1 when any is
    confidently above chance."""
    from perspecta.audit.core import audit_dataset
    from perspecta.audit.features import AuditInputError
    from perspecta.audit.render import worst_table
    from perspecta.dataset.io import write_json_atomic

    if not 0 <= threshold < 100:
        console.print(f"[red]error:[/] --threshold must be in [0, 100) points, got {threshold:g}",
                      highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    if min_clusters < 2:
        console.print(f"[red]error:[/] --min-clusters must be at least 2, got {min_clusters}", highlight=False)
        raise typer.Exit(2)
    try:
        result = audit_dataset(dataset, threshold=threshold / 100.0, min_clusters=min_clusters)
    except AuditInputError as e:
        console.print(f"[red]error:[/] {e}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    out = _wide_console()
    if quiet:
        out.print(worst_table(result))
    else:
        print_result(result, out)
    if json_out is not None:
        write_json_atomic(json_out, result.to_dict())
    failures = result.failures
    judged = sum(c.judged and not c.control for c in result.cells)
    if judged == 0:  # an audit that judged nothing has passed nothing: say so, and exit apart
        out.print(f"[yellow]NOT JUDGED[/]: no cell has the {min_clusters} scene clusters a verdict needs, so this "
                  f"audit neither passes nor fails the dataset ({result.n_items} items, {result.seconds:.1f} s); "
                  "generate more items per task (e.g. --n 60) and audit again"
                  + (f"; JSON: {json_out}" if json_out else ""), highlight=False, soft_wrap=True)
        raise typer.Exit(NOT_JUDGED_EXIT)
    status = f"[bold red]FAILED[/]: {len(failures)} of {judged} judged cells" if failures else \
        f"[green]OK[/]: none of {judged} judged cells"
    open_gap = largest_open_gap(result)
    power = "" if failures or open_gap is None else (
        f"; not ruled out: a skill-free score up to {100 * open_gap[0]:+.1f} points above chance "
        f"(95% upper end, {open_gap[1]}, {open_gap[2]}) — more items per task narrow it")
    out.print(f"{status} above chance by more than {threshold:g} points at the 95% lower bound "
              f"({result.n_items} items, {result.seconds:.1f} s){power}" + (f"; JSON: {json_out}" if json_out else ""),
              highlight=False, soft_wrap=True)
    raise typer.Exit(1 if failures else 0)


def largest_open_gap(result) -> tuple[float, str, str] | None:
    """(gap, cell, predictor): the highest 95% upper end above chance among the judged cells.

    "OK" says no judged cell's lower end clears the threshold; on a small dataset the
    intervals are wide and that holds even when a shortcut is worth many points. The upper
    end says how large a skill-free score the data cannot exclude — the audit's power — so
    an OK is not read as "no shortcut" when it means "too few items to tell"."""
    best = None
    for c in result.cells:
        if not c.judged or c.control:
            continue
        for fam, est in c.predictors.items():
            if est is not None and (best is None or est.hi - c.chance > best[0]):
                best = (est.hi - c.chance, c.key, fam)
    return best


def audit_for_run(dataset: Path, out: Console) -> None:
    """``perspecta run``'s audit step: write ``DATASET/audit.json`` (the report shows it) and
    print the worst skill-free gap per suite. It informs and never stops the run: the
    default run's subtypes are mostly too small to judge."""
    from perspecta.audit import AUDIT_FILE
    from perspecta.audit.core import audit_dataset
    from perspecta.audit.features import AuditInputError
    from perspecta.audit.render import worst_table
    from perspecta.dataset.io import write_json_atomic

    try:
        result = audit_dataset(dataset)
    except AuditInputError as e:
        out.print(f"[yellow]audit skipped:[/] {e}", highlight=False, soft_wrap=True)
        return
    write_json_atomic(dataset / AUDIT_FILE, result.to_dict())
    _wide_console(out, 110).print(worst_table(result))
    judged = sum(c.judged and not c.control for c in result.cells)
    if judged == 0:
        out.print(f"audit: nothing judged (no cell has enough scene clusters; {result.seconds:.1f} s): this dataset "
                  "is too small to pass or fail the shortcut audit; audit a larger one (perspecta generate --n 60, "
                  "then perspecta audit)", highlight=False, soft_wrap=True)
        return
    out.print(f"audit: {len(result.failures)} of {judged} judged cells fail ({result.seconds:.1f} s); "
              f"full table: perspecta audit {dataset}", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``perspecta audit`` to the main app."""
    app.command("audit")(audit_command)
