"""Report sections, in the order they appear; each is ``build(ctx) -> Section``.

The suites' own sections come from their specs (``Suite.report_section``), in suite-name
order, between the overview and the generic sections.
"""

from __future__ import annotations

from collections.abc import Callable

from perspecta.report.context import Context, Section
from perspecta.report.sections import audit, curves, finetune, gallery, human, overview


def sections() -> list[Callable[[Context], Section]]:
    from perspecta.suites.registry import suite_specs

    suite_sections = [fn for _name, spec in sorted(suite_specs().items()) if (fn := spec.section()) is not None]
    return [overview.leaderboard, overview.heatmaps, *suite_sections, curves.build, finetune.build, human.build,
            audit.build, gallery.build]
