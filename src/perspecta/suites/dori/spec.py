"""DORI's one declaration for perspecta (entry point ``perspecta.suites: dori``)."""

from perspecta.suites import dori as _pkg
from perspecta.suites.dori import scoring
from perspecta.suites.spec import PromptSettings, Suite

SUITE = Suite(
    name="dori",
    package="perspecta.suites.dori",
    description="object orientation: coarse and granular questions, structured prompts",
    prompt=PromptSettings(max_tokens=512),
    record_scorers=(scoring.soft_score,),
    audit_features=_pkg.audit_features,
    audit_metadata_keys=_pkg.AUDIT_METADATA_KEYS,
    eval_image_max_side=_pkg.EVAL_IMAGE_MAX_SIDE,
    difficulty_presets=_pkg.DIFFICULTY_PRESETS,
    bench_task="view_parallelism",
    bench_record={"task": "view_parallelism", "answer_type": "mcq", "n_options": 4},
    settings={"TRAINING_PRESETS": _pkg.TRAINING_PRESETS, "FINETUNE_TABLE_LEVEL": _pkg.FINETUNE_TABLE_LEVEL},
)
