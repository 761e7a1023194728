"""PCSR advanced reasoning, T3-T5: compositional chains, egocentric rotation and
perspective re-anchoring.

T3 transitive chains state two true premises about distance from the observer and ask
about the ends; compositional chains chain two distance hops ("the object closest to
X, then the object farthest from that") with distractors that satisfy only one hop.
T4 turns the observer on the spot (``move_camera``, clockwise = right) and asks what
is then ahead / left / right / behind; the distractors are what the opposite turn and
no turn would give. T5 teleports the observer to one object facing another and asks
where a third lies; the egocentric answer (from the real camera) is the preferred
hard distractor.
"""

from __future__ import annotations

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
    the,
)
from perspecta.suites.pcsr.perception import (
    BBOX_MARGIN,
    DIST_MARGIN,
    SECTOR_TEXT,
    SECTORS,
    _clear_winner,
)
from perspecta.suites.registry import task
from perspecta.world.oracle import (
    camera_distance,
    camera_yaw,
    move_camera,
    observer_relation,
    observer_side,
    panorama_longitude,
    rank_by_distance,
    wrap180,
)
from perspecta.world.scene import Camera, Scene, SceneObject

CHAIN_GAP = 0.4  # metres between successive observer distances in a transitive chain
TURNS = (45, 90, 135, 180)
TARGETS = {"front": 0.0, "right": 90.0, "left": -90.0, "behind": 180.0}
TARGET_TEXT = {
    "front": "straight in front of you",
    "right": "directly on your right",
    "left": "directly on your left",
    "behind": "directly behind you",
}
AIM_TOL = 20.0  # the answer's centre lies within this many degrees of the asked direction
ANGLE_MARGIN = 15.0  # degrees to the nearest object of another category
SIDE_MARGIN = 20.0  # T5 left/right: degrees kept clear of straight ahead / behind
SECTOR_MARGIN = 12.0  # T5 sectors: degrees kept clear of the 45/135 boundaries

# ------------------------------------------------------------------ T3 chains


def transitive_answer(scene: Scene, chain: list[str], relation: str, asked: str) -> str:
    """Check both premises against the layout and answer which end is ``asked`` (closer/farther)."""
    cam = scene.camera("pano")
    d = [camera_distance(by_category(scene, c), cam) for c in chain]
    sign = 1 if relation == "closer" else -1
    if not (sign * (d[1] - d[0]) > 0 and sign * (d[2] - d[1]) > 0):
        raise ValueError(f"scene {scene.scene_id}: a premise of the chain {chain} is false")
    first_wins = (d[0] < d[2]) == (asked == "closer")
    return display(chain[0] if first_wins else chain[2])


def _rank(scene: Scene, anchor: SceneObject, mode: str, metric: str, skip: set[str]) -> list[tuple[SceneObject, float]]:
    ranked = [(o, d) for o, d in rank_by_distance(anchor, scene.objects, mode=metric) if o.id not in skip]  # type: ignore[arg-type]
    return ranked if mode == "closest" else ranked[::-1]


def compositional_answer(scene: Scene, start: str, mode: str) -> tuple[SceneObject, SceneObject]:
    """(hop-1 object, hop-2 object): the object closest to ``start``, then the object
    ``mode`` (closest/farthest) from it, ``start`` excluded. Centre distances."""
    x = by_category(scene, start)
    y = _rank(scene, x, "closest", "center", set())[0][0]
    z = _rank(scene, y, mode, "center", {x.id})[0][0]
    return y, z


