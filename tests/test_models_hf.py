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
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )

    out = tmp_path_factory.mktemp("tiny-llava")
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<pad>", "<unk>", "<s>", "</s>", "<image>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(["Which way does Object A face? Answer with the option letter. USER ASSISTANT"] * 8,
                            trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                  pad_token="<pad>", extra_special_tokens={"image_token": "<image>"})
    template = ("{% for m in messages %}{{ m['role'].upper() }}: {% for c in m['content'] %}"
                "{% if c['type'] == 'image' %}<image>\n{% else %}{{ c['text'] }}{% endif %}{% endfor %}\n"
                "{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}")
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}),
        tokenizer=tok, patch_size=16, vision_feature_select_strategy="default", chat_template=template,
        num_additional_image_tokens=1)
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                       num_attention_heads=2, image_size=32, patch_size=16, projection_dim=32),
        text_config=LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=2048,
                                bos_token_id=2, eos_token_id=3, pad_token_id=0),
        image_token_index=tok.convert_tokens_to_ids("<image>"), vision_feature_layer=-1)
    torch.manual_seed(0)
    LlavaForConditionalGeneration(config).save_pretrained(out)
    processor.save_pretrained(out)
    return out


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
