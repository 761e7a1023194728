"""PCSR foundational perception, T0-T2: counting, relative distance, relative direction.

T0 counts 3D instances (every instance must pass the readability contract, so each can
be seen and counted). The unit draws its (count, room type, category) first, evenly over
0..``count_max`` x :func:`count_cells` (:func:`~perspecta.suites.pcsr.common.balanced`;
zero asks about a category that belongs in that type of room but is absent), so
neither the room type nor the category says anything about the count; then a room with
exactly that many is found. The MCQ options are a uniformly drawn 4-subset of the same
range that contains the answer, so neither an option's value nor its rank among the
options says which one is right. T1 asks for the closest/farthest object to a named one;
the answer's (room type, category) is drawn first (``answer_target``), so the room type
does not predict it; the winner clears every other object (same category included) by a margin on centre
AND box-surface distances, and the distractors are the next objects of the same ranking,
so the options are the four most plausible answers, not the winner plus random ones.
T2 asks left/right between two objects (short arc, away from the seam) or which quarter
around the observer an object is in; each answer is equally frequent per subtype.
"""

from __future__ import annotations

from dataclasses import dataclass

from perspecta.dataset.item import Item
from perspecta.suites.context import TaskContext
from perspecta.suites.facts import Facts
from perspecta.suites.pcsr.common import (
    MAX_ROOM_TRIES,
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
    confusable,
    display,
    distinct_by_name,
    room_type_of,
    the,
)
from perspecta.suites.registry import task
from perspecta.world.oracle import (
    bearing,
    camera_yaw,
    left_right,
    observer_relation,
    observer_side,
    panorama_longitude,
    rank_by_distance,
    wrap180,
)
from perspecta.world.readability import bin_margin
from perspecta.world.scene import Camera, Scene, SceneObject

DIST_MARGIN = 0.4  # metres: the margin derive-side checks assume at least (old default)
BBOX_RATIO = 0.4  # the box-surface margin as a share of the centre-distance margin
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
SECTORS = ("front", "behind", "left", "right")
SECTOR_TEXT = {"front": "in front of you", "behind": "behind you", "left": "on your left", "right": "on your right"}
SECTOR_BIN = 90.0  # sectors are 90-degree bins with edges at +-45 and +-135


def plural(category: str) -> str:
    name = display(category)
    if name == "person":
        return "people"
    if name.endswith(("s", "x", "ch", "sh")):
        return name + "es"
    return name + "s"


def number_aliases(n: int) -> list[str]:
    return [NUMBER_WORDS[n]] if 0 <= n < len(NUMBER_WORDS) else []


def distance_margins(ctx: TaskContext) -> tuple[float, float]:
    """(centre, box-surface) clear-winner margins in metres for every distance comparison."""
    m = float(ctx.knob("distance_margin_m", {"easy": 0.5, "standard": 0.25, "hard": 0.2}))
    return m, round(m * BBOX_RATIO, 4)


def clear_winner(ranked: list[tuple[SceneObject, float]], margin: float) -> tuple[SceneObject, float] | None:
    """The first object and its lead, if it leads EVERY other object (same category
    included: two identical nightstands 9 mm apart are a tie a person cannot judge)."""
    if not ranked:
        return None
    first, d0 = ranked[0]
    if len(ranked) == 1:
        return first, float("inf")
    lead = abs(ranked[1][1] - d0)
    return (first, lead) if lead >= margin else None


def winner_record(value: float, minimum: float, unit: str = "m") -> dict[str, float | str]:
    return {"value": round(float(min(value, 1e6)), 4), "min": float(minimum), "unit": unit}


# ------------------------------------------------------------------------ T0 counting


def count_answer(scene: Scene, category: str) -> str:
    return str(sum(1 for o in scene.objects if o.category == category))


