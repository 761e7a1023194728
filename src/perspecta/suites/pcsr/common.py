"""What every PCSR task shares: the panorama unit, referring expressions, the prompt
and the open + multiple-choice item pair.

A unit owns one furnished room and its 1024x512 equirect panorama (so the train/test
split, drawn per unit, is disjoint by panorama). Objects are only named when the name
is unambiguous (their category occurs once in the room) and when a person can find
them: every object a question or option names must pass the readability contract
(:mod:`perspecta.world.readability`: visible pixels and visible box measured on the
panorama's instance mask). The facts are recorded in ``metadata["readability"]`` so
``perspecta validate`` re-checks them. Mask measurements are also stored as
``visible_px`` because the scene record alone cannot recompute occlusion; every other
part of an answer is recomputed from the stored layout by the task's ``derive``.

Answers are balanced by construction: :func:`balanced` assigns each unit its target
(subtype, answer) from a seeded permutation over blocks of units, and the unit then
looks for a room that can pose exactly that question.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from perspecta.dataset.item import Item, Option, letter_options
from perspecta.suites.context import TaskContext, stable_key
from perspecta.suites.facts import Facts
from perspecta.world import readability
from perspecta.world.samplers import SamplingError, sample_room
from perspecta.world.scene import Camera, Scene, SceneObject

SUITE = "pcsr"
PANO_SIZE = (1024, 512)
MIN_VISIBLE_PX = readability.DEFAULT_CONTRACT.min_pixels  # panorama pixels an object needs to be named
# rooms tried per unit before it fails loudly; a unit with an answer target (see
# answer_target) wants one room type in five, so it passes over most rooms unrendered
MAX_ROOM_TRIES = 400
MAX_RENDERS = 12  # of which at most this many are rendered

# Categories a person cannot reliably tell apart in a room panorama (a closed bookcase
# looks like a cabinet, a desk like a table): while two of a group are in the room, none
# of that group is named, counted or offered as an option.
CONFUSABLE: tuple[frozenset[str], ...] = (
    frozenset({"cabinet", "bookcase", "wardrobe"}),
    frozenset({"table", "desk", "coffee_table", "dressing_table"}),
)
# Single models that pass for another category although their own is right: the kitchen
# sink (and the vanity unit) stand on a closed two-door base that reads as a cabinet, so
# while one is in the room "cabinet" is never named, asked, counted or offered (a one-look
# judge counted the sink's base as a cabinet; a careful one could not say which was meant).
LOOKALIKE_ASSETS: dict[str, frozenset[str]] = {
    "cabinet": frozenset({"sh3d:blendswap-cc-by/kitchenSink", "sh3d:blendswap-cc-0/modernVanity"}),
}

# Categories a person may use for another one present in the room, one way only: an
# armchair is "a chair" to many readers, so while one is in the room "the chair" may mean
# either and is never named, asked or offered; "the armchair" names only the armchair (a
# careful judge of round 4 had to guess which object "the chair" meant).
NAMED_LOOKALIKES: dict[str, frozenset[str]] = {
    "chair": frozenset({"armchair"}),
}

# Display names; anything not listed shows its category with spaces.
DISPLAY = {"tv": "TV"}
# Domain synonyms accepted by relaxed scoring (display name -> other words for it).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "refrigerator": ("fridge",),
    "TV": ("television", "tv set", "television set"),
    "sofa": ("couch",),
    "washing machine": ("washer",),
    "bookcase": ("bookshelf", "shelf", "shelves"),
    "plant": ("potted plant", "houseplant", "pot plant"),
    "person": ("man", "woman", "human", "people"),
    "lamp": ("floor lamp", "standing lamp"),
    "nightstand": ("bedside table", "night table"),
    "wardrobe": ("closet", "armoire"),
    "cabinet": ("cupboard", "dresser"),
    "stove": ("cooker", "oven", "range"),
    "toilet": ("wc",),
    "bathtub": ("bath", "tub"),
    "sink": ("washbasin", "basin"),
    "dressing table": ("vanity", "vanity table"),
    "armchair": ("arm chair",),
    "piano": ("upright piano",),
    "box": ("cardboard box", "crate"),
}

INSTRUCTION_OPEN = (
    "Think it through inside <think> and </think>, then put only your final answer "
    "(a number, an object's name, or the word the question asks for) inside <answer> and </answer>."
)
INSTRUCTION_MCQ = (
    "Think it through inside <think> and </think>, then put only the letter of your "
    "chosen option inside <answer> and </answer>."
)
PANO_CONTEXT = (
    "<image>\nThe image is a 360-degree equirectangular panorama taken from where you "
    "stand in a room. Its centre is straight ahead of you, positions further right are "
    "further clockwise around you, and the left and right edges meet directly behind you."
)


def display(category: str) -> str:
    return DISPLAY.get(category, category.replace("_", " "))


def distinct_by_name(candidates: Iterable[SceneObject], skip_categories: Collection[str],
                     k: int = 3, *, scene: Scene | None) -> dict[str, SceneObject] | None:
    """The first ``k`` candidates, in the order given, whose display names differ from each
    other and whose categories are not in ``skip_categories`` (the question's own objects):
    the distractors of an MCQ, keyed by the name the options show; None if fewer exist.
    With ``scene``, only categories with one object in it qualify (an option names one
    object); a task whose answer may have a twin passes None, so that options and answer
    follow the same rule (else "the option that often has twins" would be the answer)."""
    picked: dict[str, SceneObject] = {}
    counts = Counter(o.category for o in scene.objects) if scene is not None else None
    for o in candidates:
        if o.category in skip_categories or display(o.category) in picked:
            continue
        if counts is not None and counts[o.category] != 1:
            continue
        picked[display(o.category)] = o
        if len(picked) == k:
            return picked
    return None


def the(category: str) -> str:
    return f"the {display(category)}"


def aliases_for(category: str) -> list[str]:
    name = display(category)
    out = [name.lower()]
    if "_" in category:
        out.append(category)
    out += list(SYNONYMS.get(name, ()))
    return [a for a in dict.fromkeys(out) if a != name]


T = TypeVar("T")


def balanced(ctx: TaskContext, name: str, values: Sequence[T], *, index: int | None = None) -> T:
    """This unit's share of ``values``, assigned so that every value is used equally often.

    Units are taken in blocks of ``len(values)`` consecutive indices; within a block a
    permutation seeded by (root seed, task, ``name``, block) gives each value to exactly
    one unit. Shares are therefore exact per block (list a value twice to weight it),
    while no unit's value follows from its index, id or file names without the root seed.
    ``index`` replaces the unit index, to balance within a subset of units (e.g. the
    units of one subtype, numbered apart).
    """
    k = len(values)
    if k == 0:
        raise ValueError(f"balanced({name!r}): no values to assign")
    block, pos = divmod(ctx.index if index is None else index, k)
    seq = np.random.SeedSequence(ctx.root_seed, spawn_key=(stable_key(ctx.suite), stable_key(ctx.task), stable_key(name), block))
    return values[int(np.random.default_rng(seq).permutation(k)[pos])]


AnswerTable = dict[str, tuple[str, ...]]


def answer_target(ctx: TaskContext, table: AnswerTable, name: str = "answer_target", *,
                  index: int | None = None) -> tuple[str, str]:
    """This unit's (room type, answer category), balanced over ``table``.

    A task whose answer is an object lists, per room type, the categories its question
    can usually give as the answer there (how often each can is measured on sampled
    rooms; rarer ones would exhaust a unit's rooms). The unit draws its pair evenly over
    the whole list and accepts only rooms of that type whose answer is that category.
    Within a room type every listed category is then the answer equally often, so the
    room type (a kitchen's many cabinets) or how full the room is does not say which
    object is the answer: the scene prior is no shortcut. A dataset that fixes the room
    type draws from that type's row only.
    """
    fixed = ctx.config.get("room_type")
    plan = [(rt, c) for rt, cats in table.items() if fixed in (None, rt) for c in cats]
    if not plan:
        raise ValueError(f"room_type {fixed!r} has no answer categories (known: {sorted(table)})")
    rt, c = balanced(ctx, name, plan, index=index)
    return str(rt), str(c)


def room_type_of(scene: Scene) -> str | None:
    return scene.room.room_type if scene.room else None


OPTIMISTIC_FACTS = {"pixels": 10**6, "box": [PANO_SIZE[0], PANO_SIZE[1]], "marker_cover": 0.0}


@dataclass
class Pano:
    """One rendered room: the scene, its panorama camera and per-object mask facts.

    ``facts`` holds, per object id, the readability facts measured on the panorama's
    instance mask (visible pixels and visible box); an object is *visible* when they
    pass the contract, i.e. when a person could find it in the picture.
    """

    scene: Scene
    camera: Camera
    image: str
    visible_px: dict[str, int]
    instance: np.ndarray
    split: str = "test"  # drawn per panorama, so train and test never share one
    measured: bool = True  # False for the optimistic stand-in (no render yet)
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.facts:
            self.facts = object_facts(self.scene, self.instance) if self.measured else {
                o.id: dict(OPTIMISTIC_FACTS) for o in self.scene.objects
            }

    def visible(self, obj: SceneObject) -> bool:
        return not readability.object_problems(obj.id, self.facts.get(obj.id, {}))

    def confusable(self, category: str) -> bool:
        """Whether another category of ``category``'s look-alike group is in the room."""
        return confusable(self.scene, category)

    def unique(self, obj: SceneObject) -> bool:
        """Whether ``obj`` is the only object of its category, so its name names it alone
        (two lamps in a room make "the lamp" ambiguous, as an answer or an option)."""
        return sum(1 for o in self.scene.objects if o.category == obj.category) == 1

    def referable(self) -> list[SceneObject]:
        """Objects a question may name by category alone (single instance, visible, no
        look-alike category in the room)."""
        counts = Counter(o.category for o in self.scene.objects)
        return [
            o for o in self.scene.objects if counts[o.category] == 1 and self.visible(o) and not self.confusable(o.category)
        ]

    def best_instance(self, category: str) -> SceneObject | None:
        """The most visible object of ``category`` (what a reader would look at), if visible."""
        objs = [o for o in self.scene.objects if o.category == category and self.visible(o)]
        return max(objs, key=lambda o: (self.facts[o.id]["pixels"], o.id)) if objs else None

    def record(self, named: dict[str, SceneObject], **extra: Any) -> dict[str, Any] | None:
        """The ``metadata["readability"]`` record for the objects a question names (by the
        name it uses), plus ``extra`` entries (``winner_margin``, ``bin_margin``); None
        when anything breaks the contract, so the caller tries another question/room."""
        rec: dict[str, Any] = {"objects": {n: dict(self.facts.get(o.id, {})) for n, o in sorted(named.items())}, **extra}
        if any(self.confusable(o.category) for o in named.values()):
            return None
        return None if readability.problems(rec) else rec


def confusable(scene: Scene, category: str) -> bool:
    """Whether ``scene`` holds another category of ``category``'s look-alike group, a
    category a reader may call by ``category``'s name (:data:`NAMED_LOOKALIKES`), or a
    model that passes for ``category`` (:data:`LOOKALIKE_ASSETS`)."""
    present = {o.category for o in scene.objects}
    if LOOKALIKE_ASSETS.get(category, frozenset()) & {o.asset_id for o in scene.objects}:
        return True
    if NAMED_LOOKALIKES.get(category, frozenset()) & present:
        return True
    return any(category in g and len(g & present - {category}) > 0 for g in CONFUSABLE)


def object_facts(scene: Scene, instance: np.ndarray) -> dict[str, dict[str, Any]]:
    """Readability facts of every object of ``scene`` on its panorama instance mask
    (object *i* of the scene is mask value *i* + 1)."""
    from scipy import ndimage

    inst = np.asarray(instance)
    counts = np.bincount(inst.ravel().clip(min=0), minlength=len(scene.objects) + 1)
    boxes = ndimage.find_objects(inst.clip(min=0), max_label=len(scene.objects))
    out: dict[str, dict[str, Any]] = {}
    for i, o in enumerate(scene.objects):
        sl = boxes[i]
        box = [0, 0] if sl is None else [int(sl[1].stop - sl[1].start), int(sl[0].stop - sl[0].start)]
        out[o.id] = {"pixels": int(counts[i + 1]), "box": box, "marker_cover": 0.0}
    return out


def by_category(scene: Scene, category: str) -> SceneObject:
    """The single object of ``category`` (the stored questions name objects this way)."""
    found = [o for o in scene.objects if o.category == category]
    if len(found) != 1:
        raise ValueError(f"scene {scene.scene_id}: expected one {category!r}, found {len(found)}")
    return found[0]


Build = Callable[[TaskContext, "Pano"], "Question | None"]
Prepare = Callable[[TaskContext, Scene], None]


@dataclass
class Question:
    """A question ready to become an open (or yes/no) item and an MCQ item."""

    subtype: str
    body: str  # the question sentence(s), without the panorama context and instructions
    answer: str  # canonical answer text
    aliases: list[str]
    distractors: list[str]  # MCQ wrong options, hardest first
    metadata: dict[str, Any]
    candidates: list[str]  # every answer a reader could plausibly give (for relaxed scoring)
    open_type: str = "open"  # "open" or "yesno"
    mcq: bool = True
    # when the open item asks something else than the MCQ (T7: a yes/no twin)
    open_body: str | None = None
    open_answer: str | None = None
    open_candidates: list[str] | None = None
    # where the MCQ puts the answer (0 = A); None = balanced over the task's units. A task
    # whose subtypes are drawn from a plan lists positions in the plan instead, so each
    # subtype's answer letters are balanced too (a 2-option subtype read "A" 21 of 31 times
    # when positions were a free shuffle)
    answer_position: int | None = None


def room_knobs(ctx: TaskContext) -> dict[str, Any]:
    """The room sampler's difficulty knobs: how full the room is. Rooms are shared by the
    units of every task with the same index, and each reads the same knob values, so a
    room is the same whichever task samples it first."""
    return {
        "min_objects": int(ctx.knob("room_min_objects", {"easy": 5, "standard": 10, "hard": 11})),
        "clutter": float(ctx.knob("room_clutter", {"easy": 0.0, "standard": 0.5, "hard": 1.0})),
    }


def render_pano(ctx: TaskContext, scene: Scene, *, color: bool = True) -> tuple[Pano, np.ndarray]:
    """Render the room's panorama and measure each object's mask pixels.

    ``color=False`` renders the masks only (its rgb is empty): questions are decided on
    masks, so a room is drawn in colour only once a unit keeps it (:func:`pano_rgb`)."""
    camera = scene.camera("pano")
    result = ctx.renderer.render(scene, camera, color=color)
    ids, counts = np.unique(result.instance, return_counts=True)
    px = {scene.objects[int(i) - 1].id: int(c) for i, c in zip(ids, counts) if i > 0}
    return Pano(scene=scene, camera=camera, image="", visible_px=px, instance=result.instance), result.rgb


def pano_rgb(ctx: TaskContext, scene: Scene) -> np.ndarray:
    """The colour panorama of ``scene`` (whose masks :func:`render_pano` measured): the
    renderer's output does not depend on what it drew before, so drawing it after the
    question was decided gives the pixels an eager render gave. Its layers are not drawn
    (the masks were measured; a room's mask read from the cache was drawn by another
    render, so this one could not reuse it), except with ``--with-depth``, whose depth
    file is found from the render the image came from."""
    return ctx.renderer.render(scene, scene.camera("pano"), layers=ctx.with_depth).rgb


def optimistic(scene: Scene) -> Pano:
    """A stand-in panorama in which nothing is occluded (no render needed).

    Each object's facts are an upper bound from geometry: the panorama box spanned by
    its bounding-box corners, and as many pixels as that box holds. An object too small
    or too thin to pass the contract here cannot pass it once rendered, so the question
    is only posed (and the room only rendered) when it may hold.
    """
    camera = scene.camera("pano")
    px = {o.id: 10**6 for o in scene.objects}
    blank = np.zeros((camera.height, camera.width), dtype=np.int32)
    facts = {o.id: projected_facts(o, camera) for o in scene.objects}
    return Pano(scene=scene, camera=camera, image="", visible_px=px, instance=blank, measured=False, facts=facts)


def projected_facts(obj: SceneObject, camera: Camera) -> dict[str, Any]:
    """Upper-bound readability facts of ``obj`` in ``camera``'s panorama, from its box corners."""
    from perspecta.world.oracle import panorama_latitude, wrap180
    from perspecta.world.viewing import panorama_longitudes

    corners = obj.corners()  # one box, its longitudes at once (every candidate room asks)
    ref, *lons = panorama_longitudes(np.concatenate([obj.center()[None], corners]), camera)
    lon = [float(wrap180(x - ref)) for x in lons]
    lat = [panorama_latitude(c, camera) for c in corners]
    w = min((max(lon) - min(lon)) / 360.0 * camera.width, camera.width)
    h = min((max(lat) - min(lat)) / 180.0 * camera.height, camera.height)
    return {"pixels": int(w * h), "box": [int(np.ceil(w)), int(np.ceil(h))], "marker_cover": 0.0}


def build_unit(
    ctx: TaskContext, task: str, build: Build, prepare: Prepare | None = None,
    room_type: Callable[[TaskContext], str] | None = None, max_tries: int = MAX_ROOM_TRIES,
) -> list[Item]:
    """Try rooms until ``build`` finds a well-posed question, then emit its items.

    Without ``prepare`` the unit draws from the dataset's shared room stream for its
    index (:mod:`perspecta.suites.pcsr.rooms`): unit *i* of every task first tries room
    (*i*, 0), then (*i*, 1), ... so most panoramas carry questions of several tasks, as
    in the paper, and each is sampled and rendered once per dataset. ``prepare`` may
    adjust a sampled room before it is rendered (T6 turns the observer so that a pair
    of neighbours straddles the seam); such rooms belong to their unit alone. Either
    way the question is first posed on geometry alone (every object assumed visible),
    so only promising rooms are rendered; at most ``MAX_RENDERS`` renders per unit.
    A question is only emitted with a readability record that meets the contract;
    otherwise the unit moves on to its next room. ``room_type`` names the only room type
    ``build`` can accept (an answer target, see :func:`answer_target`): shared rooms of
    another type are passed over by their seed alone, never sampled. ``max_tries`` rooms
    are tried (a task whose targets are rarer may look further).
    """
    from perspecta.suites.pcsr import rooms

    failures: list[str] = []
    renders = 0
    for attempt in range(max_tries):
        shared = rooms.RoomKey(ctx.index, attempt) if prepare is None else None
        if shared is not None and room_type is not None and rooms.room_type(ctx, shared) != room_type(ctx):
            continue  # build would turn it down; skip the furnishing
        try:
            if shared is not None:
                scene = rooms.shared_scene(ctx, shared, PANO_SIZE)
            else:
                scene = sample_room(
                    ctx.rng, ctx.library, scene_id=f"{ctx.scene_prefix}-r{attempt}", seed=ctx.seed,
                    room_type=ctx.config.get("room_type"), panorama_size=PANO_SIZE, **room_knobs(ctx),
                )
        except SamplingError as e:
            failures.append(f"sampling: {e}")
            continue
        if prepare is not None:
            prepare(ctx, scene)
        if build(ctx, optimistic(scene)) is None:
            failures.append(f"{scene.room.room_type if scene.room else '?'}: layout cannot pose the question")
            continue
        if shared is not None:
            pano, drawn = rooms.shared_pano(ctx, shared, scene), None
        else:
            # masks first: a room whose question fails once measured costs no colour pass
            # (measured: 4 of 19 panoramas of a unit stream were never saved); the colour
            # is drawn from a copy of the scene as it was measured
            drawn = copy.deepcopy(scene)
            pano, _ = render_pano(ctx, scene, color=False)
            pano.split = ctx.split
        renders += 1
        q = build(ctx, pano)
        if q is not None and readability.problems(q.metadata.get("readability")):
            failures.append(f"readability: {readability.problems(q.metadata.get('readability'))}")
            q = None  # a builder's guard missed it: never emit an unreadable item
        if q is not None:
            if "readability" not in q.metadata:
                raise RuntimeError(f"{ctx.scene_prefix}: {task} built a question without a readability record")
            ctx.add_scene(pano.scene)
            if shared is not None:
                rooms.publish(ctx, shared)
                ctx.adopt_image(pano.image)
            else:
                assert drawn is not None
                pano.image = ctx.save_image(pano_rgb(ctx, drawn), "pano")
            return make_items(ctx, task, pano, q)
        failures.append(f"{scene.room.room_type if scene.room else '?'}: no well-posed question once rendered")
        if renders >= MAX_RENDERS:
            break
    tally = ", ".join(f"{why} x{k}" for why, k in Counter(failures).most_common())
    raise RuntimeError(f"no room gave a well-posed {task} question ({len(failures)} rooms tried"
                       f"{', knobs ' + str(ctx.knobs) if ctx.knobs else ''}): {tally}")


@dataclass(frozen=True)
class PanoFacts(Facts):
    """Visible pixels per category in the item's panorama (what "in view" is measured on)."""

    visible_px: dict[str, int]


def make_items(ctx: TaskContext, task: str, pano: Pano, q: Question) -> list[Item]:
    room = pano.scene.room
    meta = {
        **q.metadata,
        "room_type": room.room_type if room else None,
        "n_objects": len(pano.scene.objects),
        **PanoFacts(visible_px=dict(sorted(pano.visible_px.items()))).to_metadata(),
        "camera": pano.camera.metadata(),
        "candidates": list(dict.fromkeys(q.candidates)),
    }
    common: dict[str, Any] = {
        "suite": SUITE, "task": task, "subtype": q.subtype, "images": [pano.image], "split": pano.split,
        "scene_id": pano.scene.scene_id, "seed": ctx.seed,
    }
    twin = q.open_answer is not None
    open_aliases = [] if twin else list(q.aliases)
    open_meta = {**meta, "format": q.open_type, "answer_aliases": open_aliases}
    if q.open_candidates is not None:
        open_meta["candidates"] = list(q.open_candidates)
    items = [
        Item(
            id=ctx.item_id("base", q.open_type),
            question=f"{PANO_CONTEXT}\n{q.open_body or q.body}\n{INSTRUCTION_OPEN}",
            answer_type=q.open_type,  # type: ignore[arg-type]
            answer=q.open_answer if twin else q.answer,  # type: ignore[arg-type]
            answer_aliases=open_aliases,
            group=ctx.item_id("base", q.open_type),
            metadata=open_meta,
            **common,
        )
    ]
    if q.mcq:
        n = 1 + len(q.distractors)
        pos = q.answer_position if q.answer_position is not None else balanced(
            ctx, f"mcq_answer_position_{n}", list(range(n)))
        options = placed_options(ctx.rng, q.answer, q.distractors, pos)
        label = next(o.label for o in options if o.text == q.answer)
        lines = "\n".join(f"{o.label}. {o.text}" for o in options)
        items.append(
            Item(
                id=ctx.item_id("base", "mcq"),
                question=f"{PANO_CONTEXT}\n{q.body}\nOptions:\n{lines}\n{INSTRUCTION_MCQ}",
                answer_type="mcq",
                answer=label,
                options=options,
                group=ctx.item_id("base", "mcq"),
                metadata={
                    **meta,
                    "format": "mcq",
                    "answer_text": q.answer,
                    "answer_aliases": list(q.aliases),
                    "options": {o.label: o.text for o in options},
                    "n_options": len(options),
                    "hard_distractor": q.distractors[0] if q.distractors else None,
                },
                **common,
            )
        )
    return items


def placed_options(rng: np.random.Generator, answer: str, distractors: Sequence[str], position: int) -> list[Option]:
    """The MCQ options: the answer at ``position``, the distractors shuffled around it."""
    texts = [answer, *distractors]
    if len(set(texts)) != len(texts):
        raise ValueError(f"MCQ options must be distinct, got {texts}")
    if not 0 <= position < len(texts):
        raise ValueError(f"answer position {position} outside {len(texts)} options")
    rest = [distractors[int(i)] for i in rng.permutation(len(distractors))]
    return letter_options([*rest[:position], answer, *rest[position:]])


def answer_for(item: Item, text: str) -> str:
    """The stored form of answer ``text`` for this item: the option label for MCQ."""
    if item.answer_type != "mcq":
        return text
    return item.label_of(text)


def pick(rng: np.random.Generator, seq: Sequence[Any]) -> Any:
    if not seq:
        raise ValueError("pick from an empty sequence")
    return seq[int(rng.integers(len(seq)))]


def fill_distractors(
    rng: np.random.Generator, answer: str, hard: Sequence[str], pool: Sequence[str], n: int = 3
) -> list[str] | None:
    """``hard`` distractors first, then random ones from ``pool``; None if fewer than ``n``."""
    out: list[str] = []
    for t in hard:
        if t != answer and t not in out:
            out.append(t)
    rest = [t for t in pool if t != answer and t not in out]
    for i in rng.permutation(len(rest)):
        if len(out) >= n:
            break
        out.append(rest[int(i)])
    return out[:n] if len(out) >= n else None
