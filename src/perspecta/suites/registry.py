"""The suite registry: a suite is a module that declares tasks with ``@task``.

A task is two functions. ``generate`` turns a :class:`TaskContext` (seeded rng,
asset library, renderer, image sink) into items for one generation *unit* (usually
one scene, which may yield a coarse and a granular item). ``derive`` re-computes an
item's answer from the stored scene record alone; ``perspecta validate`` and the
oracle baseline call it, so every answer key is checked against geometry.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from perspecta.dataset.item import Item
from perspecta.suites.context import TaskContext
from perspecta.world.scene import Scene

GenerateFn = Callable[[TaskContext], list[Item]]
DeriveFn = Callable[[Item, dict[str, Scene]], str]

BUILTIN_SUITES = ("dori", "spin", "pcsr", "lrr")


@dataclass(frozen=True)
class TaskDef:
    suite: str
    name: str
    generate: GenerateFn
    derive: DeriveFn
    description: str = ""

    @property
    def key(self) -> str:
        return f"{self.suite}/{self.name}"


_TASKS: dict[tuple[str, str], TaskDef] = {}


def task(suite: str, name: str, *, derive: DeriveFn, description: str = "") -> Callable[[GenerateFn], GenerateFn]:
    """Register ``fn`` as the generator of ``suite/name`` (decorator)."""

    def register(fn: GenerateFn) -> GenerateFn:
        key = (suite, name)
        if key in _TASKS and _TASKS[key].generate is not fn:
            raise ValueError(f"task {suite}/{name} is registered twice")
        _TASKS[key] = TaskDef(suite, name, fn, derive, description or (fn.__doc__ or "").strip())
        return fn

    return register


def load_builtin_suites() -> None:
    for name in BUILTIN_SUITES:
        importlib.import_module(f"perspecta.suites.{name}")


def suite_setting(suite: str, name: str, default: object = None) -> object:
    """A setting a suite package declares at module level (e.g. ``EVAL_IMAGE_MAX_SIDE``,
    ``audit_features``), or ``default``. This is how generic code (runner, audit, report)
    asks a suite for its own conventions without naming the suite."""
    load_builtin_suites()
    qualified = f"perspecta.suites.{suite}"
    try:
        module = importlib.import_module(qualified)
    except ModuleNotFoundError as e:
        if e.name != qualified:
            raise  # the suite's package exists but is broken: say so
        return default  # tasks registered without a suite package (e.g. from a script) declare nothing
    return getattr(module, name, default)


def suites() -> list[str]:
    load_builtin_suites()
    return sorted({s for s, _ in _TASKS})


def tasks(suite: str) -> list[TaskDef]:
    load_builtin_suites()
    found = [t for (s, _), t in _TASKS.items() if s == suite]
    if not found:
        raise KeyError(f"unknown suite {suite!r}; registered: {', '.join(suites())}")
    return sorted(found, key=lambda t: t.name)


def get_task(suite: str, name: str) -> TaskDef:
    load_builtin_suites()
    try:
        return _TASKS[(suite, name)]
    except KeyError:
        raise KeyError(f"unknown task {suite}/{name}") from None
