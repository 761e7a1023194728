"""The suite's one declaration; ``pyproject.toml`` names it as a ``perspecta.suites`` entry point."""

from perspecta.suites.spec import PromptSettings, Suite

from perspecta_taller.audit import audit_features
from perspecta_taller.metrics import RatioAccuracy
from perspecta_taller.task import PRESETS

SUITE = Suite(
    name="taller",
    package="perspecta_taller",
    description="which of two objects, side by side, is taller (an example plug-in suite)",
    prompt=PromptSettings(max_tokens=64),
    metrics=RatioAccuracy,
    audit_features=audit_features,
    eval_image_max_side=None,
    difficulty_presets={"min_height_ratio": PRESETS},
    report_section="perspecta_taller.report:build",
)
