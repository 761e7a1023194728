"""OpenAI-compatible chat completions over HTTP (vLLM, SGLang, LMDeploy, Ollama,
llama.cpp server, hosted APIs), on aiohttp.

aiohttp because it keeps its throughput as concurrency grows where httpx (the OpenAI
SDK's stack) degrades (shared ANCHORS.md). Images go as base64 ``data:`` URLs in
``image_url`` content parts, interleaved with the text exactly where the item's
``<image>`` markers are; each file is encoded once per process (:class:`ImageEncoder`).
The API key is sent only in the Authorization header and never printed or logged.
"""

from __future__ import annotations

import json
import os
from typing import Any

import aiohttp

from perspecta.dataset.item import IMAGE_MARKER
from perspecta.models.base import BackendError, Request, Response
from perspecta.models.images import ImageEncoder

RETRYABLE_STATUS = {408, 409, 425, 429}


def build_content(request: Request, encoder: ImageEncoder) -> list[dict[str, Any]]:
    """The user message's content parts: text and images in ``<image>`` marker order."""
    pieces = request.prompt.split(IMAGE_MARKER)
    if len(pieces) - 1 != len(request.images):
        raise BackendError(
            f"item {request.item.id}: prompt has {len(pieces) - 1} <image> markers but {len(request.images)} images",
            retryable=False,
        )
    parts: list[dict[str, Any]] = []
    for i, text in enumerate(pieces):
        if i > 0:
            url = encoder.data_url(request.images[i - 1], request.inputs)
            parts.append({"type": "image_url", "image_url": {"url": url}})
        text = text.strip("\n")
        if text:
            if parts and parts[-1]["type"] == "text":
                parts[-1]["text"] += "\n" + text
            else:
                parts.append({"type": "text", "text": text})
    return parts


def parse_completion(status: int, body: bytes) -> Response:
    """Turn an HTTP reply into a Response or a classified :class:`BackendError`."""
    if status != 200:
        snippet = body[:200].decode("utf-8", "replace").replace("\n", " ")
        retry = status in RETRYABLE_STATUS or status >= 500
        raise BackendError(f"HTTP {status}: {snippet}", retryable=retry)
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BackendError(f"unparseable JSON body ({e.__class__.__name__}: {e})", retryable=True) from None
    try:
        message = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise BackendError(f"malformed completion: no choices[0].message in {str(data)[:200]}", retryable=True) from None
    text = message.get("content")
    if isinstance(text, list):  # some servers return content parts
        text = "".join(p.get("text", "") for p in text if isinstance(p, dict))
    if text is None:
        text = ""
    usage = data.get("usage") or {}
    return Response(text=str(text), usage=usage if isinstance(usage, dict) else {})


class OpenAIBackend:
    """``openai:<model>`` against ``base_url`` (…/v1); one aiohttp session per event loop."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        encoder: ImageEncoder | None = None,
        connections: int = 256,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        if not base_url:
            raise ValueError("openai backend needs a base URL: pass --base-url or set OPENAI_BASE_URL")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/chat/completions"
        self._api_key = api_key or os.environ.get("PERSPECTA_API_KEY") or os.environ.get("OPENAI_API_KEY")
        self.encoder = encoder or ImageEncoder()
        self.connections = connections
        self.extra_body = dict(extra_body or {})
        self.name = f"openai:{model}"
        self._session: aiohttp.ClientSession | None = None

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r}, key={'set' if self._api_key else 'unset'})"

    def payload(self, request: Request) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": build_content(request, self.encoder)}],
            "temperature": request.gen.temperature,
            "top_p": request.gen.top_p,
            "max_tokens": request.gen.max_tokens,
            **self.extra_body,
        }
        if request.gen.seed is not None:
            body["seed"] = request.gen.seed
        return body

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            headers = {"Content-Type": "application/json"}
            if self._api_key:
                headers["Authorization"] = f"Bearer {self._api_key}"
            connector = aiohttp.TCPConnector(limit=self.connections, ttl_dns_cache=300)
            self._session = aiohttp.ClientSession(headers=headers, connector=connector,
                                                  timeout=aiohttp.ClientTimeout(total=None))
        return self._session

    async def generate(self, request: Request) -> Response:
        data = json.dumps(self.payload(request)).encode()
        session = self._get_session()
        try:
            async with session.post(self.url, data=data) as resp:
                body = await resp.read()
                status = resp.status
        except aiohttp.ClientError as e:
            raise BackendError(f"connection error: {e.__class__.__name__}: {e}", retryable=True) from None
        return parse_completion(status, body)

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None
