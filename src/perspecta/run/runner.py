"""The evaluation loop: items x prompt modes x repeats -> ``results.jsonl``.

Scheduling: ``concurrency`` workers pull jobs from one queue, so a slow request never
holds back a batch (refill scheduling). Each attempt has its own timeout; timeouts,
429/5xx, connection errors and garbled bodies are retried with exponential backoff
and jitter; a request that still fails is written as ``failed`` with its error —
never replaced by a guess.

Durability: a response goes to the cache, then its scored record to the results log,
each as one flushed line. On start the log says which (model, mode, repeat, item) are
finished (any status but failed); the cache answers any request that was answered
before its record was written. So a rerun after ``kill -9`` asks the backend only
for what is missing or failed.

Integrity: every record carries the dataset's fingerprint (its manifest checksum) and
its request key (prompt, image bytes, generation and input settings). A results folder
holds one dataset: resuming into a folder with records of another dataset, or with
records of this model made under other settings, is refused with a one-line error —
never mixed. An item whose image is missing or unreadable is recorded as failed.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from perspecta.dataset.item import Item
from perspecta.models.base import (
    Backend,
    BackendError,
    GenConfig,
    SUITE_DEFAULT,
    InputSettings,
    Request,
)
from perspecta.run.cache import (
    AppendLog,
    FileHasher,
    ResponseCache,
    read_jsonl_tolerant,
    request_key,
)
from perspecta.run.dataset import EvalDataset, load_dataset
from perspecta.run.prompts import PROMPT_MODES, build_prompt
from perspecta.score.scoring import score_response
from perspecta.suites.registry import suite_spec
from perspecta.suites.spec import PromptSettings

RESULTS = "results.jsonl"
CACHE = "cache.jsonl"


@dataclass
class EvalConfig:
    concurrency: int = 16
    timeout_s: float = 120.0
    max_retries: int = 4
    backoff_base_s: float = 1.0
    backoff_max_s: float = 30.0
    prompt_modes: list[str] = field(default_factory=lambda: ["direct"])
    repeats: int = 1
    seed: int = 0
    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int | None = None  # None = the suite spec's PromptSettings for the mode
    inputs: InputSettings = field(default_factory=InputSettings)
    split: str | None = "test"
    suites: list[str] | None = None
    limit: int | None = None  # items per task
    cache_path: Path | None = None  # default: OUT/cache.jsonl
    progress: bool = True

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"--retries must be 0 or more, got {self.max_retries}")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"--limit must be at least 1 item per task, got {self.limit}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"--max-tokens must be at least 1, got {self.max_tokens}")
        side = self.inputs.max_side
        if side is not None and side != SUITE_DEFAULT and (not isinstance(side, int) or side < 16):
            raise ValueError(f"--image-max-side must be at least 16 pixels (or --high-res for native), got {side}")
        if self.concurrency < 1:
            raise ValueError(f"--concurrency must be at least 1, got {self.concurrency}")
        if self.repeats < 1:
            raise ValueError(f"--repeats must be at least 1, got {self.repeats}")
        if self.timeout_s <= 0:
            raise ValueError(f"--timeout must be positive, got {self.timeout_s}")
        for m in self.prompt_modes:
            if m not in PROMPT_MODES:
                raise ValueError(f"unknown prompt mode {m!r}; choose from {', '.join(PROMPT_MODES)}")

    def gen_for(self, item: Item, mode: str, repeat: int) -> GenConfig:
        if self.max_tokens:
            tokens = self.max_tokens
        else:  # the suite's budget for this answer mode (defaults for a suite without a spec)
            spec = suite_spec(item.suite)
            tokens = (spec.prompt if spec is not None else PromptSettings()).tokens_for(mode)
        sampled = self.repeats > 1 or self.temperature > 0
        return GenConfig(temperature=self.temperature, top_p=self.top_p, max_tokens=tokens,
                         seed=self.seed + repeat if sampled else None)


@dataclass
class EvalResult:
    out_dir: Path
    results_path: Path
    model: str
    counts: dict[str, int]
    seconds: float

    def records(self):
        from perspecta.score.metrics import read_records

        return [r for r in read_records(self.results_path) if r.model == self.model]

    def summary(self) -> dict[str, Any]:
        from perspecta.score.metrics import summarize

        return summarize(self.records())


@dataclass
class _Job:
    item: Item
    mode: str
    repeat: int
    request: Request
    key: str


class ResumeError(ValueError):
    """A results folder that cannot be continued without mixing runs."""


def _done_keys(results: Path, model: str, fingerprint: str) -> dict[tuple[str, int, str], str]:
    """(mode, repeat, item id) -> request key, of the latest non-failed record of ``model``.

    Raises :class:`ResumeError` when the log holds records of another dataset (or of an
    older version that recorded none): a folder holds one dataset's results."""
    latest: dict[tuple[str, int, str], tuple[str, str]] = {}
    for d in read_jsonl_tolerant(results):
        if d.get("dataset") != fingerprint:
            other = (f"of another dataset ({d['dataset']}, this one is {fingerprint})" if d.get("dataset")
                     else "without a dataset fingerprint (an older version), so another dataset's may be among them")
            raise ResumeError(f"{results.parent} holds results {other}; evaluate into a new --out to start a new run")
        if d.get("model") == model:
            latest[(d.get("prompt_mode", "direct"), int(d.get("repeat", 0)), d["item_id"])] = (
                d.get("status", ""), d.get("request_key", ""))
    return {k: key for k, (status, key) in latest.items() if status != "failed"}