def _build_transitive(ctx: TaskContext, pano: Pano) -> Question | None:
    cam = pano.camera
    objs = sorted(pano.referable(), key=lambda o: camera_distance(o, cam))
    if len(objs) < 3:
        return None
    for _ in range(30):
        idx = sorted(int(i) for i in ctx.rng.choice(len(objs), size=3, replace=False))
        trio = [objs[i] for i in idx]
        d = [camera_distance(o, cam) for o in trio]
        if d[1] - d[0] < CHAIN_GAP or d[2] - d[1] < CHAIN_GAP:
            continue
        relation = "closer" if ctx.rng.random() < 0.5 else "farther"
        chain = [o.category for o in (trio if relation == "closer" else trio[::-1])]
        asked = "closer" if ctx.rng.random() < 0.5 else "farther"
        ans = transitive_answer(pano.scene, chain, relation, asked)
        other = display(chain[2]) if ans == display(chain[0]) else display(chain[0])
        word = "closer to" if relation == "closer" else "farther from"
        ask = "closer to" if asked == "closer" else "farther from"
        return Question(
            subtype="transitive",
            body=(
                f"From where you stand, {the(chain[0])} is {word} you than {the(chain[1])}, and "
                f"{the(chain[1])} is {word} you than {the(chain[2])}. Which is {ask} you: "
                f"{the(chain[0])} or {the(chain[2])}?"
            ),
            answer=ans,
            aliases=aliases_for(by_category(pano.scene, chain[0] if ans == display(chain[0]) else chain[2]).category),
            distractors=[other, display(chain[1])],
            metadata={"chain": chain, "relation": relation, "asked": asked, "observer_distances": [round(x, 4) for x in d]},
            candidates=[display(c) for c in chain],
        )
    return None


def _build_compositional(ctx: TaskContext, pano: Pano) -> Question | None:
    scene = pano.scene
    starts = pano.referable()
    names = sorted({display(o.category) for o in scene.objects if pano.visible(o)})
    for i in ctx.rng.permutation(len(starts)):
        x = starts[int(i)]
        hop1 = _clear_winner(_rank(scene, x, "closest", "center", set()), DIST_MARGIN)
        hop1_box = _clear_winner(_rank(scene, x, "closest", "bbox", set()), BBOX_MARGIN)
        if hop1 is None or hop1_box is None or hop1.id != hop1_box.id or not pano.visible(hop1):
            continue
        mode = "farthest" if ctx.rng.random() < 0.5 else "closest"
        centre = _rank(scene, hop1, mode, "center", {x.id})
        z = _clear_winner(centre, DIST_MARGIN)
        z_box = _clear_winner(_rank(scene, hop1, mode, "bbox", {x.id}), BBOX_MARGIN)
        if z is None or z_box is None or z.category != z_box.category or not pano.visible(z):
            continue
        if z.category in (x.category, hop1.category):
            continue
        skip_hop1 = _rank(scene, x, mode, "center", {hop1.id})[0][0]  # hop 2 applied to X
        runner = next((o for o, _ in centre if o.category != z.category and pano.visible(o)), None)
        hard = [display(hop1.category), display(skip_hop1.category)] + ([display(runner.category)] if runner else [])
        distractors = fill_distractors(ctx.rng, display(z.category), hard, [n for n in names if n != display(x.category)])
        if distractors is None:
            continue
        word = "closest to" if mode == "closest" else "farthest from"
        return Question(
            subtype="compositional",
            body=(
                f"First find the object that is closest to {the(x.category)}. Then, not counting "
                f"{the(x.category)}, which object is {word} that object? Use 3D distances between "
                "object centres and answer with the object's name."
            ),
            answer=display(z.category),
            aliases=aliases_for(z.category),
            distractors=distractors,
            metadata={
                "start": x.category,
                "mode": mode,
                "hop1": hop1.category,
                "hop1_id": hop1.id,
                "answer_id": z.id,
                "skip_hop1": skip_hop1.category,
                "runner_up": runner.category if runner else None,
            },
            candidates=[display(o.category) for o in scene.objects],
        )
    return None


def _build_chain(ctx: TaskContext, pano: Pano) -> Question | None:
    if ctx.rng.random() < 0.5:
        return _build_transitive(ctx, pano)
    return _build_compositional(ctx, pano)


