"""Readability contracts: what a person must be able to see for an item to be fair.

A correct answer key is not enough: an item whose target is 16 pixels wide, whose face
is hidden under a marker, or whose angle sits 2° from a bin edge cannot be answered from
the picture. Generators measure these facts on the rendered instance masks, record them
in ``item.metadata["readability"]`` and resample the unit when a fact breaks the
contract; ``perspecta validate`` re-checks the recorded values, so a dataset that ships
an unreadable item fails validation instead of misleading a model comparison.

The record (any subset of the keys)::

    {"objects": {NAME: {"pixels": int, "box": [w, h], "marker_cover": float}},
     "bin_margin": {"deg": float, "bin_width": float},
     "apparent_bin_margin": {"deg": float, "bin_width": float},
     "winner_margin": {"value": float, "min": float, "unit": str},
     "view": {"elevation_deg": float, "readable_elevation": [lo, hi],
              "front_back_confusable": bool, "mark": str, "head_on_readable": bool,
              "tip_readable": bool, "face_square_deg": float,
              "facing_deg": float, "max_facing_deg": float},
     "contract": {...}}          # the thresholds the generator used, if not the defaults

``NAME`` is whatever the question calls the object (its role or its label).
``apparent_bin_margin`` is the margin of the value a viewer reads when perspective is not
compensated: every object's heading taken relative to the camera's axis rather than to its
own line of sight. Two objects with the same heading, far apart in a wide view, show
different sides to the camera (a careful judge read such a pair as 45° apart), so where a
question compares two headings the uncompensated reading must fall in the same bin too
(its margin is negative when it falls in another).
``view`` (or ``{NAME: view}`` for several targets) is a target asset's readability mark: a front is read only from camera
elevations inside ``readable_elevation`` (a tub chair's open shell looks like its back
from above), an asset whose front is easily taken for its back may not be asked about, and one
whose heading is lost when it lies on a side or upside down (``tip_readable`` False) may not be tipped,
and a seat whose backrest hides it from behind is not seen further round than ``max_facing_deg``
(``facing_deg``: 0 = facing the camera, 180 = facing away).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np

from perspecta import timing


@dataclass(frozen=True)
class Contract:
    """Thresholds a person can read at a suite's resolution (defaults are the floor:
    a generator may record stricter ones, never looser)."""

    min_pixels: int = 600  # visible pixels of every object the question names
    min_box_side: int = 40  # longer side of its visible box, px
    min_box_short: int = 20  # shorter side of its visible box, px (a 16x40 person is a sliver)
    max_marker_cover: float = 0.05  # share of the object's pixels hidden by dots, tags, boxes
    min_bin_margin_frac: float = 0.25  # distance from the nearest bin edge, as a share of the bin width
    # the same for the perspective-uncompensated reading (``apparent_bin_margin``); 0 = inside the bin
    min_apparent_margin_frac: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Contract:
        if not d:
            return cls()
        known = {f.name for f in fields(cls)}
        return replace(cls(), **{k: v for k, v in d.items() if k in known})


DEFAULT_CONTRACT = Contract()
# a frontless target with flat sides (``view["face_square_deg"]``) keeps every side at least
# this far from square to the camera, so no side reads as a front that faces the viewer
MIN_FRONTLESS_OBLIQUE_DEG = 20.0


@timing.timed("masks")
def object_facts(instance_mask: np.ndarray, object_index: int, marker_mask: np.ndarray | None = None) -> dict[str, Any]:
    """Visible pixels, visible box ``[w, h]`` and the share covered by markers for one
    object of an instance mask (``marker_mask``: True where an overlay was drawn)."""
    own = instance_mask == object_index
    pixels = int(own.sum())
    if pixels == 0:
        return {"pixels": 0, "box": [0, 0], "marker_cover": 0.0}
    rows = np.flatnonzero(own.any(axis=1))
    cols = np.flatnonzero(own.any(axis=0))
    box = [int(cols[-1] - cols[0] + 1), int(rows[-1] - rows[0] + 1)]
    cover = 0.0
    if marker_mask is not None:
        cover = float((own & marker_mask).sum()) / pixels
    return {"pixels": pixels, "box": box, "marker_cover": round(cover, 4)}


@timing.timed("masks")
def overlay_mask(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Pixels an overlay changed: compare the image before and after drawing markers."""
    if before.shape != after.shape:
        raise ValueError(f"overlay changed the image size: {before.shape} -> {after.shape}")
    return np.any(before != after, axis=-1) if before.ndim == 3 else before != after


