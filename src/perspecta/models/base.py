"""The one protocol every model backend speaks: ``async generate(request) -> Response``.

A request carries the prompt text with its ``<image>`` markers, the image files in
marker order and the generation settings; baselines also read the item itself (chance
needs the options, the oracle its scene). Backends raise :class:`BackendError` for a
request that did not produce a response; ``retryable`` tells the runner whether
trying again can help (429/5xx/timeouts/connection errors/garbled bodies) or not
(a 400, a baseline that is undefined for the item).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from perspecta.dataset.item import Item


@dataclass(frozen=True)
class GenConfig:
    """Sampling settings sent with every request (part of the cache key)."""

    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 512
    seed: int | None = None

    @property
    def deterministic(self) -> bool:
        """Greedy decoding or a fixed sampling seed: the same request gives the same answer."""
        return self.temperature == 0.0 or self.seed is not None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


SUITE_DEFAULT = "suite"


@dataclass(frozen=True)
class InputSettings:
    """How images are sent: ``max_side`` an int = downscale to that longest side, None = full
    resolution, ``"suite"`` = each suite's paper protocol (its ``EVAL_IMAGE_MAX_SIDE``; the runner
    resolves it per item before a backend sees it); ``depth`` = depth map beside the image."""

    max_side: int | None | str = SUITE_DEFAULT
    depth: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def for_suite(self, suite: str) -> InputSettings:
        """The settings with ``max_side`` resolved for ``suite`` (an explicit value wins)."""
        if self.max_side != SUITE_DEFAULT:
            return self
        from dataclasses import replace

        from perspecta.suites.registry import suite_setting

        try:
            side = suite_setting(suite, "EVAL_IMAGE_MAX_SIDE", None)
        except ImportError:  # a suite registered outside perspecta.suites declares nothing: native
            side = None
        return replace(self, max_side=int(side) if side else None)  # type: ignore[arg-type]


@dataclass
class Request:
    item: Item
    prompt: str  # the text sent, with one "<image>" marker per image, in order
    images: list[Path]  # absolute paths, marker order
    gen: GenConfig = field(default_factory=GenConfig)
    inputs: InputSettings = field(default_factory=InputSettings)

    def __post_init__(self) -> None:
        # a backend always sees concrete settings: "suite" becomes this item's suite default here
        self.inputs = self.inputs.for_suite(self.item.suite)


@dataclass
class Response:
    text: str
    usage: dict[str, Any] = field(default_factory=dict)


class BackendError(Exception):
    """A request that produced no usable response."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


@runtime_checkable
class Backend(Protocol):
    name: str  # "<kind>:<model>", e.g. "openai:qwen2.5-vl-7b", "baseline:chance"

    async def generate(self, request: Request) -> Response: ...

    async def aclose(self) -> None: ...
