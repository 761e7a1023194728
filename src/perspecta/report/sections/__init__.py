"""Report sections, in the order they appear; each is ``build(ctx) -> Section``."""

from perspecta.report.sections import audit, curves, dori, finetune, gallery, human, lrr, overview, pcsr, spin

SECTIONS = (overview.leaderboard, overview.heatmaps, dori.build, spin.build, pcsr.build, lrr.build, curves.build,
            finetune.build, human.build, audit.build, gallery.build)
