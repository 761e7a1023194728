"""One object on a ground plane in a studio: the scene of DORI's single-object tasks and
SpinBench's canonical-view and rotation tasks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from perspecta import timing
from perspecta.world.samplers.common import (
    assets_in,
    available_categories,
    fit_distance,
    instantiate,
    jitter_color,
    make_object,
    orbit_camera,
    renumber,
    resolve_category,
    sample_sun,
)
from perspecta.world.scene import RGB, Camera, Ground, Scene, SceneObject

if TYPE_CHECKING:
    from perspecta.assets.library import AssetLibrary

STUDIO_GROUNDS: tuple[RGB, ...] = (
    (0.62, 0.62, 0.60),
    (0.70, 0.68, 0.64),
    (0.55, 0.58, 0.60),
    (0.66, 0.62, 0.56),
    (0.50, 0.52, 0.50),
    (0.74, 0.74, 0.74),
)
STUDIO_SKIES: tuple[RGB, ...] = (
    (0.80, 0.86, 0.95),
    (0.90, 0.90, 0.92),
    (0.85, 0.88, 0.86),
    (0.93, 0.90, 0.86),
    (0.75, 0.80, 0.88),
)


@timing.timed("sample")
def sample_studio(
    rng: np.random.Generator,
    library: AssetLibrary,
    *,
    scene_id: str,
    seed: int,
    categories: Sequence[str] | None = None,
    asset_id: str | None = None,
    sources: Sequence[str] | None = None,
    yaw: float | None = None,
    camera_distance: float | None = None,
    camera_azimuth: float | None = None,
    camera_elevation: float | None = None,
    elevation_range: tuple[float, float] = (5.0, 35.0),
    fov_y: float | None = None,
    fill: tuple[float, float] = (0.55, 0.8),
    image_size: int | tuple[int, int] = 256,
    color: RGB | None = None,
    n_distractors: int = 0,
    distractor_categories: Sequence[str] | None = None,
) -> Scene:
    """One object at the origin and a camera ("main") aimed at its bbox centre.

    The camera sits at ``camera_azimuth`` (world direction from the object to the
    camera, CCW from +X; an object with ``yaw == camera_azimuth`` faces the camera) and
    ``camera_elevation``; each is drawn when not given. Its distance makes the object's
    bounding sphere span a fraction ``fill`` of the field of view unless
    ``camera_distance`` fixes it. ``yaw`` fixes the object's yaw (else uniform).

    ``n_distractors`` other objects (of ``distractor_categories``, sized within a factor
    of two of the target) stand on the ground *behind* the target as seen from the
    camera, clear of its footprint whatever its yaw, so they add clutter without ever
    hiding it; they are objects 1.. after the target (object 0).
    """
    width, height = (image_size, image_size) if isinstance(image_size, int) else image_size
    if asset_id is not None:
        info = library.get(asset_id)
    else:
        if categories is None:
            cats = available_categories(library, sources)
        else:
            cats = []
            for c in categories:
                r = resolve_category(library, c, sources)
                if r is None:
                    raise ValueError(f"category {c!r} has no assets in the library (sources={sources})")
                cats.append(r)
        if not cats:
            raise ValueError("the asset library has no assets to sample from")
        cat = cats[int(rng.integers(len(cats)))]
        choices = assets_in(library, cat, sources)
        info = choices[int(rng.integers(len(choices)))]
    inst = instantiate(rng, library, info, color=color)
    obj_yaw = float(rng.uniform(0.0, 360.0)) if yaw is None else float(yaw)
    obj = make_object("obj0", inst, 0.0, 0.0, obj_yaw)

    fov = float(rng.uniform(35.0, 50.0)) if fov_y is None else float(fov_y)
    az = float(rng.uniform(0.0, 360.0)) if camera_azimuth is None else float(camera_azimuth)
    el = float(rng.uniform(*elevation_range)) if camera_elevation is None else float(camera_elevation)
    if camera_distance is None:
        dist = fit_distance(inst.radius, fov, width, height, float(rng.uniform(*fill)))
    else:
        dist = float(camera_distance)
    if dist <= 0:
        raise ValueError(f"camera_distance must be positive, got {dist}")
    camera = orbit_camera(obj.center(), dist, az, el, fov_y=fov, width=width, height=height, name="main")
    ground = Ground(
        size=max(40.0, 8 * dist),
        color=jitter_color(rng, STUDIO_GROUNDS[int(rng.integers(len(STUDIO_GROUNDS)))]),
        sky_color=jitter_color(rng, STUDIO_SKIES[int(rng.integers(len(STUDIO_SKIES)))]),
    )
    objects = [obj] + _distractors(rng, library, obj, camera, n_distractors, distractor_categories)
    return Scene(
        scene_id=scene_id,
        seed=int(seed),
        kind="studio",
        objects=renumber(objects),
        cameras=[camera],
        light=sample_sun(rng),
        ground=ground,
    )


def _distractors(
    rng: np.random.Generator, library: AssetLibrary, target: SceneObject, camera: Camera, n: int,
    categories: Sequence[str] | None,
) -> list[SceneObject]:
    """Up to ``n`` objects behind ``target`` (farther from the camera), none within the
    circle that holds the target's footprint at any yaw, nor overlapping each other."""
    if n <= 0:
        return []
    size = max(target.size)
    pool = [a for a in library.all() if (categories is None or a.category in categories)
            and a.asset_id != target.asset_id and 0.5 * size <= max(a.size) <= 2.0 * size]
    if not pool:
        return []
    t = np.asarray(target.pose.position[:2], dtype=float)
    away = t - np.asarray(camera.position[:2], dtype=float)
    away /= max(1e-9, float(np.linalg.norm(away)))
    side = np.array([-away[1], away[0]])
    r_t = 0.5 * float(np.hypot(target.size[0], target.size[1]))
    placed: list[tuple[np.ndarray, float]] = [(t, r_t)]
    out: list[SceneObject] = []
    for k in range(n):
        info = pool[int(rng.integers(len(pool)))]
        inst = instantiate(rng, library, info)
        r_d = 0.5 * float(np.hypot(inst.size[0], inst.size[1]))
        for _try in range(20):
            p = t + away * float(rng.uniform(r_t + r_d + 0.3, r_t + r_d + 2.5 * size)) \
                + side * float(rng.uniform(-1.5, 1.5)) * size
            if all(float(np.linalg.norm(p - q)) > r + r_d + 0.15 for q, r in placed):
                out.append(make_object(f"d{k}", inst, float(p[0]), float(p[1]), float(rng.uniform(0.0, 360.0))))
                placed.append((p, r_d))
                break
    return out
