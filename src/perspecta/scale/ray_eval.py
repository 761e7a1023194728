"""``perspecta eval --executor ray``: model calls spread over Ray actors, each owning a real backend.

Only the model calls move to the cluster. The driver keeps the ordinary runner
(:func:`perspecta.run.evaluate_async`): it builds every request, answers what the
response cache already holds, writes the append-only ``results.jsonl`` and skips on
a rerun whatever is finished. So a Ray evaluation has exactly the local runner's
cache and resume guarantees — after a kill and a rerun nothing recorded is asked for
again — because it *is* the local runner with a different backend.

That backend, :class:`RayBackend`, holds one actor per endpoint (``--base-url``
repeated: several servers of one model) times ``actors_per_endpoint`` and sends each
request to the live actor with the fewest requests in flight, so a slow endpoint gets
less work and a dead actor none. Several models run at once, each with its own actors,
all appending to the same results log (one ``write`` per line, ``O_APPEND``).

Actors read the images from the paths in the request: on a multi-node cluster the
dataset must be at the same path on every node (a shared filesystem).
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

from perspecta.models.base import BackendError, Request, Response
from perspecta.run.dataset import load_dataset
from perspecta.run.runner import EvalConfig, EvalResult, evaluate_async
from perspecta.scale import ray_cluster


class BackendActor:
    """Runs inside a Ray actor: builds the backend from its spec exactly as the local runner would."""

    def __init__(self, spec: str, dataset_dir: str, select: dict[str, Any], seed: int, base_url: str | None) -> None:
        from perspecta.models.factory import make_backend
        from perspecta.suites.registry import load_builtin_suites

        load_builtin_suites()
        ds = load_dataset(dataset_dir)
        self.backend = make_backend(spec, dataset=ds, eval_items=ds.select(**select), seed=seed, base_url=base_url)

    async def describe(self) -> tuple[str, bool]:
        return self.backend.name, getattr(self.backend, "cacheable", True)

    async def generate(self, request: Request) -> tuple[str, Any, Any]:
        """``("ok", text, usage)`` or ``("error", message, retryable)``: BackendError itself
        does not survive pickling (its ``retryable`` is keyword-only), so it travels as data."""
        try:
            response = await self.backend.generate(request)
        except BackendError as e:
            return "error", str(e), e.retryable
        return "ok", response.text, response.usage

    async def aclose(self) -> None:
        await self.backend.aclose()


def _actor_cpus(spec: str) -> float:
    """Local models need a core each; HTTP clients and baselines only wait."""
    return 1.0 if spec.removeprefix("blind:").startswith("hf:") else 0.0


class RayBackend:
    """The Backend protocol over several :class:`BackendActor`s (least requests in flight wins)."""

    def __init__(self, actors: list[Any], labels: list[str], name: str, cacheable: bool) -> None:
        self.name = name
        self.cacheable = cacheable
        self.labels = labels
        self._actors = actors
        self._in_flight = [0] * len(actors)
        self.served = [0] * len(actors)  # answered requests per actor
        self._dead: set[int] = set()

    @classmethod
    async def start(cls, spec: str, dataset_dir: Path, config: EvalConfig, *, base_urls: list[str | None],
                    actors_per_endpoint: int = 1) -> RayBackend:
        ray = ray_cluster.import_ray()
        actor_cls = ray.remote(BackendActor).options(num_cpus=_actor_cpus(spec), max_restarts=0)
        select = {"split": config.split, "suites": config.suites, "limit": config.limit}
        uses_url = spec.removeprefix("blind:").startswith("openai:")
        endpoints = (base_urls or [None]) if uses_url else [None]
        actors, labels = [], []
        for url in endpoints:
            for k in range(actors_per_endpoint):
                actors.append(actor_cls.remote(spec, str(dataset_dir.resolve()), select, config.seed, url))
                labels.append(f"{url or spec}#{k}")
        described = await asyncio.gather(*(a.describe.remote() for a in actors))  # surfaces a bad spec here
        return cls(actors, labels, described[0][0], described[0][1])

    def _pick(self) -> int:
        alive = [i for i in range(len(self._actors)) if i not in self._dead]
        if not alive:
            raise BackendError(f"every Ray actor of {self.name} has died", retryable=False)
        return min(alive, key=lambda i: self._in_flight[i])

    async def generate(self, request: Request) -> Response:
        ray = ray_cluster.import_ray()
        i = self._pick()
        self._in_flight[i] += 1
        try:
            status, a, b = await self._actors[i].generate.remote(request)
        except ray.exceptions.RayActorError as e:
            self._dead.add(i)  # the runner retries the request; _pick routes it elsewhere
            raise BackendError(f"Ray actor {self.labels[i]} died: {type(e).__name__}", retryable=True) from None
        finally:
            self._in_flight[i] -= 1
        if status != "ok":
            raise BackendError(a, retryable=b)
        self.served[i] += 1
        return Response(text=a, usage=b)

    async def aclose(self) -> None:
        ray = ray_cluster.import_ray()
        for i, actor in enumerate(self._actors):
            if i not in self._dead:
                try:
                    await actor.aclose.remote()
                except ray.exceptions.RayActorError:
                    pass
            ray.kill(actor)


async def _evaluate_all(dataset: Path, models: list[str], out_dir: Path, config: EvalConfig,
                        base_urls: list[str | None], actors_per_endpoint: int) -> list[tuple[EvalResult, dict]]:
    ds = load_dataset(dataset.resolve())  # actors read images by absolute path
    if len(models) > 1:  # one live progress display at a time
        config = dataclasses.replace(config, progress=False)
    backends = [await RayBackend.start(m, ds.root, config, base_urls=base_urls,
                                       actors_per_endpoint=actors_per_endpoint) for m in models]
    results = await asyncio.gather(*(evaluate_async(ds, b, out_dir, config) for b in backends))
    return [(r, dict(zip(b.labels, b.served))) for r, b in zip(results, backends)]


def evaluate_ray(dataset: str | Path, models: list[str], out_dir: str | Path, config: EvalConfig | None = None, *,
                 base_urls: list[str] | None = None, actors_per_endpoint: int = 1,
                 address: str | None = None) -> list[tuple[EvalResult, dict[str, int]]]:
    """Evaluate every model at once on Ray; return per model its result and requests served per actor."""
    if actors_per_endpoint < 1:
        raise ValueError(f"--workers must be at least 1, got {actors_per_endpoint}")
    if len(set(models)) != len(models):
        raise ValueError("each --model may be given once")
    started = ray_cluster.connect(address)
    try:
        return asyncio.run(_evaluate_all(Path(dataset), list(models), Path(out_dir), config or EvalConfig(),
                                         list(base_urls or []) or [None], actors_per_endpoint))
    finally:
        if started:
            ray_cluster.disconnect()
