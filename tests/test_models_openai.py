"""The OpenAI-compatible backend's request building and reply classification, plus image
preparation (encode once, downscale, depth beside the image)."""

from __future__ import annotations

import asyncio
import base64
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from perspecta.dataset.item import Item, letter_options
from perspecta.models.base import BackendError, InputSettings, Request
from perspecta.models.fake_server import FakeServer
from perspecta.models.images import ImageEncoder, MissingDepthError
from perspecta.models.openai_http import OpenAIBackend, build_content, parse_completion


def _png(path: Path, size: tuple[int, int], color: tuple[int, int, int]) -> Path:
    Image.new("RGB", size, color).save(path)
    return path


def _decode(url: str) -> Image.Image:
    assert url.startswith("data:image/png;base64,")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


def _item(n_images: int) -> Item:
    return Item(id="x/t/base/000000", suite="x", task="t", question="Q", images=["i"] * n_images,
                answer_type="mcq", answer="A", options=letter_options(["a", "b"]))


def test_content_parts_interleave_images_in_marker_order(tmp_path: Path) -> None:
    red = _png(tmp_path / "red.png", (64, 48), (255, 0, 0))
    blue = _png(tmp_path / "blue.png", (64, 48), (0, 0, 255))
    req = Request(_item(2), "First view:\n<image>\nSecond view:\n<image>\nWhich changed?", [red, blue])
    enc = ImageEncoder()
    parts = build_content(req, enc)
    assert [p["type"] for p in parts] == ["text", "image_url", "text", "image_url", "text"]
    assert [parts[0]["text"], parts[2]["text"], parts[4]["text"]] == ["First view:", "Second view:", "Which changed?"]
    assert _decode(parts[1]["image_url"]["url"]).getpixel((0, 0)) == (255, 0, 0)
    assert _decode(parts[3]["image_url"]["url"]).getpixel((0, 0)) == (0, 0, 255)
    # small PNGs are sent byte for byte, and each file is read and encoded once
    assert base64.b64decode(parts[1]["image_url"]["url"].split(",", 1)[1]) == red.read_bytes()
    for _ in range(5):
        build_content(req, enc)
    assert enc.encodes == 2
    with pytest.raises(BackendError, match="2 <image> markers but 1 images"):
        build_content(Request(_item(1), "<image><image>", [red]), enc)


def test_images_are_downscaled_to_max_side_unless_high_res(tmp_path: Path) -> None:
    big = _png(tmp_path / "big.png", (1024, 512), (10, 200, 30))
    enc = ImageEncoder()
    assert _decode(enc.data_url(big, InputSettings(max_side=256))).size == (256, 128)
    assert _decode(enc.data_url(big, InputSettings(max_side=None))).size == (1024, 512)


def test_depth_map_is_placed_beside_the_image(tmp_path: Path) -> None:
    img = _png(tmp_path / "v.png", (40, 20), (200, 0, 0))
    enc = ImageEncoder()
    with pytest.raises(MissingDepthError, match="v_depth.png"):
        enc.data_url(img, InputSettings(depth=True, max_side=None))
    depth = np.full((20, 40), 2.0)
    depth[:, 20:] = 4.0  # right half farther -> darker
    depth[:, 38:] = np.inf  # no surface -> black, darker than the farthest surface
    np.save(tmp_path / "v_depth.npy", depth)
    out = _decode(enc.data_url(img, InputSettings(depth=True, max_side=None)))
    assert out.size == (80, 20)
    assert out.getpixel((5, 5)) == (200, 0, 0)
    assert out.getpixel((45, 5)) == (255, 255, 255) and out.getpixel((75, 5)) == (40, 40, 40)
    assert out.getpixel((79, 5)) == (0, 0, 0)


@pytest.mark.parametrize("status,body,retryable,needle", [
    (429, b'{"error": "slow down"}', True, "HTTP 429"),
    (503, b"busy", True, "HTTP 503"),
    (400, b'{"error": "bad request"}', False, "HTTP 400"),
    (200, b'{"choices": [{"message": {"content": "B"', True, "unparseable JSON"),
    (200, b"<html>oops</html>", True, "unparseable JSON"),
    (200, b'{"object": "error"}', True, "malformed completion"),
])
def test_reply_classification(status: int, body: bytes, retryable: bool, needle: str) -> None:
    with pytest.raises(BackendError, match=needle) as e:
        parse_completion(status, body)
    assert e.value.retryable is retryable


def test_valid_reply_and_payload(tmp_path: Path) -> None:
    ok = parse_completion(200, json.dumps({"choices": [{"message": {"content": "<answer>B</answer>"}}],
                                           "usage": {"total_tokens": 9}}).encode())
    assert ok.text == "<answer>B</answer>" and ok.usage == {"total_tokens": 9}
    b = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1/", api_key="sk-hidden")
    assert "sk-hidden" not in repr(b) and b.url == "http://127.0.0.1:1/v1/chat/completions"
    p = b.payload(Request(_item(0), "Q?", []))
    assert (p["temperature"], p["top_p"], p["max_tokens"], "seed" in p) == (0.0, 1.0, 512, False)


def test_connection_refused_is_retryable(tmp_path: Path) -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens on this port now
    backend = OpenAIBackend("m", base_url=f"http://127.0.0.1:{port}/v1")

    async def go() -> None:
        try:
            await backend.generate(Request(_item(0), "Q?", []))
        finally:
            await backend.aclose()

    with pytest.raises(BackendError, match="connection error") as e:
        asyncio.run(go())
    assert e.value.retryable


def test_round_trip_against_the_local_server(tmp_path: Path) -> None:
    img = _png(tmp_path / "a.png", (32, 32), (1, 2, 3))
    item = Item(id="x/t/base/000000", suite="x", task="t", question="Q", images=["a.png"], answer_type="mcq",
                answer="A", options=letter_options(["left", "right"]))

    async def go(url: str) -> str:
        backend = OpenAIBackend("fake", base_url=url)
        try:
            return (await backend.generate(Request(item, "<image>\nOPTIONS:\nA. left\nB. right", [img]))).text
        finally:
            await backend.aclose()

    with FakeServer() as server:
        text = asyncio.run(go(server.url))
        assert server.stats.images == [1]
    assert text.startswith('"answer": "') and text[11] in "AB"
