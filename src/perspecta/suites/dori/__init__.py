"""DORI: object-orientation reasoning (shared/papers/dori.txt).

Seven tasks, each asking a coarse (categorical) and a granular (angular) question, each
from its own rendered scene so both levels' answers are balanced; DORI's five-part
structured prompt (or the unstructured ablation, ``prompt_style``); a "Cannot be
determined" option that is right for objects without a front; soft credit and the
paper's error-pattern rules per record in :mod:`perspecta.suites.dori.scoring`, folded
over a run by :mod:`perspecta.suites.dori.accumulate`.

Suite settings read by generic code (``registry.suite_setting``): ``audit_features``
(cheap non-skill features for the shortcut audit, :mod:`.audit`) and
``DIFFICULTY_PRESETS`` (the knobs each preset sets; docs/suites.md explains them).
"""

from perspecta.suites.dori import (  # noqa: F401  (registers tasks and metrics)
    canonical,
    compound_rotation,
    directional_facing,
    inter_object,
    scoring,
    single_axis_rotation,
    view_parallelism,
    viewer_scene,
)
from perspecta.suites.dori.training import TRAINING_PRESETS  # noqa: E402,F401  (perspecta train presets)

# the report's fine-tuning table shows coarse and granular apart, as DORI's Table 12 does
FINETUNE_TABLE_LEVEL = "subtype"
from perspecta.suites.dori.audit import audit_features  # noqa: E402,F401

from perspecta.suites.dori.common import PRESETS as DIFFICULTY_PRESETS  # noqa: E402,F401

# Default longest image side `perspecta eval` sends (None = native), after the paper's
# protocol; `--image-max-side N` / `--high-res` override it.
# DORI: images as rendered (native resolution).
EVAL_IMAGE_MAX_SIDE: int | None = None

# The shortcut audit's generic metadata features for DORI: the asset's source (primitive,
# procedural, catalogue) stays in — "recognising a primitive earns Cannot-be-determined" is
# the shortcut to catch — but not its category or asset id: whether a round table or a
# lamp has a front is the orientation skill itself (DORI's "Cannot be determined" is right
# exactly for objects without one), so predicting it from the category is not a leak.
AUDIT_METADATA_KEYS = ("source", "source_b")