def derive_chain(item: Item, scenes: dict[str, Scene]) -> str:
    m, scene = item.metadata, scenes[item.scene_id]
    if item.subtype == "transitive":
        return answer_for(item, transitive_answer(scene, m["chain"], m["relation"], m["asked"]))
    _, z = compositional_answer(scene, m["start"], m["mode"])
    return answer_for(item, display(z.category))


@task(SUITE, "compositional_chains", derive=derive_chain, description="T3: transitive and multi-hop relation chains")
def generate_chains(ctx: TaskContext) -> list[Item]:
    return build_unit(ctx, "compositional_chains", _build_chain)


# ------------------------------------------------------------- T4 egocentric rotation


def turned(camera: Camera, turn: int, direction: str) -> Camera:
    """The panorama camera after turning ``turn`` degrees clockwise (right) or counter-clockwise."""
    return move_camera(camera, turn=float(turn if direction == "clockwise" else -turn))


def aimed(objects: list[SceneObject], camera: Camera, longitude: float) -> list[tuple[float, SceneObject]]:
    """Objects by angular distance of their centre from ``longitude`` in ``camera``'s panorama."""
    out = [(abs(float(wrap180(panorama_longitude(o, camera) - longitude))), o) for o in objects]
    return sorted(out, key=lambda t: (t[0], t[1].id))


def rotation_answer(scene: Scene, turn: int, direction: str, target: str) -> str:
    cam = turned(scene.camera("pano"), turn, direction)
    return display(aimed(scene.objects, cam, TARGETS[target])[0][1].category)


def _build_rotation(ctx: TaskContext, pano: Pano) -> Question | None:
    scene, cam = pano.scene, pano.camera
    names = sorted({display(o.category) for o in scene.objects if pano.visible(o)})
    combos = [(t, d, g) for t in TURNS for d in ("clockwise", "counter-clockwise") for g in TARGETS]
    for i in ctx.rng.permutation(len(combos)):
        turn, direction, target = combos[int(i)]
        if turn == 180 and direction == "counter-clockwise":
            continue  # the same as clockwise; asked once
        ranked = aimed(scene.objects, turned(cam, turn, direction), TARGETS[target])
        gap0, ans = ranked[0]
        rival = next((g for g, o in ranked if o.category != ans.category), 360.0)
        if gap0 > AIM_TOL or rival - gap0 < ANGLE_MARGIN or not pano.visible(ans):
            continue
        other_dir = "counter-clockwise" if direction == "clockwise" else "clockwise"
        hard: list[str] = []
        for c in (turned(cam, turn, other_dir), cam):
            best = next((o for _, o in aimed(scene.objects, c, TARGETS[target]) if pano.visible(o)), None)
            if best is not None:
                hard.append(display(best.category))
        distractors = fill_distractors(ctx.rng, display(ans.category), hard, names)
        if distractors is None:
            continue
        how = "turn around (180 degrees)" if turn == 180 else f"turn {turn} degrees {direction} ({'to your right' if direction == 'clockwise' else 'to your left'})"
        return Question(
            subtype=f"rotate_{target}",
            body=(
                f"Imagine that, without moving from your spot, you {how}. Which object is then "
                f"{TARGET_TEXT[target]}? Answer with the object's name."
            ),
            answer=display(ans.category),
            aliases=aliases_for(ans.category),
            distractors=distractors,
            metadata={
                "turn": turn,
                "direction": direction,
                "target": target,
                "answer_id": ans.id,
                "answer_offset_deg": round(gap0, 3),
                "rival_offset_deg": round(rival, 3),
                "answer_longitude": round(panorama_longitude(ans, cam), 3),
            },
            candidates=[display(o.category) for o in scene.objects],
        )
    return None


def derive_rotation(item: Item, scenes: dict[str, Scene]) -> str:
    m = item.metadata
    return answer_for(item, rotation_answer(scenes[item.scene_id], m["turn"], m["direction"], m["target"]))


