"""PCSR advanced reasoning, T3-T5: compositional chains, egocentric rotation and
perspective re-anchoring.

T3 transitive chains state two true premises about distance from the observer and ask
about the ends; they are answerable from the text by design and are marked
``metadata["control"] = "text_only"`` (scored apart). Compositional chains walk
``chain_hops`` distance hops from a named object ("go to the object closest to it,
then to the one farthest from that, ..."), every hop won by a clear margin over every
other object; only the start is named, so the walk needs the picture. Distractors are
the walk's own stops, the last hop's runner-up and the end of the walk with a hop
skipped. T4 turns the observer on the spot (``move_camera``, clockwise = right) and
asks what is then ahead / left / right / behind; the distractors are what the opposite
turn, no turn and a 45-degree error would give. T5 teleports the observer to one
object facing another and asks where a third lies; the egocentric answer (from the
real camera) is the preferred hard distractor, and the imagined facing is turned at
least ``min_reanchor_turn_deg`` from the real one. Answers are balanced per subtype.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perspecta.dataset.item import Item
from perspecta.suites.context import TaskContext
from perspecta.suites.facts import Facts
from perspecta.suites.pcsr.common import (
    distinct_by_name,
    SUITE,
    AnswerTable,
    Pano,
    Question,
    aliases_for,
    answer_for,
    answer_target,
    balanced,
    build_unit,
    by_category,
    display,
    fill_distractors,
    room_type_of,
    the,
)
from perspecta.suites.pcsr.perception import (
    hop_forms,
    clear_walk,
    compositional_answer,
    SECTOR_BIN,
    SECTOR_TEXT,
    SECTORS,
    clear_winner,
    distance_margins,
    winner_record,
)
from perspecta.suites.registry import task
from perspecta.world.oracle import (
    bearing,
    camera_distance,
    camera_yaw,
    heading_of,
    move_camera,
    observer_relation,
    observer_side,
    panorama_longitude,
    rank_by_distance,
    wrap180,
)
from perspecta.world.readability import bin_margin
from perspecta.world.scene import Camera, Scene, SceneObject

CHAIN_GAP = 0.4  # metres between successive observer distances in a transitive chain
TARGETS = {"front": 0.0, "right": 90.0, "left": -90.0, "behind": 180.0}
TARGET_TEXT = {
    "front": "straight in front of you",
    "right": "directly on your right",
    "left": "directly on your left",
    "behind": "directly behind you",
}

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


TRANSITIVE_PLAN = (
    ("transitive", "closer", "closer"),
    ("transitive", "closer", "farther"),
    ("transitive", "farther", "closer"),
    ("transitive", "farther", "farther"),
)


def chain_plan(share: float) -> tuple[tuple[str, str, str], ...]:
    """One block of T3 units: the four transitive cases once each and as many compositional
    walks as make ``share`` of the block (all walks at 1). Transitive chains are the
    paper's text-only control, which any reader answers, so the share of walks, the form
    that needs the picture, sets how much of T3 a glance can settle."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"compositional_share must lie in [0, 1], got {share}")
    if share >= 1.0:
        return (("compositional", "", ""),)
    return TRANSITIVE_PLAN + (("compositional", "", ""),) * round(4 * share / (1.0 - share))


def _build_transitive(ctx: TaskContext, pano: Pano, relation: str, asked: str) -> Question | None:
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
        chain = [o.category for o in (trio if relation == "closer" else trio[::-1])]
        ans = transitive_answer(pano.scene, chain, relation, asked)
        record = pano.record({display(o.category): o for o in trio})
        if record is None:
            continue
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
            metadata={**ChainFacts(chain=chain, relation=relation, asked=asked).to_metadata(),
                      "observer_distances": [round(x, 4) for x in d], "control": "text_only",
                      "answer_position": "first" if ans == display(chain[0]) else "last",
                      "readability": record},
            candidates=[display(c) for c in chain],
        )
    return None


