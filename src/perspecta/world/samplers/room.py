"""A furnished room seen from a 360° observer: the scenes of PCSR-Bench-style tasks.

A room type names a *plan*: an ordered list of slots (category, how many, how to
place). Large pieces stand against a wall with their back to it and their front
(+X) facing into the room; dependants are placed relative to an anchor (nightstands
beside the bed, chairs around a table facing it, a TV on the wall opposite the
sofa, a coffee table in front of it). Footprints never interpenetrate, wall pieces
keep a clearance strip in front of them free of other groups' furniture, and the
remaining floor must contain a connected walkway that holds the observer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from perspecta import timing
from perspecta.world.samplers.common import (
    Instance,
    Rect,
    SamplingError,
    assets_in,
    draw_uniform,
    footprint,
    instantiate,
    is_procedural,
    jitter_color,
    make_object,
    renumber,
    resolve_category,
)
from perspecta.world.scene import RGB, Camera, Light, Room, Scene, SceneObject

if TYPE_CHECKING:
    from perspecta.assets.library import AssetLibrary

RoomType = Literal["bedroom", "living_room", "kitchen", "bathroom", "office"]
ROOM_TYPES: tuple[str, ...] = ("bedroom", "living_room", "kitchen", "bathroom", "office")

Placement = Literal["wall", "corner", "beside", "facing", "front", "opposite", "free"]


@dataclass(frozen=True)
class Slot:
    """One line of a room plan.

    ``count`` is per anchor instance for anchored placements (chairs per table).
    ``fallbacks`` are tried in order when ``category`` is not in the library.
    ``clearance`` (metres) is a strip in front of a wall piece kept free of furniture
    from other groups. ``required`` slots must be placed when their category exists;
    failing that, the whole room is re-sampled. A ``steady`` slot draws its count once,
    whatever the clutter knob: PCSR counts these categories and asks every count
    0..3 equally often, and clutter (the larger of two draws) would make rooms with
    none or one of them rare at the hard preset.
    """

    key: str
    category: str
    count: tuple[int, int]
    place: Placement
    anchor: str | None = None
    fallbacks: tuple[str, ...] = ()
    clearance: float = 0.0
    required: bool = False
    axis_aligned: bool = False
    max_height: float | None = None
    min_height: float = 0.0
    steady: bool = False


_EXTRAS = (
    Slot("person", "person", (0, 2), "free"),
    Slot("box", "box", (0, 2), "corner"),
)
# rooms where people gather (living room, kitchen, office) hold up to three of them
_GATHERING = Slot("person", "person", (0, 3), "free", steady=True)
# where plants are counted (office) they are tall floor plants along the walls: a 0.3 m
# orchid in a far corner is too small to see in the panorama, so "how many plants" would
# mean "how many big ones", and a room's corners, shared with boxes, rarely hold three
FLOOR_PLANT = 0.85

PLANS: dict[str, tuple[Slot, ...]] = {
    "bedroom": (
        Slot("bed", "bed", (1, 1), "wall", clearance=0.6, required=True),
        Slot("nightstand", "nightstand", (1, 2), "beside", anchor="bed", fallbacks=("cabinet",)),
        Slot("wardrobe", "wardrobe", (0, 3), "wall", fallbacks=("cabinet",), clearance=0.6, steady=True),
        Slot("desk", "desk", (0, 1), "wall", clearance=0.2),
        Slot("desk_chair", "chair", (1, 1), "facing", anchor="desk"),
        Slot("dressing_table", "dressing_table", (0, 1), "wall", clearance=0.5),
        Slot("tv", "tv", (0, 1), "opposite", anchor="bed", clearance=0.3),
        Slot("lamp", "lamp", (0, 2), "corner", min_height=1.0),
        Slot("plant", "plant", (0, 3), "corner"),
        Slot("armchair", "armchair", (0, 1), "free"),
        Slot("dog", "dog", (0, 1), "free"),
        Slot("ball", "ball", (0, 1), "free"),
        *_EXTRAS,
    ),
    "living_room": (
        Slot("sofa", "sofa", (1, 1), "wall", clearance=0.9, required=True),
        # a sofa always has its coffee table, and 0..3 armchairs facing it (counted)
        Slot("coffee_table", "coffee_table", (1, 1), "front", anchor="sofa", fallbacks=("table",), max_height=0.6),
        Slot("armchair", "armchair", (0, 3), "facing", anchor="coffee_table", fallbacks=("chair",), steady=True),
        Slot("tv", "tv", (1, 1), "opposite", anchor="sofa", clearance=0.4),
        Slot("bookcase", "bookcase", (0, 3), "wall", clearance=0.4),
        Slot("cabinet", "cabinet", (0, 2), "wall", clearance=0.4),
        Slot("piano", "piano", (0, 1), "wall", clearance=0.6),
        # steady: its chairs bar counting armchairs, so it must not crowd out rooms without
        Slot("table", "table", (0, 1), "free", axis_aligned=True, steady=True),
        Slot("dining_chair", "chair", (2, 6), "facing", anchor="table"),
        Slot("plant", "plant", (0, 4), "corner"),
        Slot("lamp", "lamp", (0, 2), "corner", min_height=1.0),
        Slot("dog", "dog", (0, 1), "free"),
        Slot("cat", "cat", (0, 1), "free"),
        Slot("ball", "ball", (0, 1), "free"),
        _GATHERING,
        _EXTRAS[1],
    ),
    "kitchen": (
        Slot("refrigerator", "refrigerator", (1, 1), "wall", clearance=0.7, required=True),
        Slot("stove", "stove", (1, 1), "wall", clearance=0.7, required=True),
        Slot("sink", "sink", (1, 1), "wall", clearance=0.6),
        Slot("cabinet", "cabinet", (0, 3), "wall", clearance=0.5, steady=True),  # counted: none to three
        Slot("washing_machine", "washing_machine", (0, 1), "wall", clearance=0.6),
        Slot("table", "table", (0, 1), "free", axis_aligned=True),
        Slot("chair", "chair", (2, 6), "facing", anchor="table"),
        Slot("plant", "plant", (0, 2), "corner"),
        _GATHERING,
        _EXTRAS[1],
    ),
    "bathroom": (
        Slot("toilet", "toilet", (1, 1), "wall", clearance=0.5, required=True),
        Slot("sink", "sink", (1, 2), "wall", clearance=0.5),
        Slot("bathtub", "bathtub", (0, 1), "corner", clearance=0.4),
        Slot("cabinet", "cabinet", (0, 1), "wall", clearance=0.4),
        Slot("washing_machine", "washing_machine", (0, 1), "wall", clearance=0.6),
        Slot("plant", "plant", (0, 2), "corner"),
        Slot("person", "person", (0, 1), "free"),
        Slot("box", "box", (0, 1), "corner"),
    ),
    "office": (
        Slot("desk", "desk", (1, 2), "wall", fallbacks=("table",), clearance=0.2, required=True),
        Slot("desk_chair", "chair", (1, 1), "facing", anchor="desk"),
        # bookcases, counted, and no cabinets: a closed bookcase passes for a cabinet
        Slot("bookcase", "bookcase", (0, 3), "wall", clearance=0.4, steady=True),
        Slot("meeting_table", "table", (0, 1), "free", axis_aligned=True),
        Slot("meeting_chair", "chair", (2, 6), "facing", anchor="meeting_table"),
        Slot("sofa", "sofa", (0, 1), "wall", clearance=0.6),
        Slot("plant", "plant", (0, 3), "wall", min_height=FLOOR_PLANT, steady=True),
        Slot("lamp", "lamp", (0, 1), "corner", min_height=1.0),
        _GATHERING,
        _EXTRAS[1],
    ),
}

# the most pieces ``min_objects`` may demand of a room type (a bathroom is small)
MAX_MIN_OBJECTS: dict[str, int] = {"bathroom": 6, "kitchen": 9}

# (width range along x, depth range along y) in metres
ROOM_DIMS: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {
    "bedroom": ((3.4, 5.0), (3.0, 4.5)),
    "living_room": ((4.5, 7.0), (3.8, 6.0)),
    "kitchen": ((3.2, 5.0), (2.8, 4.5)),
    "bathroom": ((2.2, 3.5), (2.0, 3.0)),
    "office": ((3.5, 5.5), (3.0, 4.5)),
}
WOOD_FLOORS: tuple[RGB, ...] = ((0.55, 0.40, 0.26), (0.66, 0.52, 0.36), (0.42, 0.30, 0.20), (0.72, 0.62, 0.48))
TILE_FLOORS: tuple[RGB, ...] = ((0.82, 0.82, 0.80), (0.60, 0.62, 0.64), (0.74, 0.70, 0.64), (0.45, 0.47, 0.50))
WALLS: tuple[RGB, ...] = (
    (0.88, 0.86, 0.80),
    (0.80, 0.85, 0.88),
    (0.86, 0.82, 0.74),
    (0.82, 0.86, 0.80),
    (0.92, 0.92, 0.90),
    (0.88, 0.80, 0.78),
)

WALL_GAP = 0.02  # distance between a wall piece's back and its wall
GAP = 0.05  # minimum clearance between footprints
BODY = 0.25  # half-width of a person walking: the walkway keeps this far from everything

# wall index -> (inward normal, lateral axis, yaw that faces inward)
_WALLS = (
    (np.array([-1.0, 0.0]), np.array([0.0, 1.0]), 180.0),  # wall at x = +W/2
    (np.array([1.0, 0.0]), np.array([0.0, 1.0]), 0.0),  # wall at x = -W/2
    (np.array([0.0, -1.0]), np.array([1.0, 0.0]), 270.0),  # wall at y = +D/2
    (np.array([0.0, 1.0]), np.array([1.0, 0.0]), 90.0),  # wall at y = -D/2
)
_OPPOSITE = (1, 0, 3, 2)


@dataclass
class _Placed:
    obj: SceneObject
    rect: Rect
    clear: Rect | None
    group: int
    key: str
    wall: int | None = None
    t: float = 0.0


class _Layout:
    """The room being furnished: geometry queries and the placed pieces."""

    def __init__(self, room: Room) -> None:
        self.room = room
        self.hw, self.hd = room.width / 2, room.depth / 2
        self.placed: list[_Placed] = []

    def wall_len(self, k: int) -> float:
        return self.room.depth if k < 2 else self.room.width

    def wall_centre(self, k: int) -> np.ndarray:
        return -_WALLS[k][0] * (self.hw if k < 2 else self.hd)

    def wall_pose(self, k: int, t: float, depth: float) -> tuple[float, float, float]:
        n, e, yaw = _WALLS[k]
        p = self.wall_centre(k) + n * (WALL_GAP + depth / 2) + e * t
        return float(p[0]), float(p[1]), yaw

    def clearance_rect(self, obj: SceneObject, depth: float) -> Rect | None:
        if depth <= 0:
            return None
        f = obj.front_vector()[:2]
        c = np.asarray(obj.pose.position[:2]) + f * (obj.size[0] / 2 + depth / 2)
        return Rect(float(c[0]), float(c[1]), depth / 2, obj.size[1] / 2, obj.pose.yaw)

    def fits(self, obj: SceneObject, rect: Rect, clear: Rect | None, group: int, margin: float = 0.0) -> bool:
        if obj.size[2] > self.room.height - 0.05:
            return False
        if not rect.inside_box(-self.hw, self.hw, -self.hd, self.hd, margin):
            return False
        if clear is not None and not clear.inside_box(-self.hw, self.hw, -self.hd, self.hd):
            return False
        for p in self.placed:
            if rect.overlaps(p.rect, GAP):
                return False
            if p.group != group:
                if p.clear is not None and rect.overlaps(p.clear):
                    return False
                if clear is not None and clear.overlaps(p.rect):
                    return False
        return True

    def may_fit(self, inst: Instance, rect: Rect, margin: float = 0.0) -> bool:
        """The checks of :meth:`fits` that need no object (its height, its footprint
        inside the room and clear of every placed footprint): False means :meth:`fits`
        is False too, since it makes these checks among others, none with side effects.
        Placement loops reject most tries here, before making the object and its
        clearance rect (``rect`` is :func:`footprint`'s, equal to ``Rect.of`` the object)."""
        if float(inst.size[2]) > self.room.height - 0.05:
            return False
        if not rect.inside_box(-self.hw, self.hw, -self.hd, self.hd, margin):
            return False
        return not any(rect.overlaps(p.rect, GAP) for p in self.placed)

    def add(
        self, obj: SceneObject, clear: Rect | None, group: int, key: str, wall: int | None = None, t: float = 0.0
    ) -> None:
        self.placed.append(_Placed(obj, Rect.of(obj), clear, group, key, wall, t))


def draw_room_type(rng: np.random.Generator) -> str:
    """The room type :func:`sample_room` draws when none is given: its first draw from
    ``rng``, so a caller can tell a room's type from its seed without furnishing it."""
    return ROOM_TYPES[int(rng.integers(len(ROOM_TYPES)))]


@timing.timed("sample")
def sample_room(
    rng: np.random.Generator,
    library: AssetLibrary,
    *,
    scene_id: str,
    seed: int,
    room_type: str | None = None,
    panorama_size: tuple[int, int] = (1024, 512),
    perspective_size: tuple[int, int] = (512, 384),
    room_size: tuple[float, float] | None = None,
    sources: Sequence[str] | None = None,
    min_objects: int = 4,
    walkway_fraction: float = 0.15,
    max_attempts: int = 30,
    clutter: float = 0.0,
) -> Scene:
    """A furnished ``room_type`` room with a 360° observer camera "pano".

    Cameras: "pano" (equirect, at eye height 1.5-1.6 m in free floor space, longitude 0
    along a drawn horizontal direction), "view" (perspective, same eye and direction,
    60° vertical fov) and "overview" (perspective from the freest upper corner toward
    the room centre). ``room_size`` fixes (width along x, depth along y). Categories
    missing from the library fall back per the plan (desk -> table, armchair -> chair,
    ...) or are skipped. Raises :class:`SamplingError` when ``max_attempts`` rooms fail
    (fewer than ``min_objects`` pieces, a required piece that does not fit, or no
    walkway that holds the observer).

    ``clutter`` (0-1) is the chance that an optional slot draws its count twice and keeps
    the larger: fuller rooms, with more same-category pieces to tell apart (a difficulty
    knob; 0 leaves the random stream exactly as without it).
    """
    if not 0.0 <= clutter <= 1.0:
        raise ValueError(f"clutter must be in [0, 1], got {clutter}")
    if room_type is None:
        room_type = draw_room_type(rng)
    if room_type not in PLANS:
        raise ValueError(f"room_type must be one of {ROOM_TYPES}, got {room_type!r}")
    pw, ph = panorama_size
    if pw != 2 * ph:
        raise ValueError(f"panorama_size must be (2h, h), got {panorama_size}")
    plan = PLANS[room_type]
    resolved = {s.key: _resolve(library, s, sources) for s in plan}
    # a small room type holds fewer pieces than a fullness knob may ask of rooms in general
    min_objects = min(min_objects, MAX_MIN_OBJECTS.get(room_type, min_objects))
    most = _max_pieces(plan, resolved)
    if most < min_objects:
        raise SamplingError(
            f"sample_room({room_type}): the library offers at most {most} pieces for this plan "
            f"(categories found: {sorted({v for v in resolved.values() if v}) or 'none'}), fewer "
            f"than min_objects={min_objects}"
        )
    reasons: dict[str, int] = {"required": 0, "too_few": 0, "walkway": 0}
    for _attempt in range(max_attempts):
        room = _sample_room_shell(rng, room_type, room_size)
        layout = _Layout(room)
        if not _furnish(rng, library, layout, plan, resolved, sources, clutter):
            reasons["required"] += 1
            continue
        if len(layout.placed) < min_objects:
            reasons["too_few"] += 1
            continue
        eye = _observer(rng, layout, walkway_fraction)
        if eye is None:
            reasons["walkway"] += 1
            continue
        cameras = _room_cameras(rng, layout, eye, panorama_size, perspective_size)
        light = Light(
            direction=(round(float(rng.uniform(-0.3, 0.3)), 4), round(float(rng.uniform(-0.3, 0.3)), 4), -1.0),
            color=(1.0, round(float(rng.uniform(0.95, 1.0)), 4), round(float(rng.uniform(0.88, 0.98)), 4)),
            intensity=round(float(rng.uniform(0.7, 0.9)), 4),
            ambient=round(float(rng.uniform(0.45, 0.55)), 4),
        )
        return Scene(
            scene_id=scene_id,
            seed=int(seed),
            kind="room",
            objects=renumber([p.obj for p in layout.placed]),
            cameras=cameras,
            light=light,
            ground=None,
            room=room,
        )
    available = sorted({v for v in resolved.values() if v})
    raise SamplingError(
        f"sample_room({room_type}): no valid room after {max_attempts} attempts (failures: "
        f"{reasons['required']} required piece did not fit, {reasons['too_few']} fewer than "
        f"{min_objects} pieces, {reasons['walkway']} no walkway for the observer); categories "
        f"available for this plan: {available or 'none'}"
    )


def _resolve(library: AssetLibrary, slot: Slot, sources: Sequence[str] | None) -> str | None:
    for c in (slot.category, *slot.fallbacks):
        r = resolve_category(library, c, sources)
        if r is not None:
            return r
    return None


def _max_pieces(plan: Sequence[Slot], resolved: dict[str, str | None]) -> int:
    """Upper bound on the number of pieces the plan can place with this library."""
    most: dict[str, int] = {}
    for slot in plan:
        if resolved[slot.key] is None:
            most[slot.key] = 0
        elif slot.anchor is not None:
            most[slot.key] = slot.count[1] * most.get(slot.anchor, 0)
        else:
            most[slot.key] = slot.count[1]
    return sum(most.values())


def _sample_room_shell(rng: np.random.Generator, room_type: str, room_size: tuple[float, float] | None) -> Room:
    (w0, w1), (d0, d1) = ROOM_DIMS[room_type]
    if room_size is None:
        w, d = float(rng.uniform(w0, w1)), float(rng.uniform(d0, d1))
    else:
        w, d = float(room_size[0]), float(room_size[1])
        if min(w, d) <= 0:
            raise ValueError(f"room_size must be positive, got {room_size}")
    floors = TILE_FLOORS if room_type in ("kitchen", "bathroom") else WOOD_FLOORS
    return Room(
        width=round(w, 3),
        depth=round(d, 3),
        height=round(float(rng.uniform(2.5, 3.0)), 3),
        floor_color=jitter_color(rng, floors[int(rng.integers(len(floors)))]),
        wall_color=jitter_color(rng, WALLS[int(rng.integers(len(WALLS)))], 0.03),
        ceiling_color=jitter_color(rng, (0.95, 0.95, 0.94), 0.02),
        room_type=room_type,
    )


def _draw_instance(
    rng: np.random.Generator,
    library: AssetLibrary,
    category: str,
    sources: Sequence[str] | None,
    max_height: float,
    min_height: float = 0.0,
) -> Instance | None:
    """A random asset of ``category`` with a height in [min_height, max_height] (a few tries)."""
    # catalogue sizes prune what cannot fit before any mesh is loaded (procedural sizes vary by seed)
    choices = [
        a for a in assets_in(library, category, sources) if is_procedural(a) or min_height <= a.size[2] <= max_height
    ]
    if not choices:
        return None
    for _ in range(8):
        inst = instantiate(rng, library, choices[int(rng.integers(len(choices)))])
        if min_height <= inst.size[2] <= max_height:
            return inst
    return None


def _furnish(
    rng: np.random.Generator,
    library: AssetLibrary,
    layout: _Layout,
    plan: Sequence[Slot],
    resolved: dict[str, str | None],
    sources: Sequence[str] | None,
    clutter: float = 0.0,
) -> bool:
    """Place every slot of the plan; False when a required piece cannot be placed."""

    def count(lo: int, hi: int, steady: bool = False) -> int:
        n = int(rng.integers(lo, hi + 1))
        if not steady and clutter > 0.0 and hi > lo and rng.random() < clutter:
            n = max(n, int(rng.integers(lo, hi + 1)))
        return n

    groups: dict[str, list[_Placed]] = {}
    next_group = 0
    for slot in plan:
        max_h = layout.room.height - 0.05
        if slot.max_height is not None:
            max_h = min(max_h, slot.max_height)
        category = resolved[slot.key]
        groups[slot.key] = []
        if category is None:
            continue
        lo, hi = slot.count
        if slot.anchor is not None:
            anchors = groups.get(slot.anchor, [])
            for a in anchors:
                n = count(lo, hi, slot.steady)
                if n == 0:
                    continue
                inst = _draw_instance(rng, library, category, sources, max_h, slot.min_height)
                if inst is None:
                    continue
                groups[slot.key] += _place_anchored(rng, layout, slot, inst, a, n)
            continue
        n = count(lo, hi, slot.steady)
        for _ in range(n):
            inst = _draw_instance(rng, library, category, sources, max_h, slot.min_height)
            placed = None if inst is None else _place_alone(rng, layout, slot, inst, next_group)
            if placed is None:
                if slot.required:
                    return False
                continue
            next_group += 1
            groups[slot.key].append(placed)
    return True


def _place_alone(
    rng: np.random.Generator, layout: _Layout, slot: Slot, inst: Instance, group: int
) -> _Placed | None:
    depth, width = float(inst.size[0]), float(inst.size[1])
    for _ in range(30):
        if slot.place in ("wall", "corner"):
            k = int(rng.integers(4))
            half = layout.wall_len(k) / 2 - width / 2 - WALL_GAP
            if half < 0:
                continue
            if slot.place == "corner":
                t = float(rng.choice([-1.0, 1.0])) * max(half - float(rng.uniform(0.0, 0.05)), 0.0)
            else:
                t = draw_uniform(rng, -half, half)
            x, y, yaw = layout.wall_pose(k, t, depth)
            if not layout.may_fit(inst, footprint(inst, x, y, yaw)):
                continue
            obj = make_object("", inst, x, y, yaw)
            clear = layout.clearance_rect(obj, slot.clearance)
            if layout.fits(obj, Rect.of(obj), clear, group):
                layout.add(obj, clear, group, slot.key, k, t)
                return layout.placed[-1]
        else:  # free
            m = 0.3
            x = draw_uniform(rng, -layout.hw + m, layout.hw - m)
            y = draw_uniform(rng, -layout.hd + m, layout.hd - m)
            yaw = 90.0 * int(rng.integers(4)) if slot.axis_aligned else draw_uniform(rng, 0.0, 360.0)
            if not layout.may_fit(inst, footprint(inst, x, y, yaw), margin=m):
                continue
            obj = make_object("", inst, x, y, yaw)
            if layout.fits(obj, Rect.of(obj), None, group, margin=m):
                layout.add(obj, None, group, slot.key)
                return layout.placed[-1]
    return None


def _place_anchored(
    rng: np.random.Generator, layout: _Layout, slot: Slot, inst: Instance, anchor: _Placed, n: int
) -> list[_Placed]:
    """Place up to ``n`` copies of ``inst`` relative to ``anchor`` (in its group)."""
    out: list[_Placed] = []
    a = anchor.obj
    group = anchor.group
    depth, width = float(inst.size[0]), float(inst.size[1])

    def try_add(x: float, y: float, yaw: float, wall: int | None = None, t: float = 0.0) -> bool:
        if not layout.may_fit(inst, footprint(inst, x, y, yaw)):
            return False
        obj = make_object("", inst, x, y, yaw)
        clear = layout.clearance_rect(obj, slot.clearance)
        if layout.fits(obj, Rect.of(obj), clear, group):
            layout.add(obj, clear, group, slot.key, wall, t)
            out.append(layout.placed[-1])
            return True
        return False

    if slot.place == "beside":
        if anchor.wall is None:
            return out
        sides = [-1.0, 1.0] if rng.random() < 0.5 else [1.0, -1.0]
        for s in sides:
            if len(out) >= n:
                break
            t = anchor.t + s * (a.size[1] / 2 + float(rng.uniform(0.05, 0.15)) + width / 2)
            x, y, yaw = layout.wall_pose(anchor.wall, t, depth)
            try_add(x, y, yaw, anchor.wall, t)
    elif slot.place == "opposite":
        if anchor.wall is None:
            return out
        k = _OPPOSITE[anchor.wall]
        lateral = float(a.pose.position[1] if k < 2 else a.pose.position[0])
        half = layout.wall_len(k) / 2 - width / 2 - WALL_GAP
        for _ in range(8 * n):
            if len(out) >= n or half < 0:
                break
            t = float(np.clip(lateral + rng.uniform(-0.3, 0.3), -half, half))
            x, y, yaw = layout.wall_pose(k, t, depth)
            try_add(x, y, yaw, k, t)
    elif slot.place == "front":
        f = a.front_vector()[:2]
        along_front = min(depth, width)
        yaw = a.pose.yaw if width >= depth else a.pose.yaw + 90.0
        for _ in range(8 * n):
            if len(out) >= n:
                break
            lat = np.array([-f[1], f[0]]) * float(rng.uniform(-0.1, 0.1))
            reach = a.size[0] / 2 + float(rng.uniform(0.35, 0.5)) + along_front / 2
            c = np.asarray(a.pose.position[:2]) + f * reach + lat
            try_add(float(c[0]), float(c[1]), yaw)
    elif slot.place == "facing":
        seats = _seats(rng, a, anchor.wall is not None, depth, width)
        for c, yaw in seats:
            if len(out) >= n:
                break
            try_add(float(c[0]), float(c[1]), yaw)
    else:
        raise ValueError(f"slot {slot.key}: placement {slot.place!r} does not take an anchor")
    return out


def _seats(
    rng: np.random.Generator, table: SceneObject, front_only: bool, depth: float, width: float
) -> list[tuple[np.ndarray, float]]:
    """Candidate seat positions around ``table`` (shuffled), each facing the table.

    A wall-placed anchor (a desk) is only sat at from its front.
    """
    rot = table.pose.rotation()[:2, :2]
    hx, hy = table.size[0] / 2, table.size[1] / 2
    sides = [(np.array([1.0, 0.0]), np.array([0.0, 1.0]), hx, table.size[1])]
    if not front_only:
        sides += [
            (np.array([-1.0, 0.0]), np.array([0.0, 1.0]), hx, table.size[1]),
            (np.array([0.0, 1.0]), np.array([1.0, 0.0]), hy, table.size[0]),
            (np.array([0.0, -1.0]), np.array([1.0, 0.0]), hy, table.size[0]),
        ]
    seats: list[tuple[np.ndarray, float]] = []
    for n_local, e_local, half_n, side_len in sides:
        k = max(1, int((side_len + 0.1) // (width + 0.1)))
        gap = float(rng.uniform(0.08, 0.2))
        for i in range(k):
            off = (i - (k - 1) / 2) * (side_len / k)
            c_local = n_local * (half_n + gap + depth / 2) + e_local * off
            c = np.asarray(table.pose.position[:2]) + rot @ c_local
            to_table = -(rot @ n_local)
            yaw = math.degrees(math.atan2(to_table[1], to_table[0]))
            seats.append((c, yaw))
    order = rng.permutation(len(seats))
    return [seats[int(i)] for i in order]


def _observer(rng: np.random.Generator, layout: _Layout, walkway_fraction: float) -> np.ndarray | None:
    """An eye position in the largest walkable floor region, or None if it is too small.

    The floor is rasterised at 5 cm: a cell is walkable when it is at least ``BODY``
    from every footprint and every wall; the observer stands at least 0.45 m from
    furniture and 0.5 m from walls.
    """
    cell = 0.05
    xs = np.arange(-layout.hw + cell / 2, layout.hw, cell)
    ys = np.arange(-layout.hd + cell / 2, layout.hd, cell)
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    pts = np.stack([gx.ravel(), gy.ravel()], axis=1)
    d_obj = np.full(len(pts), np.inf)
    for p in layout.placed:
        r = p.rect
        ax, ay = r.axes()
        d = pts - np.array([r.cx, r.cy])
        qx = np.maximum(np.abs(d @ ax) - r.hx, 0.0)
        qy = np.maximum(np.abs(d @ ay) - r.hy, 0.0)
        d_obj = np.minimum(d_obj, np.hypot(qx, qy))
    d_wall = np.minimum(layout.hw - np.abs(pts[:, 0]), layout.hd - np.abs(pts[:, 1]))
    walk = ((d_obj >= BODY) & (d_wall >= BODY)).reshape(gx.shape)
    from scipy import ndimage  # lazy: only room sampling needs it

    labels, n = ndimage.label(walk)
    if n == 0:
        return None
    sizes = ndimage.sum(walk, labels, index=np.arange(1, n + 1))
    main = int(np.argmax(sizes)) + 1
    if sizes[main - 1] * cell * cell < walkway_fraction * layout.room.width * layout.room.depth:
        return None
    ok = (labels.ravel() == main) & (d_obj >= 0.45) & (d_wall >= 0.5)
    idx = np.flatnonzero(ok)
    if len(idx) == 0:
        return None
    p = pts[int(idx[int(rng.integers(len(idx)))])]
    return p + rng.uniform(-cell / 2, cell / 2, 2)


def _room_cameras(
    rng: np.random.Generator,
    layout: _Layout,
    eye_xy: np.ndarray,
    panorama_size: tuple[int, int],
    perspective_size: tuple[int, int],
) -> list[Camera]:
    eye_h = float(rng.uniform(1.5, 1.6))
    theta = math.radians(float(rng.uniform(0.0, 360.0)))
    eye = (round(float(eye_xy[0]), 4), round(float(eye_xy[1]), 4), round(eye_h, 4))
    ahead = (round(eye[0] + math.cos(theta), 5), round(eye[1] + math.sin(theta), 5), eye[2])
    pw, ph = panorama_size
    sw, sh = perspective_size
    pano = Camera(name="pano", position=eye, look_at=ahead, fov_y=90.0, width=pw, height=ph, projection="equirect")
    view = Camera(name="view", position=eye, look_at=ahead, fov_y=60.0, width=sw, height=sh)
    # overview: the upper corner farthest from any furniture, looking at the room centre
    inset = 0.2
    z = round(min(layout.room.height - 0.2, 2.4), 4)
    best, best_d = None, -1.0
    for sx in (1.0, -1.0):
        for sy in (1.0, -1.0):
            c = np.array([sx * (layout.hw - inset), sy * (layout.hd - inset)])
            d = min((p.rect.distance_to_point(c) for p in layout.placed), default=np.inf)
            if d > best_d + 1e-9:
                best, best_d = c, d
    assert best is not None
    overview = Camera(
        name="overview",
        position=(round(float(best[0]), 4), round(float(best[1]), 4), z),
        look_at=(0.0, 0.0, 0.6),
        fov_y=65.0,
        width=sw,
        height=sh,
    )
    return [pano, view, overview]
