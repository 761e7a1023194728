"""PCSR foundational perception, T0-T2: counting, relative distance, relative direction.

T0 counts 3D instances; its hard distractor is the number of separate 2D blobs the
category makes in the panorama mask (instances that overlap in the image merge, an
object cut by the seam or by an occluder splits), the count a model that counts
blobs instead of objects would give. T1 asks for the closest/farthest object to a
named one, with the runner-up as the hard distractor and a margin on both centre
and box-surface distances so the answer does not depend on how distance is read.
T2 asks left/right between two objects (short arc, away from the seam) or which
quarter around the observer an object is in.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from perspecta.dataset.item import Item
from perspecta.suites.context import TaskContext
from perspecta.suites.pcsr.common import (
    SUITE,
    Pano,
    Question,
    aliases_for,
    answer_for,
    build_unit,
    by_category,
    display,
    fill_distractors,
    pick,
    the,
)
from perspecta.suites.registry import task
from perspecta.world.oracle import (
    camera_yaw,
    left_right,
    observer_relation,
    rank_by_distance,
)
from perspecta.world.scene import Scene, SceneObject

COUNT_MIN_PX = 60  # every instance of a counted category must show at least this much
BLOB_MIN_PX = 30  # smaller mask fragments are not counted as blobs
DIST_MARGIN = 0.4  # metres between the answer and the nearest other-category object (centres)
BBOX_MARGIN = 0.15  # metres, the same on box-surface distances
DIR_MARGIN = 15.0  # degrees kept clear of every direction boundary
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
SECTORS = ("front", "behind", "left", "right")
SECTOR_TEXT = {"front": "in front of you", "behind": "behind you", "left": "on your left", "right": "on your right"}


def plural(category: str) -> str:
    name = display(category)
    if name == "person":
        return "people"
    if name.endswith(("s", "x", "ch", "sh")):
        return name + "es"
    return name + "s"


def number_aliases(n: int) -> list[str]:
    return [NUMBER_WORDS[n]] if 0 <= n < len(NUMBER_WORDS) else []


# ------------------------------------------------------------------------ T0 counting


def blob_count(instance: np.ndarray, indices: list[int]) -> int:
    """Connected 2D regions (8-connected, seam not wrapped) of the given objects' masks."""
    from scipy import ndimage

    mask = np.isin(instance, [i + 1 for i in indices])
    labels, n = ndimage.label(mask, structure=np.ones((3, 3), dtype=bool))
    if n == 0:
        return 0
    sizes = ndimage.sum(mask, labels, index=np.arange(1, n + 1))
    return int(np.count_nonzero(sizes >= BLOB_MIN_PX))


def count_answer(scene: Scene, category: str) -> str:
    return str(sum(1 for o in scene.objects if o.category == category))


def _build_count(ctx: TaskContext, pano: Pano) -> Question | None:
    scene = pano.scene
    counts = Counter(o.category for o in scene.objects)
    ok = [
        c
        for c in counts
        if all(pano.visible_px.get(o.id, 0) >= COUNT_MIN_PX for o in scene.objects if o.category == c)
    ]
    if not ok:
        return None
    blobs = {
        c: blob_count(pano.instance, [i for i, o in enumerate(scene.objects) if o.category == c]) for c in ok
    }
    differ = [c for c in ok if blobs[c] != counts[c]]
    multi = [c for c in ok if counts[c] >= 2]
    r = float(ctx.rng.random())
    pool = differ if differ and r < 0.5 else multi if multi and r < 0.8 else ok
    category = pick(ctx.rng, sorted(pool))
    n, b = counts[category], blobs[category]
    wrong = [str(v) for v in (b, n + 1, n - 1, n + 2, n - 2, n + 3) if v >= 1 and v != n]
    distractors = list(dict.fromkeys(wrong))[:3]
    return Question(
        subtype="count",
        body=f"How many {plural(category)} are in the room? Count whole objects, not image regions.",
        answer=str(n),
        aliases=number_aliases(n),
        distractors=distractors,
        metadata={"category": category, "count_3d": n, "count_2d_blobs": b, "occlusion_differs": b != n},
        candidates=[str(v) for v in range(11)],
    )


def derive_count(item: Item, scenes: dict[str, Scene]) -> str:
    return answer_for(item, count_answer(scenes[item.scene_id], item.metadata["category"]))


@task(SUITE, "counting", derive=derive_count, description="T0: count 3D instances of a category")
def generate_counting(ctx: TaskContext) -> list[Item]:
    return build_unit(ctx, "counting", _build_count)


# ------------------------------------------------------------------ T1 relative distance


def _ranked(scene: Scene, anchor: SceneObject, mode: str, metric: str) -> list[tuple[SceneObject, float]]:
    ranked = rank_by_distance(anchor, scene.objects, mode=metric)  # type: ignore[arg-type]
    return ranked if mode == "closest" else ranked[::-1]


def distance_answer(scene: Scene, anchor_category: str, mode: str) -> str:
    """Category of the object nearest to (or farthest from) the anchor, by centre distance."""
    return display(_ranked(scene, by_category(scene, anchor_category), mode, "center")[0][0].category)


