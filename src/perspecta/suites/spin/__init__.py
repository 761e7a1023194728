"""SpinBench (shared/papers/spinbench.txt): perspective taking and rotation.

Seven task families over procedurally generated scenes, each answer re-derived from
the stored scene: identity matching, object-relation grounding, dynamic translation,
dynamic rotation, canonical view selection, mental rotation and perspective taking
(view selection with occlusion levels; relation transformation with and without a
premise). Static relations come with symmetric / syntactic variants in one ``group``;
:mod:`perspecta.suites.spin.metrics` holds Cohen's kappa, pairwise consistency and the
CCCC..WWWW pattern counts.
"""

from perspecta.suites.spin import identity, metrics, perspective, relations, rotation  # noqa: F401  (registers tasks and metrics)
from perspecta.suites.spin.training import TRAINING_PRESETS  # noqa: E402,F401  (perspecta train presets)
from perspecta.suites.spin.audit import audit_features  # noqa: F401  (read by the shortcut audit)

# Images are rendered at common.IMAGE_SIZE (512 px); models get them downsized to the paper's 256.
EVAL_IMAGE_MAX_SIDE: int | None = 256
DIFFICULTY_PRESETS = "see docs/suites.md, section SpinBench difficulty"