def _check_depth(items: list[Item], ds: EvalDataset) -> None:
    """Every image to send has its depth map, before any request is made."""
    from perspecta.models.images import MissingDepthError, depth_path

    if "depth" not in ds.manifest:
        raise MissingDepthError(f"{ds.root}: --input depth-concat needs depth maps; this dataset was generated "
                                "without them (regenerate with --with-depth)")
    lacking: Counter[str] = Counter()
    for it in items:
        for rel in it.images:
            try:
                depth_path(ds.image_path(rel))
            except MissingDepthError:
                lacking[f"{it.suite}/{it.task}"] += 1
    if lacking:
        raise MissingDepthError(f"{ds.root}: --input depth-concat: {sum(lacking.values())} images have no depth map "
                                f"(not renders, e.g. collages of scaled views; manifest 'depth.without'), in "
                                + ", ".join(f"{k} ({v})" for k, v in sorted(lacking.items()))
                                + "; leave those tasks out (--suite)")


def _backoff(attempt: int, cfg: EvalConfig) -> float:
    """Exponential with equal jitter: half the step fixed, half uniform."""
    step = min(cfg.backoff_max_s, cfg.backoff_base_s * (2 ** attempt))
    return step / 2 + random.uniform(0, step / 2)


async def _request_with_retries(backend: Backend, req: Request, cfg: EvalConfig,
                                on_retry: Callable[[], None]) -> tuple[str | None, dict, str | None, float]:
    """(text, usage, error, latency of the successful attempt)."""
    error = "not attempted"
    for attempt in range(cfg.max_retries + 1):
        start = time.perf_counter()
        try:
            async with asyncio.timeout(cfg.timeout_s):
                resp = await backend.generate(req)
            return resp.text, resp.usage, None, time.perf_counter() - start
        except TimeoutError:
            error, retry = f"timeout after {cfg.timeout_s:g} s", True
        except BackendError as e:
            error, retry = str(e), e.retryable
        except OSError as e:  # an image that cannot be read or decoded: this item fails, the run goes on
            error, retry = f"image unreadable: {e}", False
        if not retry:
            break
        if attempt < cfg.max_retries:
            on_retry()
            await asyncio.sleep(_backoff(attempt, cfg))
    n = attempt + 1
    return None, {}, f"{error} (after {n} attempt{'s' if n > 1 else ''})", 0.0


class _Progress:
    """rich progress bar with rate, ETA, failures and retries; a no-op when disabled."""

    def __init__(self, enabled: bool, total: int, label: str) -> None:
        self.enabled = enabled and total > 0
        self.failed = self.retries = self.done = 0
        self.start = time.perf_counter()
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._p = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                               TextColumn("{task.fields[rate]}"), TextColumn("{task.fields[fails]}"),
                               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
            self._p.start()
            self._task = self._p.add_task(label, total=total, rate="", fails="")

    def advance(self, failed: bool) -> None:
        self.done += 1
        self.failed += failed
        self._refresh(1)

    def retry(self) -> None:
        self.retries += 1
        self._refresh(0)

    def _refresh(self, step: int) -> None:
        if not self.enabled:
            return
        el = time.perf_counter() - self.start
        fails = f"[red]{self.failed} failed[/]" if self.failed else "0 failed"
        self._p.update(self._task, advance=step, rate=f"{self.done / el:.1f} req/s" if el > 0 else "",
                       fails=f"{fails}, {self.retries} retries")

    def close(self) -> None:
        if self.enabled:
            self._p.stop()


