"""LRR-Bench's one declaration for perspecta (entry point ``perspecta.suites: lrr``)."""

from perspecta.suites import lrr as _pkg
from perspecta.suites.lrr import scoring
from perspecta.suites.lrr.accumulate import LrrMetrics
from perspecta.suites.spec import PromptSettings, Suite

SUITE = Suite(
    name="lrr",
    package="perspecta.suites.lrr",
    description="absolute positions and 3D movement, as balanced yes/no items",
    prompt=PromptSettings(max_tokens=512),
    record_scorers=(scoring.paper_rule,),
    metrics=LrrMetrics,
    report_section="perspecta.suites.lrr.report:build",
    audit_features=_pkg.audit_features,
    eval_image_max_side=_pkg.EVAL_IMAGE_MAX_SIDE,
    difficulty_presets=_pkg.DIFFICULTY_PRESETS,
    bench_records=({"task": "pos", "answer_type": "yesno", "n_options": 0, "score_keys": ("paper_rule_correct",)},),
)
