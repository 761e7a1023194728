"""What every LRR task shares: image sizes, the yes/no balance, prompt endings, the item.

LRR asks only yes/no questions, each task exactly half "yes": a unit's answer is
fixed *before* any geometry is drawn, and the generator then builds the scene that
makes it true. Units are taken in pairs (0-1, 2-3, ...); a seeded balanced draw, from
the root seed and not from the unit's own stream, decides which unit of a pair is the
"yes" one (:func:`wants_yes`), so any even n is exactly balanced while nothing in an
item's id, index or file names carries its answer. Other per-unit choices that must not leak the answer (the
sheep's facing, the true region, ...) are *matched strata* (:func:`stratum`): both
units of a pair share the value, so it is distributed identically over yes and no. The paper evaluates two prompt modes (answer
directly; reason first); items carry the direct wording and :func:`question_for_mode`
swaps the closing instruction for the other mode.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np

from perspecta.dataset.item import IMAGE_MARKER, Item
from perspecta.suites.context import TaskContext, stable_key
from perspecta.world.readability import object_facts, object_problems
from perspecta.world.scene import Scene

T = TypeVar("T")

SUITE = "lrr"
FRAME_LABELS = ("A", "B", "C", "D")
VIEW_SIZE = 512  # the paper's input size for every task ...

DIRECT = 'Answer with one word: "Yes" or "No".'
REASON = 'Think it through step by step first, then finish with a last line that reads "Answer: Yes" or "Answer: No".'
PROMPT_MODES = {"direct": DIRECT, "reason": REASON}


def view_size(ctx: TaskContext) -> int:
    """Side of a single view: the suite config ``view_size``, else ``--image-size``, else
    the paper's 512."""
    return int(ctx.config.get("view_size", ctx.config.get("image_size", VIEW_SIZE)))


def composite_size(ctx: TaskContext) -> int:
    """Side of the Pos-C grid: ``composite_size``, else twice the view side (the paper's 1024)."""
    return int(ctx.config.get("composite_size", 2 * view_size(ctx)))


def _block_permutation(ctx: TaskContext, name: str, block: int, size: int) -> list[int]:
    """A permutation of ``range(size)`` for block ``block`` of the stratum ``name``.

    Seeded by (root seed, suite, task, name, block) and independent of the unit's own
    ``ctx.rng``, so adding or renaming a stratum never changes any scene geometry."""
    seq = np.random.SeedSequence(ctx.root_seed, spawn_key=(stable_key(ctx.suite), stable_key(ctx.task),
                                                           stable_key(name), int(block)))
    return np.random.default_rng(seq).permutation(size).tolist()


BALANCE_BLOCK = 24  # units; divisible by every modulus below
BALANCED_MODULI = (2, 3, 4)  # the index residues the shortcut audit reads from ids and file names