def _build_compositional(ctx: TaskContext, pano: Pano) -> Question | None:
    scene = pano.scene
    hops = int(ctx.knob("chain_hops", {"easy": 2, "standard": 2, "hard": 3}))
    margin, box_margin = distance_margins(ctx)
    starts = pano.referable()
    # every (start, hop sequence) combination, in a random order: a walk whose hops all
    # have clear winners is rare in a cluttered room, so look at all of them
    walks = [[("closest", "farthest")[(k >> j) & 1] for j in range(hops)] for k in range(2 ** hops)]
    tries = [(s, p) for s in range(len(starts)) for p in range(len(walks))]
    for i in ctx.rng.permutation(len(tries)):
        x = starts[tries[int(i)][0]]
        modes = walks[tries[int(i)][1]]
        walked = clear_walk(pano, x, modes, margin, box_margin)
        if walked is None:
            continue
        path, lead, last = walked
        z = path[-1]
        if z.category == x.category or not pano.unique(z):
            continue
        # a walk with its second-to-last hop skipped: the slip of losing count of the hops
        skipped = compositional_answer(scene, x.category, modes[:-2] + modes[-1:])[-1] if hops >= 2 else None
        runner = next((o for o, _ in last[1:] if o.category != z.category and pano.visible(o)), None)
        hard_objs = [o for o in [runner, *path[-2::-1], skipped] if o is not None and pano.visible(o)]
        pool_objs = sorted((o for o in scene.objects if pano.visible(o)), key=lambda o: o.id)
        picked = distinct_by_name(hard_objs + [pool_objs[int(k)] for k in ctx.rng.permutation(len(pool_objs))],
                                  (z.category, x.category), scene=scene)
        if picked is None:
            continue
        named = {display(x.category): x, display(z.category): z, **picked}
        named.update({f"stop {k + 1}": o for k, o in enumerate(path[:-1])})
        record = pano.record(named, winner_margin=winner_record(lead, margin))
        if record is None:
            continue
        rel = {"closest": "closest to", "farthest": "farthest from"}
        steps = " ".join(
            f"First go to the object {rel[m]} it." if k == 0 else f"Then go to the object {rel[m]} that one."
            for k, m in enumerate(modes)
        )
        return Question(
            subtype="compositional",
            body=(
                f"Start at {the(x.category)}. {steps} Never go back to an object you have already "
                "visited (the start included). Which object do you end at? Use 3D distances between "
                "object centres and answer with the object's name."
            ),
            answer=display(z.category),
            aliases=aliases_for(z.category),
            distractors=list(picked),
            metadata={
                **WalkFacts(start=x.category, modes=modes).to_metadata(),
                "hops": hops,
                "path": [o.category for o in path],
                "path_ids": [o.id for o in path],
                "answer_id": z.id,
                "skip_hop": skipped.category if skipped is not None else None,
                "runner_up": runner.category if runner else None,
                "margins_m": {"center": margin, "bbox": box_margin},
                "readability": record,
            },
            candidates=[display(o.category) for o in scene.objects],
        )
    return None


def _build_chain(ctx: TaskContext, pano: Pano) -> Question | None:
    share = float(ctx.knob("compositional_share", {"easy": 0.5, "standard": 0.75, "hard": 0.8}))
    subtype, a, b = balanced(ctx, "subtype_answer", chain_plan(share))
    if subtype == "transitive":
        return _build_transitive(ctx, pano, a, b)
    return _build_compositional(ctx, pano)


@dataclass(frozen=True)
class ChainFacts(Facts):
    """A transitive chain: three categories, the premises' relation and the end asked for."""

    chain: list[str]
    relation: str
    asked: str


@dataclass(frozen=True)
class WalkFacts(Facts):
    """A compositional walk: the start category and each hop's closest/farthest mode."""

    start: str
    modes: list[str]


def derive_chain(item: Item, scenes: dict[str, Scene]) -> str:
    scene = scenes[item.scene_id]
    if item.subtype == "transitive":
        c = ChainFacts.from_item(item)
        return answer_for(item, transitive_answer(scene, c.chain, c.relation, c.asked))
    w = WalkFacts.from_item(item)
    return answer_for(item, display(compositional_answer(scene, w.start, w.modes)[-1].category))


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


# what T4 asks for, per room type: the categories a turn lands on cleanly (no rival,
# no look-alike in the room) in at least ~a sixth of sampled rooms of that type, for
# every turn target (see answer_target); offices have too few such categories
ROTATION_ANSWERS: AnswerTable = {
    "bathroom": ("sink", "plant", "cabinet", "toilet", "washing_machine", "box", "bathtub"),
    "bedroom": ("wardrobe", "lamp", "bed", "plant"),
    "kitchen": ("cabinet", "refrigerator", "stove", "sink", "plant"),
    "living_room": ("plant", "sofa", "tv"),
}


