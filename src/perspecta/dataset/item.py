"""The item record: one benchmark question, as one JSON line of ``items.jsonl``.

Modelled on SpinBench's ``{problem, answer, images, metadata}`` and extended with what
the four suites need (see shared DESIGN.md). ``question`` carries one ``<image>`` marker
per entry of ``images`` so image-first, text-first and interleaved layouts are data,
not code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

IMAGE_MARKER = "<image>"

AnswerType = Literal["mcq", "yesno", "open"]
Granularity = Literal["coarse", "granular"]
Split = Literal["test", "train", "val"]


@dataclass
class Option:
    label: str
    text: str | None = None
    image: int | None = None  # index into the item's images, for image options

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"label": self.label}
        if self.text is not None:
            d["text"] = self.text
        if self.image is not None:
            d["image"] = self.image
        return d


@dataclass
class Item:
    id: str
    suite: str
    task: str
    question: str
    images: list[str]
    answer_type: AnswerType
    answer: str
    subtype: str = ""
    granularity: Granularity | None = None
    options: list[Option] = field(default_factory=list)
    answer_aliases: list[str] = field(default_factory=list)
    group: str = ""
    variant: str = "base"
    split: Split = "test"
    scene_id: str = ""
    seed: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["options"] = [o.to_dict() for o in self.options]
        return d

    def label_of(self, text: str) -> str:
        """The label of the option whose text is ``text`` (a task's ``derive`` ends here:
        geometry gives the answer's text, the item stores its letter)."""
        return label_of_text(self.options, text, self.id)

    def label_of_image(self, image: int) -> str:
        """The label of the option that shows image ``image``."""
        return label_of_image(self.options, image, self.id)

    def option(self, label: str) -> Option:
        """The option with label ``label``."""
        for o in self.options:
            if o.label == label:
                return o
        raise ValueError(f"item {self.id}: no option labelled {label!r}")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Item:
        """Build an item from a dict that already passed :func:`perspecta.dataset.schema.check_item`."""
        fields = dict(d)
        fields["options"] = [Option(**o) for o in d.get("options", [])]
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in fields.items() if k in known})


def letter_options(texts: list[str]) -> list[Option]:
    """Label a list of option texts A, B, C, ... in the order given."""
    return [Option(label=chr(ord("A") + i), text=t) for i, t in enumerate(texts)]


def label_of_text(options: Sequence[Option], text: str, item_id: str = "") -> str:
    """The label of the option whose text is ``text``, for generators that hold the
    options before the item exists (otherwise use :meth:`Item.label_of`). Raises
    ValueError naming the item when no option has that text: the geometry's answer
    must always be one of the choices offered."""
    for o in options:
        if o.text == text:
            return o.label
    raise ValueError(f"item {item_id}: the geometric answer {text!r} is not among its options")


def label_of_image(options: Sequence[Option], image: int, item_id: str = "") -> str:
    """The label of the option that shows image ``image`` (see :func:`label_of_text`)."""
    for o in options:
        if o.image == image:
            return o.label
    raise ValueError(f"item {item_id}: image {image} is not an option")