@task(SUITE, "egocentric_rotation", derive=derive_rotation, description="T4: what is ahead/left/right/behind after a turn")
def generate_rotation(ctx: TaskContext) -> list[Item]:
    return build_unit(ctx, "egocentric_rotation", _build_rotation)


# --------------------------------------------------------- T5 perspective re-anchoring


def reanchor_answer(scene: Scene, subtype: str, at: str, facing: str, target: str) -> str | None:
    x, y, z = (by_category(scene, c) for c in (at, facing, target))
    pos = x.center()[:2]
    if subtype == "left_right":
        return observer_side(pos, y.center()[:2], z, margin=SIDE_MARGIN)
    return observer_relation(pos, y.center()[:2], z, margin=SECTOR_MARGIN)


def _egocentric(scene: Scene, cam: Camera, obj: SceneObject) -> str | None:
    return observer_relation(cam.position, camera_yaw(cam), obj, margin=0.0)


def _build_reanchor(ctx: TaskContext, pano: Pano) -> Question | None:
    scene, cam = pano.scene, pano.camera
    objs = pano.referable()
    subtype = "left_right" if ctx.rng.random() < 0.5 else "sector"
    trios = [(a, b, c) for a in objs for b in objs for c in objs if len({a.id, b.id, c.id}) == 3]
    prefer_conflict = ctx.rng.random() < 0.7
    fallback: Question | None = None
    for i in ctx.rng.permutation(len(trios)):
        x, y, z = trios[int(i)]
        if np.linalg.norm(x.center()[:2] - y.center()[:2]) < 0.8 or np.linalg.norm(x.center()[:2] - z.center()[:2]) < 0.6:
            continue
        ans = reanchor_answer(scene, subtype, x.category, y.category, z.category)
        if ans is None:
            continue
        ego = _egocentric(scene, cam, z)
        if subtype == "left_right":
            options = ["left", "right"]
            body_tail = "Is it on your left or on your right? Answer left or right."
            target_desc = f"{the(z.category)}"
        else:
            options = list(SECTORS)
            body_tail = "Is it in front of you, behind you, on your left or on your right? Answer front, behind, left or right."
            target_desc = f"{the(z.category)}"
        wrong = [o for o in options if o != ans]
        if ego in wrong:
            wrong.remove(ego)
            wrong.insert(0, ego)
        q = Question(
            subtype=subtype,
            body=(
                f"Imagine you are standing at {the(x.category)}, facing {the(y.category)}. Think about "
                f"where {target_desc} would be from that position. {body_tail}"
            ),
            answer=ans,
            aliases=[SECTOR_TEXT[ans], f"to the {ans}" if ans in ("left", "right") else SECTOR_TEXT[ans]],
            distractors=wrong,
            metadata={
                "at": x.category,
                "facing": y.category,
                "target": z.category,
                "egocentric_answer": ego,
                "conflicts_with_egocentric": ego != ans,
                "frame_of_reference": "re-anchored observer",
            },
            candidates=options,
        )
        q.aliases = list(dict.fromkeys(q.aliases))
        if ego != ans or not prefer_conflict:
            return q
        fallback = fallback or q
    return fallback


def derive_reanchor(item: Item, scenes: dict[str, Scene]) -> str:
    m = item.metadata
    ans = reanchor_answer(scenes[item.scene_id], item.subtype, m["at"], m["facing"], m["target"])
    if ans is None:
        raise ValueError(f"item {item.id}: the target is within the margin of a boundary")
    return answer_for(item, ans)


@task(SUITE, "perspective_reanchoring", derive=derive_reanchor, description="T5: left/right/front/behind from another standpoint")
def generate_reanchor(ctx: TaskContext) -> list[Item]:
    return build_unit(ctx, "perspective_reanchoring", _build_reanchor)