# What T0 counts, and where: per room type, the categories whose count a person reads
# off the panorama and that the room's plan lets range over 0..count_max with no
# must-have piece (:func:`count_cells` keeps, for a given count_max, those whose plan
# can). Every listed cell was measured on sampled rooms (standard and hard knobs) to
# pose each count 0..3 in enough rooms that a unit finds one. Within a cell every count
# is asked equally often, so neither the room type nor the category says anything about
# the count. Plants are counted only where the plan holds floor-standing ones
# (``FLOOR_PLANT``); a 30 cm orchid in a far corner would fail the contract, so with
# them "how many plants" would mean "how many big ones".
COUNT_CELLS: dict[str, tuple[str, ...]] = {
    "bedroom": ("wardrobe", "person"),
    "living_room": ("person", "armchair"),
    "kitchen": ("person", "cabinet"),
    "office": ("person", "bookcase", "plant"),
}
COUNT_CATEGORIES = tuple(sorted({c for cats in COUNT_CELLS.values() for c in cats}))
# What a person might count as the category, or mistake for it: while any of these is in
# the room, the category is not counted at all (zero included: a dresser or a bookcase
# passes for a cabinet, an armchair for a chair). The CONFUSABLE groups apply too.
COUNT_LOOKALIKES: dict[str, frozenset[str]] = {
    "cabinet": frozenset({"wardrobe", "bookcase", "dressing_table", "nightstand"}),
    "wardrobe": frozenset({"cabinet", "bookcase"}),
    "bookcase": frozenset({"cabinet", "wardrobe"}),
    "chair": frozenset({"armchair", "stool"}),
    "armchair": frozenset({"chair"}),
}
# Models that pass for a category (the sink on its cabinet base) are in
# common.LOOKALIKE_ASSETS and count through confusable().


def lookalike_in(scene: Scene, category: str) -> bool:
    """Whether ``scene`` holds something a person could count as ``category``."""
    present = {o.category for o in scene.objects}
    return bool(COUNT_LOOKALIKES.get(category, frozenset()) & present) or confusable(scene, category)


def zero_askable(scene: Scene, category: str) -> bool:
    """Whether "how many ``category``" may be asked with answer zero: the category belongs
    in this type of room (its plan) but is absent, and no look-alike stands in for it."""
    from perspecta.world.samplers import PLANS

    present = {o.category for o in scene.objects}
    plan = {s.category for s in PLANS.get(scene.room.room_type if scene.room else "", ())}
    return category in plan and category not in present and not lookalike_in(scene, category)


def plan_counts(room_type: str, category: str) -> frozenset[int]:
    """Every number of ``category`` pieces the ``room_type`` plan can place (fallbacks
    aside): an anchored slot draws its count per anchor (chairs per table), so with
    two to six chairs per optional table a room holds 0 or 2..6 chairs, never one."""
    from perspecta.world.samplers import PLANS

    def sums(values: frozenset[int], times: int) -> frozenset[int]:
        out = frozenset({0})
        for _ in range(times):
            out = frozenset(a + b for a in out for b in values)
        return out

    per_slot: dict[str, frozenset[int]] = {}
    total = frozenset({0})
    for slot in PLANS.get(room_type, ()):
        own = frozenset(range(slot.count[0], slot.count[1] + 1))
        if slot.anchor is not None:
            own = frozenset().union(*(sums(own, k) for k in per_slot.get(slot.anchor, frozenset({0}))))
        per_slot[slot.key] = own
        if slot.category == category:
            total = frozenset(a + b for a in total for b in own)
    return total


def count_cells(top: int) -> list[tuple[str, str]]:
    """The (room type, category) cells of ``COUNT_CELLS`` whose plans hold every count
    0..``top`` (so none is must-have and no count is ruled out by the room type)."""
    cells = [(rt, c) for rt in sorted(COUNT_CELLS) for c in COUNT_CELLS[rt] if set(range(top + 1)) <= plan_counts(rt, c)]
    if not cells:
        raise ValueError(f"count_max={top}: no room type's plan holds 0..{top} of any of {COUNT_CATEGORIES}")
    return cells


def count_plan(top: int) -> list[tuple[int, str, str]]:
    """Every (count, room type, category) T0 asks: 0..``top`` in each of :func:`count_cells`."""
    return [(v, rt, c) for v in range(top + 1) for rt, c in count_cells(top)]


def split_at_seam(pano: Pano, obj: SceneObject) -> bool:
    """Whether ``obj`` shows on both side edges of the panorama: cut in two by the seam
    behind the observer, it would look like two objects to a person counting. (The
    geometric stand-in has no mask; the rendered one decides.)"""
    if not pano.measured:
        return False
    k = next(i for i, o in enumerate(pano.scene.objects) if o is obj) + 1
    inst = pano.instance
    return bool((inst[:, 0] == k).any() and (inst[:, -1] == k).any())