def _clear_winner(ranked: list[tuple[SceneObject, float]], margin: float) -> SceneObject | None:
    """The first object, if every object of another category is ``margin`` further down the list."""
    first, d0 = ranked[0]
    for o, d in ranked[1:]:
        if o.category != first.category:
            return first if abs(d - d0) >= margin else None
    return first


def _build_distance(ctx: TaskContext, pano: Pano) -> Question | None:
    scene = pano.scene
    anchors = pano.referable()
    order = ctx.rng.permutation(len(anchors))
    mode = "closest" if ctx.rng.random() < 0.6 else "farthest"
    names = sorted({display(o.category) for o in scene.objects if pano.visible(o)})
    for i in order:
        anchor = anchors[int(i)]
        centre = _ranked(scene, anchor, mode, "center")
        box = _ranked(scene, anchor, mode, "bbox")
        win = _clear_winner(centre, DIST_MARGIN)
        win_box = _clear_winner(box, BBOX_MARGIN)
        if win is None or win_box is None or win.category != win_box.category or not pano.visible(win):
            continue
        runner = next((o for o, _ in centre if o.category != win.category and pano.visible(o)), None)
        hard = [display(runner.category)] if runner is not None else []
        pool = [n for n in names if n != display(anchor.category)]
        distractors = fill_distractors(ctx.rng, display(win.category), hard, pool)
        if distractors is None:
            continue
        word = "closest to" if mode == "closest" else "farthest from"
        return Question(
            subtype=mode,
            body=(
                f"Which object in the room is {word} {the(anchor.category)}? Compare distances "
                "between object centres in 3D, and answer with the object's name."
            ),
            answer=display(win.category),
            aliases=aliases_for(win.category),
            distractors=distractors,
            metadata={
                "anchor": anchor.category,
                "anchor_id": anchor.id,
                "mode": mode,
                "answer_id": win.id,
                "runner_up": runner.category if runner else None,
                "distances": {o.id: round(d, 4) for o, d in centre},
                "bbox_distances": {o.id: round(d, 4) for o, d in box},
            },
            candidates=[display(o.category) for o in scene.objects],
        )
    return None


def derive_distance(item: Item, scenes: dict[str, Scene]) -> str:
    m = item.metadata
    return answer_for(item, distance_answer(scenes[item.scene_id], m["anchor"], m["mode"]))


@task(SUITE, "relative_distance", derive=derive_distance, description="T1: closest / farthest object to a named one")
def generate_distance(ctx: TaskContext) -> list[Item]:
    return build_unit(ctx, "relative_distance", _build_distance)


# ----------------------------------------------------------------- T2 relative direction


def direction_answer(scene: Scene, subtype: str, a: str, b: str | None) -> str | None:
    cam = scene.camera("pano")
    oa = by_category(scene, a)
    if subtype == "pair_left_right":
        return left_right(oa, by_category(scene, b or ""), cam, angle_margin=DIR_MARGIN)
    return observer_relation(cam.position, camera_yaw(cam), oa, margin=DIR_MARGIN)


def _build_direction(ctx: TaskContext, pano: Pano) -> Question | None:
    scene = pano.scene
    objs = pano.referable()
    if ctx.rng.random() < 0.5:
        pairs = [(a, b) for a in objs for b in objs if a is not b]
        for i in ctx.rng.permutation(len(pairs)):
            a, b = pairs[int(i)]
            ans = direction_answer(scene, "pair_left_right", a.category, b.category)
            if ans is None:
                continue
            return Question(
                subtype="pair_left_right",
                body=(
                    f"Looking around from where you stand, is {the(a.category)} to the left or to the "
                    f"right of {the(b.category)}? Take the shorter way around you between them. "
                    "Answer left or right."
                ),
                answer=ans,
                aliases=[f"to the {ans}", f"on the {ans}", f"{ans} side"],
                distractors=["right" if ans == "left" else "left"],
                metadata={"object_a": a.category, "object_b": b.category, "frame_of_reference": "observer"},
                candidates=["left", "right"],
            )
        return None
    for i in ctx.rng.permutation(len(objs)):
        a = objs[int(i)]
        ans = direction_answer(scene, "observer_sector", a.category, None)
        if ans is None:
            continue
        return Question(
            subtype="observer_sector",
            body=(
                f"You face the direction of the panorama's centre. Is {the(a.category)} in front of you, "
                "behind you, on your left or on your right? Answer front, behind, left or right."
            ),
            answer=ans,
            aliases=[SECTOR_TEXT[ans]] + (["back", "behind me"] if ans == "behind" else []),
            distractors=[s for s in SECTORS if s != ans],
            metadata={"object_a": a.category, "object_b": None, "frame_of_reference": "observer"},
            candidates=list(SECTORS),
        )
    return None


def derive_direction(item: Item, scenes: dict[str, Scene]) -> str:
    m = item.metadata
    ans = direction_answer(scenes[item.scene_id], item.subtype, m["object_a"], m["object_b"])
    if ans is None:
        raise ValueError(f"item {item.id}: the direction is within the margin of a boundary")
    return answer_for(item, ans)


@task(SUITE, "relative_direction", derive=derive_direction, description="T2: direction between objects from the observer")
def generate_direction(ctx: TaskContext) -> list[Item]:
    return build_unit(ctx, "relative_direction", _build_direction)