def _build_rotation(ctx: TaskContext, pano: Pano) -> Question | None:
    scene, cam = pano.scene, pano.camera
    target = str(balanced(ctx, "target", list(TARGETS)))
    room_type, want = answer_target(ctx, ROTATION_ANSWERS)
    if room_type_of(scene) != room_type or not any(o.category == want for o in scene.objects):
        return None
    max_turn = int(ctx.knob("max_turn_deg", {"easy": 90, "standard": 270, "hard": 270}))
    aim_tol = float(ctx.knob("aim_tolerance_deg", {"easy": 15.0, "standard": 22.0, "hard": 25.0}))
    rival_margin = float(ctx.knob("rival_margin_deg", {"easy": 20.0, "standard": 13.0, "hard": 12.0}))
    turns = list(range(45, max_turn + 1, 45))
    combos = [(t, d) for t in turns for d in ("clockwise", "counter-clockwise") if not (t == 180 and d == "counter-clockwise")]
    for i in ctx.rng.permutation(len(combos)):
        turn, direction = combos[int(i)]
        ranked = aimed(scene.objects, turned(cam, turn, direction), TARGETS[target])
        gap0, ans = ranked[0]
        rival = ranked[1][0] if len(ranked) > 1 else 360.0  # every other object, same category included
        # the answer may have a same-category twin elsewhere (a second plant): the question
        # names no object, and the rival margin holds against that twin too, so exactly one
        # piece is in the asked direction; so may the distractors (same rule as the answer)
        if ans.category != want or gap0 > aim_tol or rival - gap0 < rival_margin or not pano.visible(ans):
            continue
        other_dir = "counter-clockwise" if direction == "clockwise" else "clockwise"
        slips = [turned(cam, turn, other_dir), cam, turned(cam, turn + 45, direction), turned(cam, turn - 45, direction)]
        hard_objs = [next((o for _, o in aimed(scene.objects, c, TARGETS[target]) if pano.visible(o)), None) for c in slips]
        pool = sorted((o for o in scene.objects if pano.visible(o)), key=lambda o: o.id)
        picked = distinct_by_name([h for h in hard_objs if h is not None]
                                  + [pool[int(k)] for k in ctx.rng.permutation(len(pool))], (ans.category,), scene=None)
        if picked is None:
            continue
        record = pano.record({display(ans.category): ans, **picked},
                             winner_margin=winner_record(rival - gap0, rival_margin, "deg"))
        if record is None:
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
            distractors=list(picked),
            metadata={
                **TurnFacts(turn=turn, direction=direction, target=target).to_metadata(),
                "answer_id": ans.id,
                "answer_offset_deg": round(gap0, 3),
                "rival_offset_deg": round(rival, 3),
                "answer_longitude": round(panorama_longitude(ans, cam), 3),
                "readability": record,
            },
            candidates=[display(o.category) for o in scene.objects],
        )
    return None


@dataclass(frozen=True)
class TurnFacts(Facts):
    """The observer's turn (degrees, direction) and which object it aims at (``TARGETS``)."""

    turn: int
    direction: str
    target: str


def derive_rotation(item: Item, scenes: dict[str, Scene]) -> str:
    t = TurnFacts.from_item(item)
    return answer_for(item, rotation_answer(scenes[item.scene_id], t.turn, t.direction, t.target))


@task(SUITE, "egocentric_rotation", derive=derive_rotation, description="T4: what is ahead/left/right/behind after a turn")
def generate_rotation(ctx: TaskContext) -> list[Item]:
    return build_unit(ctx, "egocentric_rotation", _build_rotation,
                      room_type=lambda c: answer_target(c, ROTATION_ANSWERS)[0])


# --------------------------------------------------------- T5 perspective re-anchoring


def reanchor_answer(scene: Scene, subtype: str, at: str, facing: str, target: str, margin: float = 0.0,
                    facing_hop: str = "") -> str | None:
    """Stand at ``at`` facing ``facing`` (or, with ``facing_hop``, facing the object
    closest to / farthest from ``at``, found by centre distance): where is ``target``?"""
    x, z = by_category(scene, at), by_category(scene, target)
    y = compositional_answer(scene, at, [facing_hop])[0] if facing_hop else by_category(scene, facing)
    pos = x.center()[:2]
    if subtype == "left_right":
        return observer_side(pos, y.center()[:2], z, margin=margin)
    return observer_relation(pos, y.center()[:2], z, margin=margin)


def _egocentric(scene: Scene, cam: Camera, obj: SceneObject) -> str | None:
    return observer_relation(cam.position, camera_yaw(cam), obj, margin=0.0)


REANCHOR_PLAN = (
    *(("left_right", s) for s in ("left", "right", "left", "right")),
    *(("sector", s) for s in SECTORS),
)


