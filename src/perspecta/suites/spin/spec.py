"""SpinBench's one declaration for perspecta (entry point ``perspecta.suites: spin``)."""

from perspecta.suites import spin as _pkg
from perspecta.suites.spin.accumulate import SpinMetrics
from perspecta.suites.spec import LeaderboardColumn, PromptSettings, Suite

SUITE = Suite(
    name="spin",
    package="perspecta.suites.spin",
    description="perspective taking and rotation, with symmetric / syntactic variant groups",
    prompt=PromptSettings(max_tokens=256),
    metrics=SpinMetrics,
    leaderboard_metrics=(LeaderboardColumn(
        "consistency %", ("consistency", "consistency"),
        "consistency is SpinBench's mean pairwise agreement (both answered, and both right or both wrong) "
        "within variant groups; a failed or unparsed variant agrees with no other, so failures only lower it"),),
    report_section="perspecta.suites.spin.report:build",
    audit_features=_pkg.audit_features,
    eval_image_max_side=_pkg.EVAL_IMAGE_MAX_SIDE,
    difficulty_presets=_pkg.DIFFICULTY_PRESETS,
    bench_records=(
        {"task": "relation_transformation", "answer_type": "mcq", "n_options": 2, "variant_groups": 4,
         "metadata": {"premise": True}},
        {"task": "dynamic_rotation", "answer_type": "mcq", "n_options": 3, "variant_groups": 4,
         "metadata": {"domain": "person", "frame_of_reference": "viewer"}},
    ),
    settings={"TRAINING_PRESETS": _pkg.TRAINING_PRESETS},
)
