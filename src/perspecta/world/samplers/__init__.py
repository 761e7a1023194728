"""Seeded scene samplers: pure functions of (rng, asset library, config) -> Scene.

- :func:`sample_studio`: one object on a ground plane (DORI, SpinBench single-object tasks).
- :func:`sample_clutter`: 2-8 objects on a tabletop or a street, all visible.
- :func:`sample_room`: a furnished room with a 360° observer (PCSR-Bench).

The same generator state always gives the same scene (JSON-identical).
"""

from perspecta.world.samplers.clutter import sample_clutter
from perspecta.world.samplers.common import (
    Rect,
    SamplingError,
    Visibility,
    fit_distance,
    orbit_camera,
    resolve_category,
    visibility,
)
from perspecta.world.samplers.room import PLANS, ROOM_TYPES, Slot, sample_room
from perspecta.world.samplers.studio import sample_studio

__all__ = [
    "PLANS",
    "ROOM_TYPES",
    "Rect",
    "SamplingError",
    "Slot",
    "Visibility",
    "fit_distance",
    "orbit_camera",
    "resolve_category",
    "sample_clutter",
    "sample_room",
    "sample_studio",
    "visibility",
]