async def evaluate_async(dataset: str | Path | EvalDataset, backend: Backend | str, out_dir: str | Path,
                         config: EvalConfig | None = None, **backend_kwargs: Any) -> EvalResult:
    from perspecta.suites.registry import load_builtin_suites

    cfg = config or EvalConfig()
    load_builtin_suites()  # once, up front: a broken suite import fails here, not in every worker
    ds = dataset if isinstance(dataset, EvalDataset) else load_dataset(dataset)
    if cfg.suites:
        from perspecta.suites.registry import suites as known_suites

        unknown = sorted(set(cfg.suites) - set(known_suites()))
        if unknown:
            raise ValueError(f"unknown suite {', '.join(map(repr, unknown))}; known suites: {', '.join(known_suites())}")
    items = ds.select(split=cfg.split, suites=cfg.suites, limit=cfg.limit)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a results directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / ".write-test").touch()
        (out / ".write-test").unlink()
    except OSError as e:
        raise ValueError(f"--out {out}: cannot write the results directory ({e.strerror or e})") from None
    if isinstance(backend, str):
        from perspecta.models.factory import make_backend

        backend = make_backend(backend, dataset=ds, eval_items=items, seed=cfg.seed, **backend_kwargs)
    if cfg.inputs.depth:
        _check_depth(items, ds)
    results_path = out / RESULTS
    started = time.perf_counter()
    done = _done_keys(results_path, backend.name, ds.fingerprint)
    hasher = FileHasher()
    jobs: list[_Job] = []
    unreadable: list[tuple[_Job, str]] = []
    counts: Counter[str] = Counter()
    resumed_other_settings = 0
    for repeat in range(cfg.repeats):
        for mode in cfg.prompt_modes:
            for it in items:
                prompt = build_prompt(it, mode)
                paths = [ds.image_path(p) for p in it.images]
                gen = cfg.gen_for(it, mode, repeat)
                inputs = cfg.inputs.for_suite(it.suite)
                try:
                    digests = [hasher(p) for p in paths]
                    error = None
                except OSError as e:  # a missing, unreadable or truncated image fails this item only
                    digests, error = [], f"image unreadable: {e.strerror + ': ' + str(e.filename) if e.strerror else e}"
                key = request_key(backend.name, prompt, digests, gen, inputs)
                prior = done.get((mode, repeat, it.id))
                if prior is not None:
                    if prior and prior != key and error is None:
                        resumed_other_settings += 1
                    counts["resumed"] += 1
                    continue
                job = _Job(it, mode, repeat, Request(it, prompt, paths, gen, inputs), key)
                if error is not None:
                    unreadable.append((job, error))
                else:
                    jobs.append(job)
    if resumed_other_settings:
        raise ResumeError(f"{out} holds {resumed_other_settings} {backend.name} results made with other generation "
                          "or input settings (or prompts); evaluate into a new --out to start a new run")
    run_file = out / f"run-{backend.name.replace('/', '_').replace(':', '_')}.json"
    run_file.write_text(json.dumps({
        "dataset": str(ds.root), "dataset_fingerprint": ds.fingerprint, "model": backend.name,
        "suite_config": (ds.manifest.get("config") or {}).get("suite_config") or {},
        "images_sent": _images_sent(items, ds, cfg),
        **({"backend": backend.describe()} if hasattr(backend, "describe") else {}),
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(cfg).items()},
        **(backend.run_info() if hasattr(backend, "run_info") else {}),
    }, indent=2, default=str))

    cacheable = getattr(backend, "cacheable", True)
    cache = ResponseCache(cfg.cache_path or out / CACHE) if cacheable else None
    log = AppendLog(results_path)

    def write(job: _Job, text: str | None, error: str | None, latency: float | None) -> None:
        rec = score_response(job.item, model=backend.name, response=text, error=error, prompt_mode=job.mode,
                             repeat=job.repeat, latency_s=latency)
        rec.dataset = ds.fingerprint
        # shallow copy: the same keys as ScoredRecord.to_dict() without dataclasses.asdict's deep
        # recursion through item metadata, which was half of the client's CPU per item
        rec = {**vars(rec), "request_key": job.key}
        log.append(rec)
        counts[rec["status"]] += 1

    for job, error in unreadable:
        write(job, None, error, None)

    # answers already in the cache need no request
    pending: list[_Job] = []
    for job in jobs:
        hit = cache.get(job.key) if cache is not None and job.request.gen.deterministic else None
        if hit is not None:
            counts["cached"] += 1
            write(job, hit["text"], None, None)
        else:
            pending.append(job)

    progress = _Progress(cfg.progress, len(pending), f"eval {backend.name}")
    queue: asyncio.Queue[_Job] = asyncio.Queue()
    for job in pending:
        queue.put_nowait(job)

    async def worker() -> None:
        while True:
            try:
                job = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            counts["requested"] += 1
            text, usage, error, latency = await _request_with_retries(backend, job.request, cfg, progress.retry)
            if text is not None and cache is not None and job.request.gen.deterministic:
                cache.put(job.key, backend.name, text, usage)
            write(job, text, error, latency if text is not None else None)
            progress.advance(text is None)

    try:
        async with asyncio.TaskGroup() as tg:
            for _ in range(min(cfg.concurrency, max(1, len(pending)))):
                tg.create_task(worker())
    finally:
        progress.close()
        log.close()
        if cache is not None:
            cache.close()
        await backend.aclose()
    counts["retries"] = progress.retries
    return EvalResult(out, results_path, backend.name, dict(counts), time.perf_counter() - started)


