"""SpinBench's one declaration for perspecta (entry point ``perspecta.suites: spin``)."""

from perspecta.suites import spin as _pkg
from perspecta.suites.spec import PromptSettings, Suite

SUITE = Suite(
    name="spin",
    package="perspecta.suites.spin",
    description="perspective taking and rotation, with symmetric / syntactic variant groups",
    prompt=PromptSettings(max_tokens=256),
    audit_features=_pkg.audit_features,
    eval_image_max_side=_pkg.EVAL_IMAGE_MAX_SIDE,
    difficulty_presets=_pkg.DIFFICULTY_PRESETS,
    bench_record={"task": "relation_transformation", "answer_type": "mcq", "n_options": 2, "variant_groups": 4},
    settings={"TRAINING_PRESETS": _pkg.TRAINING_PRESETS},
)