def counted_instances(pano: Pano, category: str) -> list[SceneObject] | None:
    """The pieces of ``category`` a person would count, or None when the count is not
    readable: a look-alike is in the room, or a piece fails the contract or is cut by
    the seam."""
    if lookalike_in(pano.scene, category):
        return None
    instances = [o for o in pano.scene.objects if o.category == category]
    if not all(pano.visible(o) and not split_at_seam(pano, o) for o in instances):
        return None
    return instances


def count_max(ctx: TaskContext) -> int:
    return int(ctx.knob("count_max", {"easy": 2, "standard": 3, "hard": 3}))


# Counting toward the edge of subitizing: the "many" form counts 2..4 chairs in offices
# (the one cell whose plan reaches four chairs often enough: a desk or table with its
# chairs), all three values asked equally often and all three offered, so neither the
# value nor the option set says anything. Six was dropped in round 3 and five in round 6:
# an office with exactly five readable, unsplit chairs (chairs round a table hide each
# other in a panorama) was found in none of the 155 offices of one fresh seed's unit
# (97511, unit 2), and a unit that finds no room stops generation. Look-alikes
# (armchairs, stools) bar the room as in the "few" form.
COUNT_MANY_CELLS: dict[str, tuple[str, ...]] = {"office": ("chair",)}
COUNT_MANY_RANGE = (2, 4)
COUNT_MANY_SHARE = {"easy": 0.0, "standard": 0.5, "hard": 0.5}


def count_many_plan() -> list[tuple[int, str, str]]:
    lo, hi = COUNT_MANY_RANGE
    return [(v, rt, c) for v in range(lo, hi + 1) for rt in sorted(COUNT_MANY_CELLS) for c in COUNT_MANY_CELLS[rt]
            if set(range(lo, hi + 1)) <= plan_counts(rt, c)]


def _count_target(ctx: TaskContext) -> tuple[int, str, str, int, int]:
    """This unit's (count, room type, category, lowest and highest value offered); each
    form's plan is balanced over the units of that form (``form_ordinal``)."""
    many = hop_forms(ctx, "form", "count_many_share", COUNT_MANY_SHARE) == "two_hop"
    k = form_ordinal(ctx, "form", "count_many_share", COUNT_MANY_SHARE)
    if many:
        n, room_type, category = balanced(ctx, "count_cell", count_many_plan(), index=k)
        lo, hi = COUNT_MANY_RANGE
    else:
        n, room_type, category = balanced(ctx, "count_cell", count_plan(count_max(ctx)), index=k)
        lo, hi = 0, count_max(ctx)
    return int(n), str(room_type), str(category), lo, hi


def _build_count(ctx: TaskContext, pano: Pano) -> Question | None:
    scene = pano.scene
    n, room_type, category, low, top = _count_target(ctx)
    values = list(range(low, top + 1))
    if room_type_of(scene) != room_type:
        return None
    instances = counted_instances(pano, category)
    if instances is None or len(instances) != n or (n == 0 and not zero_askable(scene, category)):
        return None
    # options: a uniformly drawn 4-subset of 0..top holding the answer (all of it at
    # top 3), shown in a shuffled order, so no option's value or rank tells the answer
    others = [v for v in values if v != n]
    chosen = sorted((int(v) for v in ctx.rng.choice(others, size=min(3, len(others)), replace=False)),
                    key=lambda v: (abs(v - n), v))
    named = {f"{display(category)} #{i + 1}": o for i, o in enumerate(instances)}
    record = pano.record(named)
    if record is None:
        return None
    return Question(
        subtype="count",
        body=(
            f"How many {plural(category)} are in the room? Count whole objects, not image regions; "
            + ("the answer may be zero." if low == 0 else "count every one, however many.")
        ),
        answer=str(n),
        aliases=number_aliases(n),
        distractors=[str(v) for v in chosen],
        metadata={**CountFacts(category=category).to_metadata(), "count_3d": n, "count_range": [low, top],
                  "form": "many" if low > 0 else "few", "readability": record},
        candidates=[str(v) for v in range(11)],
    )


@dataclass(frozen=True)
class CountFacts(Facts):
    """T0's one fact: the counted category (the count itself is re-derived from the scene)."""

    category: str


