"""3D rotations in the project's convention, as 3x3 matrices.

One place for the conversions the suites need (DORI's compound rotation builds a
rotation about a camera-fixed axis and must store the result as an object pose), so
every suite composes and decomposes rotations the same way. Convention (docs/design.md):
an object pose is ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)`` in degrees; yaw is
counter-clockwise seen from above, positive pitch tips the front (+X) down, roll turns
about the front axis.

Plain NumPy rather than ``scipy.spatial.transform.Rotation``: the generated datasets
store poses rounded from these matrices, and keeping the exact arithmetic keeps them
byte-identical (scipy composes through quaternions, which changes the last bits).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence

import numpy as np


def rotation_matrix(yaw: float, pitch: float = 0.0, roll: float = 0.0) -> np.ndarray:
    """Object-to-world rotation ``Rz(yaw) @ Ry(pitch) @ Rx(roll)`` (degrees).

    Yaw turns about world +Z (counter-clockwise from above), pitch about the object's
    left axis (+Y; positive pitch tips the front down), roll about its front axis (+X).
    """
    # Kept per exact angles (the bytes, so -0.0 and 0.0 stay apart): a scene's poses are
    # asked for their matrix again and again (visibility, relations, every render).
    key = struct.pack("3d", yaw, pitch, roll)
    m = _MATRICES.get(key)
    if m is None:
        cy, sy = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
        cp, sp = math.cos(math.radians(pitch)), math.sin(math.radians(pitch))
        cr, sr = math.cos(math.radians(roll)), math.sin(math.radians(roll))
        rz = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
        ry = np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
        rx = np.array([[1.0, 0.0, 0.0], [0.0, cr, -sr], [0.0, sr, cr]])
        m = rz @ ry @ rx
        if len(_MATRICES) >= 4096:
            _MATRICES.clear()
        _MATRICES[key] = m
    return m.copy()  # callers may edit their matrix


_MATRICES: dict[bytes, np.ndarray] = {}


def euler_zyx(r: np.ndarray) -> tuple[float, float, float]:
    """(yaw, pitch, roll) in degrees with ``rotation_matrix(yaw, pitch, roll) == r``.

    At gimbal lock (pitch +-90) yaw and roll turn about the same axis; roll is then 0
    and the whole turn goes into yaw, so a pose stays readable as "turned, then tipped".
    """
    sp = -float(r[2, 0])
    pitch = math.degrees(math.asin(max(-1.0, min(1.0, sp))))
    if abs(sp) < 1 - 1e-9:
        yaw = math.degrees(math.atan2(r[1, 0], r[0, 0]))
        roll = math.degrees(math.atan2(r[2, 1], r[2, 2]))
    else:
        roll = 0.0
        yaw = math.degrees(math.atan2(-r[0, 1], r[1, 1]))
    return yaw, pitch, roll


def axis_angle(axis: Sequence[float] | np.ndarray, deg: float) -> np.ndarray:
    """Rotation by ``deg`` degrees about ``axis`` (any length, not zero), right-handed:
    counter-clockwise when the axis points at the viewer (Rodrigues' formula)."""
    a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    t = math.radians(deg)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(t) * k + (1 - math.cos(t)) * (k @ k)