def _build_reanchor(ctx: TaskContext, pano: Pano) -> Question | None:
    scene, cam = pano.scene, pano.camera
    objs = pano.referable()
    subtype, want = balanced(ctx, "subtype_answer", REANCHOR_PLAN)
    min_turn = float(ctx.knob("min_reanchor_turn_deg", {"easy": 0.0, "standard": 90.0, "hard": 100.0}))
    if subtype == "left_right":
        margin = float(ctx.knob("side_margin_deg", {"easy": 30.0, "standard": 17.0, "hard": 15.0}))
    else:  # 90-degree sectors: the readability contract keeps a quarter bin from each edge
        margin = float(ctx.knob("sector_margin_deg", {"easy": 30.0, "standard": 22.5, "hard": 22.5}))
    form = hop_forms(ctx, "form", "reanchor_hop_share", {"easy": 0.0, "standard": 0.5, "hard": 0.75})
    hop_of: dict[str, str] = {}
    if form == "two_hop":
        # the facing object is not named but found by a distance hop from the standpoint
        # ("facing the object farthest from the sofa"): a clear winner over every object
        d_margin, d_box = distance_margins(ctx)
        trios = []
        for a in objs:
            for mode in ("closest", "farthest"):
                walked = clear_walk(pano, a, [mode], d_margin, d_box)
                if walked is None or walked[0][0].category == a.category:
                    continue
                b = walked[0][0]
                hop_of[f"{a.id}>{b.id}"] = mode
                trios += [(a, b, c) for c in objs if c.id not in (a.id, b.id) and c.category != b.category]
    else:
        trios = [(a, b, c) for a in objs for b in objs for c in objs if len({a.id, b.id, c.id}) == 3]
    prefer_conflict = ctx.rng.random() < 0.7
    fallback: Question | None = None
    for i in ctx.rng.permutation(len(trios)):
        x, y, z = trios[int(i)]
        if np.linalg.norm(x.center()[:2] - y.center()[:2]) < 0.8 or np.linalg.norm(x.center()[:2] - z.center()[:2]) < 0.6:
            continue
        facing = heading_of(y.center()[:2] - x.center()[:2])
        reanchor_turn = abs(float(wrap180(facing - camera_yaw(cam))))
        if reanchor_turn < min_turn:
            continue
        hop = hop_of.get(f"{x.id}>{y.id}", "")
        ans = reanchor_answer(scene, subtype, x.category, y.category, z.category, margin, facing_hop=hop)
        if ans != want:
            continue
        angle = bearing(x.center()[:2], facing, z)
        named = {display(o.category): o for o in (x, z)}
        named["facing" if hop else display(y.category)] = y
        if subtype == "left_right":
            record = pano.record(named, winner_margin=winner_record(min(abs(angle), 180.0 - abs(angle)), margin, "deg"))
            options = ["left", "right"]
            body_tail = "Is it on your left or on your right? Answer left or right."
        else:
            record = pano.record(named, bin_margin=bin_margin(angle, SECTOR_BIN, offset_deg=45.0))
            options = list(SECTORS)
            body_tail = "Is it in front of you, behind you, on your left or on your right? Answer front, behind, left or right."
        if record is None:
            continue
        ego = _egocentric(scene, cam, z)
        wrong = [o for o in options if o != ans]
        if ego in wrong:
            wrong.remove(ego)
            wrong.insert(0, ego)
        q = Question(
            subtype=subtype,
            body=(
                f"Imagine you are standing at {the(x.category)}, facing "
                f"{the(y.category) if not hop else 'the object ' + ('closest to' if hop == 'closest' else 'farthest from') + ' it (3D distance between object centres)'}. Think about "
                f"where {the(z.category)} would be from that position. {body_tail}"
            ),
            answer=ans,
            aliases=list(dict.fromkeys([SECTOR_TEXT[ans], f"to the {ans}" if ans in ("left", "right") else SECTOR_TEXT[ans]])),
            distractors=wrong,
            metadata={
                "form": form,
                **ReanchorFacts(at=x.category, facing=y.category, target=z.category, margin_deg=margin,
                                facing_hop=hop).to_metadata(
                    between={"target": {"egocentric_answer": ego, "conflicts_with_egocentric": ego != ans,
                                        "frame_of_reference": "re-anchored observer",
                                        "reanchor_turn_deg": round(reanchor_turn, 3)}}),
                "readability": record,
            },
            candidates=options,
        )
        if ego != ans or not prefer_conflict:
            return q
        fallback = fallback or q
    return fallback


@dataclass(frozen=True)
class ReanchorFacts(Facts):
    """Stand at ``at``, face ``facing``: where is ``target``? (categories)"""

    at: str
    facing: str
    target: str
    margin_deg: float = 0.0  # kept from every sector boundary; absent from datasets made before the knob
    facing_hop: str = ""  # two-hop form: facing the object closest to / farthest from ``at``


def derive_reanchor(item: Item, scenes: dict[str, Scene]) -> str:
    r = ReanchorFacts.from_item(item)
    ans = reanchor_answer(scenes[item.scene_id], item.subtype, r.at, r.facing, r.target, r.margin_deg, r.facing_hop)
    if ans is None:
        raise ValueError(f"item {item.id}: the target is within the margin of a boundary")
    return answer_for(item, ans)


@task(SUITE, "perspective_reanchoring", derive=derive_reanchor, description="T5: left/right/front/behind from another standpoint")
def generate_reanchor(ctx: TaskContext) -> list[Item]:
    return build_unit(ctx, "perspective_reanchoring", _build_reanchor)
