"""Reference backends that need no model: chance, prior, oracle, and blind (text only).

They answer through the same ``<answer>…</answer>`` text a model would write, so the
whole extraction and scoring path is exercised; the oracle scoring 100% is therefore
a self-check of answer keys *and* of extraction.

- chance: uniform over the item's option labels (yes/no for yes/no items), drawn from a
  generator seeded by (seed, item id) so reruns and resumes agree. Undefined for
  open-ended items: those are recorded failed, not guessed.
- prior: the most frequent answer of the item's task in the held-out ``train`` split,
  matched by option *text* (labels are shuffled per item) and falling back to the
  label. Without a train split it is the in-sample majority over the evaluated items of
  the task (the run records the source). Leave-one-out would be worse than useless here:
  our answers are balanced by design, so dropping an item's own answer makes the
  majority systematically *another* answer and the "prior" scores below chance.
- oracle: re-derives the answer from the stored scene with the task's ``derive``.
- blind: wraps a text-capable backend and sends the prompt with images removed.
"""

from __future__ import annotations

import zlib
from collections import Counter
from dataclasses import dataclass

import numpy as np

from perspecta.dataset.item import Item
from perspecta.models.base import Backend, BackendError, Request, Response
from perspecta.world.scene import Scene


def _answer(text: str) -> Response:
    return Response(text=f"<answer>{text}</answer>")


def _answer_key(item: Item) -> str:
    """What a prior counts: the option text for MCQ (labels are shuffled), else the answer."""
    if item.answer_type == "mcq":
        for o in item.options:
            if o.label == item.answer:
                return o.text if o.text is not None else o.label
    return item.answer


class ChanceBackend:
    name = "baseline:chance"
    cacheable = False

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    async def generate(self, request: Request) -> Response:
        item = request.item
        rng = np.random.default_rng([self.seed, zlib.crc32(item.id.encode()), request.gen.seed or 0])
        if item.answer_type == "mcq":
            labels = [o.label for o in item.options]
        elif item.answer_type == "yesno":
            labels = ["yes", "no"]
        else:
            raise BackendError("chance baseline is undefined for open-ended items", retryable=False)
        return _answer(labels[int(rng.integers(len(labels)))])

    async def aclose(self) -> None:
        return None


@dataclass
class _Prior:
    counts: Counter
    source: str  # "train" or "in-sample"


class PriorBackend:
    """Most frequent answer per task; see the module docstring for the fallback."""

    name = "baseline:prior"
    cacheable = False

    def __init__(self, all_items: list[Item], eval_items: list[Item]) -> None:
        train = [it for it in all_items if it.split == "train"]
        self._priors: dict[str, _Prior] = {}
        pool, source = (train, "train") if train else (eval_items, "in-sample")
        for it in pool:
            key = f"{it.suite}/{it.task}/{it.subtype}"
            self._priors.setdefault(key, _Prior(Counter(), source)).counts[_answer_key(it)] += 1
        self.source = source

    def _choice(self, item: Item) -> str:
        prior = self._priors.get(f"{item.suite}/{item.task}/{item.subtype}")
        if prior is None:
            raise BackendError(f"prior baseline: no {self.source} items for {item.suite}/{item.task}", retryable=False)
        counts = prior.counts
        # most frequent; ties broken by the text so the choice is deterministic
        ranked = sorted((k for k, c in counts.items() if c > 0), key=lambda k: (-counts[k], k))
        if item.answer_type == "mcq":
            texts = {(o.text if o.text is not None else o.label): o.label for o in item.options}
            for k in ranked:
                if k in texts:
                    return texts[k]
            raise BackendError(f"prior baseline: no frequent answer among the options of {item.id}", retryable=False)
        if not ranked:
            raise BackendError(f"prior baseline: no other items of {item.task} to learn from", retryable=False)
        return ranked[0]

    async def generate(self, request: Request) -> Response:
        return _answer(self._choice(request.item))

    async def aclose(self) -> None:
        return None


class OracleBackend:
    name = "baseline:oracle"
    cacheable = False

    def __init__(self, scenes: dict[str, Scene]) -> None:
        self.scenes = scenes

    async def generate(self, request: Request) -> Response:
        from perspecta.suites.registry import get_task

        item = request.item
        try:
            return _answer(get_task(item.suite, item.task).derive(item, self.scenes))
        except (KeyError, ValueError) as e:
            raise BackendError(f"oracle could not derive {item.id}: {e}", retryable=False) from None

    async def aclose(self) -> None:
        return None


class BlindBackend:
    """The same prompt without its images, through a text-capable backend."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.name = f"blind:{inner.name}"

    async def generate(self, request: Request) -> Response:
        from perspecta.dataset.item import IMAGE_MARKER

        text = "\n".join(line for line in request.prompt.split("\n") if line.strip() != IMAGE_MARKER)
        text = text.replace(IMAGE_MARKER, "")
        blind = Request(item=request.item, prompt=text.strip(), images=[], gen=request.gen, inputs=request.inputs)
        return await self.inner.generate(blind)

    async def aclose(self) -> None:
        await self.inner.aclose()
