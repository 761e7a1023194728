"""SpinBench identity matching: which of 3 or 4 views shows a different object?

All but one image show the same object (same asset, proportions, colour and scale)
from cameras at different azimuths; the odd image shows another object of the same
category. The layout (image-first / text-first / interleaved) is where the ``<image>``
markers sit in the question. ``derive`` finds the image whose object differs from
the others by its identity key in the stored scene.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from perspecta.dataset.item import Item, label_of_image
from perspecta.suites.context import TaskContext
from perspecta.suites.registry import task
from perspecta.suites.spin.common import (
    FramesFacts,
    dress_background,
    DOMAINS,
    LAYOUTS,
    SUITE,
    Strata,
    display_name,
    domain_assets,
    frame,
    frames_of,
    identity_key,
    image_option_question,
    image_options,
    image_size,
    make_item,
    orbit_like,
    pick,
    render_checked,
    resampled,
    save_results,
)
from perspecta.world.oracle import wrap180
from perspecta.world.samplers import fit_distance, sample_studio
from perspecta.world.samplers.common import instantiate, make_object
from perspecta.world.scene import Scene

TASK = "identity_matching"
MIN_VIEW_GAP = 40.0  # degrees between the azimuths of any two views

PHRASES = {
    3: (
        "Which of these three images shows a different {noun}?",
        "Two of these images show the same {noun} from different viewpoints. Which image shows a different one?",
        "One of the three pictures is not the same {noun} as the other two. Which one is it?",
    ),
    4: (
        "Which of these four images shows a different {noun}?",
        "Three of these images show the same {noun} from different viewpoints. Which image shows a different one?",
        "One of the four pictures is not the same {noun} as the other three. Which one is it?",
    ),
}
NOUNS = {"car": "car", "person": "person", "object": "object"}


def odd_image(item: Item, scenes: dict[str, Scene]) -> int:
    scene = scenes[item.scene_id]
    keys = []
    for f in frames_of(item):
        if len(f["objects"]) != 1:
            raise ValueError(f"item {item.id}: identity frames show exactly one object")
        keys.append(identity_key(scene.object(f["objects"][0])))
    counts = Counter(keys)
    odd = [i for i, k in enumerate(keys) if counts[k] == 1]
    if len(odd) != 1 or len(counts) != 2:
        raise ValueError(f"item {item.id}: images do not show one odd object among identical ones ({len(counts)} identities)")
    return odd[0]


def derive(item: Item, scenes: dict[str, Scene]) -> str:
    return item.label_of_image(odd_image(item, scenes))


def paper_subtype(domain: str, k: int, layout: str) -> str:
    base = {"car": "car", "person": "face", "object": "object"}[domain] + "_identity"
    if k == 4:
        return f"{base}_quartet_{layout}"
    return base if domain != "object" else f"{base}_{layout}"


def shape_distance(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    """How unlike two assets' real extents are (sum of absolute log ratios per axis, with the
    two ground axes sorted so a yaw does not count): 0 for the same box."""
    fa, fb = sorted(a[:2]) + [a[2]], sorted(b[:2]) + [b[2]]
    return float(sum(abs(np.log(max(x, 1e-3) / max(y, 1e-3))) for x, y in zip(fa, fb)))


def _view_azimuths(ctx: TaskContext, k: int, front: float) -> list[float]:
    """k azimuths around the object, pairwise at least MIN_VIEW_GAP apart."""
    for _ in range(100):
        az = [float(front + ctx.rng.uniform(-150.0, 150.0)) for _ in range(k)]
        ok = all(abs(wrap180(a - b)) >= MIN_VIEW_GAP for i, a in enumerate(az) for b in az[i + 1:])
        if ok:
            return az
    raise RuntimeError("could not space the identity views")  # pragma: no cover - 100 draws always suffice


@task(SUITE, TASK, derive=derive, description="Which of 3-4 views shows a different object (cars, people, objects)")
def generate(ctx: TaskContext) -> list[Item]:
    st = Strata(ctx)
    domain = st.draw("domain", DOMAINS)
    k = st.draw("k", (3, 4))
    layout = st.draw("layout", LAYOUTS)
    odd = st.draw("letter", list(range(k)))
    # share of units whose look-alike is repainted in the target's colour, so only shape tells them apart
    same_color = float(ctx.knob("same_color_share", {"easy": 0.0, "standard": 1.0, "hard": 1.0}))
    # share of units whose look-alike is the same-category asset closest in shape (a standing
    # person for a standing person, a hatchback for a hatchback), not any of the category
    closest = float(ctx.knob("closest_lookalike_share", {"easy": 0.0, "standard": 0.8, "hard": 1.0}))

    def build() -> list[Item]:
        pool = domain_assets(ctx.library, domain)
        main = pool[int(ctx.rng.integers(len(pool)))]
        same_cat = [a for a in pool if a.category == main.category and a.asset_id != main.asset_id]
        others = same_cat or [a for a in pool if a.asset_id != main.asset_id] or [main]
        if ctx.rng.random() < closest:
            others = [min(others, key=lambda a: shape_distance(a.size, main.size))]
        other = others[int(ctx.rng.integers(len(others)))]
        size = image_size(ctx)
        paint = (tuple(round(float(v), 4) for v in ctx.rng.uniform(0.15, 0.85, 3))
                 if ctx.rng.random() < same_color else None)
        scene = dress_background(ctx, sample_studio(
            ctx.rng, ctx.library, scene_id=ctx.scene_prefix, seed=ctx.seed, asset_id=main.asset_id,
            image_size=size, elevation_range=(8.0, 30.0), color=paint))  # type: ignore[arg-type]
        obj = scene.objects[0]
        inst = instantiate(ctx.rng, ctx.library, other, color=paint)  # type: ignore[arg-type]
        distractor = make_object("obj1", inst, 0.0, 0.0, float(ctx.rng.uniform(0.0, 360.0)))
        if identity_key(distractor) == identity_key(obj):  # same procedural asset drew the same params
            raise RuntimeError(f"{scene.scene_id}: distractor is identical to the target")
        scene.objects.append(distractor)
        azimuths = _view_azimuths(ctx, k, obj.pose.yaw)
        main_cam = scene.camera("main")
        frames = []
        for i, az in enumerate(azimuths):
            target = distractor if i == odd else obj
            radius = float((sum(s * s for s in target.size)) ** 0.5 / 2)
            dist = fit_distance(radius, main_cam.fov_y, main_cam.width, main_cam.height, float(ctx.rng.uniform(0.6, 0.8)))
            orbit_like(scene, f"view{i}", target, az, distance=dist)
            frames.append(frame(f"view{i}", [target.id]))
        named = {f"object in image {i + 1}": (f["objects"][0], [i]) for i, f in enumerate(frames)}
        results, readability = render_checked(ctx, scene, frames, named)
        ctx.add_scene(scene)
        images = save_results(ctx, results, [f"view{i}" for i in range(len(frames))])

        noun = NOUNS[domain] if domain != "object" else display_name(obj.category)
        question = image_option_question(layout, pick(ctx, PHRASES[k]).format(noun=noun), k)
        options = image_options(k)
        answer = label_of_image(options, odd)
        subtype = f"{domain}_identity{'_quartet' if k == 4 else ''}_{layout}"
        meta = {
            "family": "identity_matching",
            "paper_subtype": paper_subtype(domain, k, layout),
            "category": obj.category,
            "domain": domain,
            "asset_id": obj.asset_id,
            "distractor_asset_id": distractor.asset_id,
            "repainted": paint is not None,
            "layout": layout,
            "n_images": k,
            "odd_index": odd,
            "view_azimuths": [round(a % 360.0, 3) for a in azimuths],
            "readability": readability,
            **FramesFacts(frames=frames).to_metadata(),
            "frame_of_reference": "none",
        }
        return [make_item(ctx, variant="base", suffix="", group_suffix="", subtype=subtype, question=question,
                          images=images, options=options, answer=answer, scene=scene, metadata=meta)]

    return resampled(ctx, build)
