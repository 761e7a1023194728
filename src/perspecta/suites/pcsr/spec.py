"""PCSR-Bench's one declaration for perspecta (entry point ``perspecta.suites: pcsr``)."""

from perspecta.suites import pcsr as _pkg
from perspecta.suites.pcsr import scoring
from perspecta.suites.pcsr.accumulate import PcsrMetrics
from perspecta.suites.spec import PromptSettings, Suite

SUITE = Suite(
    name="pcsr",
    package="perspecta.suites.pcsr",
    description="perspective-conditioned spatial reasoning on 360° room panoramas",
    prompt=PromptSettings(max_tokens=256),
    record_scorers=(scoring.pcsr_record_scores,),
    metrics=PcsrMetrics,
    report_section="perspecta.suites.pcsr.report:build",
    audit_features=_pkg.audit_features,
    eval_image_max_side=_pkg.EVAL_IMAGE_MAX_SIDE,
    difficulty_presets=_pkg.DIFFICULTY_PRESETS,
    bench_records=({"task": "counting", "answer_type": "open", "n_options": 0, "score_keys": ("strict", "relaxed")},),
    settings={"TRAINING_PRESETS": _pkg.TRAINING_PRESETS, "GRPO_REWARDS": _pkg.GRPO_REWARDS,
              "GRPO_PROMPT_MODE": _pkg.GRPO_PROMPT_MODE},
)