def _images_sent(items: list[Item], ds: EvalDataset, cfg: EvalConfig) -> dict[str, dict[str, Any]]:
    """Per suite: the longest side requested and the image sizes (w x h) actually sent."""
    from PIL import Image

    out: dict[str, dict[str, Any]] = {}
    for it in items:
        entry = out.setdefault(it.suite, {"max_side": cfg.inputs.for_suite(it.suite).max_side, "sizes": set()})
        if len(entry["sizes"]) >= 8 or not it.images:
            continue
        try:
            with Image.open(ds.image_path(it.images[0])) as im:
                w, h = im.size
        except OSError:
            continue
        side = entry["max_side"]
        if side and max(w, h) > side:  # as PIL's thumbnail: the longest side to ``side``, aspect kept
            scale = side / max(w, h)
            w, h = (side, max(1, round(h * scale))) if w >= h else (max(1, round(w * scale)), side)
        if cfg.inputs.depth:  # load_image pastes the depth map beside the image *after* downscaling it
            w *= 2
        entry["sizes"].add(f"{w}x{h}")
    return {k: {"max_side": v["max_side"], "sizes": sorted(v["sizes"])} for k, v in sorted(out.items())}


def evaluate(dataset: str | Path | EvalDataset, backend: Backend | str, out_dir: str | Path, *,
             config: EvalConfig | None = None, base_url: str | None = None, api_key: str | None = None,
             **config_kwargs: Any) -> EvalResult:
    """Evaluate ``backend`` (an object or a spec like ``"openai:NAME"``) on a dataset directory.

    Keyword arguments not naming a backend option are :class:`EvalConfig` fields, e.g.
    ``evaluate(ds, "baseline:chance", out, concurrency=32, prompt_modes=["cot"])``.
    """
    cfg = config or EvalConfig(**config_kwargs)
    kwargs: dict[str, Any] = {k: v for k, v in (("base_url", base_url), ("api_key", api_key)) if v is not None}
    if backend == "baseline:prior":  # without a train split the prior learns from a reference draw kept here
        kwargs["prior_reference_dir"] = Path(out_dir) / "prior-reference"
    if isinstance(backend, str) and backend.startswith(("openai:", "blind:openai:")):
        kwargs.setdefault("connections", max(cfg.concurrency, 1))
    return asyncio.run(evaluate_async(dataset, backend, out_dir, cfg, **kwargs))
