"""The transformers backend, offline: a tiny randomly initialised LLaVA (CLIP vision tower +
Llama text model) built from configs, with a BPE tokenizer trained here and a processor
saved to a temp dir. This proves loading, the chat template, multi-image prompts and
generation — not accuracy (the weights are random)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the hf backend needs torch (pip install 'perspecta[hf]')")
transformers = pytest.importorskip("transformers", reason="the hf backend needs transformers (pip install 'perspecta[hf]')")

from PIL import Image

from perspecta.dataset.item import Item, letter_options
from perspecta.models.base import BackendError, GenConfig, Request
from perspecta.models.hf import HFBackend

IMAGE_TOKENS = 4  # (32 / 16)^2 patches; the CLS feature is dropped ("default" strategy)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    from perspecta.interop.tiny_vlm import build_tiny_llava

    corpus = ["Which way does Object A face? Answer with the option letter. USER ASSISTANT"] * 8
    return build_tiny_llava(tmp_path_factory.mktemp("tiny-llava"), corpus=corpus)


def test_hf_backend_generates_with_several_images_offline(tiny_model: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    Image.new("RGB", (256, 256), (200, 30, 30)).save(a)
    Image.new("RGB", (256, 256), (30, 30, 200)).save(b)
    item = Item(id="x/t/base/000000", suite="x", task="t", question="q", images=["a.png", "b.png"],
                answer_type="mcq", answer="A", options=letter_options(["left", "right"]))
    backend = HFBackend(str(tiny_model))
    assert backend.name == f"hf:{tiny_model.name}"
    gen = GenConfig(max_tokens=5)
    one = asyncio.run(backend.generate(Request(item, "Which way? <image> Answer A or B", [a], gen)))
    two = asyncio.run(backend.generate(Request(item, "Which way? <image> Answer A or B <image>", [a, b], gen)))
    assert isinstance(one.text, str) and 1 <= one.usage["completion_tokens"] <= 5  # max_tokens is honoured
    # the second image adds its own block of image tokens (and the template's newline after it)
    assert two.usage["prompt_tokens"] - one.usage["prompt_tokens"] >= IMAGE_TOKENS
    again = asyncio.run(backend.generate(Request(item, "Which way? <image> Answer A or B", [a], gen)))
    assert again.text == one.text  # greedy decoding is deterministic
    assert len(backend._images) == 2  # each image decoded once
    with pytest.raises(BackendError, match="markers"):
        asyncio.run(backend.generate(Request(item, "no markers", [a], gen)))