def derive_count(item: Item, scenes: dict[str, Scene]) -> str:
    return answer_for(item, count_answer(scenes[item.scene_id], CountFacts.from_item(item).category))


@task(SUITE, "counting", derive=derive_count, description="T0: count 3D instances of a category")
def generate_counting(ctx: TaskContext) -> list[Item]:
    # three readable people (or armchairs) in one room is a rarer draw than most targets:
    # look twice as far before giving up (only rooms of the target's type are sampled)
    return build_unit(ctx, "counting", _build_count, room_type=lambda c: _count_target(c)[1],
                      max_tries=2 * MAX_ROOM_TRIES)


# ------------------------------------------------------------------ T1 relative distance


def _ranked(scene: Scene, anchor: SceneObject, mode: str, metric: str) -> list[tuple[SceneObject, float]]:
    ranked = rank_by_distance(anchor, scene.objects, mode=metric)  # type: ignore[arg-type]
    return ranked if mode == "closest" else ranked[::-1]


def distance_answer(scene: Scene, anchor_category: str, mode: str) -> str:
    """Category of the object nearest to (or farthest from) the anchor, by centre distance."""
    return display(_ranked(scene, by_category(scene, anchor_category), mode, "center")[0][0].category)


def ranked_options(
    pano: Pano, ranked: list[tuple[SceneObject, float]], exclude: set[str], n: int = 4
) -> list[SceneObject] | None:
    """The first ``n`` visible objects of distinct categories down ``ranked`` (the answer
    first, then the runners-up), skipping ``exclude`` categories; None if fewer. Answer and
    distractors alike may have same-category twins: clear_winner held every twin to the
    margin, so each option's name is right or wrong whichever piece a reader takes, and
    requiring single pieces of the distractors only (not of the answer) would make "the
    option whose category often has several pieces" the answer (measured: 48% on farthest)."""
    out: list[SceneObject] = []
    seen = set(exclude)
    for o, _ in ranked:
        if o.category in seen:
            continue
        seen.add(o.category)
        if not pano.visible(o):
            continue
        out.append(o)
        if len(out) == n:
            return out
    return None


def _rank(scene: Scene, anchor: SceneObject, mode: str, metric: str, skip: set[str]) -> list[tuple[SceneObject, float]]:
    ranked = [(o, d) for o, d in rank_by_distance(anchor, scene.objects, mode=metric) if o.id not in skip]  # type: ignore[arg-type]
    return ranked if mode == "closest" else ranked[::-1]


def compositional_answer(scene: Scene, start: str, modes: list[str]) -> list[SceneObject]:
    """The walk's stops after ``start``: each hop goes to the object closest to / farthest
    from the current one (``modes``), never back to a stop already visited. Centre distances."""
    cur = by_category(scene, start)
    visited = {cur.id}
    path: list[SceneObject] = []
    for mode in modes:
        cur = _rank(scene, cur, mode, "center", visited)[0][0]
        visited.add(cur.id)
        path.append(cur)
    return path


def clear_walk(
    pano: Pano, start: SceneObject, modes: list[str], margin: float, box_margin: float
) -> tuple[list[SceneObject], float, list[tuple[SceneObject, float]]] | None:
    """The walk's stops, its smallest winning lead and the last hop's ranking; None when a
    hop has no clear winner (centre and box surface agreeing) or lands on a hidden object."""
    scene = pano.scene
    cur, visited, path, lead = start, {start.id}, [], float("inf")
    last: list[tuple[SceneObject, float]] = []
    for mode in modes:
        last = _rank(scene, cur, mode, "center", visited)
        win = clear_winner(last, margin)
        win_box = clear_winner(_rank(scene, cur, mode, "bbox", visited), box_margin)
        if win is None or win_box is None or win[0] is not win_box[0] or not pano.visible(win[0]):
            return None
        lead = min(lead, win[1])
        cur = win[0]
        visited.add(cur.id)
        path.append(cur)
    return path, lead, last


