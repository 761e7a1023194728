"""The suite registry: a suite is a module that declares tasks with ``@task``.

A task is two functions. ``generate`` turns a :class:`TaskContext` (seeded rng,
asset library, renderer, image sink) into items for one generation *unit* (usually
one scene, which may yield a coarse and a granular item). ``derive`` re-computes an
item's answer from the stored scene record alone; ``perspecta validate`` and the
oracle baseline call it, so every answer key is checked against geometry.

Suites themselves are found through the entry-point group ``perspecta.suites`` (see
:mod:`perspecta.suites.spec`); :func:`suite_spec` / :func:`suite_specs` are the one way to
look one up. The built-ins are registered there too; :data:`BUILTIN_SPECS` is only the
fallback for a source checkout whose installed metadata predates the entry points.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points

from perspecta.dataset.item import Item
from perspecta.suites.context import TaskContext
from perspecta.suites.spec import Suite
from perspecta.world.scene import Scene

GenerateFn = Callable[[TaskContext], list[Item]]
DeriveFn = Callable[[Item, dict[str, Scene]], str]

ENTRY_POINT_GROUP = "perspecta.suites"
# the built-ins' entry points, as pyproject.toml declares them (used when the installed
# metadata of an editable checkout does not list them yet)
BUILTIN_SPECS = ("perspecta.suites.dori.spec:SUITE", "perspecta.suites.spin.spec:SUITE",
                 "perspecta.suites.pcsr.spec:SUITE", "perspecta.suites.lrr.spec:SUITE")


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


_SPECS: dict[str, Suite] | None = None


def _resolve(ref: str) -> Suite:
    module, _, attr = ref.partition(":")
    spec = getattr(importlib.import_module(module), attr)
    if not isinstance(spec, Suite):
        raise TypeError(f"entry point {ref} of group {ENTRY_POINT_GROUP} is a {type(spec).__name__}, not a Suite")
    return spec


def suite_specs() -> dict[str, Suite]:
    """Every installed suite by name (entry points, then the built-ins' fallback), loaded once."""
    global _SPECS
    if _SPECS is None:
        found: dict[str, Suite] = {}
        refs = [ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)]
        for ref in refs + [r for r in BUILTIN_SPECS if r not in refs]:
            spec = _resolve(ref)
            if spec.name in found and found[spec.name] is not spec:
                raise ValueError(f"suite {spec.name!r} is declared twice ({ref})")
            found[spec.name] = spec
        _SPECS = found
        for spec in found.values():
            spec.load()
    return _SPECS


def register_suite(spec: Suite) -> None:
    """Add a suite declared in a script or a test (installed packages use the entry point)."""
    specs = suite_specs()
    if spec.name in specs and specs[spec.name] is not spec:
        raise ValueError(f"suite {spec.name!r} is already registered")
    specs[spec.name] = spec


def unregister_suite(name: str) -> None:
    """Remove a suite added with :func:`register_suite` (tests clean up with it)."""
    suite_specs().pop(name, None)


def suite_spec(suite: str) -> Suite | None:
    """The spec of ``suite``, or None for tasks registered without one (e.g. from a script)."""
    return suite_specs().get(suite)


def load_builtin_suites() -> None:
    """Load every installed suite (kept under its old name: callers only mean "load suites")."""
    suite_specs()


def bench_task() -> tuple[str, str]:
    """(suite, task) that `perspecta bench` times generation on: the first suite, by name,
    whose spec names a ``bench_task``."""
    for name, spec in sorted(suite_specs().items()):
        if spec.bench_task:
            return name, spec.bench_task
    raise LookupError("no installed suite names a bench_task")


def suite_setting(suite: str, name: str, default: object = None) -> object:
    """A setting a suite declares in its :class:`Suite` spec (e.g. ``EVAL_IMAGE_MAX_SIDE``,
    ``audit_features``, ``TRAINING_PRESETS``), or ``default``. This is how generic code
    (runner, audit, report) asks a suite for its own conventions without naming the suite."""
    spec = suite_spec(suite)
    return default if spec is None else spec.setting(name, default)


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
