"""The declarative scene record every suite, renderer and oracle shares.

A scene is plain data (dataclasses that round-trip through JSON), in the spirit of
CLEVR's scene files and Kubric's scene graph: renderers are *views* of a scene and
the geometry oracle answers questions from it, so an item's answer can always be
re-derived from the scene stored beside it.

Conventions (see shared DESIGN.md): world is right-handed, metres, +Z up, ground at
z = 0. An object's canonical frame is +X front, +Y left, +Z up with its origin at the
bottom centre of its bounding box. Angles are degrees; yaw is counter-clockwise seen
from above.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from perspecta.world.rotation import rotation_matrix

Vec3 = tuple[float, float, float]
RGB = tuple[float, float, float]


def _vec(v: Any) -> Vec3:
    x, y, z = (float(c) for c in v)
    return (x, y, z)


@dataclass
class Pose:
    """Where an object stands: position of its bottom-centre origin and its rotation."""

    position: Vec3 = (0.0, 0.0, 0.0)
    yaw: float = 0.0
    pitch: float = 0.0
    roll: float = 0.0

    def rotation(self) -> np.ndarray:
        return rotation_matrix(self.yaw, self.pitch, self.roll)

    def matrix(self) -> np.ndarray:
        """4x4 object-to-world transform (without scale)."""
        m = np.eye(4)
        m[:3, :3] = self.rotation()
        m[:3, 3] = self.position
        return m

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Pose:
        return cls(
            position=_vec(d.get("position", (0, 0, 0))),
            yaw=float(d.get("yaw", 0.0)),
            pitch=float(d.get("pitch", 0.0)),
            roll=float(d.get("roll", 0.0)),
        )


@dataclass
class SceneObject:
    """One placed asset.

    ``size`` is the object's extent in its own canonical frame *after* scaling
    (depth along +X, width along +Y, height along +Z, metres) and ``has_front``
    says whether the asset declares a front. Both are copied from the asset
    library at sampling time so the oracle can answer from the scene record alone.
    """

    id: str
    asset_id: str
    category: str
    pose: Pose = field(default_factory=Pose)
    scale: float = 1.0
    size: Vec3 = (1.0, 1.0, 1.0)
    has_front: bool = True
    symmetric: bool = False
    color: RGB | None = None
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def position(self) -> np.ndarray:
        return np.asarray(self.pose.position, dtype=float)

    def front_vector(self) -> np.ndarray:
        """Unit vector of the object's front (+X of its frame) in world coordinates."""
        return self.pose.rotation()[:, 0]

    def center(self) -> np.ndarray:
        """World position of the bounding-box centre (origin is at the bottom centre)."""
        return self.position + self.pose.rotation() @ np.array([0.0, 0.0, self.size[2] / 2])

    def corners(self) -> np.ndarray:
        """The 8 world-space corners of the oriented bounding box, shape (8, 3)."""
        dx, dy, dz = (s / 2 for s in self.size)
        local = np.array(
            [[sx * dx, sy * dy, dz + sz * dz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
        )
        return local @ self.pose.rotation().T + self.position

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SceneObject:
        return cls(
            id=str(d["id"]),
            asset_id=str(d["asset_id"]),
            category=str(d["category"]),
            pose=Pose.from_dict(d.get("pose", {})),
            scale=float(d.get("scale", 1.0)),
            size=_vec(d.get("size", (1, 1, 1))),
            has_front=bool(d.get("has_front", True)),
            symmetric=bool(d.get("symmetric", False)),
            color=_vec(d["color"]) if d.get("color") is not None else None,
            params=dict(d.get("params", {})),
        )


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.cross`` of two 3-vectors: the same products and differences in float64."""
    a0, a1, a2 = a.tolist()
    b0, b1, b2 = b.tolist()
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


Projection = Literal["perspective", "equirect"]


@dataclass
class Camera:
    """A pinhole (or equirectangular) camera looking from ``position`` at ``look_at``.

    For ``projection == "equirect"`` the look-at direction is longitude 0 (the image
    centre) and ``fov_y`` is ignored; width should be 2 x height.
    """

    name: str = "main"
    position: Vec3 = (0.0, -4.0, 1.5)
    look_at: Vec3 = (0.0, 0.0, 0.5)
    up: Vec3 = (0.0, 0.0, 1.0)
    fov_y: float = 45.0
    width: int = 256
    height: int = 256
    projection: Projection = "perspective"

    def rotation_world_to_cam(self) -> np.ndarray:
        """3x3 rotation from world to the OpenCV camera frame (x right, y down, z forward)."""
        # np.linalg.norm and np.cross, bit for bit, without their argument handling
        # (samplers build a camera per candidate layout): a vector's norm is the square
        # root of its numpy dot with itself, and a cross product is each component's two
        # products subtracted, as below
        eye = np.asarray(self.position, dtype=float)
        fwd = np.asarray(self.look_at, dtype=float) - eye
        fwd /= math.sqrt(fwd.dot(fwd))
        up = np.asarray(self.up, dtype=float)
        right = _cross(fwd, up)
        if math.sqrt(right.dot(right)) < 1e-9:  # looking straight along up: pick any right
            right = _cross(fwd, np.array([0.0, 1.0, 0.0]))
        right /= math.sqrt(right.dot(right))
        down = _cross(fwd, right)
        return np.array([right, down, fwd])

    def extrinsic(self) -> np.ndarray:
        """4x4 world-to-camera transform in the OpenCV convention."""
        r = self.rotation_world_to_cam()
        m = np.eye(4)
        m[:3, :3] = r
        m[:3, 3] = -r @ np.asarray(self.position, dtype=float)
        return m

    def intrinsics(self) -> np.ndarray:
        """3x3 pinhole intrinsics K for square pixels with the principal point at the centre."""
        f = (self.height / 2) / math.tan(math.radians(self.fov_y) / 2)
        return np.array([[f, 0.0, self.width / 2], [0.0, f, self.height / 2], [0.0, 0.0, 1.0]])

    def forward(self) -> np.ndarray:
        return self.rotation_world_to_cam()[2]

    def _matrices(self) -> tuple[np.ndarray, np.ndarray]:
        """(extrinsic, intrinsics), rebuilt only when a field they depend on changed:
        samplers project through one camera thousands of times per unit (measured: half
        of DORI's geometric visibility checks went to rebuilding these)."""
        key = (tuple(map(float, self.position)), tuple(map(float, self.look_at)), tuple(map(float, self.up)),
               float(self.fov_y), self.width, self.height)
        cached = self.__dict__.get("_matrices_cache")
        if cached is None or cached[0] != key:
            cached = (key, self.extrinsic(), self.intrinsics())
            self.__dict__["_matrices_cache"] = cached  # not a field: asdict, eq and replace ignore it
        return cached[1], cached[2]

    def to_camera(self, points: np.ndarray) -> np.ndarray:
        """World points (N, 3) -> camera-frame points (N, 3)."""
        e = self._matrices()[0]
        return np.asarray(points, dtype=float) @ e[:3, :3].T + e[:3, 3]

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Project world points to pixel coordinates (u right, v down) and their depth z."""
        pc = self.to_camera(np.atleast_2d(points))
        z = pc[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            uv = (pc @ self._matrices()[1].T)[:, :2] / z[:, None]
        return uv, z

    def metadata(self) -> dict[str, Any]:
        """What an item stores about its camera: the record plus K and the extrinsic."""
        d = asdict(self)
        if self.projection == "perspective":
            d["K"] = self.intrinsics().round(6).tolist()
        d["extrinsic"] = self.extrinsic().round(6).tolist()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Camera:
        return cls(
            name=str(d.get("name", "main")),
            position=_vec(d["position"]),
            look_at=_vec(d["look_at"]),
            up=_vec(d.get("up", (0, 0, 1))),
            fov_y=float(d.get("fov_y", 45.0)),
            width=int(d.get("width", 256)),
            height=int(d.get("height", 256)),
            projection=d.get("projection", "perspective"),
        )


@dataclass
class Light:
    """A sun (directional light with shadows) plus an ambient term and a sky fill.

    ``direction`` points from the sun toward the scene (so a sun overhead is (0, 0, -1)).
    ``fill`` is the strength (relative to ``intensity``) of an unshadowed sky light from
    the side opposite the sun, so the sun's shadow side keeps its shape.
    """

    direction: Vec3 = (-0.4, 0.3, -1.0)
    color: RGB = (1.0, 1.0, 1.0)
    intensity: float = 1.0
    ambient: float = 0.35
    fill: float = 0.3

    def fill_direction(self) -> np.ndarray:
        """Unit vector from the sky fill toward the scene: 40 degrees up, on the side
        opposite the sun (so it lights what the sun leaves in shade)."""
        d = np.asarray(self.direction, dtype=float)
        h = d[:2] / np.linalg.norm(d[:2]) if np.linalg.norm(d[:2]) > 1e-6 else np.array([1.0, 0.0])
        el = math.radians(40.0)
        return -np.array([h[0] * math.cos(el), h[1] * math.cos(el), math.sin(el)])

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Light:
        return cls(
            direction=_vec(d.get("direction", (-0.4, 0.3, -1.0))),
            color=_vec(d.get("color", (1, 1, 1))),
            intensity=float(d.get("intensity", 1.0)),
            ambient=float(d.get("ambient", 0.35)),
            fill=float(d.get("fill", 0.3)),
        )


@dataclass
class Room:
    """An axis-aligned box room centred on the origin: floor at z = 0, walls at +-x/2, +-y/2."""

    width: float = 6.0  # along x
    depth: float = 5.0  # along y
    height: float = 2.6
    floor_color: RGB = (0.55, 0.45, 0.35)
    wall_color: RGB = (0.85, 0.83, 0.78)
    ceiling_color: RGB = (0.95, 0.95, 0.95)
    room_type: str = "room"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Room:
        return cls(
            width=float(d["width"]),
            depth=float(d["depth"]),
            height=float(d["height"]),
            floor_color=_vec(d.get("floor_color", (0.55, 0.45, 0.35))),
            wall_color=_vec(d.get("wall_color", (0.85, 0.83, 0.78))),
            ceiling_color=_vec(d.get("ceiling_color", (0.95, 0.95, 0.95))),
            room_type=str(d.get("room_type", "room")),
        )


@dataclass
class Ground:
    """An open ground plane (studio or street) with a sky colour behind it.

    ``material`` is "plain" (flat ``color``) or a procedural texture ("tiles", "paving",
    "grass"; see :mod:`perspecta.render.ground`) whose colours replace ``color``.
    ``pattern_size`` is the pattern's unit in metres (tile side, paver width, grass
    cell); ``texture_seed`` fixes the texture (None: the scene's seed). Pin it when two
    scenes must show the same ground, e.g. the frames of a motion item.
    """

    size: float = 40.0
    color: RGB = (0.6, 0.6, 0.58)
    sky_color: RGB = (0.78, 0.85, 0.95)
    material: str = "plain"
    pattern_size: float = 0.5
    texture_seed: int | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Ground:
        seed = d.get("texture_seed")
        return cls(
            size=float(d.get("size", 40.0)),
            color=_vec(d.get("color", (0.6, 0.6, 0.58))),
            sky_color=_vec(d.get("sky_color", (0.78, 0.85, 0.95))),
            material=str(d.get("material", "plain")),
            pattern_size=float(d.get("pattern_size", 0.5)),
            texture_seed=None if seed is None else int(seed),
        )


SceneKind = Literal["studio", "clutter", "room"]


@dataclass
class Scene:
    """Everything needed to render a scene and to answer questions about it."""

    scene_id: str
    seed: int
    kind: SceneKind
    objects: list[SceneObject] = field(default_factory=list)
    cameras: list[Camera] = field(default_factory=list)
    light: Light = field(default_factory=Light)
    ground: Ground | None = field(default_factory=Ground)
    room: Room | None = None
    # "hdri:<name>" (see perspecta.render.environment): an HDRI sky behind an open
    # ground, also colouring the ambient light; None = the flat sky gradient. Rooms
    # ignore it. environment_yaw turns the map (degrees, counter-clockwise from above).
    environment: str | None = None
    environment_yaw: float = 0.0

    def object(self, object_id: str) -> SceneObject:
        for o in self.objects:
            if o.id == object_id:
                return o
        raise KeyError(f"scene {self.scene_id} has no object {object_id!r}")

    def camera(self, name: str = "main") -> Camera:
        for c in self.cameras:
            if c.name == name:
                return c
        raise KeyError(f"scene {self.scene_id} has no camera {name!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Scene:
        return cls(
            scene_id=str(d["scene_id"]),
            seed=int(d["seed"]),
            kind=d["kind"],
            objects=[SceneObject.from_dict(o) for o in d.get("objects", [])],
            cameras=[Camera.from_dict(c) for c in d.get("cameras", [])],
            light=Light.from_dict(d.get("light", {})),
            ground=Ground.from_dict(d["ground"]) if d.get("ground") is not None else None,
            room=Room.from_dict(d["room"]) if d.get("room") is not None else None,
            environment=None if d.get("environment") is None else str(d["environment"]),
            environment_yaw=float(d.get("environment_yaw", 0.0)),
        )

    @classmethod
    def from_json(cls, text: str) -> Scene:
        return cls.from_dict(json.loads(text))
