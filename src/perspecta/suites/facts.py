"""Typed question facts: what a task's generator tells its ``derive`` through the item.

A generator knows facts the scene alone does not hold: which object the question names,
which relation it asks, which camera a new viewpoint is. It stores them in the item's
``metadata`` so that ``derive(item, scenes)`` (run by ``perspecta validate``) can re-derive
the answer. Written as free dict keys, a typo or a changed value type surfaces as a
``KeyError`` deep inside ``derive``, or not at all. Instead each task declares one small
frozen dataclass of those facts, next to its generator, and uses it on both sides:

    @dataclass(frozen=True)
    class GroundingFacts(Facts):
        x_id: str
        y_id: str

    meta = {**common, **GroundingFacts(x_id=x.id, y_id=y.id).to_metadata(), ...}   # generate
    facts = GroundingFacts.from_item(item)                                              # derive

Serialisation is flat and plain: one metadata key per field, named as the field, in
field order, holding the value as given (so converting a task leaves its dataset's bytes
unchanged: same keys, same JSON values, same key order; other keys that sit between two
facts are passed to ``to_metadata(between=...)``). Reading checks exactly the
declared fields and their types and names the item and the key when one is missing or
mistyped, instead of failing somewhere inside the geometry.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar, Union

F = TypeVar("F", bound="Facts")


class FactsError(ValueError):
    """An item's metadata lacks a fact its task's ``derive`` needs, or holds the wrong type."""


@dataclasses.dataclass(frozen=True)
class Facts:
    """Base of a task's question facts (subclass as a frozen dataclass).

    A field with a default may be absent from older items' metadata (it then takes the
    default); a field without one must be present. Values are JSON values: str, int,
    float (an int is accepted, as JSON writes whole floats either way), bool, None,
    lists and str-keyed dicts of those (``Any`` skips the check).
    """

    _hints: ClassVar[dict[type, dict[str, Any]]] = {}

    def to_metadata(self, between: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
        """The facts as metadata keys, in field order (the order is part of the bytes).

        ``between`` maps a field name to other metadata (report factors, descriptive
        values ``derive`` does not need) written right after that field: a task whose
        facts are not adjacent in its metadata keeps its key order this way.
        """
        between = between or {}
        names = [f.name for f in dataclasses.fields(self)]
        if unknown := set(between) - set(names):
            raise ValueError(f"{type(self).__name__} has no field(s) {sorted(unknown)} to write after")
        out: dict[str, Any] = {}
        for name in names:
            out[name] = getattr(self, name)
            for key, value in between.get(name, {}).items():
                if key in names or key in out:
                    raise ValueError(f"{type(self).__name__}: {key!r} written twice")
                out[key] = value
        return out

    @classmethod
    def from_metadata(cls: type[F], md: Mapping[str, Any], item_id: str = "?") -> F:
        """Read exactly the declared fields from ``md``, checking their types."""
        hints = cls._type_hints()
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name not in md:
                if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
                    continue
                raise FactsError(f"item {item_id}: metadata has no {f.name!r} (a {cls.__name__} fact)")
            value = md[f.name]
            if not _matches(value, hints[f.name]):
                raise FactsError(f"item {item_id}: metadata[{f.name!r}] = {value!r} is not "
                                 f"{_describe(hints[f.name])} (a {cls.__name__} fact)")
            values[f.name] = value
        return cls(**values)

    @classmethod
    def from_item(cls: type[F], item: Any) -> F:
        """:meth:`from_metadata` of an :class:`~perspecta.dataset.item.Item` (errors name its id)."""
        return cls.from_metadata(item.metadata, item.id)

    @classmethod
    def _type_hints(cls) -> dict[str, Any]:
        if cls not in Facts._hints:
            Facts._hints[cls] = typing.get_type_hints(cls)
        return Facts._hints[cls]


def _matches(value: Any, hint: Any) -> bool:
    """Whether a JSON value fits a field's annotation (the subset of types facts use)."""
    if hint is Any:
        return True
    if hint is type(None) or hint is None:
        return value is None
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        return any(_matches(value, h) for h in typing.get_args(hint))
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint in (str, bool):
        return isinstance(value, hint)
    if origin in (list, tuple) or hint in (list, tuple):
        args = typing.get_args(hint)
        if not isinstance(value, (list, tuple)):
            return False
        if origin is tuple and args and args[-1] is not Ellipsis:
            return len(value) == len(args) and all(_matches(v, a) for v, a in zip(value, args))
        return not args or all(_matches(v, args[0]) for v in value)
    if origin is dict or hint is dict:
        args = typing.get_args(hint)
        if not isinstance(value, dict):
            return False
        return not args or all(_matches(k, args[0]) and _matches(v, args[1]) for k, v in value.items())
    raise TypeError(f"facts field type {hint!r} is not a JSON type")


def _describe(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


__all__ = ["Facts", "FactsError"]
