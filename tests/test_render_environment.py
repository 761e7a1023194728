"""HDRI environments: mapping, ambient colour and clear errors.

Needs Debian's blender-data (the maps) and the optional ``openexr`` package; the
error-path tests run without them.
"""

from __future__ import annotations

import numpy as np
import pytest

from perspecta.assets.library import AssetLibrary
from perspecta.render.environment import available_hdris, parse_environment
from perspecta.world.scene import Camera, Ground, Scene

HAVE_MAPS = "city" in available_hdris()


def _have_openexr() -> bool:
    try:
        import OpenEXR  # noqa: F401
    except ImportError:
        return False
    return True


needs_hdri = pytest.mark.skipif(not (HAVE_MAPS and _have_openexr()), reason="needs blender-data and openexr")


@pytest.fixture(scope="module")
def renderer():
    from perspecta.render.gl import GLRenderer

    r = GLRenderer(AssetLibrary([]), ssaa=1)
    yield r
    r.close()


def test_bad_environment_specs_are_clear_errors() -> None:
    assert parse_environment(None) is None
    with pytest.raises(ValueError, match="must be 'hdri:<name>'"):
        parse_environment("sky:blue")
    with pytest.raises(ValueError, match="hdri:nowhere"):
        parse_environment("hdri:nowhere")


def test_scene_record_round_trips_environment() -> None:
    s = Scene("e", 1, "studio", environment="hdri:city", environment_yaw=30.0)
    back = Scene.from_json(s.to_json())
    assert back.environment == "hdri:city" and back.environment_yaw == 30.0
    old = Scene.from_dict({"scene_id": "o", "seed": 1, "kind": "studio"})
    assert old.environment is None and old.environment_yaw == 0.0


@needs_hdri
def test_background_follows_blenders_equirect_mapping(renderer) -> None:
    """Looking along +X at the horizon shows the map's centre pixel; turning the map by
    90 degrees shows what was at 90 degrees to the right (u = 0.75)."""
    from perspecta.render.environment import environment_light

    env = environment_light("city")
    h, w, _ = env.image.shape
    cam = Camera(position=(0, 0, 50.0), look_at=(1.0, 0, 50.0), fov_y=10, width=8, height=8)
    scene = Scene("e", 1, "studio", ground=None, environment="hdri:city")

    def expected(u: float) -> np.ndarray:
        px = env.image[h // 2 - 1 : h // 2 + 1, int(u * w) - 1 : int(u * w) + 1].mean((0, 1))
        c = np.clip(px, 0, 1)
        return 255 * np.where(c <= 0.0031308, c * 12.92, 1.055 * c ** (1 / 2.4) - 0.055)

    centre = renderer.render(scene, cam).rgb[3:5, 3:5].mean((0, 1))
    assert np.abs(centre - expected(0.5)).max() < 12
    scene.environment_yaw = 90.0  # the map turns left: what was on the right is ahead
    turned = renderer.render(scene, cam).rgb[3:5, 3:5].mean((0, 1))
    assert np.abs(turned - expected(0.75)).max() < 12
    assert np.abs(turned - centre).max() > 3


@needs_hdri
def test_environment_colours_the_ambient(renderer) -> None:
    """The flat ground under a warm interior map is warmer than under the plain sky."""
    from perspecta.world.scene import Light

    cam = Camera(position=(0, -3, 2), look_at=(0, 0, 0), width=32, height=32)
    light = Light(intensity=0.0, ambient=0.5, fill=0.0)  # ambient only
    grey = Ground(color=(0.7, 0.7, 0.7))
    plain = renderer.render(Scene("e", 1, "studio", light=light, ground=grey), cam).rgb.astype(float)
    warm = renderer.render(Scene("e", 1, "studio", light=light, ground=grey, environment="hdri:interior"),
                           cam).rgb.astype(float)
    assert plain[16, 16, 0] - plain[16, 16, 2] < 3
    assert warm[16, 16, 0] - warm[16, 16, 2] > 8
