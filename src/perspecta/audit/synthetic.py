"""Small synthetic datasets on disk, clean or with one planted shortcut.

The audit is tested on real files: ``items.jsonl``, PNG images, ``scenes.jsonl`` and a
manifest with checksums, laid out as ``perspecta generate`` lays them out (they pass
``perspecta validate --no-derive``). Each planted dataset has two clean tasks and one
task carrying the shortcut named by ``kind``:

``imbalance``         80% of the answers are "no"
``parity``            the answer is "yes" exactly when the unit index in the id is even
``text``              the question's wording ("left of" / "right of") fixes the answer
``text_slot``         MCQ: premises in the question order three objects; the one asked for is
                      always the one the premises name last (a rule on the text, any names)
``identical_images``  "no" items show two byte-identical images, "yes" items two different ones
``odd_one_out``       three image options, two of them look-alikes (past the ``near`` bits): the
                      answer is the third
``suite_feature``     a metadata field only the suite's ``audit_features`` hook reads fixes the answer
``clean``             no shortcut anywhere (iid uniform answers)

Images are random noise, so nothing about them says anything unless planted.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from perspecta.dataset.io import checksums, write_json_atomic, write_jsonl_atomic
from perspecta.dataset.item import IMAGE_MARKER, Item, Option, letter_options

PLANTS = ("clean", "imbalance", "parity", "text", "text_slot", "identical_images", "odd_one_out", "suite_feature")
SUITE = "toy"
HIDDEN_KEY = "pose_class"  # read only by the test suite's audit_features hook
_OBJECTS = ("chair", "lamp", "mug", "car", "vase", "sofa", "table", "plant", "dog", "bike")
_COLOURS = ("red", "blue", "green", "grey", "white", "black")
_SIDES = ("front", "back", "left side", "right side")
_SHAPES = ("round", "square", "tall", "flat")


def png_bytes(rng: np.random.Generator, size: int = 32) -> bytes:
    return _png(rng.integers(0, 256, size=(size, size, 3), dtype=np.uint8))


def write_dataset(root: str | Path, items: list[Item], images: dict[str, bytes]) -> Path:
    """Write ``items`` and ``images`` (dataset-relative path -> PNG bytes) as a dataset."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=False)
    for rel, data in images.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    write_jsonl_atomic(root / "items.jsonl", items)
    scene_ids = sorted({it.scene_id for it in items})
    write_jsonl_atomic(root / "scenes.jsonl", [{"scene_id": s, "seed": 0, "kind": "studio", "objects": []}
                                               for s in scene_ids])
    by_task: dict[str, int] = {}
    tasks: dict[str, set[str]] = {}
    for it in items:
        by_task[f"{it.suite}/{it.task}"] = by_task.get(f"{it.suite}/{it.task}", 0) + 1
        tasks.setdefault(it.suite, set()).add(it.task)
    manifest: dict[str, Any] = {
        "name": root.name, "generator": {"package": "perspecta", "version": "synthetic"},
        "created_by_command": "perspecta.audit.synthetic", "seed": 0,
        "suites": {s: {"tasks": sorted(t), "n": 0} for s, t in sorted(tasks.items())},
        "renderer": {"name": "none", "version": "synthetic"},
        "counts": {"items": len(items), "images": len({p for it in items for p in it.images}),
                   "scenes": len(scene_ids), "by_task": dict(sorted(by_task.items()))},
        "checksums": checksums(root, ["items.jsonl", "scenes.jsonl", *images]),
        "assets": [],
    }
    write_json_atomic(root / "manifest.json", manifest)
    return root


