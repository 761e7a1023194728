"""Real-world sizes: every asset exposes one, procedural families are built at real
dimensions, and the samplers' miniature mode keeps real-world order."""

from __future__ import annotations

import math

import numpy as np
import pytest

from perspecta.assets.library import AssetLibrary
from perspecta.world.samplers.common import common_scale, instantiate, miniature_size

# (family, lowest, highest) plausible height in metres over many seeds
REAL_HEIGHTS = [
    ("person", 1.5, 1.95), ("dog", 0.4, 0.8), ("cat", 0.2, 0.45), ("mug", 0.07, 0.13),
    ("chair", 0.75, 1.05), ("table", 0.68, 0.8), ("car", 1.3, 1.7), ("horse", 1.5, 2.4),
]


@pytest.fixture(scope="module")
def library() -> AssetLibrary:
    return AssetLibrary.default()


@pytest.mark.parametrize("family,lo,hi", REAL_HEIGHTS)
def test_procedural_families_have_real_heights(library, family, lo, hi) -> None:
    for seed in (0, 1, 7, 123, 999):
        h = library.real_size(f"proc:{family}", {"seed": seed})[2]
        assert lo <= h <= hi, (family, seed, h)


def test_every_allow_listed_asset_has_a_real_size(library) -> None:
    from perspecta.assets.sh3d import SH3DSource

    src = SH3DSource()
    if not src.available():
        pytest.skip("sweethome3d-furniture is not installed")
    infos = src.list()
    assert len(infos) > 150
    for info in infos:
        size = info.real_size
        assert all(math.isfinite(v) and v > 0 for v in size), info.asset_id
        assert 0.04 <= max(size) <= 25.0, (info.asset_id, size)
        assert "catalogue" in info.size_source
    for info in library.all():
        assert info.size_source and max(info.real_size) > 0


def test_real_world_order_between_categories(library) -> None:
    def tallest(cat: str) -> float:
        return max(a.real_size[2] for a in library.by_category(cat))

    def shortest(cat: str) -> float:
        return min(a.real_size[2] for a in library.by_category(cat))

    assert tallest("mug") < shortest("chair")
    assert tallest("mug") < shortest("table")
    if library.by_category("teddy_bear"):
        assert tallest("teddy_bear") < shortest("person")


def test_miniature_size_is_increasing_and_never_enlarges() -> None:
    reals = np.geomspace(0.02, 20.0, 400)
    minis = [miniature_size(float(r), (0.10, 0.30)) for r in reals]
    assert all(b >= a for a, b in zip(minis, minis[1:]))
    assert all(m <= r + 1e-12 for m, r in zip(minis, reals))
    assert minis[-1] == pytest.approx(0.30)
    assert miniature_size(0.08, (0.10, 0.30)) == 0.08
    with pytest.raises(ValueError, match="max_dim_range"):
        miniature_size(1.0, (0.3, 0.1))


def test_tabletop_miniatures_keep_real_order(library) -> None:
    """The old rule drew each large object's size afresh from the range, so a chair
    could come out smaller than a real-size mug; now order follows real size."""
    ids = ["proc:mug", "proc:chair", "proc:person", "proc:car", "proc:ball"]
    for seed in range(12):
        rng = np.random.default_rng(seed)
        insts = [instantiate(rng, library, library.get(a), max_dim_range=(0.10, 0.30)) for a in ids]
        reals = [max(library.real_size(i.info.asset_id, i.params)) for i in insts]
        minis = [float(i.size.max()) for i in insts]
        order_real, order_mini = np.argsort(reals, kind="stable"), np.argsort(minis, kind="stable")
        assert list(order_real) == list(order_mini), (seed, reals, minis)


def test_common_scale_keeps_exact_ratios(library) -> None:
    rng = np.random.default_rng(0)
    insts = [instantiate(rng, library, library.get(a)) for a in ("proc:mug", "proc:chair", "proc:car")]
    small = common_scale(insts, 0.3)
    assert max(float(i.size.max()) for i in small) == pytest.approx(0.3, rel=1e-3)
    ratio = [float(s.size[2] / i.size[2]) for s, i in zip(small, insts)]
    assert max(ratio) - min(ratio) < 1e-3
