"""``taller/which_taller``: a red and a blue object side by side; which is taller?

Both stand on the ground at the same distance from the camera (the camera looks along
the perpendicular of the line joining them, from a low elevation), so their image
heights compare like their real heights and the question needs no depth reasoning. The
taller colour and the option order are drawn from the unit's rng; the height ratio is
the difficulty knob ``min_height_ratio``.
"""

from __future__ import annotations

import math

from perspecta.dataset.item import Item, letter_options
from perspecta.suites.context import TaskContext
from perspecta.suites.registry import task
from perspecta.world.samplers.common import (Instance, fit_distance, instantiate, make_object, orbit_camera,
                                              sample_sun)
from perspecta.world.scene import Ground, Scene

SUITE = "taller"
TASK = "which_taller"
COLOURS = {"red": (0.80, 0.15, 0.13), "blue": (0.15, 0.30, 0.85)}
SHAPES = ("proc:box", "proc:cylinder")
PRESETS = {"easy": 1.6, "standard": 1.3, "hard": 1.12}  # taller height / shorter height, at least
IMAGE_SIZE = 256


def answer_text(colour: str) -> str:
    return f"the {colour} object"


def derive(item: Item, scenes: dict[str, Scene]) -> str:
    """The option naming the object with the larger height in the scene record."""
    scene = scenes[item.scene_id]
    tallest = max(scene.objects, key=lambda o: o.size[2])
    want = answer_text(tallest.id)
    for option in item.options:
        if option.text == want:
            return option.label
    raise ValueError(f"item {item.id}: {want!r} is not among its options")


@task(SUITE, TASK, derive=derive, description="Which of two objects, side by side, is taller")
def generate(ctx: TaskContext) -> list[Item]:
    rng = ctx.rng
    ratio = float(ctx.knob("min_height_ratio", PRESETS)) * float(rng.uniform(1.0, 1.25))
    tall = "red" if rng.random() < 0.5 else "blue"
    objects = []
    for colour, y in (("red", -0.55), ("blue", 0.55)):
        info = ctx.library.get(SHAPES[int(rng.integers(len(SHAPES)))])
        base = instantiate(rng, ctx.library, info, color=COLOURS[colour])
        # rescale so the shorter object is 0.4 m high and the taller one ``ratio`` times that
        height = 0.4 * (ratio if colour == tall else 1.0)
        scale = round(base.scale * height / float(base.size[2]), 5)
        inst = Instance(base.info, base.params, scale, base.size * (scale / base.scale), base.color)
        objects.append(make_object(colour, inst, 0.0, y, float(rng.uniform(0, 360))))
    top = max(o.size[2] for o in objects)
    radius = math.hypot(1.0, top)
    camera = orbit_camera((0.0, 0.0, top / 2), fit_distance(radius, 40.0, IMAGE_SIZE, IMAGE_SIZE, 0.8),
                          azimuth=float(rng.uniform(-8, 8)), elevation=float(rng.uniform(3, 12)), fov_y=40.0,
                          width=IMAGE_SIZE, height=IMAGE_SIZE)
    scene = Scene(scene_id=ctx.scene_prefix, seed=ctx.seed, kind="studio", objects=objects, cameras=[camera],
                  light=sample_sun(rng), ground=Ground())
    ctx.add_scene(scene)
    image = ctx.save_image(ctx.renderer.render(scene, camera).rgb, "view")
    texts = [answer_text(c) for c in ("red", "blue")]
    if rng.random() < 0.5:
        texts.reverse()
    options = letter_options(texts)
    tallest = max(objects, key=lambda o: o.size[2]).id  # from the geometry, as derive() reads it
    answer = next(o.label for o in options if o.text == answer_text(tallest))
    heights = {o.id: round(float(o.size[2]), 4) for o in objects}
    shapes = {o.id: o.asset_id for o in objects}
    return [Item(
        id=ctx.item_id("base"), suite=SUITE, task=TASK, subtype=TASK,
        question="<image>\nTwo objects stand side by side, one red and one blue. Which of them is taller?",
        images=[image], answer_type="mcq", answer=answer, options=options, scene_id=scene.scene_id,
        seed=ctx.seed, split=ctx.split,  # type: ignore[arg-type]
        metadata={"heights": heights, "height_ratio": round(max(heights.values()) / min(heights.values()), 4),
                  "shapes": shapes},
    )]
