"""PCSR's shared room stream: one furnished room and panorama serves every task.

The paper asks many questions of each panorama. Room (*i*, *a*) — unit index *i*,
attempt *a* — is a pure function of the dataset's root seed, so unit *i* of any task
can sample it, and whichever worker gets there first writes it to a cache under
``.parts/pcsr/rooms/`` (scene record, panorama PNG, instance mask). Later units read
it back instead of sampling and rendering again; a room is thus rendered once per
dataset, not once per task. Every unit returns the scene *as read from its JSON
record*, so a unit that sampled the room and one that read the cache see the same
floats and make the same bytes. Two workers racing on one room write identical bytes
through unique temporary names, so the race is harmless.

The split is drawn from the room's own seed (:func:`split_for_seed`), so a panorama
and every question about it land in the same split: train and test are disjoint by
panorama. A panorama is copied into ``images/pcsr/rooms/`` only when a unit accepts
it, so the dataset holds no image that no item uses.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perspecta.suites.context import TaskContext, encode_png, split_for_seed, stable_key
from perspecta.suites.pcsr.common import PANO_SIZE, Pano, pano_rgb, render_pano, room_knobs
from perspecta.world.samplers import SamplingError, sample_room
from perspecta.world.samplers.room import draw_room_type
from perspecta.world.scene import Scene

CACHE_DIR = Path(".parts") / "pcsr" / "rooms"  # inside the dataset directory; removed on assembly
IMAGE_DIR = Path("images") / "pcsr" / "rooms"


@dataclass(frozen=True)
class RoomKey:
    index: int  # the unit index that first asks for the room
    attempt: int  # rooms tried before it by that index

    @property
    def name(self) -> str:
        return f"{self.index:06d}-{self.attempt}"

    def seed_sequence(self, root_seed: int) -> np.random.SeedSequence:
        return np.random.SeedSequence(root_seed, spawn_key=(stable_key("pcsr"), stable_key("room"), self.index, self.attempt))

    def seed(self, root_seed: int) -> int:
        return int(self.seed_sequence(root_seed).generate_state(1, np.uint32)[0])


def _cache(ctx: TaskContext) -> Path:
    path = ctx.out_dir / CACHE_DIR
    path.mkdir(parents=True, exist_ok=True)
    return path


def _write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    """Write through a temporary name unique to this process, then rename over ``path``."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    write(tmp)
    tmp.replace(path)


def room_type(ctx: TaskContext, key: RoomKey) -> str:
    """The type of room ``key`` without sampling it: the configured type, else the
    sampler's first draw from the room's seed (what :func:`shared_scene` would get)."""
    fixed = ctx.config.get("room_type")
    return str(fixed) if fixed else draw_room_type(np.random.default_rng(key.seed_sequence(ctx.root_seed)))


def shared_scene(ctx: TaskContext, key: RoomKey, panorama_size: tuple[int, int]) -> Scene:
    """Room ``key`` of this dataset: read from the cache, else sampled and cached.

    Raises :class:`SamplingError` (also cached) when the room cannot be furnished.
    """
    from perspecta.dataset.io import scene_from_record

    knobs = room_knobs(ctx)  # read (and so recorded) whether or not the room is cached
    record = _cache(ctx) / f"{key.name}.scene.json"
    if not record.exists():
        rng = np.random.default_rng(key.seed_sequence(ctx.root_seed))
        try:
            scene = sample_room(
                rng, ctx.library, scene_id=f"pcsr-room-{key.name}", seed=key.seed(ctx.root_seed),
                room_type=ctx.config.get("room_type"), panorama_size=panorama_size, **knobs,
            )
            data = scene.to_dict()
        except SamplingError as e:
            data = {"sampling_error": str(e)}
        text = json.dumps(data, sort_keys=True)
        _write_atomic(record, lambda p: p.write_text(text, encoding="utf-8"))
    data = json.loads(record.read_text(encoding="utf-8"))
    if "sampling_error" in data:
        raise SamplingError(data["sampling_error"])
    return scene_from_record(data)


def shared_pano(ctx: TaskContext, key: RoomKey, scene: Scene) -> Pano:
    """The panorama of room ``key`` (rendered once per dataset), ready for questions; its
    ``image`` is the path the dataset will hold once :func:`publish` copies it there."""
    cache = _cache(ctx)
    png = cache / f"{key.name}.png"
    mask = cache / f"{key.name}.instance.npz"
    if not ctx.with_depth and not mask.exists():
        # masks only: most rooms a unit renders are kept by some unit, but not all
        # (measured: 4 of 19); :func:`publish` draws the colour of those that are
        pano, _ = render_pano(ctx, scene, color=False)
        _write_atomic(mask, lambda p: _save_mask(p, pano.instance))
    elif ctx.with_depth and not (png.exists() and mask.exists()):  # the depth comes with the colour render
        pano, rgb = render_pano(ctx, scene)
        data = encode_png(rgb, ctx.suite)
        _write_atomic(png, lambda p: p.write_bytes(data))
        _write_atomic(mask, lambda p: _save_mask(p, pano.instance))
        from perspecta.dataset.depth import write_png  # ground-truth depth, published with the panorama

        depth, _ = ctx.renderer.depth_for(rgb)  # type: ignore[attr-defined]
        if depth is not None:
            _write_atomic(cache / f"{key.name}.depth.png", lambda p: write_png(p, depth))
    with np.load(mask, allow_pickle=False) as stored:
        instance = stored["instance"].astype(np.int32)
    ids, counts = np.unique(instance, return_counts=True)
    px = {scene.objects[int(i) - 1].id: int(c) for i, c in zip(ids, counts) if i > 0}
    rel = (IMAGE_DIR / f"{key.name}_pano.png").as_posix()
    return Pano(scene=scene, camera=scene.camera("pano"), image=rel, visible_px=px, instance=instance,
                split=split_for_seed(key.seed(ctx.root_seed), ctx.config.get("splits")))


def _save_mask(path: Path, instance: np.ndarray) -> None:
    with open(path, "wb") as f:  # a file object: numpy would append ".npz" to a path
        np.savez_compressed(f, instance=instance.astype(np.int16))


def publish(ctx: TaskContext, key: RoomKey) -> None:
    """Copy room ``key``'s panorama into the dataset (once; later units find it there)."""
    dest = ctx.out_dir / IMAGE_DIR / f"{key.name}_pano.png"
    png = _cache(ctx) / f"{key.name}.png"
    if not png.exists():  # the first unit to keep this room draws its colour, from the room's record
        data = encode_png(pano_rgb(ctx, shared_scene(ctx, key, PANO_SIZE)), ctx.suite)
        _write_atomic(png, lambda p: p.write_bytes(data))
    if not dest.exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(dest, lambda p: shutil.copyfile(_cache(ctx) / f"{key.name}.png", p))
    depth = _cache(ctx) / f"{key.name}.depth.png"
    if ctx.with_depth and depth.exists():
        from perspecta.dataset.depth import depth_rel

        target = ctx.out_dir / depth_rel((IMAGE_DIR / f"{key.name}_pano.png").as_posix())
        if not target.exists():
            _write_atomic(target, lambda p: shutil.copyfile(depth, p))
