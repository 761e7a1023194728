"""Optional high-quality renderer: Blender Cycles through the ``bpy`` wheel.

Why a second renderer: Cycles path-traces soft shadows, bounce light and a denoised
image that reads much closer to a photograph than the default rasteriser, at roughly
50x the cost (see ANCHORS.md). It renders the *same* scene record with the same
three aligned layers (rgb, depth, instance), so a dataset can switch renderers
without any answer changing.

``bpy`` (~1 GB, GPL-3.0, Python 3.11 only, ``numpy<2``) is imported lazily inside
:class:`BlenderRenderer`; importing this module never loads it. Install it with
``pip install 'perspecta[blender]'``.

Blender is a process-wide singleton: every :meth:`BlenderRenderer.render` resets it
to an empty factory state and rebuilds the scene, so renderers in one process do not
see each other's data, but they must not be used from several threads at once.

How each layer is produced (one Cycles render, written to a temporary uncompressed
multilayer 32-bit EXR that is parsed here and deleted):

* rgb — the denoised Combined pass (scene-linear), clipped and encoded with the sRGB
  transfer function; this is exactly Blender's "Standard" view transform, but done
  here so 8-bit output is rounded rather than dithered.
* depth — the Z pass. Cycles writes it from the first sample of each pixel (it is not
  averaged, so edges never mix foreground and background) as planar camera-frame z
  for perspective cameras and as Euclidean distance for panoramic ones — exactly the
  RenderResult contract; background pixels become ``inf``.
* instance — the Object Index pass (``pass_index = i + 1``), also taken from the first
  sample only, so it is integral; the ground and room keep index 0.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import struct
import tempfile
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from perspecta.assets.library import AssetLibrary
from perspecta.render.base import RenderResult
from perspecta.world.scene import Camera, Scene

_INSTALL_HINT = (
    "the Blender renderer needs the optional 'bpy' package (Blender as a Python module, "
    "Python 3.11 only): pip install 'perspecta[blender]'"
)

#: Cycles' seed is fixed so the same scene renders to the same pixels every time.
CYCLES_SEED = 0

#: Sky colour (sRGB) behind scenes without a ground record, as in the GL renderer.
DEFAULT_SKY = (0.78, 0.85, 0.95)

# Cycles marks pixels whose first sample hit nothing with a huge Z (1e10).
_BACKGROUND_Z = 1e9


def srgb_to_linear(c: np.ndarray | tuple[float, ...]) -> np.ndarray:
    """sRGB-encoded values in [0, 1] -> scene-linear (Blender's colour inputs are linear)."""
    c = np.clip(np.asarray(c, dtype=np.float64), 0.0, 1.0)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def linear_to_srgb8(c: np.ndarray) -> np.ndarray:
    """Scene-linear floats -> sRGB uint8 (clip, piecewise sRGB OETF, round)."""
    c = np.clip(np.asarray(c, dtype=np.float32), 0.0, 1.0)
    s = np.where(c <= 0.0031308, c * 12.92, 1.055 * np.power(c, 1.0 / 2.4) - 0.055)
    return np.clip(np.rint(s * 255.0), 0, 255).astype(np.uint8)


class BlenderRenderer:
    """Cycles (CPU) path tracer with the same outputs as the default GL renderer.

    ``samples`` is the number of paths per pixel; ``denoise`` runs OpenImageDenoise
    (bundled in the bpy wheel) on the result with albedo and normal guides, which
    makes 16 spp look clean. ``max_bounces`` bounds the light paths (diffuse bounces
    carry the colour bleeding that makes rooms look real; more cost time).
    ``threads`` fixes Cycles' thread count (0 = all cores), e.g. 1 per worker process
    when several workers render in parallel.
    """

    name = "blender"

    def __init__(
        self,
        library: AssetLibrary | None = None,
        samples: int = 16,
        denoise: bool = True,
        max_bounces: int = 4,
        threads: int = 0,
    ) -> None:
        if int(samples) < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        if int(threads) < 0:
            raise ValueError(f"threads must be >= 0 (0 = all cores), got {threads}")
        if int(max_bounces) < 0:
            raise ValueError(f"max_bounces must be >= 0, got {max_bounces}")
        try:
            import bpy  # lazy: GPL-3.0 and ~1 GB, loaded only when this renderer is chosen
        except ImportError as e:
            raise ImportError(_INSTALL_HINT) from e
        self._bpy = bpy
        self.library = library
        self.samples = int(samples)
        self.denoise = bool(denoise)
        self.max_bounces = int(max_bounces)
        self.threads = int(threads)  # 0 = Blender's automatic thread count
        self._has_oidn = _oidn_available()
        if self.denoise and not self._has_oidn:
            raise RuntimeError(
                "denoise=True but this bpy build has no OpenImageDenoise; "
                "pass denoise=False or raise samples"
            )

    @property
    def version(self) -> str:
        return f"bpy-{self._bpy.app.version_string}/cycles-cpu"

    # ------------------------------------------------------------------ public API
    def render(self, scene: Scene, camera: Camera, *, color: bool = True,  # noqa: ARG002 (always renders all)
               layers: bool = True) -> RenderResult:
        """Render ``camera`` of ``scene``: perspective pinhole or native equirect panorama."""
        if camera.width <= 0 or camera.height <= 0:
            raise ValueError(f"camera size must be positive, got {camera.width}x{camera.height}")
        if camera.projection not in ("perspective", "equirect"):
            raise ValueError(f"unknown camera projection {camera.projection!r}")
        if camera.projection == "perspective" and not 0.0 < camera.fov_y < 180.0:
            raise ValueError(f"fov_y must be in (0, 180) degrees, got {camera.fov_y}")
        if scene.objects and self.library is None:
            raise ValueError("BlenderRenderer needs an AssetLibrary to load the scene's meshes")
        if scene.environment is not None and scene.room is None:
            raise ValueError(
                f"the blender renderer does not draw environment maps yet (scene.environment="
                f"{scene.environment!r}); render this scene with --renderer gl"
            )
        for obj in scene.objects:
            if not (math.isfinite(obj.scale) and obj.scale > 0):
                raise ValueError(f"object {obj.id!r} has invalid scale {obj.scale}")
        bpy = self._bpy
        with _quiet_stdout():
            bpy.ops.wm.read_factory_settings(use_empty=True)
        try:
            bscene = bpy.context.scene
            self._setup_render(bscene, camera)
            self._build_world(bscene, scene)
            self._build_light(bscene, scene)
            if scene.room is not None:
                self._build_room(bscene, scene)
            elif scene.ground is not None:
                self._build_ground(bscene, scene)
            for i in range(len(scene.objects)):
                self._build_object(bscene, scene, i)
            self._build_camera(bscene, camera)
            with tempfile.TemporaryDirectory(prefix="perspecta_cycles_") as tmp:
                path = Path(tmp) / "frame.exr"
                bscene.render.filepath = str(path)
                with _quiet_stdout():
                    bpy.ops.render.render(write_still=True)
                channels = read_exr(path)
        finally:  # free the meshes and images now (also after an error), not at the next render
            with _quiet_stdout():
                bpy.ops.wm.read_factory_settings(use_empty=True)
        return _to_result(channels, camera)

    def close(self) -> None:
        """Drop everything Blender holds (the module itself cannot be unloaded)."""
        with _quiet_stdout():
            self._bpy.ops.wm.read_factory_settings(use_empty=True)

    def __enter__(self) -> BlenderRenderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ scene building
    def _setup_render(self, bscene: Any, camera: Camera) -> None:
        r = bscene.render
        r.engine = "CYCLES"
        r.resolution_x = int(camera.width)
        r.resolution_y = int(camera.height)
        r.resolution_percentage = 100
        r.pixel_aspect_x = r.pixel_aspect_y = 1.0
        r.film_transparent = False
        r.use_compositing = False
        r.use_sequencer = False
        r.use_persistent_data = False
        if self.threads > 0:
            r.threads_mode = "FIXED"
            r.threads = self.threads
        c = bscene.cycles
        c.device = "CPU"
        c.samples = self.samples
        c.use_adaptive_sampling = False  # fixed work per pixel: stable timing and output
        c.seed = CYCLES_SEED
        c.use_animated_seed = False
        c.max_bounces = self.max_bounces
        c.diffuse_bounces = min(self.max_bounces, 3)
        c.glossy_bounces = min(self.max_bounces, 2)
        c.transmission_bounces = 0
        c.transparent_max_bounces = 2
        c.volume_bounces = 0
        c.caustics_reflective = False
        c.caustics_refractive = False
        c.sample_clamp_indirect = 10.0  # tames fireflies at low sample counts
        c.use_denoising = self.denoise
        if self.denoise:
            c.denoiser = "OPENIMAGEDENOISE"
            c.denoising_input_passes = "RGB_ALBEDO_NORMAL"
            # Our albedo/normal guides are nearly noise-free (matte, flat-coloured
            # materials), so skipping their own denoising (FAST) saves ~20% CPU at 256²
            # with no visible difference.
            c.denoising_prefilter = "FAST"
            if hasattr(c, "denoising_quality"):
                c.denoising_quality = "HIGH"
            c.denoising_use_gpu = False
        vs = bscene.view_settings
        vs.view_transform = "Standard"
        vs.look = "None"
        vs.exposure = 0.0
        vs.gamma = 1.0
        bscene.display_settings.display_device = "sRGB"
        vl = bscene.view_layers[0]
        vl.use_pass_combined = True
        vl.use_pass_z = True
        vl.use_pass_object_index = True
        im = r.image_settings
        if hasattr(im, "media_type"):  # Blender >= 5.0 chooses multilayer via the media type
            im.media_type = "MULTI_LAYER_IMAGE"
        im.file_format = "OPEN_EXR_MULTILAYER"
        im.color_depth = "32"
        im.exr_codec = "NONE"  # read back by the small parser below

    def _build_world(self, bscene: Any, scene: Scene) -> None:
        """Camera rays see the GL renderer's sky: a vertical gradient from a pale horizon
        (``0.55 sky + 0.45``, linear) to the zenith (``0.8 sky``), smoothstep over ray
        elevation z in [-0.05, 0.6]. All other rays see a uniform environment of
        ``ambient`` radiance in the light's colour, so an unoccluded diffuse surface
        gets ``albedo * ambient``, the GL renderer's ambient term."""
        bpy = self._bpy
        world = bpy.data.worlds.new("perspecta_world")
        bscene.world = world
        nt = _node_tree(world)
        nt.nodes.clear()
        sky_srgb = scene.ground.sky_color if scene.ground is not None else DEFAULT_SKY
        sky = srgb_to_linear(sky_srgb)
        amb = max(float(scene.light.ambient), 0.0)

        coord = nt.nodes.new("ShaderNodeTexCoord")  # world "Generated" = ray direction
        xyz = nt.nodes.new("ShaderNodeSeparateXYZ")
        ramp = nt.nodes.new("ShaderNodeMapRange")
        ramp.interpolation_type = "SMOOTHSTEP"
        ramp.clamp = True
        ramp.inputs["From Min"].default_value = -0.05
        ramp.inputs["From Max"].default_value = 0.6
        ramp.inputs["To Min"].default_value = 0.0
        ramp.inputs["To Max"].default_value = 1.0
        mixc = nt.nodes.new("ShaderNodeMix")
        mixc.data_type = "RGBA"
        mixc.clamp_factor = True
        a_in = _socket(mixc.inputs, "A_Color")
        b_in = _socket(mixc.inputs, "B_Color")
        a_in.default_value = (*(0.55 * sky + 0.45), 1.0)
        b_in.default_value = (*(0.8 * sky), 1.0)
        nt.links.new(coord.outputs["Generated"], xyz.inputs[0])
        nt.links.new(xyz.outputs["Z"], ramp.inputs["Value"])
        nt.links.new(ramp.outputs["Result"], _socket(mixc.inputs, "Factor_Float"))
        bg_cam = nt.nodes.new("ShaderNodeBackground")
        bg_cam.inputs["Strength"].default_value = 1.0
        nt.links.new(_socket(mixc.outputs, "Result_Color"), bg_cam.inputs["Color"])

        bg_env = nt.nodes.new("ShaderNodeBackground")
        bg_env.inputs["Color"].default_value = (*srgb_to_linear(scene.light.color), 1.0)
        bg_env.inputs["Strength"].default_value = amb
        path = nt.nodes.new("ShaderNodeLightPath")
        mix = nt.nodes.new("ShaderNodeMixShader")
        out = nt.nodes.new("ShaderNodeOutputWorld")
        nt.links.new(path.outputs["Is Camera Ray"], mix.inputs["Fac"])
        nt.links.new(bg_env.outputs["Background"], mix.inputs[1])
        nt.links.new(bg_cam.outputs["Background"], mix.inputs[2])
        nt.links.new(mix.outputs["Shader"], out.inputs["Surface"])

    def _build_light(self, bscene: Any, scene: Scene) -> None:
        """A sun along ``light.direction``. Blender's sun strength is irradiance (W/m²);
        a diffuse surface facing it returns ``albedo * strength / pi``, so strength =
        ``pi * intensity`` matches the GL renderer's ``albedo * intensity * cos``."""
        bpy = self._bpy
        from mathutils import Vector

        d = np.asarray(scene.light.direction, dtype=float)
        if not np.all(np.isfinite(d)) or np.linalg.norm(d) < 1e-9:
            raise ValueError(f"light direction must be a non-zero vector, got {tuple(d)}")
        sun = bpy.data.lights.new("perspecta_sun", type="SUN")
        sun.energy = math.pi * max(float(scene.light.intensity), 0.0)
        sun.color = tuple(srgb_to_linear(scene.light.color))
        sun.angle = math.radians(2.0)  # slightly soft shadow edges
        ob = bpy.data.objects.new("perspecta_sun", sun)
        ob.rotation_mode = "QUATERNION"
        ob.rotation_quaternion = Vector(tuple(d / np.linalg.norm(d))).to_track_quat("-Z", "Y")
        bscene.collection.objects.link(ob)
        fill = max(float(scene.light.fill), 0.0) * max(float(scene.light.intensity), 0.0)
        if fill > 0:  # the GL renderer's unshadowed sky fill, opposite the sun
            sky = bpy.data.lights.new("perspecta_sky_fill", type="SUN")
            sky.energy = math.pi * fill
            sky.color = tuple(srgb_to_linear(scene.light.color))
            sky.use_shadow = False
            ob = bpy.data.objects.new("perspecta_sky_fill", sky)
            ob.rotation_mode = "QUATERNION"
            ob.rotation_quaternion = Vector(tuple(scene.light.fill_direction())).to_track_quat("-Z", "Y")
            bscene.collection.objects.link(ob)

    def _build_ground(self, bscene: Any, scene: Scene) -> None:
        g = scene.ground
        assert g is not None
        h = g.size / 2.0
        quad = np.array(
            [[-h, -h, 0], [h, -h, 0], [h, h, 0], [-h, -h, 0], [h, h, 0], [-h, h, 0]],
            dtype=np.float32,
        )
        from perspecta.render.ground import check_material, ground_texture, ground_uvs

        if check_material(g.material) == "plain":
            mat, uvs = self._material("ground", g.color), None
        else:  # the GL renderer's texture and mapping (the image repeats by default)
            seed = scene.seed if g.texture_seed is None else g.texture_seed
            mat = self._material("ground", (1.0, 1.0, 1.0), ground_texture(g.material, seed))
            uvs = ground_uvs(quad, g.pattern_size)
        self._add_soup(bscene, "ground", quad, None, uvs, mat, np.eye(4), 0)

    def _build_room(self, bscene: Any, scene: Scene) -> None:
        """Floor, four walls and ceiling as inward-facing quads. Walls and ceiling do not
        cast shadows, so the sun and the ambient environment reach the interior as if the
        room were a cut-away set, while bounce light still picks up the wall colours."""
        room = scene.room
        assert room is not None
        x, y, z = room.width / 2.0, room.depth / 2.0, room.height

        def quad(a: tuple, b: tuple, c: tuple, d: tuple) -> np.ndarray:
            return np.array([a, b, c, a, c, d], dtype=np.float32)

        floor = quad((-x, -y, 0), (x, -y, 0), (x, y, 0), (-x, y, 0))
        ceiling = quad((-x, -y, z), (-x, y, z), (x, y, z), (x, -y, z))
        walls = np.concatenate(
            [
                quad((-x, -y, 0), (-x, y, 0), (-x, y, z), (-x, -y, z)),  # x = -w/2, faces +x
                quad((x, -y, 0), (x, -y, z), (x, y, z), (x, y, 0)),  # x = +w/2, faces -x
                quad((-x, -y, 0), (-x, -y, z), (x, -y, z), (x, -y, 0)),  # y = -d/2, faces +y
                quad((-x, y, 0), (x, y, 0), (x, y, z), (-x, y, z)),  # y = +d/2, faces -y
            ]
        )
        surfaces = (
            ("floor", floor, room.floor_color),
            ("walls", walls, room.wall_color),
            ("ceiling", ceiling, room.ceiling_color),
        )
        for name, soup, col in surfaces:
            mat = self._material(name, col)
            ob = self._add_soup(bscene, name, soup, None, None, mat, np.eye(4), 0)
            ob.visible_shadow = name == "floor"

    def _build_object(self, bscene: Any, scene: Scene, i: int) -> None:
        obj = scene.objects[i]
        assert self.library is not None
        mesh = self.library.load_mesh(obj.asset_id, obj.params)
        m = obj.pose.matrix() @ np.diag([obj.scale, obj.scale, obj.scale, 1.0])
        for k, part in enumerate(mesh.parts):
            if len(part.positions) < 3:
                continue
            tint = obj.color if (obj.color is not None and part.tintable) else None
            textured = part.texture is not None and part.uvs is not None
            color = tint if tint is not None else part.color
            mat = self._material(
                f"{obj.id}.{k}", color, part.texture if textured else None, tint is not None
            )
            self._add_soup(
                bscene, f"{obj.id}.{k}", part.positions,
                part.normals, part.uvs if textured else None, mat, m, i + 1,
            )

    def _build_camera(self, bscene: Any, camera: Camera) -> None:
        """Place a Blender camera (looks down its local -Z with +Y up) at ``camera``.

        Perspective: the OpenCV rotation's rows are (right, down, forward) in world
        coordinates, so Blender's local axes are (right, -down, -forward). Equirect:
        Cycles' panorama is centred on the camera's -Z with longitude growing toward
        its +X, so the camera is aligned with :func:`panorama_basis` (levelled forward,
        right, world up) — the same frame the oracle and the GL remap use.
        """
        bpy = self._bpy
        from mathutils import Matrix

        cam = bpy.data.cameras.new("perspecta_camera")
        cam.clip_start = 0.01
        cam.clip_end = 10000.0
        if camera.projection == "perspective":
            cam.type = "PERSP"
            cam.sensor_fit = "VERTICAL"
            cam.angle_y = math.radians(camera.fov_y)
            r = camera.rotation_world_to_cam()  # rows right, down, forward
            axes = np.stack([r[0], -r[1], -r[2]], axis=1)  # columns: Blender local x, y, z
        else:
            from perspecta.render.panorama import panorama_basis

            cam.type = "PANO"
            cam.panorama_type = "EQUIRECTANGULAR"
            cam.longitude_min, cam.longitude_max = -math.pi, math.pi
            cam.latitude_min, cam.latitude_max = -math.pi / 2, math.pi / 2
            fwd, right, up = panorama_basis(camera)
            axes = np.stack([right, up, -fwd], axis=1)
        m = np.eye(4)
        m[:3, :3] = axes
        m[:3, 3] = camera.position
        ob = bpy.data.objects.new("perspecta_camera", cam)
        ob.matrix_world = Matrix(m.tolist())
        bscene.collection.objects.link(ob)
        bscene.camera = ob

    # ------------------------------------------------------------------ helpers
    def _material(
        self,
        name: str,
        color: tuple[float, float, float],
        texture: np.ndarray | None = None,
        tinted: bool = False,
    ) -> Any:
        """A slightly glossy Principled BSDF; ``color`` is sRGB, converted to linear.

        Textured parts show their texture; a *tinted* textured part takes the tint
        colour and keeps the texture's luminance as detail (``tint * clamp(2 * lum)``),
        the same rule as the GL renderer.
        """
        bpy = self._bpy
        mat = bpy.data.materials.new(name)
        nt = _node_tree(mat)
        bsdf = next(n for n in nt.nodes if n.type == "BSDF_PRINCIPLED")
        bsdf.inputs["Roughness"].default_value = 0.6
        if "Specular IOR Level" in bsdf.inputs:
            bsdf.inputs["Specular IOR Level"].default_value = 0.25
        rgb = srgb_to_linear(color)
        bsdf.inputs["Base Color"].default_value = (*rgb, 1.0)
        if texture is not None:
            tex = nt.nodes.new("ShaderNodeTexImage")
            tex.image = self._image(name, texture)
            tex.interpolation = "Linear"
            if not tinted:
                nt.links.new(tex.outputs["Color"], bsdf.inputs["Base Color"])
            else:
                lum = nt.nodes.new("ShaderNodeRGBToBW")  # Rec.709 luminance, linear
                gain = nt.nodes.new("ShaderNodeMath")
                gain.operation = "MULTIPLY"
                gain.use_clamp = True
                gain.inputs[1].default_value = 2.0
                scale = nt.nodes.new("ShaderNodeVectorMath")
                scale.operation = "SCALE"
                scale.inputs[0].default_value = tuple(rgb)
                nt.links.new(tex.outputs["Color"], lum.inputs["Color"])
                nt.links.new(lum.outputs["Val"], gain.inputs[0])
                nt.links.new(gain.outputs["Value"], _socket(scale.inputs, "Scale"))
                nt.links.new(scale.outputs["Vector"], bsdf.inputs["Base Color"])
        return mat

    def _image(self, name: str, texture: np.ndarray) -> Any:
        tex = np.asarray(texture)
        if tex.ndim != 3 or tex.shape[2] not in (3, 4) or tex.dtype != np.uint8:
            raise ValueError(f"texture must be (H, W, 3|4) uint8, got {tex.shape} {tex.dtype}")
        h, w = tex.shape[:2]
        rgba = np.ones((h, w, 4), dtype=np.float32)
        rgba[..., :3] = tex[..., :3].astype(np.float32) / 255.0
        img = self._bpy.data.images.new(name, width=w, height=h, alpha=False)
        img.colorspace_settings.name = "sRGB"
        img.pixels.foreach_set(rgba[::-1].ravel())  # Blender's rows start at the bottom
        img.pack()
        return img

    def _add_soup(
        self,
        bscene: Any,
        name: str,
        positions: np.ndarray,
        normals: np.ndarray | None,
        uvs: np.ndarray | None,
        material: Any,
        matrix: np.ndarray,
        pass_index: int,
    ) -> Any:
        """One triangle soup as a Blender mesh object (bulk foreach_set, no Python loops)."""
        bpy = self._bpy
        from mathutils import Matrix

        pos = np.ascontiguousarray(positions, dtype=np.float32).reshape(-1, 3)
        n = len(pos) - len(pos) % 3
        if n != len(pos):
            raise ValueError(f"{name}: triangle soup has {len(pos)} vertices, not a multiple of 3")
        if not np.all(np.isfinite(pos)):
            raise ValueError(f"{name}: non-finite vertex positions")
        nt = n // 3
        me = bpy.data.meshes.new(name)
        me.vertices.add(n)
        me.vertices.foreach_set("co", pos.ravel())
        me.loops.add(n)
        me.loops.foreach_set("vertex_index", np.arange(n, dtype=np.int32))
        me.polygons.add(nt)
        me.polygons.foreach_set("loop_start", np.arange(0, n, 3, dtype=np.int32))
        if uvs is not None:
            layer = me.uv_layers.new(name="UVMap")
            layer.data.foreach_set("uv", np.ascontiguousarray(uvs, dtype=np.float32).ravel())
        me.update()
        if normals is not None and _needs_custom_normals(pos, normals):
            me.polygons.foreach_set("use_smooth", np.ones(nt, dtype=bool))
            nrm = np.ascontiguousarray(normals, dtype=np.float32).reshape(-1, 3)
            me.normals_split_custom_set(nrm)
        me.materials.append(material)
        me.validate(clean_customdata=False)
        ob = bpy.data.objects.new(name, me)
        ob.matrix_world = Matrix(np.asarray(matrix, dtype=float).tolist())
        ob.pass_index = int(pass_index)
        bscene.collection.objects.link(ob)
        return ob


# ---------------------------------------------------------------------- module helpers
def _socket(sockets: Any, identifier: str) -> Any:
    """A node socket by its stable identifier (display names repeat on Mix nodes)."""
    for sock in sockets:
        if sock.identifier == identifier:
            return sock
    raise KeyError(f"no socket {identifier!r}; have {[x.identifier for x in sockets]}")


def _node_tree(idblock: Any) -> Any:
    """The shader node tree of a material or world (Blender 5 always has one; older
    versions need ``use_nodes``, which 5.x deprecates)."""
    if idblock.node_tree is None:
        idblock.use_nodes = True
    return idblock.node_tree


def _oidn_available() -> bool:
    try:
        import _cycles  # type: ignore[import-not-found]  # the Cycles add-on's C module

        return bool(getattr(_cycles, "with_openimagedenoise", False))
    except ImportError:
        return False


def _needs_custom_normals(positions: np.ndarray, normals: np.ndarray) -> bool:
    """True when the part's normals are smooth (differ from the face normals); flat parts
    render correctly with Blender's own face normals and skip the costly custom data."""
    nrm = np.asarray(normals, dtype=np.float32).reshape(-1, 3)
    if nrm.shape != positions.shape:
        return False
    tri = positions.reshape(-1, 3, 3).astype(np.float64)
    face = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    length = np.linalg.norm(face, axis=1, keepdims=True)
    face = np.divide(face, length, out=np.zeros_like(face), where=length > 0)
    dots = np.einsum("tij,tj->ti", nrm.reshape(-1, 3, 3), face)
    return bool(np.any(np.abs(dots) < 0.999))


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """Silence Blender's per-tile progress lines (printed from C to file descriptor 1)."""
    libc = ctypes.CDLL(None)
    try:
        fd = os.dup(1)
    except OSError:  # no real stdout (embedded interpreter): nothing to silence
        yield
        return
    try:
        libc.fflush(None)
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        libc.fflush(None)
        os.dup2(fd, 1)
        os.close(fd)


def _to_result(ch: dict[str, np.ndarray], camera: Camera) -> RenderResult:
    def find(*suffixes: str) -> np.ndarray:
        for k, v in ch.items():
            if k.endswith(suffixes):
                return v
        raise RuntimeError(f"Cycles output lacks the {suffixes[0]!r} channel; got {sorted(ch)}")

    lin = np.stack([find(".Combined.R"), find(".Combined.G"), find(".Combined.B")], axis=-1)
    rgb = linear_to_srgb8(lin)
    z = find(".Depth.Z").astype(np.float32)
    background = ~np.isfinite(z) | (z >= _BACKGROUND_Z) | (z <= 0)
    depth = np.where(background, np.float32(np.inf), z).astype(np.float32)
    idx = find(".Object Index.X", ".IndexOB.X")
    instance = np.rint(idx).astype(np.int32)
    instance[background] = 0
    if rgb.shape[:2] != (camera.height, camera.width):
        expected = (camera.height, camera.width)
        raise RuntimeError(f"Cycles returned {rgb.shape[:2]}, expected {expected}")
    return RenderResult(rgb=rgb, depth=depth, instance=instance)


# ---------------------------------------------------------------------- EXR reader
_EXR_MAGIC = 20000630
_EXR_DTYPES = {0: np.dtype("<u4"), 1: np.dtype("<f2"), 2: np.dtype("<f4")}


def read_exr(path: str | Path) -> dict[str, np.ndarray]:
    """Read an *uncompressed* scanline OpenEXR (single- or multi-part) into
    ``{channel: (H, W) array}``, rows top first.

    Small on purpose: it reads what :class:`BlenderRenderer` asks Blender to write
    (multilayer, ``exr_codec = 'NONE'``; Blender 5 stores each pass as a part), so no
    EXR library is needed. Channels of all parts are merged by their full names.
    """
    data = Path(path).read_bytes()
    if len(data) < 8 or struct.unpack_from("<i", data, 0)[0] != _EXR_MAGIC:
        raise ValueError(f"{path}: not an OpenEXR file")
    flags = struct.unpack_from("<I", data, 4)[0]
    if flags & (0x200 | 0x800):
        raise ValueError(f"{path}: tiled or deep EXR is not supported")
    multipart = bool(flags & 0x1000)
    pos = 8
    headers: list[dict[str, bytes]] = []
    while True:  # one header, or (multi-part) a list of headers closed by an empty one
        header, pos = _exr_header(data, pos)
        if not header:
            break
        headers.append(header)
        if not multipart:
            break
    parts = [_exr_layout(h, path) for h in headers]
    # offset tables follow the headers, one per part, in part order
    tables = []
    for layout in parts:
        n = layout["height"]
        tables.append(np.frombuffer(data, dtype="<u8", count=n, offset=pos))
        pos += 8 * n
    out: dict[str, np.ndarray] = {}
    for k, (layout, offsets) in enumerate(zip(parts, tables)):
        width, height, ymin = layout["width"], layout["height"], layout["ymin"]
        channels = layout["channels"]
        line_dtype = np.dtype([(c, dt, (width,)) for c, dt in channels])
        planes = {c: np.empty((height, width), dtype=dt) for c, dt in channels}
        for off in offsets:
            off = int(off)
            if multipart:
                part = struct.unpack_from("<i", data, off)[0]
                if part != k:
                    raise ValueError(f"{path}: chunk of part {part} in the table of part {k}")
                off += 4
            y, size = struct.unpack_from("<ii", data, off)
            if size != line_dtype.itemsize:
                raise ValueError(f"{path}: unexpected scanline size {size} (compressed?)")
            line = np.frombuffer(data, dtype=line_dtype, count=1, offset=off + 8)[0]
            for c, _ in channels:
                planes[c][y - ymin] = line[c]
        out.update(planes)
    return out


def _exr_header(data: bytes, pos: int) -> tuple[dict[str, bytes], int]:
    header: dict[str, bytes] = {}
    while True:
        end = data.index(b"\0", pos)
        name = data[pos:end].decode()
        pos = end + 1
        if not name:
            return header, pos
        pos = data.index(b"\0", pos) + 1  # attribute type name
        size = struct.unpack_from("<i", data, pos)[0]
        pos += 4
        header[name] = data[pos : pos + size]
        pos += size


def _exr_layout(header: dict[str, bytes], path: str | Path) -> dict[str, Any]:
    if header.get("compression", b"\1") != b"\0":
        raise ValueError(f"{path}: compressed EXR; only exr_codec='NONE' is supported")
    if header.get("type", b"scanlineimage").rstrip(b"\0") != b"scanlineimage":
        raise ValueError(f"{path}: only scanline EXR parts are supported")
    xmin, ymin, xmax, ymax = struct.unpack("<4i", header["dataWindow"])
    raw = header["channels"]
    channels: list[tuple[str, np.dtype]] = []
    p = 0
    while raw[p] != 0:
        end = raw.index(b"\0", p)
        cname = raw[p:end].decode()
        ptype, _linear, xs, ys = struct.unpack_from("<iB3xii", raw, end + 1)
        if (xs, ys) != (1, 1):
            raise ValueError(f"{path}: subsampled channel {cname!r} is not supported")
        channels.append((cname, _EXR_DTYPES[ptype]))
        p = end + 1 + 16
    return {
        "width": xmax - xmin + 1,
        "height": ymax - ymin + 1,
        "ymin": ymin,
        "channels": channels,
    }