@functools.cache
def _balanced_orders() -> tuple[tuple[bool, ...], ...]:
    """Every way to pick, for each of a block's 12 pairs, whether its first unit is the
    "yes", such that each residue class of the unit index modulo 2, 3 and 4 is exactly
    half "yes" within the block (88 of the 4096 ways)."""
    pairs = BALANCE_BLOCK // 2
    out = []
    for firsts in itertools.product((True, False), repeat=pairs):
        yes = [u % 2 == 0 if firsts[u // 2] else u % 2 == 1 for u in range(BALANCE_BLOCK)]
        if all(2 * sum(yes[r::m]) == len(yes[r::m]) for m in BALANCED_MODULI for r in range(m)):
            out.append(firsts)
    return tuple(out)


def wants_yes(ctx: TaskContext) -> bool:
    """Whether this unit is a "yes": exactly one unit of each pair (2k, 2k+1) is, so any
    even n is an exact 50/50 split. Which one is not a free coin per pair (with 15 pairs
    a coin lines some index residue up with the answer often enough for the audit's id
    predictor to flag it) but a seeded draw, per block of 24 units, among the choices
    that leave every residue of the index modulo 2, 3 and 4 exactly half "yes" within
    the block: the seed alone says which unit is which, the index says nothing."""
    block, offset = divmod(ctx.index, BALANCE_BLOCK)
    orders = _balanced_orders()
    pick = _block_permutation(ctx, "answer", block, len(orders))[0]
    return orders[pick][offset // 2] == (offset % 2 == 0)


def pair_rank(ctx: TaskContext) -> int:
    """The unit's rank among the units with its answer (each pair holds one of each)."""
    return ctx.index // 2


def stratum(ctx: TaskContext, name: str, values: Sequence[T], *, per_answer: bool = False) -> T:
    """A value of ``values`` for this unit, cycled through seeded permutations over the
    units' :func:`pair_rank`, so every ``len(values)`` pairs use each value once.

    ``per_answer=False`` (a *matched* stratum): both units of a pair get the same value,
    so its distribution is identical among "yes" and "no" units and it cannot predict
    the answer. ``per_answer=True``: yes and no units cycle separately (e.g. the kind of
    a negative, balanced among the negatives)."""
    if not values:
        raise ValueError(f"stratum {name!r} has no values")
    rank = pair_rank(ctx)
    key = f"{name}/{'yes' if wants_yes(ctx) else 'no'}" if per_answer else name
    return values[_block_permutation(ctx, key, rank // len(values), len(values))[rank % len(values)]]


def named_facts(instance: np.ndarray, scene: Scene, names: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """Readability facts of the objects a question names, from one render's instance
    mask (``names``: label in the record -> object id), and every contract problem.

    The caller resamples its layout when the problem list is non-empty."""
    facts: dict[str, Any] = {}
    probs: list[str] = []
    for label, object_id in names.items():
        index = next((i for i, o in enumerate(scene.objects) if o.id == object_id), None)
        if index is None:
            raise KeyError(f"scene {scene.scene_id} has no object {object_id!r}")
        facts[label] = object_facts(instance, index + 1)  # instance labels are object index + 1
        probs += object_problems(label, facts[label])
    return facts, probs


def render_readable(ctx: Any, scene: Scene, camera: Any, names: dict[str, str]) -> tuple[np.ndarray, dict[str, Any]] | None:
    """(colour image, :func:`named_facts`) of ``camera``'s view, or None when a named
    object breaks the contract. The masks decide first, so a rejected layout costs no
    colour pass; the colour render of a kept one draws no layers (the masks are measured;
    with ``--with-depth`` it does: the depth file is found from it)."""
    masks = ctx.renderer.render(scene, camera, color=False)
    facts, probs = named_facts(masks.instance, scene, names)
    if probs:
        return None
    return ctx.renderer.render(scene, camera, layers=ctx.with_depth).rgb, facts


def labelled_images(n: int) -> str:
    """"Image A: <image>" lines, one per frame, in order."""
    return "\n".join(f"Image {FRAME_LABELS[i]}: {IMAGE_MARKER}" for i in range(n))


def question_for_mode(question: str, mode: str) -> str:
    """The same question with the closing instruction of prompt mode ``direct`` or ``reason``."""
    if mode not in PROMPT_MODES:
        raise ValueError(f"unknown LRR prompt mode {mode!r}; use one of {', '.join(PROMPT_MODES)}")
    if not question.endswith(DIRECT):
        raise ValueError("not an LRR question (it does not end with the direct-answer instruction)")
    return question[: -len(DIRECT)] + PROMPT_MODES[mode]


def yesno_item(
    ctx: TaskContext,
    *,
    variant: str,
    body: str,
    images: list[str],
    answer: bool,
    scene_id: str,
    metadata: dict[str, Any],
    subtype: str = "",
) -> Item:
    """A yes/no LRR item; ``body`` holds the "<image>" markers and the question."""
    if body.count(IMAGE_MARKER) != len(images):
        raise ValueError(f"{body.count(IMAGE_MARKER)} image markers for {len(images)} images")
    return Item(
        id=ctx.item_id(variant),
        suite=SUITE,
        task=ctx.task,
        subtype=subtype or ctx.task,
        question=f"{body} {DIRECT}",
        images=images,
        options=[],
        answer_type="yesno",
        answer="yes" if answer else "no",
        group=ctx.item_id("base"),
        variant=variant,
        split=ctx.split,  # type: ignore[arg-type]
        scene_id=scene_id,
        seed=ctx.seed,
        metadata={**metadata, "prompt_mode": "direct"},
    )


def yes_no(flag: bool) -> str:
    return "yes" if flag else "no"
