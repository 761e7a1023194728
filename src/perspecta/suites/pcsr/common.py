"""What every PCSR task shares: the panorama unit, referring expressions, the prompt
and the open + multiple-choice item pair.

A unit owns one furnished room and its 1024x512 equirect panorama (so the train/test
split, drawn per unit, is disjoint by panorama). Objects are only named when the name
is unambiguous: their category occurs once in the room and the object shows in the
panorama's instance mask (``MIN_VISIBLE_PX`` pixels), so a reader of the image can
find it. Mask measurements are stored in item metadata (``visible_px``) because the
scene record alone cannot recompute occlusion; every other part of an answer is
recomputed from the stored layout by the task's ``derive``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from perspecta.dataset.item import Item, Option, letter_options
from perspecta.suites.context import TaskContext
from perspecta.world.samplers import SamplingError, sample_room
from perspecta.world.scene import Camera, Scene, SceneObject

SUITE = "pcsr"
PANO_SIZE = (1024, 512)
MIN_VISIBLE_PX = 250  # pixels of the 1024x512 panorama an object needs to be named
MAX_ROOM_TRIES = 40  # rooms sampled per unit before the unit fails loudly
MAX_RENDERS = 8  # of which at most this many are rendered

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
    "(one word or one number) inside <answer> and </answer>."
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


def the(category: str) -> str:
    return f"the {display(category)}"


def aliases_for(category: str) -> list[str]:
    name = display(category)
    out = [name.lower()]
    if "_" in category:
        out.append(category)
    out += list(SYNONYMS.get(name, ()))
    return [a for a in dict.fromkeys(out) if a != name]


@dataclass
class Pano:
    """One rendered room: the scene, its panorama camera and per-object mask pixels."""

    scene: Scene
    camera: Camera
    image: str
    visible_px: dict[str, int]
    instance: np.ndarray
    split: str = "test"  # drawn per panorama, so train and test never share one

    def visible(self, obj: SceneObject) -> bool:
        return self.visible_px.get(obj.id, 0) >= MIN_VISIBLE_PX

    def referable(self) -> list[SceneObject]:
        """Objects a question may name by category alone (single instance, visible)."""
        return referable(self.scene, self.visible_px)


def referable(scene: Scene, visible_px: dict[str, int]) -> list[SceneObject]:
    counts = Counter(o.category for o in scene.objects)
    return [o for o in scene.objects if counts[o.category] == 1 and visible_px.get(o.id, 0) >= MIN_VISIBLE_PX]


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


def render_pano(ctx: TaskContext, scene: Scene) -> tuple[Pano, np.ndarray]:
    """Render the room's panorama and measure each object's mask pixels."""
    camera = scene.camera("pano")
    result = ctx.renderer.render(scene, camera)
    ids, counts = np.unique(result.instance, return_counts=True)
    px = {scene.objects[int(i) - 1].id: int(c) for i, c in zip(ids, counts) if i > 0}
    return Pano(scene=scene, camera=camera, image="", visible_px=px, instance=result.instance), result.rgb


def optimistic(scene: Scene) -> Pano:
    """A stand-in panorama in which every object is fully visible (no render needed)."""
    camera = scene.camera("pano")
    px = {o.id: 10**6 for o in scene.objects}
    blank = np.zeros((camera.height, camera.width), dtype=np.int32)
    return Pano(scene=scene, camera=camera, image="", visible_px=px, instance=blank)


def build_unit(ctx: TaskContext, task: str, build: Build, prepare: Prepare | None = None) -> list[Item]:
    """Try rooms until ``build`` finds a well-posed question, then emit its items.

    Without ``prepare`` the unit draws from the dataset's shared room stream for its
    index (:mod:`perspecta.suites.pcsr.rooms`): unit *i* of every task first tries room
    (*i*, 0), then (*i*, 1), ... so most panoramas carry questions of several tasks, as
    in the paper, and each is sampled and rendered once per dataset. ``prepare`` may
    adjust a sampled room before it is rendered (T6 turns the observer so that a pair
    of neighbours straddles the seam); such rooms belong to their unit alone. Either
    way the question is first posed on geometry alone (every object assumed visible),
    so only promising rooms are rendered; at most ``MAX_RENDERS`` renders per unit.
    """
    from perspecta.suites.pcsr import rooms

    failures: list[str] = []
    renders = 0
    for attempt in range(MAX_ROOM_TRIES):
        shared = rooms.RoomKey(ctx.index, attempt) if prepare is None else None
        try:
            if shared is not None:
                scene = rooms.shared_scene(ctx, shared, PANO_SIZE)
            else:
                scene = sample_room(
                    ctx.rng, ctx.library, scene_id=f"{ctx.scene_prefix}-r{attempt}", seed=ctx.seed,
                    room_type=ctx.config.get("room_type"), panorama_size=PANO_SIZE,
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
            pano, rgb = rooms.shared_pano(ctx, shared, scene), None
        else:
            pano, rgb = render_pano(ctx, scene)
            pano.split = ctx.split
        renders += 1
        q = build(ctx, pano)
        if q is not None:
            ctx.add_scene(pano.scene)
            if shared is not None:
                rooms.publish(ctx, shared)
                ctx.adopt_image(pano.image)
            else:
                pano.image = ctx.save_image(rgb, "pano")
            return make_items(ctx, task, pano, q)
        failures.append(f"{scene.room.room_type if scene.room else '?'}: no well-posed question once rendered")
        if renders >= MAX_RENDERS:
            break
    raise RuntimeError(f"{ctx.scene_prefix}: no room gave a well-posed {task} question: {failures}")


def make_items(ctx: TaskContext, task: str, pano: Pano, q: Question) -> list[Item]:
    room = pano.scene.room
    meta = {
        **q.metadata,
        "room_type": room.room_type if room else None,
        "n_objects": len(pano.scene.objects),
        "visible_px": dict(sorted(pano.visible_px.items())),
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
        options = shuffled_options(ctx.rng, [q.answer, *q.distractors])
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


def shuffled_options(rng: np.random.Generator, texts: Sequence[str]) -> list[Option]:
    if len(set(texts)) != len(texts):
        raise ValueError(f"MCQ options must be distinct, got {list(texts)}")
    order = rng.permutation(len(texts))
    return letter_options([texts[int(i)] for i in order])


def answer_for(item: Item, text: str) -> str:
    """The stored form of answer ``text`` for this item: the option label for MCQ."""
    if item.answer_type != "mcq":
        return text
    for o in item.options:
        if o.text == text:
            return o.label
    raise ValueError(f"item {item.id}: the geometric answer {text!r} is not among its options")


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
