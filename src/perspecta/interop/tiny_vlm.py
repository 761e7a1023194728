"""A tiny randomly initialised LLaVA (CLIP vision tower + Llama text model) built offline.

For smoke tests of training plumbing only (``perspecta train sft|grpo --preset tiny-sft|tiny-grpo``): it proves
that data, processor, chat template, generation, rewards and optimiser steps fit
together on a CPU in seconds. It learns nothing useful. The tokenizer is a small BPE
trained here on the prompts' own words, so nothing is downloaded.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

CHAT_TEMPLATE = ("{% for m in messages %}{{ m['role'] }}: "
                 "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
                 "{% if c['type'] == 'image' %}<image>{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}\n"
                 "{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}")


def build_tiny_llava(out: str | Path, corpus: Iterable[str] = (), seed: int = 0) -> Path:
    """Save model, tokenizer and processor to ``out``; return it (loadable with ``from_pretrained``)."""
    import torch
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

    out = Path(out)
    specials = ["<pad>", "<unk>", "<s>", "</s>", "<image>"]
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    words = list(corpus) + ["user: assistant: <think> </think> <answer> </answer> left right front behind 0 1 2 3"]
    bpe.train_from_iterator(words, trainers.BpeTrainer(vocab_size=512, special_tokens=specials,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                        pad_token="<pad>", extra_special_tokens={"image_token": "<image>"})
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}),
        tokenizer=tokenizer, patch_size=16, vision_feature_select_strategy="default", chat_template=CHAT_TEMPLATE,
        num_additional_image_tokens=1)
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                       num_attention_heads=2, image_size=32, patch_size=16, projection_dim=32),
        text_config=LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096,
                                bos_token_id=2, eos_token_id=3, pad_token_id=0),
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"), vision_feature_layer=-1)
    torch.manual_seed(seed)
    LlavaForConditionalGeneration(config).save_pretrained(out)
    processor.save_pretrained(out)
    return out