class _Builder:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.items: list[Item] = []
        self.images: dict[str, bytes] = {}

    def image(self, task: str, unit: int, name: str, data: bytes | None = None) -> str:
        rel = f"images/{SUITE}/{task}/{unit:06d}_{name}.png"
        self.images[rel] = data if data is not None else png_bytes(self.rng)
        return rel

    def add(self, task: str, unit: int, question: str, images: list[str], answer_type: str, answer: str, *,
            subtype: str, options: list[str] | None = None, metadata: dict[str, Any] | None = None) -> None:
        uid = f"{SUITE}/{task}/base/{unit:06d}"
        self.items.append(Item(
            id=uid, suite=SUITE, task=task, question=IMAGE_MARKER * len(images) + "\n" + question, images=images,
            answer_type=answer_type, answer=answer, subtype=subtype,  # type: ignore[arg-type]
            options=letter_options(options) if options else [], group=uid, scene_id=f"{SUITE}-{task}-{unit:06d}",
            metadata=metadata or {}))

    def pick(self, seq: tuple[str, ...] | list[str]) -> str:
        return seq[int(self.rng.integers(len(seq)))]


def _yesno_task(b: _Builder, task: str, n_units: int, answer_for: Any = None, identical_for_no: bool = False,
                wording: Any = None) -> None:
    """A two-subtype yes/no task; ``answer_for(unit)`` plants the answer, else iid uniform."""
    for u in range(n_units):
        answer = answer_for(u) if answer_for else b.pick(["yes", "no"])
        subtype = f"{task}_{b.pick(['near', 'far'])}"
        first = b.image(task, u, "a")
        if identical_for_no:
            second = b.image(task, u, "b", b.images[first] if answer == "no" else None)
            images = [first, second]
        else:
            images = [first]
        obj, other = b.pick(_OBJECTS), b.pick(_OBJECTS)
        relation = wording(answer) if wording else b.pick(["left of", "right of", "behind", "in front of"])
        colour = b.pick(_COLOURS)
        question = f"Is the {colour} {obj} {relation} the {other} as seen from the camera? Answer yes or no."
        meta = {"category": obj, "categories": [obj, other], HIDDEN_KEY: b.pick(_SHAPES)}
        b.add(task, u, question, images, "yesno", answer, subtype=subtype, metadata=meta)


def _mcq_task(b: _Builder, task: str, n_units: int) -> None:
    """A clean 4-option MCQ task: sides in a random order, the answer uniformly one of them."""
    for u in range(n_units):
        order = list(_SIDES)
        b.rng.shuffle(order)
        answer = "ABCD"[int(b.rng.integers(4))]
        obj = b.pick(_OBJECTS)
        question = (f"From which side is the {b.pick(_COLOURS)} {obj} seen?\n"
                    + "\n".join(f"{'ABCD'[i]}. {t}" for i, t in enumerate(order)))
        b.add(task, u, question, [b.image(task, u, "view")], "mcq", answer,
              subtype=f"{task}_{b.pick(['indoor', 'outdoor'])}", options=order, metadata={"category": obj})


def _slot_task(b: _Builder, task: str, n_units: int) -> None:
    """An MCQ whose answer is fixed by the premises' order: the last-named object is farthest."""
    for u in range(n_units):
        names = [str(x) for x in b.rng.choice(_OBJECTS, size=3, replace=False)]
        order = list(names)
        b.rng.shuffle(order)
        question = (f"The {names[0]} is closer to you than the {names[1]}, and the {names[1]} is closer to you "
                    f"than the {names[2]}. Which of them is farthest from you?\n"
                    + "\n".join(f"{'ABC'[i]}. {t}" for i, t in enumerate(order)))
        b.add(task, u, question, [b.image(task, u, "view")], "mcq", "ABC"[order.index(names[2])],
              subtype=f"{task}_{b.pick(['near', 'far'])}", options=order, metadata={"category": names[0]})