# what T1 asks for, per mode and room type: the categories that win the comparison by
# a clear margin, with options that are no look-alikes, in at least ~an eighth of sampled
# rooms of that type (rarer ones would exhaust a unit's rooms; a type without enough
# such categories, e.g. an office whose cabinets and bookcases bar each other, is left
# out: a type with only one or two would let the room type tell the answer)
DISTANCE_ANSWERS: dict[str, AnswerTable] = {
    "closest": {
        "bathroom": ("toilet", "sink", "plant", "washing_machine", "cabinet"),
        "bedroom": ("wardrobe", "person", "desk"),
        "kitchen": ("cabinet", "refrigerator", "sink", "chair", "washing_machine", "plant", "person", "box"),
    },
    "farthest": {
        "bathroom": ("sink", "plant", "cabinet", "box"),
        "kitchen": ("cabinet", "plant", "box", "sink", "stove"),
    },
}


def _distance_target(ctx: TaskContext) -> tuple[str, tuple[str, str]]:
    """This unit's mode and (room type, answer category)."""
    mode = str(balanced(ctx, "mode", ["closest", "farthest"]))
    # every block of two units holds one unit of each mode, so index // 2 numbers the units
    # of this mode 0, 1, 2, ...: the answers are then balanced within each subtype, not only
    # over the task (balancing over all units left the farthest answers tied to unit % 4)
    return mode, answer_target(ctx, DISTANCE_ANSWERS[mode], f"answer_target_{mode}", index=ctx.index // 2)


def hop_forms(ctx: TaskContext, name: str, knob: str, presets: dict[str, float]) -> str:
    """This unit's form, "two_hop" or "one_hop": the knob's share of two-hop units, given
    exactly per block of four units (:func:`balanced`), so the form is fixed per unit."""
    return str(balanced(ctx, name, _form_values(ctx, knob, presets)))


def _form_values(ctx: TaskContext, knob: str, presets: dict[str, float]) -> list[str]:
    share = float(ctx.knob(knob, presets))
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"{knob} must lie in [0, 1], got {share}")
    k = round(4 * share)
    return ["two_hop"] * k + ["one_hop"] * (4 - k)