def bin_margin(angle_deg: float, bin_width_deg: float, *, offset_deg: float = 0.0) -> dict[str, float]:
    """Distance of ``angle_deg`` from the nearest edge of bins of ``bin_width_deg`` whose
    edges sit at ``offset_deg + k * bin_width_deg`` (e.g. 45°-wide bins centred on the
    eight compass directions have ``offset_deg=22.5``)."""
    pos = (angle_deg - offset_deg) % bin_width_deg
    return {"deg": round(float(min(pos, bin_width_deg - pos)), 3), "bin_width": float(bin_width_deg)}


def object_problems(name: str, facts: dict[str, Any], contract: Contract = DEFAULT_CONTRACT) -> list[str]:
    """Why one object's facts break the contract (empty when it is readable)."""
    out = []
    w, h = facts.get("box", [0, 0])
    if facts.get("pixels", 0) < contract.min_pixels:
        out.append(f"{name}: {facts.get('pixels', 0)} visible px < {contract.min_pixels}")
    if max(w, h) < contract.min_box_side or min(w, h) < contract.min_box_short:
        out.append(f"{name}: visible box {w}x{h} px below {contract.min_box_side}x{contract.min_box_short}")
    if facts.get("marker_cover", 0.0) > contract.max_marker_cover:
        out.append(f"{name}: markers cover {facts['marker_cover']:.0%} > {contract.max_marker_cover:.0%}")
    return out


def problems(record: dict[str, Any] | None) -> list[str]:
    """Every way a ``metadata["readability"]`` record breaks its contract.

    The recorded contract may only tighten the defaults; a looser one is itself a problem.
    """
    if not record:
        return []
    contract = Contract.from_dict(record.get("contract"))
    out = []
    floor = DEFAULT_CONTRACT
    looser = [
        f.name for f in fields(Contract)
        if (getattr(contract, f.name) > getattr(floor, f.name) if f.name.startswith("max_")
            else getattr(contract, f.name) < getattr(floor, f.name))
    ]
    if looser:
        out.append(f"recorded contract is looser than the defaults on {', '.join(looser)}")
    for name, facts in (record.get("objects") or {}).items():
        out += object_problems(name, facts, contract)
    bm = record.get("bin_margin")
    if bm is not None and bm["deg"] < contract.min_bin_margin_frac * bm["bin_width"] - 1e-9:
        out.append(f"angle {bm['deg']:.1f}° from a bin edge < {contract.min_bin_margin_frac:g} of {bm['bin_width']:g}°")
    am = record.get("apparent_bin_margin")
    if am is not None and am["deg"] < contract.min_apparent_margin_frac * am["bin_width"] - 1e-9:
        out.append(f"uncompensated-perspective reading {am['deg']:.1f}° from the answer's bin edge "
                   f"< {contract.min_apparent_margin_frac:g} of {am['bin_width']:g}°")
    wm = record.get("winner_margin")
    if wm is not None and wm["value"] < wm["min"]:
        out.append(f"clear-winner margin {wm['value']:g} {wm.get('unit', '')} < {wm['min']:g}".rstrip())
    views = record.get("view")
    if views is not None and "elevation_deg" in views:
        views = {"target": views}
    for view in (views or {}).values():
        lo, hi = view["readable_elevation"]
        if not lo - 1e-6 <= view["elevation_deg"] <= hi + 1e-6:
            out.append(f"camera elevation {view['elevation_deg']:.1f}° outside the asset's readable range [{lo:g}, {hi:g}]°")
        if view.get("head_on_readable") is False:
            out.append(f"target shown head-on, where its front does not read (mark {view.get('mark', '?')})")
        if view.get("tip_readable") is False:
            out.append(f"target may be tipped onto a side or its back, where its heading does not read "
                       f"(mark {view.get('mark', '?')})")
        if view.get("max_facing_deg") is not None and view["facing_deg"] > view["max_facing_deg"] + 1e-6:
            out.append(f"seat seen {view['facing_deg']:.1f}° from facing the camera (> {view['max_facing_deg']:g}°): "
                       f"its backrest hides where it points")
        if view.get("face_square_deg") is not None and view["face_square_deg"] < MIN_FRONTLESS_OBLIQUE_DEG - 1e-9:
            out.append(f"frontless target shows a side {view['face_square_deg']:.1f}° from square to the camera "
                       f"(< {MIN_FRONTLESS_OBLIQUE_DEG:g}°): 'it already faces the camera' reads as true")
        if view.get("front_back_confusable"):
            out.append(f"target's front is easily taken for its back (mark {view.get('mark', '?')})")
    return out
