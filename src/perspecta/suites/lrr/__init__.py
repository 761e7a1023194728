"""LRR-Bench (shared/papers/lrr-bench.txt): absolute positions and 3D movement, as yes/no items.

Tasks: ``pos``, ``pos_c``, ``pos_s`` (absolute position), ``dep`` (depth order),
``ca_r``, ``ca_m`` (camera rotation / movement sequences), ``obj_hd``, ``obj_md``,
``obj_m`` (heading, movement direction, movement of a sheep-like target; each also
yields a ``clear`` variant with the street clutter removed). Every task is exactly
half "yes". Scoring (the paper's chance-normalised score) is in :mod:`.scoring`.
"""

from perspecta.suites.lrr import (
    depth_camera,  # noqa: F401
    objects,  # noqa: F401
    position,  # noqa: F401  (registers tasks)
    scoring,  # noqa: F401  (registers the score metric)
)

# Default longest image side `perspecta eval` sends (None = native), after the paper's
# protocol; `--image-max-side N` / `--high-res` override it.
# LRR-Bench: its 512² / 1024² images at native resolution.
EVAL_IMAGE_MAX_SIDE: int | None = None
