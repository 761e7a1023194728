"""A small OpenAI-compatible chat-completions server for tests and overhead benchmarks.

It speaks the real ``POST /v1/chat/completions`` protocol (JSON body with ``messages``
of text and ``image_url`` parts) and answers deterministically: the option letter
picked by a hash of the request's text (or "yes"), written as DORI's
``"answer": "X"``. It can inject failures at a given rate — 429, 500, a hang longer
than the client's timeout, a truncated JSON body, a non-JSON garbage body — and
counts, per prompt text, how many requests arrived and how many got a valid answer,
so tests can prove that nothing was requested twice or guessed.

Run standalone: ``python -m perspecta.models.fake_server --port 8000 [--fail-rate 0.3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import re
import threading
from collections import Counter
from dataclasses import dataclass, field

from aiohttp import web

FAILURE_KINDS = ("429", "500", "hang", "truncated", "garbage")
_OPTION = re.compile(r"^([A-Z])\. ", re.MULTILINE)


def prompt_text(messages: list[dict]) -> str:
    """The text of a request (text parts joined by newlines): the key the counters use."""
    parts = []
    for m in messages:
        c = m.get("content")
        if isinstance(c, str):
            parts.append(c)
        else:
            parts += [p["text"] for p in c if p.get("type") == "text"]
    return "\n".join(parts)


def request_key(messages: list[dict]) -> str:
    """What the counters key on: the request's text plus a digest of its images, so two
    items that share a question's wording (different units, different pictures) stay apart."""
    h = hashlib.sha256()
    for m in messages:
        if not isinstance(m.get("content"), str):
            for p in m["content"]:
                if p.get("type") == "image_url":
                    h.update(p["image_url"]["url"].encode())
    return prompt_text(messages) + "\n#images " + h.hexdigest()[:16]


def default_answer(text: str) -> str:
    labels = _OPTION.findall(text)
    digest = int(hashlib.sha256(text.encode()).hexdigest(), 16)
    if not labels:
        return "yes" if digest % 2 else "no"
    return labels[digest % len(labels)]


def _image_size(url: str) -> tuple[int, int] | None:
    """(width, height) of a ``data:`` image URL as received (None for a remote URL)."""
    import base64
    import io

    from PIL import Image

    if not url.startswith("data:"):
        return None
    data = url.split(",", 1)[1]
    try:  # the header is enough for the size: decode a prefix, keeping the server cheap
        with Image.open(io.BytesIO(base64.b64decode(data[:8192]))) as img:
            return img.size
    except Exception:
        with Image.open(io.BytesIO(base64.b64decode(data))) as img:
            return img.size


@dataclass
class FakeServerStats:
    requests: Counter = field(default_factory=Counter)  # request_key -> requests received
    answered: Counter = field(default_factory=Counter)  # request_key -> valid answers sent
    failures: Counter = field(default_factory=Counter)  # failure kind -> count
    images: list[int] = field(default_factory=list)  # images per request
    answers: dict[str, str] = field(default_factory=dict)  # request_key -> answer letter sent
    auth: set[str] = field(default_factory=set)  # Authorization headers seen
    seeds: list = field(default_factory=list)  # "seed" of each request (None when absent)
    image_sizes: list = field(default_factory=list)  # [(width, height), ...] of each request's images

    def reset(self) -> None:
        for c in (self.requests, self.answered, self.failures):
            c.clear()
        self.images.clear()
        self.seeds.clear()
        self.image_sizes.clear()


class FakeServer:
    """Run the server on 127.0.0.1 in a background thread (``with FakeServer(...) as s: s.url``)."""

    def __init__(self, *, fail_rate: float = 0.0, kinds: tuple[str, ...] = FAILURE_KINDS, hang_s: float = 1.0,
                 latency_s: float = 0.0, seed: int = 0, port: int = 0, nonsense_rate: float = 0.0) -> None:
        self.fail_rate, self.kinds, self.hang_s, self.latency_s = fail_rate, kinds, hang_s, latency_s
        self.nonsense_rate = nonsense_rate
        self.rng = random.Random(seed)
        self.port = port
        self.stats = FakeServerStats()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._handle)
        return app

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        messages = body["messages"]
        text = prompt_text(messages)
        key = request_key(messages)
        n_images = sum(1 for m in messages if not isinstance(m["content"], str)
                       for p in m["content"] if p.get("type") == "image_url")
        self.stats.requests[key] += 1
        self.stats.images.append(n_images)
        self.stats.auth.add(request.headers.get("Authorization", ""))
        self.stats.seeds.append(body.get("seed"))
        self.stats.image_sizes.append([_image_size(p["image_url"]["url"]) for m in messages
                                       if not isinstance(m["content"], str)
                                       for p in m["content"] if p.get("type") == "image_url"])
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if self.fail_rate and self.rng.random() < self.fail_rate:
            kind = self.rng.choice(self.kinds)
            self.stats.failures[kind] += 1
            if kind == "429":
                return web.json_response({"error": {"message": "rate limited"}}, status=429)
            if kind == "500":
                return web.json_response({"error": {"message": "internal error"}}, status=500)
            if kind == "hang":
                await asyncio.sleep(self.hang_s)
                return web.json_response({"error": "too late"}, status=504)
            payload = json.dumps(self._completion(body, "B")).encode()
            if kind == "truncated":
                return web.Response(body=payload[: len(payload) // 2], content_type="application/json")
            return web.Response(text="<html><body>upstream garbage %%$#</body></html>", content_type="text/html")
        if self.nonsense_rate and self.rng.random() < self.nonsense_rate:
            content = "I am not sure what the picture shows."
        else:
            answer = default_answer(text)
            content = f'"answer": "{answer}", "reasoning": "the fake model looked at {n_images} image(s)"'
            self.stats.answers[key] = answer
        self.stats.answered[key] += 1
        return web.json_response(self._completion(body, content))

    @staticmethod
    def _completion(body: dict, content: str) -> dict:
        return {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def _serve(self) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._runner = web.AppRunner(self.app(), access_log=None)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._runner.cleanup())
        self._loop.close()

    def start(self) -> FakeServer:
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake server did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:  # pragma: no cover
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--fail-rate", type=float, default=0.0)
    ap.add_argument("--latency", type=float, default=0.0)
    args = ap.parse_args()
    server = FakeServer(fail_rate=args.fail_rate, latency_s=args.latency, port=args.port)
    web.run_app(server.app(), host="127.0.0.1", port=args.port, access_log=None)


if __name__ == "__main__":  # pragma: no cover
    main()