def _odd_one_out_task(b: _Builder, task: str, n_units: int) -> None:
    """Three image options: two look alike (one is the other with a quadrant repainted, far
    more than the ``near`` bits apart) and the answer is the third, whatever its letter."""
    odds = b.rng.permutation(np.arange(n_units) % 3)  # letters balanced: no prior to learn
    for u in range(n_units):
        base = b.rng.integers(0, 256, size=(32, 32, 3), dtype=np.uint8)
        twin = base.copy()
        y, x = (int(v) * 16 for v in b.rng.integers(0, 2, size=2))
        twin[y:y + 16, x:x + 16] = b.rng.integers(0, 256, size=(16, 16, 3), dtype=np.uint8)
        odd = int(odds[u])
        datas = [_png(base), _png(twin)]
        datas.insert(odd, png_bytes(b.rng))
        shown = b.image(task, u, "ref")
        cands = [b.image(task, u, f"cand{i}", d) for i, d in enumerate(datas)]
        obj = b.pick(_OBJECTS)
        question = (f"Which candidate shows the {obj} from the back?\n"
                    + "\n".join(f"{'ABC'[i]}. {IMAGE_MARKER}" for i in range(3)))
        uid = f"{SUITE}/{task}/base/{u:06d}"
        b.items.append(Item(
            id=uid, suite=SUITE, task=task, question=IMAGE_MARKER + "\n" + question, images=[shown, *cands],
            answer_type="mcq", answer="ABC"[odd], subtype=f"{task}_{b.pick(['near', 'far'])}",
            options=[Option(label="ABC"[i], image=1 + i) for i in range(3)], group=uid,
            scene_id=f"{SUITE}-{task}-{u:06d}", metadata={"category": obj}))


def _png(pixels: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG")
    return buf.getvalue()


def _open_task(b: _Builder, task: str, n_units: int) -> None:
    """A clean open task: count 1-4, uniform."""
    for u in range(n_units):
        obj = b.pick(_OBJECTS)
        b.add(task, u, f"How many {obj}s are in the image? Answer with a number.", [b.image(task, u, "view")],
              "open", str(int(b.rng.integers(1, 5))), subtype=task, metadata={"category": obj})


def planted_dataset(root: str | Path, kind: str, *, n_units: int = 60, seed: int = 0,
                    text_only_controls: bool = False) -> Path:
    """Write a dataset with the shortcut ``kind`` (see the module docstring) in task
    ``planted`` and clean tasks ``choice`` (4-option MCQ) and ``count`` (open). With
    ``text_only_controls`` the planted items are marked ``metadata["control"] = "text_only"``."""
    if kind not in PLANTS:
        raise ValueError(f"unknown plant {kind!r}; choose from {', '.join(PLANTS)}")
    b = _Builder(seed)
    _mcq_task(b, "choice", n_units)
    _open_task(b, "count", n_units)
    if kind == "clean":
        _yesno_task(b, "planted", n_units)
    elif kind == "imbalance":
        _yesno_task(b, "planted", n_units, answer_for=lambda u: "no" if b.rng.random() < 0.8 else "yes")
    elif kind == "parity":
        _yesno_task(b, "planted", n_units, answer_for=lambda u: "yes" if u % 2 == 0 else "no")
    elif kind == "text":
        _yesno_task(b, "planted", n_units, wording=lambda a: "left of" if a == "yes" else "right of")
    elif kind == "text_slot":
        _slot_task(b, "planted", n_units)
    elif kind == "identical_images":
        _yesno_task(b, "planted", n_units, identical_for_no=True)
    elif kind == "odd_one_out":
        _odd_one_out_task(b, "planted", n_units)
    elif kind == "suite_feature":
        _yesno_task(b, "planted", n_units)
        for it in b.items:
            if it.task == "planted":
                it.metadata[HIDDEN_KEY] = "side" if it.answer == "yes" else b.pick(["front", "back"])
    if text_only_controls:
        for it in b.items:
            if it.task == "planted":
                it.metadata["control"] = "text_only"
    return write_dataset(root, b.items, b.images)


def hidden_key_features(item: dict[str, Any]) -> dict[str, str]:
    """The ``audit_features`` hook a test suite declares for ``suite_feature`` datasets."""
    return {HIDDEN_KEY: str(item.get("metadata", {}).get(HIDDEN_KEY, ""))}
