"""The category review of the SH3D allow-list (contact sheets, one per category): the
entries a person would call something else are renamed or gone."""

from __future__ import annotations

import pytest
import yaml

from perspecta.assets.sh3d import ALLOWLIST_PATH

RENAMED = {
    "Blend Swap CC-0#bookcase": "cabinet",  # glass-door display cabinet
    "Kator Legaz#utility-shelving": "shelf",
    "Blend Swap CC-BY#tvStand": "tv_stand",
    "Blend Swap CC-0#modernVanity": "vanity",
    "Blend Swap CC-0#cactus": "cactus",
}
DROPPED = ("Kator Legaz#bench", "Kator Legaz#propane-stove", "Blend Swap CC-0#highCabinet", "Scopia#dining_room")


@pytest.fixture(scope="module")
def models() -> dict:
    return yaml.safe_load(ALLOWLIST_PATH.read_text())["models"]


def test_renamed_entries(models) -> None:
    for model_id, category in RENAMED.items():
        assert models[model_id]["category"] == category, model_id


def test_dropped_entries(models) -> None:
    for model_id in DROPPED:
        assert model_id not in models


def test_no_glass_doors_or_vanities_under_misleading_names(models) -> None:
    for model_id, entry in models.items():
        note = entry.get("note", "").lower()
        if entry["category"] == "bookcase":
            assert "glass" not in note, model_id
        if entry["category"] == "sink":
            assert "vanity" not in note, model_id
        if entry["category"] == "stove":
            assert "propane" not in model_id.lower(), model_id


def test_library_lists_the_new_categories() -> None:
    from perspecta.assets.library import AssetLibrary
    from perspecta.assets.sh3d import SH3DSource

    if not SH3DSource().available():
        pytest.skip("sweethome3d-furniture is not installed")
    lib = AssetLibrary.default()
    assert [a.name for a in lib.by_category("cactus")]
    assert all("cactus" not in a.asset_id.lower() for a in lib.by_category("plant"))
    assert all("vanity" not in a.asset_id.lower() for a in lib.by_category("sink"))
    assert len(lib.by_category("bench")) == 2
