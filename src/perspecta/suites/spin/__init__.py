"""SpinBench (shared/papers/spinbench.txt): perspective taking and rotation.

Seven task families over procedurally generated scenes, each answer re-derived from
the stored scene: identity matching, object-relation grounding, dynamic translation,
dynamic rotation, canonical view selection, mental rotation and perspective taking
(view selection with occlusion levels; relation transformation with and without a
premise). Static relations come with symmetric / syntactic variants in one ``group``;
:mod:`perspecta.suites.spin.metrics` holds the formulas of Cohen's kappa, pairwise
consistency and the CCCC..WWWW patterns, :mod:`perspecta.suites.spin.accumulate` folds a
run's records into them.
"""

from perspecta.suites.spin import identity, metrics, perspective, relations, rotation  # noqa: F401  (registers tasks)
from perspecta.suites.spin.training import TRAINING_PRESETS  # noqa: E402,F401  (perspecta train presets)
from perspecta.suites.spin.audit import audit_features  # noqa: F401  (read by the shortcut audit)

DIFFICULTY_PRESETS = "see docs/suites.md, section SpinBench difficulty"

# Default longest image side `perspecta eval` sends (None = native). Models see the images
# as the suite rendered them (common.IMAGE_SIZE, 512 px), the same pixels a person judging
# the items sees. SpinBench's paper downsampled to a longest side of 256 px in its main
# setting; `--image-max-side 256` reproduces that protocol when a user asks for it.
EVAL_IMAGE_MAX_SIDE: int | None = None