def form_ordinal(ctx: TaskContext, name: str, knob: str, presets: dict[str, float]) -> int:
    """How many earlier units got this unit's form: numbers the units of one form 0, 1, 2,
    ... so a plan drawn with ``balanced(..., index=ordinal)`` is exact within the form."""
    values = _form_values(ctx, knob, presets)
    mine = balanced(ctx, name, values)
    # every full block before this one gives the form exactly its multiplicity
    start = ctx.index - ctx.index % len(values)
    earlier = sum(1 for j in range(start, ctx.index) if balanced(ctx, name, values, index=j) == mine)
    return (start // len(values)) * values.count(mine) + earlier


def _build_distance(ctx: TaskContext, pano: Pano) -> Question | None:
    mode, (room_type, want) = _distance_target(ctx)
    if room_type_of(pano.scene) != room_type or not any(o.category == want for o in pano.scene.objects):
        return None
    form = hop_forms(ctx, "form", "distance_two_hop_share", {"easy": 0.0, "standard": 0.75, "hard": 1.0})
    if form == "two_hop":
        return _build_two_hop(ctx, pano, mode, want)
    return _build_one_hop(ctx, pano, mode, want)


def _build_one_hop(ctx: TaskContext, pano: Pano, mode: str, want: str) -> Question | None:
    scene = pano.scene
    margin, box_margin = distance_margins(ctx)
    anchors = pano.referable()
    for i in ctx.rng.permutation(len(anchors)):
        anchor = anchors[int(i)]
        centre = _ranked(scene, anchor, mode, "center")
        win = clear_winner(centre, margin)
        win_box = clear_winner(_ranked(scene, anchor, mode, "bbox"), box_margin)
        if win is None or win_box is None or win[0] is not win_box[0] or win[0].category != want:
            continue
        # the answer may have a same-category twin: clear_winner held it to the margin too
        if not pano.visible(win[0]):
            continue
        picked = ranked_options(pano, centre, {anchor.category})
        if picked is None or picked[0] is not win[0]:
            continue
        named = {display(anchor.category): anchor, **{display(o.category): o for o in picked}}
        record = pano.record(named, winner_margin=winner_record(win[1], margin))
        if record is None:
            continue
        answer = display(win[0].category)
        word = "closest to" if mode == "closest" else "farthest from"
        return Question(
            subtype=mode,
            body=(
                f"Which object in the room is {word} {the(anchor.category)}? Compare distances "
                "between object centres in 3D, and answer with the object's name."
            ),
            answer=answer,
            aliases=aliases_for(win[0].category),
            distractors=[display(o.category) for o in picked[1:]],
            metadata={
                **DistanceFacts(anchor=anchor.category, mode=mode).to_metadata(between={"anchor": {"anchor_id": anchor.id}}),
                "form": "one_hop",
                "answer_id": win[0].id,
                "runner_up": picked[1].category,
                "margins_m": {"center": margin, "bbox": box_margin, "bbox_lead": round(min(win_box[1], 1e6), 4)},
                "distances": {o.id: round(d, 4) for o, d in centre},
                "readability": record,
            },
            candidates=[display(o.category) for o in scene.objects],
        )
    return None


def _build_two_hop(ctx: TaskContext, pano: Pano, mode: str, want: str) -> Question | None:
    """Go from the anchor to its closest/farthest object, then ask for the object closest
    to / farthest from THAT one (``mode``). Both hops have clear winners over every object;
    the answer differs from what the one hop ``mode`` from the anchor gives (the glance's
    slip of skipping the first hop), and that one-hop answer, the intermediate stop and
    the last hop's runner-up are the MCQ's distractors."""
    scene = pano.scene
    margin, box_margin = distance_margins(ctx)
    anchors = pano.referable()
    tries = [(a, first) for a in anchors for first in ("closest", "farthest")]
    for i in ctx.rng.permutation(len(tries)):
        anchor, first = tries[int(i)]
        walked = clear_walk(pano, anchor, [first, mode], margin, box_margin)
        if walked is None:
            continue
        (stop, z), lead, last = walked
        if z.category != want or stop.category in (want, anchor.category):
            continue
        one_hop = _ranked(scene, anchor, mode, "center")[0][0]
        if one_hop.category in (want, anchor.category) or not pano.visible(one_hop):
            continue
        picked = ranked_options(pano, last, {anchor.category})
        if picked is None or picked[0] is not z:
            continue
        # the hard distractors first: the one-hop answer and the stop, then the runners-up
        hard = [one_hop, stop] + picked[1:]
        distractors = distinct_by_name(hard, (want, anchor.category), scene=None)
        if distractors is None:
            continue
        named = {display(anchor.category): anchor, display(z.category): z, **distractors}
        record = pano.record(named, winner_margin=winner_record(lead, margin))
        if record is None:
            continue
        w1 = "closest to" if first == "closest" else "farthest from"
        w2 = "closest to" if mode == "closest" else "farthest from"
        return Question(
            subtype=mode,
            body=(
                f"Start at {the(anchor.category)} and go to the object {w1} it. Which object, other than "
                f"{the(anchor.category)}, is {w2} that one? Compare distances between object centres in 3D, "
                "and answer with the object's name."
            ),
            answer=display(z.category),
            aliases=aliases_for(z.category),
            distractors=list(distractors),
            metadata={
                **DistanceFacts(anchor=anchor.category, mode=mode, via=first).to_metadata(
                    between={"anchor": {"anchor_id": anchor.id}}),
                "form": "two_hop",
                "answer_id": z.id,
                "stop": stop.category,
                "one_hop_answer": one_hop.category,
                "runner_up": picked[1].category,
                "margins_m": {"center": margin, "bbox": box_margin},
                "readability": record,
            },
            candidates=[display(o.category) for o in scene.objects],
        )
    return None


@dataclass(frozen=True)
class DistanceFacts(Facts):
    """The anchor category and whether its closest or farthest object is asked."""

    anchor: str
    mode: str
    via: str = ""  # two-hop form: the first hop's mode (absent from one-hop items)


def derive_distance(item: Item, scenes: dict[str, Scene]) -> str:
    d = DistanceFacts.from_item(item)
    scene = scenes[item.scene_id]
    if d.via:
        return answer_for(item, display(compositional_answer(scene, d.anchor, [d.via, d.mode])[-1].category))
    return answer_for(item, distance_answer(scene, d.anchor, d.mode))


@task(SUITE, "relative_distance", derive=derive_distance, description="T1: closest / farthest object to a named one")
def generate_distance(ctx: TaskContext) -> list[Item]:
    # a two-hop walk that ends on the unit's drawn target with a clear winner at both hops is
    # a rare draw in small rooms (a fresh seed found none in 73 bedrooms): look three times
    # as far before giving up (units that succeed earlier are unchanged)
    return build_unit(ctx, "relative_distance", _build_distance, room_type=lambda c: _distance_target(c)[1][0],
                      max_tries=3 * MAX_ROOM_TRIES)


# ----------------------------------------------------------------- T2 relative direction


def direction_answer(scene: Scene, subtype: str, a: str, b: str | None, margin: float = 0.0) -> str | None:
    cam = scene.camera("pano")
    oa = by_category(scene, a)
    if subtype == "pair_left_right":
        return left_right(oa, by_category(scene, b or ""), cam, angle_margin=margin)
    if subtype == "turned_left_right":  # turned on the spot to face ``b``
        return observer_side(cam.position, by_category(scene, b or ""), oa, margin=margin)
    return observer_relation(cam.position, camera_yaw(cam), oa, margin=margin)


# (subtype, answer, MCQ answer position): the pair subtype's two letters are balanced
# within each answer; the 4-option sector items take the task-wide balanced position
DIRECTION_PLAN = (
    *(("pair_left_right", s, p) for s in ("left", "right") for p in (0, 1)),
    *(("observer_sector", s, None) for s in SECTORS),
)


# turned form: (answer, whether it differs from the object's side in the panorama, MCQ
# position); the frame flips in exactly half of the turned items, so neither the glance
# answer (the panorama side) nor its opposite is a shortcut
TURNED_PLAN = tuple((s, flip, p) for s in ("left", "right") for flip in (False, True) for p in (0, 1))
TURNED_SHARE = {"easy": 0.0, "standard": 0.75, "hard": 1.0}  # share of T2 units in the turned form


def panorama_side(obj: SceneObject, cam: Camera, margin: float) -> str | None:
    """The side of the panorama's centre line the object shows on (the viewer-frame glance
    answer), None within ``margin`` degrees of straight ahead or of the seam."""
    lon = panorama_longitude(obj, cam)
    if abs(lon) <= margin or abs(lon) >= 180.0 - margin:
        return None
    return "right" if lon > 0 else "left"


def _build_direction(ctx: TaskContext, pano: Pano) -> Question | None:
    scene, cam = pano.scene, pano.camera
    form = hop_forms(ctx, "form", "direction_turned_share", TURNED_SHARE)
    if form == "two_hop":
        return _build_turned(ctx, pano)
    subtype, want, position = balanced(ctx, "subtype_answer", DIRECTION_PLAN)
    objs = pano.referable()
    if subtype == "pair_left_right":
        margin = float(ctx.knob("pair_margin_deg", {"easy": 25.0, "standard": 12.0, "hard": 10.0}))
        pairs = [(a, b) for a in objs for b in objs if a is not b]
        for i in ctx.rng.permutation(len(pairs)):
            a, b = pairs[int(i)]
            ans = direction_answer(scene, subtype, a.category, b.category, margin)
            if ans != want:
                continue
            sep = abs(float(wrap180(panorama_longitude(a, cam) - panorama_longitude(b, cam))))
            record = pano.record({display(a.category): a, display(b.category): b},
                                 winner_margin=winner_record(min(sep, 180.0 - sep), margin, "deg"))
            if record is None:
                continue
            return Question(
                subtype=subtype,
                body=(
                    f"Looking around from where you stand, is {the(a.category)} to the left or to the "
                    f"right of {the(b.category)}? Take the shorter way around you between them. "
                    "Answer left or right."
                ),
                answer=ans,
                aliases=[f"to the {ans}", f"on the {ans}", f"{ans} side"],
                distractors=["right" if ans == "left" else "left"],
                metadata={**DirectionFacts(object_a=a.category, object_b=b.category, margin_deg=margin).to_metadata(
                    between={"object_b": {"frame_of_reference": "observer"}}), "readability": record, "form": "viewer"},
                candidates=["left", "right"],
                answer_position=position,
            )
        return None
    # sectors are 90-degree bins: the readability contract keeps a quarter bin from each edge
    margin = float(ctx.knob("sector_margin_deg", {"easy": 30.0, "standard": 22.5, "hard": 22.5}))
    for i in ctx.rng.permutation(len(objs)):
        a = objs[int(i)]
        ans = direction_answer(scene, subtype, a.category, None, margin)
        if ans != want:
            continue
        angle = bearing(cam.position, camera_yaw(cam), a)
        record = pano.record({display(a.category): a}, bin_margin=bin_margin(angle, SECTOR_BIN, offset_deg=45.0))
        if record is None:
            continue
        return Question(
            subtype=subtype,
            body=(
                f"You face the direction of the panorama's centre. Is {the(a.category)} in front of you, "
                "behind you, on your left or on your right? Answer front, behind, left or right."
            ),
            answer=ans,
            aliases=[SECTOR_TEXT[ans]] + (["back", "behind me"] if ans == "behind" else []),
            distractors=[s for s in SECTORS if s != ans],
            metadata={**DirectionFacts(object_a=a.category, object_b=None, margin_deg=margin).to_metadata(
                between={"object_b": {"frame_of_reference": "observer"}}), "readability": record, "form": "viewer"},
            candidates=list(SECTORS),
        )
    return None


def _build_turned(ctx: TaskContext, pano: Pano) -> Question | None:
    """Frame switch: the observer turns on the spot to face one object and is asked on which
    side another now is. The glance answer is the object's side in the panorama (right of
    the centre = right); it is wrong exactly when the turn carries the facing line past the
    object, which the plan makes half the items, so that slip is the distractor."""
    scene, cam = pano.scene, pano.camera
    want, flip, position = balanced(ctx, "turned_plan", TURNED_PLAN,
                                    index=form_ordinal(ctx, "form", "direction_turned_share", TURNED_SHARE))
    margin = float(ctx.knob("turned_margin_deg", {"easy": 25.0, "standard": 20.0, "hard": 15.0}))
    min_turn = float(ctx.knob("turned_min_turn_deg", {"easy": 45.0, "standard": 45.0, "hard": 30.0}))
    objs = pano.referable()
    pairs = [(a, f) for a in objs for f in objs if a is not f]
    for i in ctx.rng.permutation(len(pairs)):
        a, f = pairs[int(i)]
        turn = abs(panorama_longitude(f, cam))
        if turn < min_turn:
            continue  # a turn of a few degrees would leave every answer as it looks
        ans = direction_answer(scene, "turned_left_right", a.category, f.category, margin)
        seen = panorama_side(a, cam, margin)
        if ans != want or seen is None or (ans != seen) != flip:
            continue
        sep = abs(float(wrap180(panorama_longitude(a, cam) - panorama_longitude(f, cam))))
        record = pano.record({display(a.category): a, display(f.category): f},
                             winner_margin=winner_record(min(sep, 180.0 - sep), margin, "deg"))
        if record is None:
            continue
        return Question(
            subtype="turned_left_right",
            body=(
                f"Imagine that, without moving from your spot, you turn to face {the(f.category)}. "
                f"Is {the(a.category)} then on your left or on your right? Answer left or right."
            ),
            answer=ans,
            aliases=[f"to the {ans}", f"on the {ans}", f"{ans} side", f"on my {ans}"],
            distractors=["right" if ans == "left" else "left"],
            metadata={**DirectionFacts(object_a=a.category, object_b=f.category, margin_deg=margin).to_metadata(
                between={"object_b": {"frame_of_reference": "observer"}}), "readability": record,
                "form": "turned", "frame_flip": bool(flip), "panorama_side": seen, "turn_deg": round(turn, 1)},
            candidates=["left", "right"],
            answer_position=position,
        )
    return None


@dataclass(frozen=True, kw_only=True)
class DirectionFacts(Facts):
    """The object(s) whose direction is asked (``object_b`` None: relative to the observer)."""

    object_a: str
    object_b: str | None
    margin_deg: float = 0.0  # absent from datasets made before the knob


def derive_direction(item: Item, scenes: dict[str, Scene]) -> str:
    d = DirectionFacts.from_item(item)
    ans = direction_answer(scenes[item.scene_id], item.subtype, d.object_a, d.object_b, d.margin_deg)
    if ans is None:
        raise ValueError(f"item {item.id}: the direction is within the margin of a boundary")
    return answer_for(item, ans)


@task(SUITE, "relative_direction", derive=derive_direction, description="T2: direction between objects from the observer")
def generate_direction(ctx: TaskContext) -> list[Item]:
    return build_unit(ctx, "relative_direction", _build_direction)


