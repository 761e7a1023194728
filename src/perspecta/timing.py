"""Opt-in per-stage CPU accounting for ``perspecta bench generate``.

Generation code marks its generic stages (``with stage("png.encode"): ...`` or the
:func:`timed` decorator); nothing is measured unless :func:`collect` is active in this
process, so the marks cost one global lookup in a normal run. Time is *process* CPU
time (every thread, llvmpipe's rasteriser included), which on a shared machine is far
steadier than wall time. Stages nest: a stage's figure is its own (exclusive) time, so
the figures of a unit add up to the time spent inside any stage, and the caller can
put the rest of the unit under "other".
"""

from __future__ import annotations

import functools
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class Tally:
    """Exclusive CPU seconds per stage and event counts, for one collection."""

    def __init__(self) -> None:
        self.seconds: Counter[str] = Counter()
        self.counts: Counter[str] = Counter()
        self.notes: dict[str, list[Any]] = {}  # name -> objects noted (e.g. the frames rendered)
        self._stack: list[list[float]] = []  # [start, time spent in child stages]

    def enter(self) -> int:
        """Open a stage; return its depth (for :meth:`leave`)."""
        self._stack.append([time.process_time(), 0.0])
        return len(self._stack)

    def leave(self, name: str, depth: int) -> None:
        """Close the stage at ``depth`` under ``name`` (and any left open inside it)."""
        while len(self._stack) >= depth:
            start, children = self._stack.pop()
            total = time.process_time() - start
            self.seconds[name] += total - children
            if self._stack:
                self._stack[-1][1] += total


_ACTIVE: Tally | None = None


@contextmanager
def collect() -> Iterator[Tally]:
    """Measure every stage entered in this process until the block ends."""
    global _ACTIVE
    previous, _ACTIVE = _ACTIVE, Tally()
    try:
        yield _ACTIVE
    finally:
        _ACTIVE = previous


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Charge the CPU time of the block (minus nested stages) to ``name``."""
    tally = _ACTIVE
    if tally is None:
        yield
        return
    depth = tally.enter()
    try:
        yield
    finally:
        tally.leave(name, depth)


def timed(name: str) -> Callable[[F], F]:
    """Decorator form of :func:`stage` for a whole function."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            tally = _ACTIVE
            if tally is None:
                return fn(*args, **kwargs)
            depth = tally.enter()
            try:
                return fn(*args, **kwargs)
            finally:
                tally.leave(name, depth)

        return inner  # type: ignore[return-value]

    return wrap


def start() -> int | None:
    """Open an unnamed stage; close it with :func:`stop`. For straight-line code that
    ``with stage(...)`` would have to re-indent."""
    tally = _ACTIVE
    if tally is None:
        return None
    return tally.enter()


def stop(mark: int | None, name: str) -> int | None:
    """Charge the stage opened by ``mark`` to ``name`` and open the next one at once
    (so consecutive marks time consecutive steps). Stages an exception left open in
    between are closed under ``name`` too."""
    tally = _ACTIVE
    if mark is None or tally is None or len(tally._stack) < mark:
        return None
    tally.leave(name, mark)
    return tally.enter()


def collecting() -> bool:
    """Whether a :func:`collect` block is active (to skip preparing a :func:`note`)."""
    return _ACTIVE is not None


def note(name: str, obj: Any) -> None:
    """Keep ``obj`` under ``name`` while collecting (e.g. each (scene, camera) rendered, so
    the bench can render the very same frames again on the raw renderer)."""
    if _ACTIVE is not None:
        _ACTIVE.notes.setdefault(name, []).append(obj)


def count(name: str, n: int = 1) -> None:
    """Count an event (e.g. a render of a given size) while collecting."""
    if _ACTIVE is not None:
        _ACTIVE.counts[name] += n


#: ``perspecta bench generate`` sets this to a file path in the ``perspecta generate``
#: processes it starts, to learn when their units began and ended (wall clock).
WALL_MARKS_ENV = "PERSPECTA_WALL_MARKS"


def wall_mark(name: str) -> None:
    """Append ``name`` and the wall clock to the file named by ``$PERSPECTA_WALL_MARKS``
    (nothing when it is unset): how a fresh process tells the bench its phases."""
    path = os.environ.get(WALL_MARKS_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{name} {time.time():.6f}\n")
