"""Connecting to Ray: the instance already connected, a cluster by address, or a new local one."""

from __future__ import annotations

import os
from types import ModuleType


def import_ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise ValueError("--executor ray needs Ray: pip install 'perspecta[ray]'") from None
    return ray


def connect(address: str | None = None, *, num_cpus: int | None = None) -> bool:
    """Make sure this process is a Ray driver; return True when this call started the connection
    (so the caller knows to :func:`disconnect`).

    ``address`` is a running cluster (``ray://host:10001`` or ``host:6379``; ``auto`` finds
    the one started on this machine with ``ray start``); None starts a private local
    instance without the dashboard, sized by ``num_cpus`` (default: every core).
    """
    ray = import_ray()
    if ray.is_initialized():
        return False
    options: dict = {"log_to_driver": False, "configure_logging": False}
    if address:
        ray.init(address=address, **options)
    else:
        # Workers import perspecta from this interpreter's environment; the driver's
        # environment variables (API keys, LP_NUM_THREADS…) reach them by inheritance.
        ray.init(num_cpus=num_cpus or os.cpu_count() or 1, include_dashboard=False, **options)
    return True


def disconnect() -> None:
    import_ray().shutdown()


def cluster_cpus() -> int:
    return max(1, int(import_ray().cluster_resources().get("CPU", 1)))
