"""Shared test helpers."""

from __future__ import annotations

import math
from typing import Any

import pytest


def _rounded(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _rounded(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_rounded(v) for v in x]
    if isinstance(x, float):
        return "nan" if math.isnan(x) else round(x, 9)
    return x


@pytest.fixture
def rounded():
    """Nested figures with floats rounded to 9 decimals (NaN as a string), so sums taken in
    another order (merged shards vs one pass) compare equal."""
    return _rounded


@pytest.fixture(scope="module")
def env():  # type: ignore[no-untyped-def]
    """The default asset library and a GL renderer, shared by a module's real-render tests
    (a module may define its own ``env`` instead)."""
    from perspecta.assets.library import AssetLibrary
    from perspecta.render.base import get_renderer

    lib = AssetLibrary.default()
    renderer = get_renderer("gl", library=lib)
    yield lib, renderer
    renderer.close()
