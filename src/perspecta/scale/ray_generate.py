"""``perspecta generate --executor ray``: shards of units as Ray tasks.

Each task runs its units through the same ``UnitWorker`` as the local executor and
commits each unit's part file to the shared store before starting the next, then
returns how many units it finished. Why this is safe under failure:

* a worker that dies mid-shard makes Ray rerun the task (``max_retries``); the rerun
  skips every unit whose part file already exists, so nothing is rendered into the
  dataset twice and nothing is lost;
* part files are keyed by unit and the driver assembles them in unit order, so the
  order in which shards finish (or are retried) cannot change a byte of the output.

The driver keeps at most ``workers`` shards in flight, so the figure means the same
as the local executor's ``--workers`` whatever the cluster's size.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from perspecta.scale import ray_cluster
from perspecta.scale.store import Store, open_store

if TYPE_CHECKING:
    from perspecta.dataset.generate import GenerationConfig, Unit, UnitWorker

#: Fault injection for tests only: a path; the first Ray shard that can create this file
#: (exclusively) kills its own worker process right after committing its first unit.
KILL_ONCE_ENV = "PERSPECTA_TEST_KILL_RAY_WORKER_ONCE"
MAX_RETRIES = 3
MAX_SHARD_UNITS = 16

_CACHED: tuple[str, Any] | None = None  # (store spec + config, UnitWorker) of this Ray worker process


def shard_units(units: list[Unit], slots: int) -> list[list[Unit]]:
    """About four shards per slot (load balance, fine progress), at most 16 units each
    (a retry redoes little), at least one unit each."""
    if not units:
        return []
    size = max(1, min(MAX_SHARD_UNITS, math.ceil(len(units) / (4 * slots))))
    return [units[i:i + size] for i in range(0, len(units), size)]


def _worker_for(store_spec: str, config: GenerationConfig) -> UnitWorker:
    """One renderer and asset library per Ray worker process, reused by every task it runs."""
    global _CACHED
    from perspecta.dataset.generate import UnitWorker, config_record, one_rasteriser_thread

    key = store_spec + json.dumps(config_record(config), sort_keys=True)
    if _CACHED is None or _CACHED[0] != key:
        if _CACHED is not None:
            _CACHED[1].close()
        one_rasteriser_thread()
        _CACHED = (key, UnitWorker(open_store(store_spec), config))
    return _CACHED[1]


def _claim(marker: str) -> bool:
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def run_shard(store_spec: str, config: GenerationConfig, units: list[Unit], kill_once: str | None) -> int:
    """The body of one Ray task: run every unit of the shard not yet committed."""
    worker = _worker_for(store_spec, config)
    for unit in units:
        if worker.store.exists(unit.part_rel):  # committed by an earlier attempt of this shard
            continue
        worker.run(unit)
        if kill_once and _claim(kill_once):
            os._exit(1)  # a hard crash: no exception reaches Ray, the process is just gone
    return len(units)


def iter_unit_results_ray(units: list[Unit], store: Store, config: GenerationConfig, *,
                          workers: int | None, address: str | None) -> Iterator[int]:
    """Yield once per finished unit (in completion order), like the local executor."""
    started = ray_cluster.connect(address)
    try:
        ray = ray_cluster.import_ray()
        slots = workers or ray_cluster.cluster_cpus()
        task = ray.remote(run_shard).options(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)
        kill_once = os.environ.get(KILL_ONCE_ENV)
        config_ref = ray.put(config)
        pending = list(reversed(shard_units(units, slots)))
        in_flight: dict[Any, int] = {}
        while pending or in_flight:
            while pending and len(in_flight) < slots:
                shard = pending.pop()
                in_flight[task.remote(store.spec(), config_ref, shard, kill_once)] = len(shard)
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in ready:
                ray.get(ref)  # a task that failed for good raises here, with its traceback
                for _ in range(in_flight.pop(ref)):
                    yield 0
    finally:
        if started:
            ray_cluster.disconnect()
