"""DORI's one declaration for perspecta (entry point ``perspecta.suites: dori``)."""

from perspecta.suites import dori as _pkg
from perspecta.suites.dori import scoring
from perspecta.suites.dori.accumulate import DoriMetrics, accuracy_facets
from perspecta.suites.spec import PromptSettings, Suite

SUITE = Suite(
    name="dori",
    package="perspecta.suites.dori",
    description="object orientation: coarse and granular questions, structured prompts",
    prompt=PromptSettings(max_tokens=512),
    record_scorers=(scoring.soft_score,),
    metrics=DoriMetrics,
    accuracy_facets=accuracy_facets,
    report_section="perspecta.suites.dori.report:build",
    audit_features=_pkg.audit_features,
    audit_metadata_keys=_pkg.AUDIT_METADATA_KEYS,
    eval_image_max_side=_pkg.EVAL_IMAGE_MAX_SIDE,
    difficulty_presets=_pkg.DIFFICULTY_PRESETS,
    bench_task="view_parallelism",
    bench_records=(
        {"task": "view_parallelism", "granularity": "granular", "answer_type": "mcq", "n_options": 4,
         "score_keys": ("soft",),
         "metadata": {"option_values": {"A": None, "B": [0.0, 15.0], "C": [65.0, 95.0], "D": [135.0, 180.0]},
                      "answer_value": [0.0, 15.0], "camera_plane_angle": 10.0, "category": "chair",
                      "source": "procedural"}},
        {"task": "compound_rotation", "granularity": "granular", "answer_type": "mcq", "n_options": 4,
         "score_keys": ("soft",),
         "metadata": {"option_values": {"A": [90, 0], "B": [0, 90], "C": [90, 90], "D": [180, 0]},
                      "answer_value": [90, 0], "category": "car", "source": "sh3d"}},
    ),
    settings={"TRAINING_PRESETS": _pkg.TRAINING_PRESETS, "FINETUNE_TABLE_LEVEL": _pkg.FINETUNE_TABLE_LEVEL},
)
