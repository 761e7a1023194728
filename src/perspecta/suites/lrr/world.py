"""Outdoor scenes for LRR: a raised camera over open ground with street entities and
blocky background buildings.

LRR's 3D tasks were built in Minecraft, where the terrain stays put while mobs move;
we mirror that split. *Scenery* (ids ``bg*``) are tinted box blocks standing in as
buildings: they never move and survive the "Clear" variants, so the background stays
informative. *Entities* (ids ``obj*``: cars, people, animals, street props) are the
clutter that Clear variants remove. *Landmarks* (ids ``lm*``: low stones and posts
strewn over the ground) are scenery too: on an untextured ground plane an object's
displacement between two shots has nothing to be measured against, so every task
where motion must be seen scatters them (until the renderer's textured ground lands).
The task's subject has the id ``target`` (or ``x``/``y`` for the depth pair).

Placement works in camera terms: a pixel is cast onto the ground plane
(:func:`ground_point`), so a generator can put an object where it must appear and
then confirm the answer with the oracle.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from perspecta.world.oracle import ground_ahead
from perspecta.world.samplers.common import (
    Instance,
    Rect,
    SamplingError,
    any_overlap,
    instantiate,
    jitter_color,
    make_object,
    resolve_category,
    sample_sun,
    visibility,
)
from perspecta.world.scene import Camera, Ground, Scene, SceneObject

if TYPE_CHECKING:
    from perspecta.assets.library import AssetLibrary

# Entities that populate a street and the nouns prompts use for them.
NOUNS: dict[str, str] = {
    "car": "car", "person": "person", "bicycle": "bicycle", "dog": "dog", "horse": "horse",
    "motorcycle": "motorcycle", "van": "van", "figure": "sheep", "bench": "bench",
    "fire_hydrant": "fire hydrant", "barrel": "barrel", "cat": "cat",
}  # fmt: skip
ENTITY_CATEGORIES = ("car", "person", "bicycle", "dog", "motorcycle", "bench", "fire_hydrant", "barrel")
# Assets a person would misname at LRR's sizes: the procedural horse reads as a dog, and
# this "bench" renders as a blue oval table.
AVOID_ASSETS = frozenset({"proc:horse", "sh3d:katorlegaz/bench"})
SHEEP = "proc:figure"  # LRR's "sheep": a white quadruped with a dark face at its front
GROUND_COLORS = ((0.42, 0.55, 0.30), (0.50, 0.47, 0.40), (0.38, 0.40, 0.42), (0.55, 0.52, 0.45))
SKY_COLORS = ((0.72, 0.82, 0.95), (0.80, 0.86, 0.94), (0.86, 0.88, 0.92))
LANDMARK_COLORS = (
    (0.45, 0.43, 0.40), (0.60, 0.58, 0.52), (0.35, 0.30, 0.26), (0.70, 0.66, 0.58), (0.28, 0.32, 0.28),
)  # fmt: skip
POST_COLORS = ((0.80, 0.15, 0.12), (0.95, 0.80, 0.15), (0.15, 0.35, 0.80), (0.95, 0.95, 0.92), (0.90, 0.45, 0.10))
BLOCK_COLORS = (
    (0.75, 0.68, 0.55), (0.62, 0.36, 0.28), (0.55, 0.58, 0.62), (0.85, 0.82, 0.75),
    (0.40, 0.48, 0.60), (0.70, 0.55, 0.40), (0.35, 0.50, 0.38),
)  # fmt: skip


def noun(category: str) -> str:
    return NOUNS.get(category, category.replace("_", " "))


def raised_camera(
    rng: np.random.Generator,
    size: int,
    *,
    height: tuple[float, float],
    pitch: tuple[float, float],
    fov: tuple[float, float] = (50.0, 58.0),
    name: str = "main",
    roll_max: float = 0.0,
) -> Camera:
    """A camera above the origin looking down ``pitch`` degrees along a random heading,
    tilted about its optical axis by up to ``roll_max`` degrees either way (a roll of
    half to all of it, so a rolled view is clearly tilted; 0 = level horizon). The roll
    is drawn only when asked for, so level cameras keep their random stream."""
    h = float(rng.uniform(*height))
    p = math.radians(float(rng.uniform(*pitch)))
    a = math.radians(float(rng.uniform(0.0, 360.0)))
    d = np.array([math.cos(p) * math.cos(a), math.cos(p) * math.sin(a), -math.sin(p)])
    pos = np.array([0.0, 0.0, h])
    look = pos + 10.0 * d
    fov_y = round(float(rng.uniform(*fov)), 4)
    up: tuple[float, float, float] = (0.0, 0.0, 1.0)
    if roll_max > 0.0:
        r = math.radians(float(rng.uniform(0.5, 1.0)) * roll_max * (1.0 if rng.random() < 0.5 else -1.0))
        right = np.cross(d, np.array([0.0, 0.0, 1.0]))
        right /= np.linalg.norm(right)
        level_up = np.cross(right, d)
        up = tuple(round(float(v), 6) for v in math.cos(r) * level_up + math.sin(r) * right)  # type: ignore[assignment]
    return Camera(
        name=name,
        position=(0.0, 0.0, round(h, 5)),
        look_at=tuple(round(float(v), 5) for v in look),  # type: ignore[arg-type]
        up=up,
        fov_y=fov_y,
        width=size,
        height=size,
    )


def ground_point(camera: Camera, u: float, v: float, z: float = 0.0) -> np.ndarray | None:
    """Where the ray through pixel (u, v) meets the horizontal plane at height ``z``
    (None if it never does, i.e. the pixel looks at the sky)."""
    k_inv = np.linalg.inv(camera.intrinsics())
    d_cam = k_inv @ np.array([u, v, 1.0])
    d = camera.rotation_world_to_cam().T @ d_cam
    pos = np.asarray(camera.position, dtype=float)
    if d[2] >= -1e-6 or pos[2] <= z:
        return None
    t = (z - pos[2]) / d[2]
    return pos + t * d


class Layout:
    """Objects placed so far and their ground footprints (for gap-keeping placement)."""

    def __init__(self, rng: np.random.Generator, library: AssetLibrary, keep_out: Sequence[Rect] = ()) -> None:
        self.rng = rng
        self.library = library
        self.objects: list[SceneObject] = []
        self.rects: list[Rect] = list(keep_out)

    def instance(self, category: str | None = None, asset_id: str | None = None, scale: float | None = None,
                 color: tuple[float, float, float] | None = None) -> Instance:
        if asset_id is None:
            if category is None:
                raise ValueError("need a category or an asset id")
            cat = resolve_category(self.library, category)
            if cat is None:
                raise ValueError(f"category {category!r} has no assets in the library")
            pool = [a for a in self.library.by_category(cat) if a.asset_id not in AVOID_ASSETS]
            if not pool:
                raise ValueError(f"category {category!r} has only avoided assets")
            info = pool[int(self.rng.integers(len(pool)))]
        else:
            info = self.library.get(asset_id)
        return instantiate(self.rng, self.library, info, scale=scale, color=color)

    def place(self, obj_id: str, inst: Instance, x: float, y: float, yaw: float, gap: float = 0.4) -> SceneObject | None:
        """Put ``inst`` at (x, y) unless its footprint comes within ``gap`` of another."""
        obj = make_object(obj_id, inst, x, y, yaw)
        r = Rect.of(obj)
        if any_overlap(r, self.rects, gap):
            return None
        self.objects.append(obj)
        self.rects.append(r)
        return obj

    def scatter(
        self,
        prefix: str,
        count: int,
        camera: Camera,
        *,
        bearings: tuple[float, float],
        distances: tuple[float, float],
        make: callable,  # type: ignore[valid-type]
        gap: float = 0.4,
        tries: int = 30,
    ) -> list[SceneObject]:
        """Place up to ``count`` instances from ``make()`` at random bearings/distances
        from the camera's foot; an instance that finds no free spot is dropped."""
        placed = []
        start = sum(1 for o in self.objects if o.id.startswith(prefix))
        for _ in range(count):
            inst = make()
            for _t in range(tries):
                p = ground_ahead(camera, float(self.rng.uniform(*bearings)), float(self.rng.uniform(*distances)))
                obj = self.place(f"{prefix}{start + len(placed)}", inst, p[0], p[1], float(self.rng.uniform(0, 360)), gap)
                if obj is not None:
                    placed.append(obj)
                    break
        return placed

    def entities(self, camera: Camera, count: int, *, bearings: tuple[float, float], distances: tuple[float, float],
                 exclude: Sequence[str] = ()) -> list[SceneObject]:
        """Street clutter (cars, people, animals, props) of categories not in ``exclude``."""
        pool = [c for c in ENTITY_CATEGORIES if c not in exclude and resolve_category(self.library, c) is not None]
        return self.scatter("obj", count, camera, bearings=bearings, distances=distances,
                            make=lambda: self.instance(pool[int(self.rng.integers(len(pool)))]))

    def blocks(self, camera: Camera, count: int, *, bearings: tuple[float, float], distances: tuple[float, float]) -> list[SceneObject]:
        """Blocky buildings: tinted boxes scaled to 2-6 m, the static background."""
        def make() -> Instance:
            color = BLOCK_COLORS[int(self.rng.integers(len(BLOCK_COLORS)))]
            return self.instance(asset_id="proc:box", scale=float(self.rng.uniform(5.0, 11.0)),
                                 color=jitter_color(self.rng, color))
        return self.scatter("bg", count, camera, bearings=bearings, distances=distances, make=make, gap=1.0)

    def _landmark(self) -> Instance:
        color = jitter_color(self.rng, LANDMARK_COLORS[int(self.rng.integers(len(LANDMARK_COLORS)))])
        if self.rng.random() < 0.6:
            return self.instance(asset_id="proc:box", scale=float(self.rng.uniform(0.3, 0.5)), color=color)
        return self.instance(asset_id="proc:cylinder", scale=float(self.rng.uniform(0.35, 0.5)), color=color)

    def landmarks(self, camera: Camera, count: int, *, bearings: tuple[float, float],
                  distances: tuple[float, float]) -> list[SceneObject]:
        """Static ground landmarks: stones (small boxes, 10-35 cm) and short posts
        (cylinders, 15-55 cm) in muted tints, dense enough that a displacement of the
        subject can be read against them."""
        return self.scatter("lm", count, camera, bearings=bearings, distances=distances, make=self._landmark,
                            gap=0.25, tries=8)

    def posts_near(self, points: Sequence[Sequence[float]], per_point: int, clear: float,
                   radii: tuple[float, float]) -> list[SceneObject]:
        """Brightly painted posts right next to each ground point (``radii`` metres
        from it), never within ``clear`` metres of any of the points: whatever stands at
        a point is then seen beside its own posts, and a move from one point to another
        changes which posts it stands by."""
        placed = []
        for xy in points:
            for _ in range(per_point):
                color = jitter_color(self.rng, POST_COLORS[int(self.rng.integers(len(POST_COLORS)))])
                inst = self.instance(asset_id="proc:cylinder", scale=float(self.rng.uniform(0.55, 0.75)), color=color)
                for _t in range(16):
                    a = float(self.rng.uniform(0.0, 2.0 * math.pi))
                    r = float(self.rng.uniform(*radii))
                    x, y = xy[0] + r * math.cos(a), xy[1] + r * math.sin(a)
                    if any(math.hypot(x - q[0], y - q[1]) < clear for q in points):
                        continue
                    n = sum(1 for o in self.objects if o.id.startswith("lm"))
                    obj = self.place(f"lm{n}", inst, x, y, 0.0, gap=0.15)
                    if obj is not None:
                        placed.append(obj)
                        break
        return placed

    def scene(self, scene_id: str, seed: int, cameras: list[Camera]) -> Scene:
        ground = Ground(
            size=120.0,
            color=jitter_color(self.rng, GROUND_COLORS[int(self.rng.integers(len(GROUND_COLORS)))]),
            sky_color=jitter_color(self.rng, SKY_COLORS[int(self.rng.integers(len(SKY_COLORS)))]),
            # a textured street surface, pinned to the unit's seed so every frame of an item
            # shows the same ground: motion reads against it, not only against the posts
            material="paving",
            texture_seed=int(seed),
        )
        return Scene(scene_id=scene_id, seed=int(seed), kind="clutter", objects=list(self.objects),
                     cameras=list(cameras), light=sample_sun(self.rng), ground=ground)


