"""The default renderer: our own small shader set on moderngl over headless EGL.

Why this design: on a CPU-only machine Mesa llvmpipe rasterises small scenes in tens
of milliseconds, is bit-exact between runs, and gives direct access to the depth and
instance layers that overlays and occlusion questions need (see ANCHORS.md).

Per view we run: a sun shadow pass (once per ``render`` call, orthographic, fitted to
the shadow casters), a colour pass at ``ssaa`` x resolution in linear light (sky
gradient, then geometry with Lambert + PCF shadows, an unshadowed sky fill from the side
opposite the sun, a dark-albedo floor and a small highlight + Fresnel sky reflection on
objects so black materials keep their shape), a resolve pass that box-filters
the samples and encodes sRGB, and an id pass at 1x whose pixel centres coincide with
the output pixel centres (camera-frame z and instance id). Camera matrices
are built from :meth:`Camera.intrinsics` / :meth:`Camera.extrinsic` so a world point
projected by :meth:`Camera.project` lands on the same pixel; the GL y axis is flipped
so that the framebuffer's first row is the image's top row.

Room scenes: the room shell is a receiver but never a shadow caster, so the sun still
reaches the floor through the ceiling; a stronger ambient term and an unshadowed fill
light near the ceiling keep walls and ceiling readable. The shell is back-face culled,
so a camera outside the room sees into it like a doll's house.
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np

from perspecta.render.base import RenderResult
from perspecta import timing
from perspecta.render import panorama
from perspecta.world.scene import Camera, Ground, Room, Scene

if TYPE_CHECKING:
    import moderngl

    from perspecta.assets.library import AssetLibrary
    from perspecta.assets.mesh import Mesh, MeshPart
    from perspecta.render.environment import EnvironmentLight

_FLOATS_PER_VERTEX = 8  # position 3, normal 3, uv 2
_DEFAULT_SKY = (0.78, 0.85, 0.95)
# Darkest linear albedo any surface gets: real black paint or plastic reflects ~2-4%,
# and a darker surface renders as a shapeless silhouette.
ALBEDO_FLOOR = 0.025
# Strength of the objects' sun highlight and Fresnel sky reflection (0 = pure Lambert).
SPECULAR = 0.35
# Anisotropic filtering of ground textures (seen at grazing angles). Off: with 2x SSAA
# it changed little that a person sees and cost llvmpipe ~40% of a 512^2 frame.
GROUND_ANISOTROPY = 1.0

#: The driver's GL_RENDERER string, set when this process opens its first context. Also
#: tells :func:`gl_opened_in_process` callers (the worker pool) that EGL state exists here,
#: which a forked child must not inherit.
_GL_RENDERER: str | None = None


def gl_opened_in_process() -> bool:
    """True once any GLRenderer of this process has created a context."""
    return _GL_RENDERER is not None


def srgb_to_linear(c: Any) -> np.ndarray:
    """sRGB in [0, 1] -> linear light (IEC 61966-2-1)."""
    c = np.clip(np.asarray(c, dtype=np.float64), 0.0, 1.0)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def clip_matrix(k: np.ndarray, width: int, height: int, near: float, far: float) -> np.ndarray:
    """4x4 from OpenCV camera coordinates to GL clip space, image row 0 at NDC y = -1.

    x_ndc = 2u/W - 1 and y_ndc = 2v/H - 1 with (u, v) the pinhole projection by ``k``,
    so reading the framebuffer bottom-up yields the image top-down.
    """
    fx, fy, cx, cy = k[0, 0], k[1, 1], k[0, 2], k[1, 2]
    m = np.zeros((4, 4))
    m[0, 0] = 2 * fx / width
    m[0, 1] = 2 * k[0, 1] / width
    m[0, 2] = 2 * cx / width - 1
    m[1, 1] = 2 * fy / height
    m[1, 2] = 2 * cy / height - 1
    m[2, 2] = (far + near) / (far - near)
    m[2, 3] = -2 * far * near / (far - near)
    m[3, 2] = 1.0
    return m


def _load_shader(name: str) -> str:
    return resources.files("perspecta.render").joinpath("shaders", name).read_text()


@dataclass
class _GpuMesh:
    vbo: Any
    vao_scene: Any
    vao_ids: Any
    parts: list[tuple[int, int, np.ndarray, _Skin | None, bool]]  # first, count, linear rgb, texture, tintable
    lo: np.ndarray
    hi: np.ndarray

    def release(self) -> None:
        for p in self.parts:
            if p[3] is not None:
                p[3].release()
        self.vao_scene.release()
        self.vao_ids.release()
        self.vbo.release()


class _TexturePool:
    """Mipmapped textures shared by content between GPU meshes.

    Variants of a procedural asset (other params, same skin) and different assets with one
    texture would each upload it and rebuild its mipmaps, a CPU job on llvmpipe (measured
    ~7% of a SpinBench unit). Same bytes -> same texture object -> same pixels; a texture
    is freed when the last mesh using it is."""

    def __init__(self) -> None:
        self._by_key: dict[bytes, list[Any]] = {}  # key -> [texture, users]
        self._keys: dict[int, bytes] = {}  # id(texture) -> key

    def acquire(self, ctx: Any, rgb: np.ndarray) -> Any:
        """The texture of ``rgb`` (a :func:`_texture_rgb` array), uploaded on first use.
        Keyed by the source pixels, so a repeat skips building its RGBA copy too."""
        import hashlib

        key = hashlib.blake2b(rgb.data, digest_size=16).digest() + repr(rgb.shape).encode()
        entry = self._by_key.get(key)
        if entry is None:
            tex = _mipmapped_texture(ctx, rgb)
            entry = self._by_key[key] = [tex, 0]
            self._keys[id(tex)] = key
        entry[1] += 1
        return entry[0]

    def release(self, tex: Any) -> None:
        key = self._keys[id(tex)]
        entry = self._by_key[key]
        entry[1] -= 1
        if entry[1] == 0:
            del self._by_key[key], self._keys[id(tex)]
            tex.release()


class _Skin:
    """A part's texture, made and uploaded on its first colour draw.

    The id pass (mask-only renders, shadow maps) never samples a texture, and a mask-only
    render of a layout the task then rejects was the only render of its new meshes and
    ground: building their RGBA copies, mipmaps (a CPU job on llvmpipe) and procedural
    ground textures for it was wasted (DORI's street layouts rejected on masks). The
    texture is the same pixels whenever it is made, so when does not change an image."""

    __slots__ = ("_make", "_pool", "_anisotropy", "tex")

    def __init__(self, make: Callable[[], np.ndarray], pool: _TexturePool | None,
                 anisotropy: float | None = None) -> None:
        self._make: Callable[[], np.ndarray] | None = make  # -> a :func:`_texture_rgb` array
        self._pool, self._anisotropy = pool, anisotropy
        self.tex: Any = None  # the GL texture once made

    def get(self, ctx: Any) -> Any:
        """The GL texture, uploaded (or taken from the pool) on the first call."""
        if self.tex is None:
            assert self._make is not None
            with timing.stage("render.setup"):  # set-up, though the colour pass asks for it
                rgb = self._make()
                self.tex = self._pool.acquire(ctx, rgb) if self._pool is not None else _mipmapped_texture(ctx, rgb)
                if self._anisotropy is not None:
                    self.tex.anisotropy = self._anisotropy
            self._make = None  # drop the source pixels' closure
        return self.tex

    def release(self) -> None:
        if self.tex is not None:
            if self._pool is None:
                self.tex.release()
            else:
                self._pool.release(self.tex)
            self.tex = None
        self._make = None


def _texture_rgb(texture: Any) -> np.ndarray:
    """A part's texture as a C-contiguous (H, W, 3) uint8 array (alpha is not used)."""
    img = np.asarray(texture, dtype=np.uint8)
    if img.ndim != 3 or img.shape[2] not in (3, 4):
        raise ValueError(f"texture must be (H, W, 3) uint8, got {img.shape}")
    return np.ascontiguousarray(img[..., :3])


def _mipmapped_texture(ctx: Any, rgb: np.ndarray) -> Any:
    """Upload ``rgb`` as an opaque RGBA texture with mipmaps and trilinear filtering.

    Rows are flipped because part uvs follow the OBJ/GL convention (v = 0 at the
    image's bottom row). The RGBA copy is written in one pass (flip and alpha together)
    and handed to GL without another ``tobytes`` copy."""
    import moderngl

    h, w = rgb.shape[:2]
    rgba = np.empty((h, w, 4), dtype=np.uint8)
    rgba[..., :3] = rgb[::-1]
    rgba[..., 3] = 255
    tex = ctx.texture((w, h), 4, rgba)
    tex.build_mipmaps()
    tex.filter = (moderngl.LINEAR_MIPMAP_LINEAR, moderngl.LINEAR)
    return tex


@dataclass
class _View:
    rotation: np.ndarray  # world -> OpenCV camera
    eye: np.ndarray
    k: np.ndarray
    width: int
    height: int


@dataclass
class _Draw:
    mesh: _GpuMesh
    model: np.ndarray  # 4x4 object-to-world including scale
    instance: int
    tint: np.ndarray | None  # linear RGB

    @cached_property
    def box(self) -> np.ndarray:
        """World-space corners (8, 3) of the mesh's box: asked by the shadow fit, the
        scene bounds and every view's frustum test (six per panorama), computed once."""
        return _world_box(self)


# what a colour-only render (``layers=False``) returns for its layers: empty, so a use fails
_NO_DEPTH = np.zeros((0, 0), dtype=np.float32)
_NO_INSTANCE = np.zeros((0, 0), dtype=np.int32)


@dataclass
class _Frame:
    rgb: np.ndarray
    zcam: np.ndarray
    inst: np.ndarray


class GLRenderer:
    """Rasteriser with sun shadows, anti-aliasing and exact depth / instance layers.

    ``ssaa``: supersampling factor (render at ssaa x, box-filter in linear light).
    ``msaa``: optional multisample count (0 = off); ``ssaa=1, msaa=4`` is about twice
    as fast at 512^2 with comparable edges, since it shades each pixel once.
    ``face_size``: cube-face size for panoramas (default width / 4, which matches the
    panorama's angular resolution at the equator). Parts of a tinted object that are
    ``tintable`` take the object's colour; a tinted textured part keeps the texture's
    luminance as detail. Part uvs follow the OBJ convention (v = 0 at the image's
    bottom row). GPU buffers are cached per (asset_id, params), LRU-bounded by
    ``mesh_cache_size``. Output is bit-identical between runs.
    """

    name = "gl"

    def __init__(
        self,
        library: AssetLibrary | None = None,
        ssaa: int = 2,
        *,
        shadow_map_size: int = 1024,
        msaa: int = 0,
        face_size: int | None = None,
        mesh_cache_size: int = 256,
    ) -> None:
        if not isinstance(ssaa, int) or not 1 <= ssaa <= 8:
            raise ValueError(f"ssaa must be an integer in 1..8, got {ssaa!r}")
        if msaa not in (0, 2, 4, 8):
            raise ValueError(f"msaa must be 0, 2, 4 or 8 samples, got {msaa!r}")
        if shadow_map_size < 64:
            raise ValueError(f"shadow_map_size too small: {shadow_map_size}")
        if face_size is not None and face_size < 8:
            raise ValueError(f"face_size too small: {face_size}")
        if mesh_cache_size < 1:
            raise ValueError(f"mesh_cache_size must be >= 1, got {mesh_cache_size}")
        if library is None:
            from perspecta.assets.library import AssetLibrary

            library = AssetLibrary.default()
        self.library = library
        self.ssaa = ssaa
        self.shadow_map_size = int(shadow_map_size)
        self.msaa = msaa
        self.face_size = face_size
        self._mesh_cache_size = mesh_cache_size
        self._ctx: moderngl.Context | None = None
        self._meshes: OrderedDict[str, _GpuMesh] = OrderedDict()
        self._targets: OrderedDict[tuple[int, int], dict[str, Any]] = OrderedDict()
        self._static: OrderedDict[str, _GpuMesh] = OrderedDict()
        self._env_textures: dict[str, Any] = {}
        self._texture_pool = _TexturePool()
        # id / depth layers of recent mask-only views, by everything the id pass reads
        self._id_frames: OrderedDict[tuple[Any, ...], tuple[tuple[Any, ...], np.ndarray, np.ndarray]] = OrderedDict()

    # ------------------------------------------------------------------ setup
    @property
    def version(self) -> str:
        import moderngl

        if _GL_RENDERER is None:  # the GL driver is per process: ask it once
            with self._context():
                pass
        return f"moderngl-{moderngl.__version__}/{_GL_RENDERER}"

    def _context(self) -> moderngl.Context:
        if self._ctx is None:
            import moderngl

            try:
                ctx = moderngl.create_standalone_context(require=330, backend="egl")
            except Exception as e:  # pragma: no cover - depends on the machine
                raise RuntimeError(
                    "could not create a headless EGL OpenGL 3.3 context; install Mesa's "
                    "EGL packages (libegl1 libegl-mesa0 libgl1-mesa-dri)"
                ) from e
            self._prog_scene = ctx.program(
                vertex_shader=_load_shader("scene.vert.glsl"),
                fragment_shader=_load_shader("scene.frag.glsl"),
            )
            self._prog_ids = ctx.program(
                vertex_shader=_load_shader("ids.vert.glsl"),
                fragment_shader=_load_shader("ids.frag.glsl"),
            )
            self._prog_sky = ctx.program(
                vertex_shader=_load_shader("fullscreen.vert.glsl"),
                fragment_shader=_load_shader("sky.frag.glsl"),
            )
            resolve_src = _load_shader("resolve.frag.glsl")
            if self.msaa:
                if self.msaa > ctx.max_samples:
                    raise ValueError(f"msaa={self.msaa} exceeds this GL's {ctx.max_samples}")
                resolve_src = resolve_src.replace(
                    "#version 330\n", "#version 330\n#define MSAA\n", 1
                )
            self._prog_resolve = ctx.program(
                vertex_shader=_load_shader("fullscreen.vert.glsl"), fragment_shader=resolve_src
            )
            self._vao_sky = ctx.vertex_array(self._prog_sky, [])
            self._vao_resolve = ctx.vertex_array(self._prog_resolve, [])
            n = self.shadow_map_size
            self._shadow_tex = ctx.depth_texture((n, n))
            self._shadow_tex.compare_func = "<="
            self._shadow_tex.filter = (moderngl.LINEAR, moderngl.LINEAR)
            self._shadow_tex.repeat_x = False
            self._shadow_tex.repeat_y = False
            self._shadow_fbo = ctx.framebuffer(depth_attachment=self._shadow_tex)
            self._shadow_key: tuple[Any, ...] | None = None  # what the shadow map now holds
            self._prog_scene["u_tex"].value = 0
            self._prog_scene["u_shadow"].value = 1
            self._prog_resolve["u_src"].value = 0
            self._prog_sky["u_env"].value = 2
            self._ctx = ctx
            global _GL_RENDERER
            with ctx:
                _GL_RENDERER = str(ctx.info["GL_RENDERER"])
        return self._ctx

    def close(self) -> None:
        """Free every GPU object and the context (the renderer can be used again)."""
        if self._ctx is None:
            return
        with self._ctx:
            self._release_all()
        self._ctx.release()
        self._ctx = None

    def _release_all(self) -> None:
        for m in list(self._meshes.values()) + list(self._static.values()):
            m.release()
        self._meshes.clear()
        self._static.clear()
        self._id_frames.clear()
        for tex in self._env_textures.values():
            tex.release()
        self._env_textures.clear()
        for t in self._targets.values():
            for obj in t.values():
                if hasattr(obj, "release"):
                    obj.release()
        self._targets.clear()

    def __enter__(self) -> GLRenderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ GPU buffers
    def _upload(self, mesh: Mesh, *, share_textures: bool = True,
                late_textures: Sequence[Callable[[], np.ndarray] | None] | None = None,
                anisotropy: float | None = None) -> _GpuMesh:
        """GPU buffers of ``mesh``; textures are made on first colour draw (:class:`_Skin`).
        ``late_textures`` gives, per part, a maker of a texture the part does not carry
        yet (the ground's, generated only if a colour pass needs it)."""
        ctx = self._context()
        pool = self._texture_pool if share_textures else None
        if not mesh.parts:
            raise ValueError("cannot render a mesh without parts")
        for part in mesh.parts:
            n = len(part.positions)
            if n and (n % 3 or part.normals.shape != part.positions.shape):
                raise ValueError(
                    f"mesh part {part.name!r}: {n} vertices / normals {part.normals.shape} "
                    "do not form a triangle soup"
                )
        total = sum(len(part.positions) for part in mesh.parts)
        if total == 0:
            raise ValueError("cannot render a mesh whose parts are all empty")
        # one interleaved array, each part written in place (uvs stay 0 without a texture)
        allv = np.zeros((total, _FLOATS_PER_VERTEX), dtype=np.float32)
        parts = []
        first = 0
        for k, part in enumerate(mesh.parts):
            n = len(part.positions)
            if n == 0:
                continue
            data = allv[first:first + n]
            data[:, 0:3] = part.positions
            data[:, 3:6] = part.normals
            skin = None
            late = late_textures[k] if late_textures is not None else None
            if late is None and part.texture is not None:
                late = partial(_texture_rgb, part.texture)
            if late is not None and part.uvs is not None:
                data[:, 6:8] = part.uvs
                skin = _Skin(late, pool, anisotropy)
            parts.append((first, n, srgb_to_linear(part.color), skin, bool(part.tintable)))
            first += n
        vbo = ctx.buffer(allv)
        vao_scene = ctx.vertex_array(
            self._prog_scene, [(vbo, "3f 3f 2f", "in_pos", "in_normal", "in_uv")]
        )
        vao_ids = ctx.vertex_array(self._prog_ids, [(vbo, "3f 20x", "in_pos")])
        # the mesh's own bounds (kept by the Mesh, which samplers measured already) in
        # float32: rounding is monotonic, so the same values as the min / max of allv
        lo, hi = mesh.bounds()
        return _GpuMesh(vbo, vao_scene, vao_ids, parts, lo.astype(np.float32), hi.astype(np.float32))

    def _gpu_mesh(self, asset_id: str, params: dict[str, Any]) -> _GpuMesh:
        key = asset_id + json.dumps(params, sort_keys=True, default=str)
        if key in self._meshes:
            self._meshes.move_to_end(key)
            return self._meshes[key]
        gm = self._upload(self.library.load_mesh(asset_id, params))
        self._meshes[key] = gm
        return gm

    def _trim_mesh_cache(self, in_use: list[_Draw]) -> None:
        """Drop least-recently-used GPU meshes, never one the current scene draws."""
        keep = {id(d.mesh) for d in in_use}
        for key in list(self._meshes):
            if len(self._meshes) <= self._mesh_cache_size:
                break
            if id(self._meshes[key]) not in keep:
                self._meshes.pop(key).release()

    def _static_mesh(self, scene: Scene) -> _GpuMesh | None:
        """Ground quad or room shell (cached by their parameters)."""
        from perspecta.assets.mesh import Mesh, MeshPart

        if scene.room is not None:
            key = "room" + json.dumps(scene.room.__dict__, sort_keys=True, default=str)
        elif scene.ground is not None:
            key = "ground" + json.dumps(scene.ground.__dict__, sort_keys=True, default=str)
            if scene.ground.material != "plain":
                key += f"seed={_ground_seed(scene)}"
        else:
            return None
        if key in self._static:
            return self._static[key]
        late: list[Callable[[], np.ndarray] | None] | None = None
        if scene.room is not None:
            mesh = Mesh([MeshPart(p, n, c) for p, n, c in _room_parts(scene.room)])
        else:
            assert scene.ground is not None
            part, make = _ground_mesh_part(scene.ground, _ground_seed(scene))
            mesh, late = Mesh([part]), [make]
        # its textures get their own anisotropy, so they are not pooled
        gm = self._upload(mesh, share_textures=False, late_textures=late, anisotropy=GROUND_ANISOTROPY)
        self._static[key] = gm
        while len(self._static) > 8:
            self._static.popitem(last=False)[1].release()
        return gm

    def _target(self, width: int, height: int) -> dict[str, Any]:
        key = (width, height)
        if key in self._targets:
            self._targets.move_to_end(key)
            return self._targets[key]
        ctx = self._context()
        s = self.ssaa
        t: dict[str, Any] = {}
        ms = self.msaa
        t["color"] = ctx.texture((width * s, height * s), 4, dtype="f2", samples=ms)
        t["color_depth"] = ctx.depth_renderbuffer((width * s, height * s), samples=ms)
        t["fbo_color"] = ctx.framebuffer([t["color"]], t["color_depth"])
        t["out"] = ctx.renderbuffer((width, height), 4)
        t["fbo_out"] = ctx.framebuffer([t["out"]])
        # camera-frame z and instance id only (the shader's other two outputs are dropped):
        # half the bytes to write and read back, and cleared to (inf, 0) = "no hit"
        t["ids"] = ctx.renderbuffer((width, height), 2, dtype="f4")
        t["ids_depth"] = ctx.depth_renderbuffer((width, height))
        t["fbo_ids"] = ctx.framebuffer([t["ids"]], t["ids_depth"])
        self._targets[key] = t
        while len(self._targets) > 4:
            for obj in self._targets.popitem(last=False)[1].values():
                obj.release()
        return t

    # --------------------------------------------------------------- rendering
    def render(self, scene: Scene, camera: Camera, *, color: bool = True, layers: bool = True) -> RenderResult:
        """Render ``camera`` (perspective or equirect) of ``scene``.

        ``color=False`` renders the depth / instance layers only (no shadow map, colour
        pass or resolve: about a tenth of the work) for callers that read only masks; its
        ``rgb`` is an empty (0, 0, 3) array so that using it fails at once. The layers are
        bit-identical to a full render's. ``layers=False`` is the converse, for a caller
        that measured the masks already and wants the picture: no id / depth pass (nor,
        for a panorama, their remap), and empty (0, 0) ``depth`` and ``instance``; the
        rgb is bit-identical to a full render's."""
        _check_camera(camera)
        if not (color or layers):
            raise ValueError("render: nothing to draw (color=False and layers=False)")
        timing.count(f"render {camera.width}x{camera.height} {camera.projection}" + ("" if color else " ids"))
        # the bench re-renders colour frames only: copying mask-only ones was measured cost
        if color and timing.collecting():  # a copy: tasks may edit a scene after rendering it
            import copy

            timing.note("frames", (copy.deepcopy(scene), camera, color))
        # several renderers (contexts) may live in one process: make ours current
        with timing.stage("render.setup"), self._context():
            return self._render(scene, camera, color, layers)

    def _render(self, scene: Scene, camera: Camera, color: bool = True, layers: bool = True) -> RenderResult:
        draws = self._draws(scene)
        try:
            return self._render_draws(scene, camera, draws, color, layers)
        finally:
            self._trim_mesh_cache(draws)

    def _render_draws(self, scene: Scene, camera: Camera, draws: list[_Draw], color: bool = True,
                      layers: bool = True) -> RenderResult:
        static = self._static_mesh(scene)
        if color:  # make the textures before any pass (see _Skin), not between two draws
            for gm in [dr.mesh for dr in draws] + ([static] if static is not None else []):
                for part in gm.parts:
                    if part[3] is not None:
                        part[3].get(self._ctx)
        # the near/far planes come from the scene bounds, with or without colour
        light = self._lighting(scene, draws) if color else {"bounds": _scene_bounds(scene, draws), "color": False}
        light["layers"] = layers
        if camera.projection == "perspective":
            view = _View(
                camera.rotation_world_to_cam(),
                np.asarray(camera.position, dtype=float),
                camera.intrinsics(),
                camera.width,
                camera.height,
            )
            fr = self._render_view(scene, view, draws, static, light)
            return RenderResult(fr.rgb, fr.zcam, fr.inst)
        return self._render_equirect(scene, camera, draws, static, light)

    def _render_equirect(
        self, scene: Scene, camera: Camera, draws: list[_Draw], static: _GpuMesh | None,
        light: dict[str, Any],
    ) -> RenderResult:
        face = self.face_size or max(16, int(round(camera.width / 4)))
        pad = 1
        p = face + 2 * pad
        k = panorama.face_intrinsics(face, pad)
        eye = np.asarray(camera.position, dtype=float)
        rgbs, zs, insts = [], [], []
        for rot in panorama.face_rotations(camera):
            fr = self._render_view(scene, _View(rot, eye, k, p, p), draws, static, light)
            rgbs.append(fr.rgb)
            zs.append(fr.zcam)
            insts.append(fr.inst)
        color = light.get("color", True)
        with timing.stage("panorama.remap"):
            lut = panorama.equirect_lut(camera.width, camera.height, face, pad)
            if not light["layers"]:  # colour only: no layers were drawn
                return RenderResult(panorama.remap_colour(lut, np.stack(rgbs)), _NO_DEPTH.copy(), _NO_INSTANCE.copy())
            rgb, depth, inst = panorama.remap_faces(lut, np.stack(rgbs) if color else None, np.stack(zs),
                                                    np.stack(insts))
        if rgb is None:
            rgb = np.zeros((0, 0, 3), dtype=np.uint8)
        return RenderResult(rgb, _timed(depth, "panorama.remap"), inst)

    def _draws(self, scene: Scene) -> list[_Draw]:
        draws = []
        for i, obj in enumerate(scene.objects):
            if not obj.scale > 0:
                raise ValueError(f"object {obj.id!r} has non-positive scale {obj.scale}")
            gm = self._gpu_mesh(obj.asset_id, obj.params)
            model = obj.pose.matrix() @ np.diag([obj.scale, obj.scale, obj.scale, 1.0])
            tint = srgb_to_linear(obj.color) if obj.color is not None else None
            draws.append(_Draw(gm, model, i + 1, tint))
        return draws

    def _lighting(self, scene: Scene, draws: list[_Draw]) -> dict[str, Any]:
        """Light uniforms plus the sun's shadow map, rendered once per call."""
        lt = scene.light
        d = np.asarray(lt.direction, dtype=float)
        if np.linalg.norm(d) < 1e-9:
            raise ValueError("scene.light.direction must be non-zero")
        d /= np.linalg.norm(d)
        color = srgb_to_linear(lt.color)
        ambient = lt.ambient
        sun = lt.intensity
        fill = np.zeros(3)
        fill_pos = np.zeros(3)
        env = self._environment(scene)
        if env is not None:
            # the map colours the ambient; its strength stays the record's ``ambient``
            out_amb_up = color * ambient * env.ambient_up
            out_amb_down = color * ambient * env.ambient_down
        else:
            out_amb_up, out_amb_down = color * ambient, color * ambient * 0.55
        if scene.room is not None:
            # Indoors the bounce light dominates: lift the ambient, soften the sun and
            # add an unshadowed fill just under the ceiling so every wall reads.
            ambient = max(ambient, 0.5)
            out_amb_up, out_amb_down = color * ambient, color * ambient * 0.55
            sun = 0.8 * lt.intensity
            fill = 0.35 * lt.intensity * color
            fill_pos = np.array([0.0, 0.0, 0.85 * scene.room.height])
        out: dict[str, Any] = {
            "u_sun_dir": d,
            "u_sun_rgb": color * sun,
            "u_ambient_rgb": out_amb_up,
            "u_ambient_down_rgb": out_amb_down,
            "u_sky_dir": lt.fill_direction(),  # never shadowed
            "u_sky_rgb": color * lt.fill * lt.intensity,
            "u_fill_rgb": fill,
            "u_fill_pos": fill_pos,
            "u_has_shadow": 0,
            "u_light_vp": np.eye(4),
            "u_texel_world": 0.0,
            "u_depth_range": 1.0,
        }
        if draws and d[2] < -1e-3 and sun > 0:
            out.update(self._shadow_pass(d, draws))
        out["bounds"] = _scene_bounds(scene, draws)
        return out

    def _environment(self, scene: Scene) -> EnvironmentLight | None:
        """The scene's HDRI environment (None without one, and always indoors)."""
        if scene.room is not None or scene.environment is None:
            return None
        from perspecta.render.environment import environment_light, parse_environment

        name = parse_environment(scene.environment)
        return None if name is None else environment_light(name)

    def _env_texture(self, scene: Scene) -> Any:
        import moderngl

        env = self._environment(scene)
        if env is None:
            return None
        if env.name not in self._env_textures:
            img = np.ascontiguousarray(env.image[::-1]).astype(np.float16)  # v = 0 at the bottom
            tex = self._context().texture((img.shape[1], img.shape[0]), 3, img.tobytes(), dtype="f2")
            tex.filter = (moderngl.LINEAR, moderngl.LINEAR)
            tex.repeat_x = True  # longitude wraps
            tex.repeat_y = False
            self._env_textures[env.name] = tex
        return self._env_textures[env.name]

    def _shadow_pass(self, d: np.ndarray, draws: list[_Draw]) -> dict[str, Any]:
        """Render the sun's shadow map, unless it already holds these casters under this sun.

        Tasks render several views of one scene (pairs, rotations, framing renders) and the
        shadow map depends only on the light and the casters, not the camera: the same
        inputs give the same map, so a repeat skips its draw (the uniforms are recomputed:
        cheap, and the same floats)."""
        import moderngl

        ctx = self._context()
        # the meshes themselves (not their ids) keep a re-uploaded mesh from matching
        key = (d.tobytes(), tuple((dr.mesh, dr.model.tobytes()) for dr in draws))
        helper = np.array([0.0, 0.0, 1.0]) if abs(d[2]) < 0.99 else np.array([1.0, 0.0, 0.0])
        right = np.cross(d, helper)
        right /= np.linalg.norm(right)
        up = np.cross(right, d)
        basis = np.stack([right, up, d])  # light-space x, y, depth along the light
        corners = np.concatenate(
            [dr.box for dr in draws]
        )
        ls = corners @ basis.T
        # where the casters' shadows reach the ground plane (z = 0) along the light
        t = np.maximum(-corners[:, 2] / d[2], 0.0)
        ground_pts = corners + t[:, None] * d
        ls_ground = ground_pts @ basis.T
        centre = (ls[:, :2].min(0) + ls[:, :2].max(0)) / 2
        half = max((ls[:, :2].max(0) - ls[:, :2].min(0)).max() / 2, 1e-3) * 1.05 + 0.05
        dmin = ls[:, 2].min() - 0.5
        dmax = max(ls[:, 2].max(), ls_ground[:, 2].max()) + 0.5
        m = np.eye(4)
        m[0, :3] = basis[0] / half
        m[0, 3] = -centre[0] / half
        m[1, :3] = basis[1] / half
        m[1, 3] = -centre[1] / half
        m[2, :3] = basis[2] * 2 / (dmax - dmin)
        m[2, 3] = -2 * dmin / (dmax - dmin) - 1
        if key != self._shadow_key:
            self._shadow_key = None  # a failed pass must not leave a stale match
            self._shadow_fbo.use()
            self._shadow_fbo.clear(depth=1.0)
            ctx.enable(moderngl.DEPTH_TEST)
            ctx.disable(moderngl.CULL_FACE)
            prog = self._prog_ids
            _mat(prog, "u_view_proj", m)
            for dr in draws:
                _mat(prog, "u_model", dr.model)
                dr.mesh.vao_ids.render(moderngl.TRIANGLES)
            self._shadow_key = key
        texel = 2 * half / self.shadow_map_size
        return {
            "u_has_shadow": 1,
            "u_light_vp": m,
            "u_texel_world": texel,
            "u_depth_range": dmax - dmin,
        }

    def _render_view(
        self, scene: Scene, view: _View, draws: list[_Draw], static: _GpuMesh | None,
        light: dict[str, Any],
    ) -> _Frame:
        import moderngl

        ctx = self._context()
        w, h, s = view.width, view.height, self.ssaa
        extr = np.eye(4)
        extr[:3, :3] = view.rotation
        extr[:3, 3] = -view.rotation @ view.eye
        rel = light["bounds"] - view.eye
        far = float(np.linalg.norm(rel, axis=1).max()) * 1.05 + 1.0
        near = 0.02 if far < 200 else far / 1e4
        view_proj = clip_matrix(view.k, w, h, near, far) @ extr
        # A cube face sees a sixth of a room: skipping meshes wholly outside the view
        # leaves every pixel unchanged and saves most of the vertex work.
        draws = [dr for dr in draws if _in_frustum(view_proj, dr.box)]
        t = self._target(w, h)

        mark = timing.start()
        if light.get("color", True):
            # --- colour pass (linear light, SSAA resolution). Geometry first, sky last at
            # the far plane, so the depth test spares shading hidden sky pixels.
            fbo = t["fbo_color"]
            fbo.use()
            fbo.color_mask = (False, False, False, False)
            fbo.clear(depth=1.0)  # the sky pass overwrites every remaining colour
            fbo.color_mask = (True, True, True, True)
            fbo.use()  # moderngl applies a framebuffer's masks when it is bound
            ctx.enable(moderngl.DEPTH_TEST)
            ctx.depth_func = "<"
            ctx.disable(moderngl.CULL_FACE)
            pr = self._prog_scene
            _mat(pr, "u_view_proj", view_proj)
            _mat(pr, "u_light_vp", light["u_light_vp"])
            pr["u_eye"].value = tuple(view.eye)
            for name in ("u_sun_dir", "u_sun_rgb", "u_ambient_rgb", "u_ambient_down_rgb", "u_sky_dir",
                         "u_sky_rgb", "u_fill_rgb", "u_fill_pos"):
                pr[name].value = tuple(float(x) for x in light[name])
            for name in ("u_texel_world", "u_depth_range"):
                pr[name].value = float(light[name])
            pr["u_has_shadow"].value = int(light["u_has_shadow"])
            self._shadow_tex.use(location=1)
            pr["u_albedo_floor"].value = ALBEDO_FLOOR
            pr["u_specular"].value = SPECULAR
            for dr in draws:
                self._draw_scene_mesh(dr.mesh, dr.model, dr.tint)
            pr["u_specular"].value = 0.0  # matte floor, walls and ground
            if static is not None:
                if scene.room is not None:
                    ctx.enable(moderngl.CULL_FACE)
                    ctx.front_face = "cw"  # our clip matrix flips y, which flips winding
                self._draw_scene_mesh(static, np.eye(4), None)
                ctx.disable(moderngl.CULL_FACE)
                ctx.front_face = "ccw"
            ctx.depth_func = "<="
            sky = srgb_to_linear(scene.ground.sky_color if scene.ground is not None else _DEFAULT_SKY)
            ps = self._prog_sky
            _mat(ps, "u_ray", view.rotation.T @ np.linalg.inv(view.k))
            ps["u_ssaa"].value = float(s)
            ps["u_zenith"].value = tuple(sky * 0.8)
            ps["u_horizon"].value = tuple(sky * 0.55 + 0.45)
            env_tex = self._env_texture(scene)
            ps["u_env_mode"].value = int(env_tex is not None)
            if env_tex is not None:
                env_tex.use(location=2)
                ps["u_env_yaw"].value = math.radians(scene.environment_yaw)
            self._vao_sky.render(moderngl.TRIANGLES, vertices=3)
            ctx.depth_func = "<"

            # --- resolve to sRGB at output resolution
            ctx.disable(moderngl.DEPTH_TEST)
            t["fbo_out"].use()
            t["color"].use(location=0)
            self._prog_resolve["u_factor"].value = s
            if "u_samples" in self._prog_resolve:
                self._prog_resolve["u_samples"].value = self.msaa
            self._vao_resolve.render(moderngl.TRIANGLES, vertices=3)
            rgb = np.frombuffer(t["fbo_out"].read(components=3, alignment=1), dtype=np.uint8)
            rgb = rgb.reshape(h, w, 3).copy()
            mark = timing.stop(mark, "render.color")
        else:
            rgb = np.zeros((0, 0, 3), dtype=np.uint8)

        if not light.get("layers", True):  # the caller wants the picture only
            return _Frame(rgb, _NO_DEPTH.copy(), _NO_INSTANCE.copy())

        # --- id / depth pass at 1x (pixel centres = output pixel centres)
        id_key = _id_pass_key(view, view_proj, static, scene.room is not None, draws)
        kept = self._id_frames.get(id_key)
        if kept is not None:  # a mask-only render of this very view drew these layers
            timing.stop(mark, "render.ids")
            return _Frame(rgb, kept[1].copy(), kept[2].copy())
        t["fbo_ids"].use()
        t["fbo_ids"].clear(math.inf, 0.0, depth=1.0)
        ctx.enable(moderngl.DEPTH_TEST)
        pi = self._prog_ids
        _mat(pi, "u_view_proj", view_proj)
        pi["u_eye"].value = tuple(view.eye)
        pi["u_forward"].value = tuple(view.rotation[2])
        if static is not None:
            if scene.room is not None:
                ctx.enable(moderngl.CULL_FACE)
                ctx.front_face = "cw"
            pi["u_instance"].value = 0.0
            _mat(pi, "u_model", np.eye(4))
            static.vao_ids.render(moderngl.TRIANGLES)
            ctx.disable(moderngl.CULL_FACE)
            ctx.front_face = "ccw"
        for dr in draws:
            pi["u_instance"].value = float(dr.instance)
            _mat(pi, "u_model", dr.model)
            dr.mesh.vao_ids.render(moderngl.TRIANGLES)
        ids = np.frombuffer(t["fbo_ids"].read(components=2, dtype="f4"), dtype=np.float32)
        ids = ids.reshape(h, w, 2)
        zcam = np.ascontiguousarray(ids[..., 0])  # inf where nothing was drawn (the clear)
        inst = ids[..., 1].astype(np.int32)  # whole numbers: a flat uniform, never interpolated
        ctx.disable(moderngl.DEPTH_TEST)
        if not light.get("color", True):
            self._keep_id_frame(id_key, (static, *(dr.mesh for dr in draws)), zcam, inst)
        timing.stop(mark, "render.ids")
        return _Frame(rgb, zcam, inst)

    def _keep_id_frame(self, key: tuple[Any, ...], meshes: tuple[Any, ...], zcam: np.ndarray,
                       inst: np.ndarray) -> None:
        """Remember a mask-only view's layers (copies: callers may edit theirs).

        Why: a task that rejects draws on masks alone (too few pixels, too small a box)
        renders the masks first and the colour only for a draw it keeps; the id pass of
        that colour render would redraw exactly these layers. Six entries hold every
        face of a panorama. The entry holds the meshes its key names by ``id``."""
        self._id_frames[key] = (meshes, zcam.copy(), inst.copy())
        self._id_frames.move_to_end(key)
        while len(self._id_frames) > 6:
            self._id_frames.popitem(last=False)

    def _draw_scene_mesh(self, gm: _GpuMesh, model: np.ndarray, tint: np.ndarray | None) -> None:
        import moderngl

        pr = self._prog_scene
        _mat(pr, "u_model", model)
        r = model[:3, :3]
        _mat(pr, "u_normal_mat", np.linalg.inv(r).T)
        for first, count, color, tex, tintable in gm.parts:
            tinted = tint is not None and tintable
            pr["u_albedo"].value = tuple(float(x) for x in (tint if tinted else color))
            if tex is not None:
                tex.get(self._ctx).use(location=0)
                pr["u_texture_mode"].value = 2 if tinted else 1
            else:
                pr["u_texture_mode"].value = 0
            gm.vao_scene.render(moderngl.TRIANGLES, vertices=count, first=first)


def _timed(fn: Callable[[], np.ndarray], stage: str) -> Callable[[], np.ndarray]:
    """``fn`` charged to timing ``stage`` whenever it runs (a lazily computed layer)."""
    def run() -> np.ndarray:
        with timing.stage(stage):
            return fn()
    return run


def _id_pass_key(view: _View, view_proj: np.ndarray, static: _GpuMesh | None, room: bool,
                 draws: list[_Draw]) -> tuple[Any, ...]:
    """Everything the id pass reads: target size, the view's matrices and eye, the static
    mesh (culled in a room) and each drawn mesh with its model matrix and instance. The
    meshes are keyed by ``id`` and the kept entry holds them (:meth:`GLRenderer._keep_id_frame`),
    so no other mesh can take their ids while it lives; the colour pass does not touch the
    id target, so equal keys give equal layers."""
    return (view.width, view.height, view_proj.tobytes(), np.asarray(view.eye, dtype=float).tobytes(),
            np.asarray(view.rotation[2], dtype=float).tobytes(), id(static), room,
            tuple((id(dr.mesh), dr.model.tobytes(), dr.instance) for dr in draws))


def _mat(prog: Any, name: str, m: np.ndarray) -> None:
    """Write a row-major numpy matrix into a (column-major) GLSL matrix uniform."""
    if name in prog:
        prog[name].write(np.ascontiguousarray(np.asarray(m, dtype=np.float32).T).tobytes())


def _in_frustum(view_proj: np.ndarray, corners: np.ndarray) -> bool:
    """False only when all ``corners`` lie beyond one clip plane (so nothing can show)."""
    homogeneous = np.ones((len(corners), 4))  # the values np.c_[corners, 1] gives, without its overhead
    homogeneous[:, :3] = corners
    clip = homogeneous @ view_proj.T
    x, y, z, w = clip.T
    return not any(np.all(c) for c in (x > w, x < -w, y > w, y < -w, z > w, z < -w))


def _scene_bounds(scene: Scene, draws: list[_Draw]) -> np.ndarray:
    """Points bounding what a view can see (the origin, the drawn meshes' boxes, the
    room or ground), from which each view takes its near/far planes."""
    pts = [np.zeros((1, 3))]
    for dr in draws:
        pts.append(dr.box)
    if scene.room is not None:
        r = scene.room
        pts.append(_box_corners(np.array([-r.width / 2, -r.depth / 2, 0.0]),
                                np.array([r.width / 2, r.depth / 2, r.height])))
    elif scene.ground is not None:
        g = scene.ground.size / 2
        pts.append(_box_corners(np.array([-g, -g, 0.0]), np.array([g, g, 0.0])))
    return np.concatenate(pts)


def _box_corners(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.array(
        [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    )


def _world_box(dr: _Draw) -> np.ndarray:
    """World-space corners (8, 3) of a drawn mesh's local bounding box."""
    return _box_corners(dr.mesh.lo, dr.mesh.hi) @ dr.model[:3, :3].T + dr.model[:3, 3]


def _quad(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Two triangles a-b-c, a-c-d (counter-clockwise seen from the normal side)."""
    return np.array([a, b, c, a, c, d], dtype=np.float32)


def _ground_seed(scene: Scene) -> int:
    g = scene.ground
    assert g is not None
    return scene.seed if g.texture_seed is None else g.texture_seed


def _ground_mesh_part(g: Ground, seed: int) -> tuple[MeshPart, Callable[[], np.ndarray] | None]:
    """The ground quad and, for textured materials (which get world-x/y uvs), a maker of
    its texture: generating it takes ~30 ms, and a mask-only render never reads it."""
    from perspecta.assets.mesh import MeshPart
    from perspecta.render.ground import check_material, ground_uvs

    s = g.size / 2
    corners = ((-s, -s, 0), (s, -s, 0), (s, s, 0), (-s, s, 0))
    pos = _quad(*(np.array(p, dtype=float) for p in corners))
    nrm = np.tile(np.array([0.0, 0.0, 1.0], dtype=np.float32), (6, 1))
    if check_material(g.material) == "plain":
        return MeshPart(pos, nrm, g.color), None
    return (MeshPart(pos, nrm, (1.0, 1.0, 1.0), uvs=ground_uvs(pos, g.pattern_size)),
            partial(_ground_rgb, g.material, seed))


def _ground_rgb(material: str, seed: int) -> np.ndarray:
    from perspecta.render.ground import ground_texture

    return _texture_rgb(ground_texture(material, seed))


def _room_parts(r: Room) -> list[tuple[np.ndarray, np.ndarray, tuple[float, float, float]]]:
    """Inner faces of the room box, wound counter-clockwise seen from inside."""
    x, y, z = r.width / 2, r.depth / 2, r.height
    c = {
        (sx, sy, sz): np.array([sx * x, sy * y, sz * z], dtype=float)
        for sx in (-1, 1) for sy in (-1, 1) for sz in (0, 1)
    }
    faces = [  # corner cycles; the winding is fixed below to be CCW around the inward normal
        ((-1, -1, 0), (-1, 1, 0), (1, 1, 0), (1, -1, 0), (0, 0, 1), r.floor_color),
        ((-1, -1, 1), (1, -1, 1), (1, 1, 1), (-1, 1, 1), (0, 0, -1), r.ceiling_color),
        ((-1, -1, 0), (1, -1, 0), (1, -1, 1), (-1, -1, 1), (0, 1, 0), r.wall_color),
        ((1, 1, 0), (-1, 1, 0), (-1, 1, 1), (1, 1, 1), (0, -1, 0), r.wall_color),
        ((-1, 1, 0), (-1, -1, 0), (-1, -1, 1), (-1, 1, 1), (1, 0, 0), r.wall_color),
        ((1, -1, 0), (1, 1, 0), (1, 1, 1), (1, -1, 1), (-1, 0, 0), r.wall_color),
    ]
    out = []
    for a, b, cc, d, n, col in faces:
        pos = _quad(c[a], c[b], c[cc], c[d])
        if np.dot(np.cross(pos[1] - pos[0], pos[2] - pos[0]), n) < 0:
            pos = _quad(c[a], c[d], c[cc], c[b])
        out.append((pos, np.tile(np.array(n, dtype=np.float32), (6, 1)), col))
    return out


def _check_camera(camera: Camera) -> None:
    if camera.width <= 0 or camera.height <= 0:
        raise ValueError(
            f"camera {camera.name!r}: size must be positive, got {camera.width}x{camera.height}"
        )
    if camera.projection == "perspective":
        if not 0 < camera.fov_y < 180:
            raise ValueError(
                f"camera {camera.name!r}: fov_y must be in (0, 180), got {camera.fov_y}"
            )
    elif camera.projection == "equirect":
        if camera.width != 2 * camera.height:
            raise ValueError(
                f"equirect camera {camera.name!r} must be 2:1, got {camera.width}x{camera.height}"
            )
    else:
        raise ValueError(f"camera {camera.name!r}: unknown projection {camera.projection!r}")
    if np.linalg.norm(np.subtract(camera.look_at, camera.position)) < 1e-9:
        raise ValueError(f"camera {camera.name!r}: look_at equals position")
    if math.isnan(sum(camera.position)):
        raise ValueError(f"camera {camera.name!r}: position is NaN")
