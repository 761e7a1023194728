"""Shared machinery of the DORI tasks: asset pools, answer-class sampling, option
shuffling, prompt selection, marked renders and item assembly.

Every DORI unit makes one coarse and one granular item, each from *its own* scene: the
two levels have different answer bins, and drawing each level's answer class first
(uniformly, "Cannot be determined" included) is the only way to balance both.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from perspecta.assets.library import AssetInfo
from perspecta.dataset.item import Item, Option, letter_options
from perspecta.render.overlay import draw_box
from perspecta.suites.context import TaskContext
from perspecta.suites.dori.prompts import (
    CANNOT_DETERMINE,
    structured_prompt,
    unstructured_prompt,
)
from perspecta.world.oracle import mask_bbox
from perspecta.world.scene import Scene

SUITE = "dori"
# categories whose front is clear at 256 px from any side (the paper's people, vehicles,
# animals, furniture). Box-like appliances (refrigerator, oven, stove) are left out: seen
# from the side, nothing shows which end their door is on.
FRONT_CATEGORIES = (
    "person", "car", "chair", "dog", "cat", "horse", "armchair", "sofa", "bicycle", "tv", "figure",
    "motorcycle", "van", "truck", "bus", "piano", "toilet",
)  # fmt: skip
# frontless, symmetric controls: the right answer about their facing is "Cannot be determined"
CONTROL_CATEGORIES = ("ball", "cylinder", "box", "table")


def pick_asset(
    ctx: TaskContext, control: bool, *, categories: Sequence[str] | None = None, sources: Sequence[str] | None = None
) -> AssetInfo:
    """A random asset with a front (``control`` False) or a frontless control (True),
    optionally restricted to some categories and sources ("proc", "sh3d")."""
    cats = categories or ctx.config.get(
        "control_categories" if control else "categories", CONTROL_CATEGORIES if control else FRONT_CATEGORIES
    )
    pool = [a for a in ctx.library.all() if a.category in cats and a.has_front != control
            and (sources is None or a.source in sources)]
    if not pool:
        raise RuntimeError(f"no {'control' if control else 'front'} assets for categories {cats} in the library")
    return pool[int(ctx.rng.integers(len(pool)))]


def draw_class(ctx: TaskContext, n_classes: int) -> int | None:
    """A uniformly drawn answer class in ``range(n_classes)``, or None (= the control
    class, answered "Cannot be determined") with the same probability as any other."""
    k = int(ctx.rng.integers(n_classes + 1))
    return None if k == n_classes else k


def inside(ctx: TaskContext, lo: float, hi: float, margin: float) -> float:
    """A uniform draw from [lo + margin, hi - margin]: never within ``margin`` of a bin edge."""
    if hi - lo <= 2 * margin:
        raise ValueError(f"bin [{lo}, {hi}] is too narrow for margin {margin}")
    return float(ctx.rng.uniform(lo + margin, hi - margin))


def shuffled(ctx: TaskContext, texts: Sequence[str]) -> list[Option]:
    order = ctx.rng.permutation(len(texts))
    return letter_options([texts[int(i)] for i in order])


def label_for(item: Item, text: str) -> str:
    """The label of the option whose text is ``text`` (derive's last step)."""
    for o in item.options:
        if o.text == text:
            return o.label
    raise ValueError(f"item {item.id}: the geometric answer {text!r} is not among its options")


def prompt(
    ctx: TaskContext, *, task: str, context: str, steps: list[str], options: list[Option],
    examples: list[str], n_images: int = 1,
) -> str:
    """The item's question: DORI's five-part prompt, or the paper's unstructured ablation
    (``config["prompt_style"] == "unstructured"``: no context, steps or examples)."""
    style = ctx.config.get("prompt_style", "structured")
    if style == "structured":
        return structured_prompt(task=task, context=context, steps=steps, options=options,
                                 examples=examples, n_images=n_images)
    if style == "unstructured":
        return unstructured_prompt(task=task, options=options, n_images=n_images)
    raise ValueError(f"dori prompt_style must be 'structured' or 'unstructured', got {style!r}")


def only(scene: Scene, object_id: str) -> Scene:
    """A render-only copy of ``scene`` holding just one of its objects (before/after views)."""
    return dataclasses.replace(scene, objects=[scene.object(object_id)])


def render_boxed(ctx: TaskContext, scene: Scene, name: str, label: str = "A") -> tuple[str, list[int]]:
    """Render camera "main", outline object 0 with a labelled box, save; (path, box)."""
    result = ctx.renderer.render(scene, scene.camera("main"))
    box = mask_bbox(result.instance, 0)
    if box is None:
        raise RuntimeError(f"{scene.scene_id}: the object is not visible in the render")
    return ctx.save_image(draw_box(result.rgb, box, label=label), name), [int(v) for v in box]


def render_plain(ctx: TaskContext, scene: Scene) -> np.ndarray:
    result = ctx.renderer.render(scene, scene.camera("main"))
    if mask_bbox(result.instance, 0) is None:
        raise RuntimeError(f"{scene.scene_id}: the object is not visible in the render")
    return result.rgb


def object_factors(scene: Scene, asset: AssetInfo, object_id: str = "obj0") -> dict[str, Any]:
    obj = scene.object(object_id)
    return {"object_id": obj.id, "category": obj.category, "asset_id": obj.asset_id, "source": asset.source,
            "has_front": obj.has_front, "symmetric": obj.symmetric, "scene_kind": scene.kind}


def make_item(
    ctx: TaskContext, *, task: str, granularity: str, scene: Scene, images: list[str], question: str,
    context: str, steps: list[str], examples: list[str], options: list[Option], answer_text: str,
    values: dict[str, Any], metadata: dict[str, Any],
) -> Item:
    """Assemble an MCQ item; its text is :func:`prompt` over ``question`` (the TASK part),
    ``context``, ``steps`` and ``examples``, for as many images as ``images`` holds.
    ``values`` maps each option text to its machine-readable value (a bin, an angle, an
    operation list; None for "Cannot be determined"); it is stored as
    ``metadata["option_values"]`` by label so scoring needs no text parsing."""
    text = prompt(ctx, task=question, context=context, steps=steps, options=options, examples=examples,
                  n_images=len(images))
    answer = next(o.label for o in options if o.text == answer_text)
    meta = {
        **metadata,
        "granularity": granularity,
        "n_options": len(options),
        "answer_text": answer_text,
        "answer_value": values[answer_text],
        "option_values": {o.label: values[o.text or ""] for o in options},
        "prompt_style": ctx.config.get("prompt_style", "structured"),
    }
    item_id = ctx.item_id("base", granularity)
    return Item(
        id=item_id, suite=SUITE, task=task, subtype=f"{task}_{granularity}", granularity=granularity,  # type: ignore[arg-type]
        question=text, images=images, options=options, answer_type="mcq", answer=answer,
        group=item_id, split=ctx.split,  # type: ignore[arg-type]
        scene_id=scene.scene_id, seed=ctx.seed, metadata=meta,
    )


__all__ = ["CANNOT_DETERMINE", "CONTROL_CATEGORIES", "FRONT_CATEGORIES", "SUITE"]


def studio_scene(ctx: TaskContext, asset: AssetInfo, suffix: str, **kwargs: Any) -> Scene:
    """One object in a studio (``sample_studio``), scene id ``<prefix>-<suffix>``."""
    from perspecta.world.samplers import sample_studio

    return sample_studio(ctx.rng, ctx.library, scene_id=f"{ctx.scene_prefix}-{suffix}", seed=ctx.seed,
                         asset_id=asset.asset_id, image_size=int(ctx.config.get("image_size", 256)), **kwargs)


def set_facing(scene: Scene, facing: float, object_id: str = "obj0") -> None:
    """Turn an upright object so that ``egocentric_facing`` equals ``facing`` (degrees,
    + = front toward the image right): its front heading is the to-camera heading + facing."""
    from perspecta.world.oracle import heading_of, wrap360

    obj = scene.object(object_id)
    to_cam = np.asarray(scene.camera("main").position, dtype=float) - obj.center()
    obj.pose.yaw = round(wrap360(heading_of(to_cam) + facing), 6)