def with_objects(scene: Scene, objects: list[SceneObject], scene_id: str, cameras: list[Camera] | None = None) -> Scene:
    """A copy of ``scene`` with another object list (and optionally cameras)."""
    return dataclasses.replace(scene, scene_id=scene_id, objects=[dataclasses.replace(o) for o in objects],
                               cameras=list(scene.cameras if cameras is None else cameras))


def cleared(scene: Scene, scene_id: str) -> Scene:
    """The Clear version: every entity removed; the target(s) and the scenery blocks stay."""
    return with_objects(scene, [o for o in scene.objects if not o.id.startswith("obj")], scene_id)


def moved(obj: SceneObject, xy: Sequence[float], yaw: float | None = None) -> SceneObject:
    pose = dataclasses.replace(obj.pose, position=(round(float(xy[0]), 5), round(float(xy[1]), 5), obj.pose.position[2]),
                               yaw=obj.pose.yaw if yaw is None else round(float(yaw) % 360.0, 4))
    return dataclasses.replace(obj, pose=pose)


def object_index(scene: Scene, object_id: str) -> int:
    for i, o in enumerate(scene.objects):
        if o.id == object_id:
            return i
    raise KeyError(f"scene {scene.scene_id} has no object {object_id!r}")


def target_clear(scene: Scene, camera: Camera, object_id: str = "target", *, min_visible: float = 0.85,
                 margin: float = 4.0) -> bool:
    """The object lies fully inside the frame and at least ``min_visible`` of its box is
    not covered by nearer objects' boxes (a conservative, bbox-based test)."""
    vis = visibility(scene.objects, camera, margin=margin)
    v = vis[object_index(scene, object_id)]
    return v.inside and v.visible_fraction >= min_visible


def count_in_view(scene: Scene, camera: Camera, prefix: str = "") -> int:
    """How many objects (ids starting with ``prefix``) have their box centre in the image."""
    n = 0
    for o in scene.objects:
        if not o.id.startswith(prefix):
            continue
        uv, z = camera.project(o.center()[None])
        if z[0] > 0.5 and 0 <= uv[0, 0] < camera.width and 0 <= uv[0, 1] < camera.height:
            n += 1
    return n


def retry(fn: callable, attempts: int, what: str):  # type: ignore[valid-type]
    """Call ``fn()`` until it returns something other than None."""
    for _ in range(attempts):
        out = fn()
        if out is not None:
            return out
    raise SamplingError(f"{what}: no valid layout after {attempts} attempts")
