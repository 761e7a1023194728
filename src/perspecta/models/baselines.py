"""Reference backends that need no model: chance, prior, oracle, and blind (text only).

They answer through the same ``<answer>…</answer>`` text a model would write, so the
whole extraction and scoring path is exercised; the oracle scoring 100% is therefore
a self-check of answer keys *and* of extraction.

- chance: uniform over the item's option labels (yes/no for yes/no items; for open items
  the answer space the item declares in ``metadata["candidates"]`` — the room's object
  names, the counts 0..10, left/right — the same list extraction reads and the audit's
  1/#candidates chance uses), drawn from a generator seeded by (seed, item id) so reruns
  and resumes agree. An open item that declares no candidates has no defined chance: it
  is recorded failed, not guessed.
- prior: the most frequent answer of the item's task and subtype, matched by option
  *text* (labels are shuffled per item), estimated on items it is never scored on: the
  dataset's ``train`` split when it has one, otherwise a *reference draw* — the same
  tasks and settings generated afresh with another root seed (:func:`reference_draw`),
  which shares no scene or item with the evaluated data. The source is recorded in the
  run file and shown in the report. (An in-sample majority would score the evaluated
  answers against themselves: ~68% against 37% chance on balanced data, 100% on
  one-item subtypes.)
- oracle: re-derives the answer from the stored scene with the task's ``derive``.
- blind: wraps a text-capable backend and sends the prompt with images removed.
"""

from __future__ import annotations

import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from perspecta.dataset.item import Item
from perspecta.models.base import Backend, BackendError, Request, Response
from perspecta.world.scene import Scene

if TYPE_CHECKING:
    from perspecta.run.dataset import EvalDataset


def _answer(text: str) -> Response:
    return Response(text=f"<answer>{text}</answer>")


def _answer_key(item: Item) -> str:
    """What a prior counts: the option text for MCQ (labels are shuffled), else the answer."""
    if item.answer_type == "mcq":
        o = item.option(item.answer)
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
            labels = [str(c) for c in (item.metadata or {}).get("candidates") or []]
            if not labels:
                raise BackendError("chance baseline is undefined for an open-ended item with no "
                                   'metadata["candidates"]', retryable=False)
        return _answer(labels[int(rng.integers(len(labels)))])

    async def aclose(self) -> None:
        return None


REFERENCE_SEED_OFFSET = 100_003  # the reference draw's root seed = dataset seed + this


@dataclass
class _Prior:
    counts: Counter  # answer text (or answer) -> count
    labels: Counter  # gold option label -> count (MCQ)


def _levels(item: Item) -> tuple[str, str]:
    """Where a prior is pooled: the subtype, then the whole task — always within one answer type."""
    return (f"{item.suite}/{item.task}/{item.subtype}/{item.answer_type}", f"{item.suite}/{item.task}/{item.answer_type}")


def reference_draw(dataset_root: Path, out: Path, *, workers: int = 1) -> Path:
    """Generate (or reuse) a fresh draw of ``dataset_root``'s tasks with another root seed into ``out``.

    Same suites, tasks, units per task, renderer, image size and suite settings as the
    dataset's manifest; a different seed, so no scene or item is shared with it."""
    from perspecta.dataset.generate import GenerationConfig, UnitFailed, generate_dataset
    from perspecta.dataset.io import read_manifest

    cfg = read_manifest(dataset_root / "manifest.json").get("config") or {}
    if not cfg.get("suites"):
        raise ValueError(f"{dataset_root}: manifest has no generation config; the prior needs a train split or "
                         "a reference draw made with `perspecta generate` (another --seed)")
    config = GenerationConfig(suites=list(cfg["suites"]), n=int(cfg.get("n", 20)),
                              seed=int(cfg.get("seed", 0)) + REFERENCE_SEED_OFFSET,
                              renderer=cfg.get("renderer", "gl"), image_size=cfg.get("image_size"),
                              suite_config=cfg.get("suite_config") or {}, tasks=cfg.get("tasks"))
    try:
        generate_dataset(out, config, workers=workers, resume=out.exists())
    except UnitFailed as e:  # one readable line, not a traceback: the user can act on it
        raise ValueError(f"the prior's reference draw (seed {config.seed}, into {out}) stopped: {e}; give the "
                         "dataset a train split (--split train=0.5,test=0.5) or rerun to resume the draw") from None
    return out


class PriorBackend:
    """Most frequent answer per task and subtype in ``pool``, items never scored against it."""

    name = "baseline:prior"
    cacheable = False

    def __init__(self, pool: list[Item], source: dict[str, Any]) -> None:
        self._priors: dict[str, _Prior] = {}
        for it in pool:  # per subtype, and per task for subtypes the pool lacks
            for key in _levels(it):
                prior = self._priors.setdefault(key, _Prior(Counter(), Counter()))
                prior.counts[_answer_key(it)] += 1
                if it.answer_type == "mcq":
                    prior.labels[it.answer] += 1
        self.source = source

    @classmethod
    def for_dataset(cls, dataset: EvalDataset, eval_items: list[Item], reference_dir: Path | None) -> PriorBackend:
        """The train split when the dataset has one, else a reference draw (made into ``reference_dir``)."""
        train = [it for it in dataset.items if it.split == "train"]
        overlap = {it.id for it in train} & {it.id for it in eval_items}
        if train and not overlap:
            return cls(train, {"kind": "train split", "dataset": str(dataset.root), "items": len(train)})
        if reference_dir is None:
            raise ValueError("baseline:prior needs items it is not scored on: a train split (generate with "
                             "--split train=0.5,test=0.5) or a reference draw directory")
        from perspecta.run.dataset import load_dataset

        ref = load_dataset(reference_draw(dataset.root, Path(reference_dir)))
        seed = ref.manifest.get("seed")
        return cls(ref.items, {"kind": "reference draw", "dataset": str(ref.root), "seed": seed,
                               "items": len(ref.items)})

    def run_info(self) -> dict[str, Any]:
        """What the run file records about this baseline."""
        return {"prior_source": self.source}

    def _choice(self, item: Item) -> str:
        """The most frequent reference answer of the item's subtype (else task) that the item can take:
        by option text for MCQ, else by label position; ties broken by text, so it is deterministic."""
        for key in _levels(item):
            prior = self._priors.get(key)
            if prior is None:
                continue
            ranked = sorted(prior.counts, key=lambda k: (-prior.counts[k], k))
            if item.answer_type != "mcq":
                return ranked[0]
            texts = {(o.text if o.text is not None else o.label): o.label for o in item.options}
            for k in ranked:
                if k in texts:
                    return texts[k]
            labels = [lab for lab in sorted(prior.labels, key=lambda k: (-prior.labels[k], k))
                      if lab in {o.label for o in item.options}]
            if labels:  # the item's options are texts the reference never answered: the likeliest position
                return labels[0]
        raise BackendError(f"prior baseline: no {self.source['kind']} items for {item.suite}/{item.task}",
                           retryable=False)

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
