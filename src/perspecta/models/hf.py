"""Hugging Face transformers, local: image-text-to-text models via ``AutoProcessor`` and
the model's own chat template, several images per prompt in ``<image>`` marker order.

torch and transformers are imported only when this backend is built (optional extra
``hf``). Generation is blocking, so it runs in a worker thread, one request at a time
(a single CPU/GPU model gains nothing from overlapping calls); the runner's concurrency
then only overlaps image preparation. Each image file is decoded once and reused.

A folder made by ``perspecta train`` evaluates as ``hf:OUT``: when the folder holds a
peft ``adapter_config.json``, its base model (``base_model_name_or_path`` there) is
loaded and the LoRA adapter applied and merged; the processor comes from the folder
when it was saved there (as trained), else from the base. :meth:`HFBackend.describe`
tells the runner what was loaded — base, adapter and the folder's ``training.yaml`` —
so a results folder says by itself which runs are fine-tuned and how.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from perspecta.dataset.item import IMAGE_MARKER
from perspecta.models.base import BackendError, InputSettings, Request, Response


def _require() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("the hf backend needs torch and transformers: pip install 'perspecta[hf]'") from e
    return torch, transformers


class HFBackend:
    """``hf:<path or hub id>``; loads lazily on the first request, on the GPU when there is one."""

    def __init__(self, path: str, *, device: str | None = None, dtype: str | None = None,
                 local_files_only: bool = True) -> None:
        self.path = path
        self.device = device
        self.dtype = dtype
        self.local_files_only = local_files_only
        self.name = f"hf:{Path(path).name if Path(path).exists() else path}"
        self._model: Any = None
        self._processor: Any = None
        self._lock = threading.Lock()
        self._images: dict[tuple[str, InputSettings], Any] = {}
        self.adapter: Path | None = None
        self.base = path
        config = Path(path) / "adapter_config.json"
        if config.is_file():
            self.adapter = Path(path).resolve()
            try:
                self.base = json.loads(config.read_text(encoding="utf-8"))["base_model_name_or_path"]
            except (json.JSONDecodeError, KeyError, TypeError):
                raise ValueError(f"hf:{path}: {config} names no base_model_name_or_path") from None

    def describe(self) -> dict[str, Any]:
        """What this backend loads, for the run file: base model, adapter and its training record."""
        from perspecta.train.recipes import training_record

        folder = Path(self.path)
        info: dict[str, Any] = {"kind": "hf", "path": str(folder.resolve()) if folder.exists() else self.path,
                                "base_model": self.base, "adapter": str(self.adapter) if self.adapter else None}
        if folder.is_dir():
            info["training"] = training_record(folder)
        return info

    def load(self) -> None:
        if self._model is not None:
            return
        torch, tf = _require()
        kwargs: dict[str, Any] = {"local_files_only": self.local_files_only}
        if self.device is None:  # a GPU when there is one (bf16 there), else the CPU in full precision
            self.device = "cuda" if torch.cuda.is_available() else "cpu"
            self.dtype = self.dtype or ("bfloat16" if self.device == "cuda" else None)
        if self.dtype:
            kwargs["dtype"] = getattr(torch, self.dtype)
        own_processor = any((Path(self.path) / f).is_file() for f in ("processor_config.json", "preprocessor_config.json"))
        self._processor = tf.AutoProcessor.from_pretrained(self.path if own_processor or self.adapter is None
                                                           else self.base, local_files_only=self.local_files_only)
        model = tf.AutoModelForImageTextToText.from_pretrained(self.base, **kwargs)
        if self.adapter is not None:
            try:
                from peft import PeftModel
            except ImportError as e:  # pragma: no cover - depends on the environment
                raise ImportError(f"hf:{self.path} is a LoRA adapter; loading it needs peft: "
                                  "pip install 'perspecta[train]'") from e
            model = PeftModel.from_pretrained(model, str(self.adapter)).merge_and_unload()
        self._model = model.to(self.device).eval()

    def _image(self, path: Path, settings: InputSettings) -> Any:
        from perspecta.models.images import load_image

        key = (str(path), settings)
        if key not in self._images:
            self._images[key] = load_image(path, settings)
        return self._images[key]

    def messages(self, request: Request) -> list[dict[str, Any]]:
        pieces = request.prompt.split(IMAGE_MARKER)
        if len(pieces) - 1 != len(request.images):
            raise BackendError(f"item {request.item.id}: {len(pieces) - 1} <image> markers but "
                               f"{len(request.images)} images", retryable=False)
        content: list[dict[str, Any]] = []
        for i, text in enumerate(pieces):
            if i > 0:
                content.append({"type": "image"})
            if text.strip():
                content.append({"type": "text", "text": text.strip()})
        return [{"role": "user", "content": content}]

    def _generate_sync(self, request: Request) -> Response:
        torch, _ = _require()
        with self._lock:
            self.load()
            images = [self._image(p, request.inputs) for p in request.images]
            prompt = self._processor.apply_chat_template(self.messages(request), add_generation_prompt=True,
                                                         tokenize=False)
            inputs = self._processor(text=prompt, images=images or None, return_tensors="pt").to(self.device)
            gen = request.gen
            kwargs: dict[str, Any] = {"max_new_tokens": gen.max_tokens, "do_sample": gen.temperature > 0}
            if gen.temperature > 0:
                kwargs.update(temperature=gen.temperature, top_p=gen.top_p)
                if gen.seed is not None:
                    torch.manual_seed(gen.seed)
            with torch.inference_mode():
                out = self._model.generate(**inputs, **kwargs)
            new = out[0, inputs["input_ids"].shape[1]:]
            text = self._processor.decode(new, skip_special_tokens=True)
        return Response(text=text, usage={"prompt_tokens": int(inputs["input_ids"].shape[1]),
                                          "completion_tokens": int(new.shape[0])})

    async def generate(self, request: Request) -> Response:
        return await asyncio.to_thread(self._generate_sync, request)

    async def aclose(self) -> None:
        return None
