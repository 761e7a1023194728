"""LRR-Bench (shared/papers/lrr-bench.txt): absolute positions and 3D movement, as yes/no items.

Tasks: ``pos``, ``pos_c``, ``pos_s`` (absolute position), ``dep`` (depth order),
``ca_r``, ``ca_m`` (camera rotation / movement sequences), ``obj_hd``, ``obj_md``,
``obj_m`` (heading, movement direction, movement of an animal subject — the paper's
sheep or a dog; each also yields a ``clear`` variant with the street clutter removed).
Every task is exactly half "yes" for an even number of units, with the "yes" unit of
each pair a seeded draw that keeps index residues balanced (:mod:`.common`). Scoring (the paper's
chance-normalised score) is in :mod:`.scoring`; difficulty knobs and presets are
documented in docs/suites.md.
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

# LRR's PNGs: its paving grounds took ~67 ms per 512² frame at zlib level 6 (round 2 set
# level 4 here); the run-length strategy every suite now uses takes ~16 ms and gives
# smaller files than level 4 did (docs/performance.md, round 4), so LRR needs no level.

from perspecta.suites.lrr.audit import audit_features  # noqa: E402,F401  (the shortcut audit's hook)

DIFFICULTY_PRESETS = (
    "easy | standard | hard via ctx.knob; see docs/suites.md, section LRR: knobs and presets"
)
