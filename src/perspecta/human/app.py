"""The annotation web app (Starlette): pages, a small JSON API, and the dataset's images.

Starlette because it is a small, well-maintained ASGI toolkit with routing, static
files, Jinja2 templates and a test client, and nothing else; the pages are plain
HTML/JS/CSS shipped in the package (no build step, no CDN), so the app runs offline.

Security: the CLI binds 127.0.0.1 unless told otherwise; images are looked up in the
set of paths the dataset's items name (a request path is never joined onto the file
system), so ``..`` in any encoding cannot reach another file; annotator ids must match
``^[A-Za-z0-9_-]{1,64}$``; an item id outside the annotator's plan is a 404. Every
response carries a restrictive Content-Security-Policy (own origin only, no inline code).

Response time: the server stores when it first sent an item to an annotator and when
the answer arrived (``rt_s``, the figure used in statistics); the page also measures,
with ``performance.now()``, from the moment the item's images were on screen to the
answer key (``client_rt_s``, stored beside it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from perspecta.dataset.io import sha256_file
from perspecta.dataset.item import Item
from perspecta.human.answers import check_answer, score_human
from perspecta.human.plan import PlanSettings, build_plan, check_annotator, eligible_items, task_key
from perspecta.human.present import present
from perspecta.human.store import STORE_NAME, Duplicate, NotServed, Store
from perspecta.run.dataset import load_dataset

HERE = Path(__file__).parent
CSP = ("default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; "
       "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")


@dataclass
class Session:
    """Everything the app serves: the dataset, the plan settings, the store."""

    dataset_dir: Path
    items: dict[str, Item]
    settings: PlanSettings
    store: Store
    feedback: bool = False
    _plans: dict[str, list[str]] = field(default_factory=dict)
    _plan_sets: dict[str, set[str]] = field(default_factory=dict)
    _pano: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def open(cls, dataset_dir: str | Path, out_dir: str | Path, settings: PlanSettings, *,
             feedback: bool = False) -> Session:
        ds = load_dataset(dataset_dir)
        items = {it.id: it for it in ds.items}
        if not eligible_items(ds.items, settings):
            raise ValueError(f"{dataset_dir}: no items in split {settings.split!r}")
        store = Store(Path(out_dir) / STORE_NAME)
        try:  # the items and the plan must never change under a store; the dataset may move
            store.bind({"items_sha256": sha256_file(Path(dataset_dir) / "items.jsonl"), "plan": settings.to_dict()})
            store.set_meta("dataset", str(Path(dataset_dir).resolve()))
        except ValueError:
            store.close()
            raise
        return cls(Path(dataset_dir), items, settings, store, feedback)

    def plan(self, annotator: str) -> list[str]:
        if annotator not in self._plans:
            ids = build_plan(list(self.items.values()), self.settings, annotator)
            self._plans[annotator] = ids
            self._plan_sets[annotator] = set(ids)
        return self._plans[annotator]

    def in_plan(self, annotator: str, item_id: str) -> bool:
        self.plan(annotator)
        return item_id in self._plan_sets[annotator]

    def image_paths(self) -> set[str]:
        return {p for it in self.items.values() for p in it.images}

    def is_panorama(self, rel: str) -> bool:
        """Equirectangular panoramas are exactly twice as wide as tall (docs/design.md)."""
        if rel not in self._pano:
            from PIL import Image

            with Image.open(self.dataset_dir / rel) as im:
                w, h = im.size
            self._pano[rel] = w == 2 * h
        return self._pano[rel]

    def state(self, annotator: str) -> dict[str, Any]:
        plan = self.plan(annotator)
        done = self.store.answered(annotator)
        nxt = next((i for i in plan if i not in done), None)
        out: dict[str, Any] = {"annotator": annotator, "total": len(plan), "done": sum(i in done for i in plan),
                               "feedback": self.feedback, "next": None}
        if nxt is not None:
            item = self.items[nxt]
            tasks = list(dict.fromkeys(task_key(self.items[i]) for i in plan))
            out["next"] = {"id": nxt, "task": task_key(item), "task_title": _task_title(item),
                           "task_number": tasks.index(task_key(item)) + 1, "n_tasks": len(tasks)}
        return out


class SecurityHeaders:
    """ASGI middleware adding the CSP and no-sniff headers to every response."""

    HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
               (b"referrer-policy", b"no-referrer")]

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + self.HEADERS
            await send(message)

        await self.app(scope, receive, send_with_headers)


MAX_BODY = 64 * 1024  # an answer or a flag is a few hundred bytes; nothing legitimate is larger


class _BodyTooLarge(Exception):
    pass


class BodyLimit:
    """ASGI middleware answering 413 to a request body over ``limit`` bytes, whether announced by
    Content-Length or streamed without one, before a handler reads (and buffers) it all."""

    def __init__(self, app: Any, limit: int = MAX_BODY) -> None:
        self.app = app
        self.limit = limit

    async def _reject(self, send: Any) -> None:
        body = json.dumps({"error": f"request body too large (at most {self.limit // 1024} KiB)"}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and (not length.strip().isdigit() or int(length) > self.limit):
            await self._reject(send)
            return
        seen = 0
        started = False

        async def limited_receive() -> Any:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _BodyTooLarge
            return message

        async def tracking_send(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _BodyTooLarge:
            if not started:
                await self._reject(send)


def _task_title(item: Item) -> str:
    from perspecta.suites.registry import get_task

    try:
        return get_task(item.suite, item.task).description
    except KeyError:
        return ""


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _annotator(request: Request) -> str:
    return check_annotator(request.path_params["annotator"])


def create_app(session: Session) -> Starlette:
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    images = session.image_paths()

    def index(request: Request) -> Response:
        return templates.TemplateResponse(request, "index.html", {"error": None, "annotator": ""})

    def start(request: Request) -> Response:
        annotator = request.query_params.get("annotator", "").strip()
        try:
            check_annotator(annotator)
        except ValueError as e:
            return templates.TemplateResponse(request, "index.html", {"error": str(e), "annotator": annotator},
                                              status_code=400)
        return RedirectResponse(f"/a/{annotator}", status_code=303)

    def annotate(request: Request) -> Response:
        try:
            annotator = _annotator(request)
        except ValueError as e:
            return templates.TemplateResponse(request, "index.html", {"error": str(e), "annotator": ""},
                                              status_code=400)
        return templates.TemplateResponse(request, "annotate.html", {"annotator": annotator})

    def state(request: Request) -> Response:
        try:
            annotator = _annotator(request)
        except ValueError as e:
            return _error(400, str(e))
        return JSONResponse(session.state(annotator))

    def _planned(request: Request) -> tuple[str, Item] | JSONResponse:
        try:
            annotator = _annotator(request)
        except ValueError as e:
            return _error(400, str(e))
        item_id = request.path_params["item_id"]
        if item_id not in session.items or not session.in_plan(annotator, item_id):
            return _error(404, f"no item {item_id!r} in the plan of {annotator}")
        return annotator, session.items[item_id]

    def get_item(request: Request) -> Response:
        found = _planned(request)
        if isinstance(found, Response):
            return found
        annotator, item = found
        session.store.mark_served(annotator, item.id)
        body = present(item, lambda rel: "/" + rel, session.is_panorama)
        body["flagged"] = item.id in session.store.flagged(annotator)
        body["answered"] = item.id in session.store.answered(annotator)
        return JSONResponse(body)

    async def answer(request: Request) -> Response:
        found = _planned(request)
        if isinstance(found, Response):
            return found
        annotator, item = found
        try:
            body = await request.json()
            value = check_answer(item, body.get("answer"))
            client_ms = body.get("client_rt_ms")
            client_rt = None if client_ms is None else float(client_ms) / 1000.0
            if client_rt is not None and not 0 <= client_rt < 1e7:
                raise ValueError("client_rt_ms out of range")
        except (ValueError, AttributeError, TypeError, json.JSONDecodeError) as e:
            return _error(400, f"bad answer: {e}")
        return await run_in_threadpool(_store_answer, annotator, item, value, client_rt)

    def _store_answer(annotator: str, item: Item, value: str, client_rt: float | None) -> Response:
        correct = bool(score_human(item, annotator, value, None).correct)
        try:
            resp = session.store.record(annotator, item.id, value, correct, client_rt_s=client_rt,
                                        feedback_shown=session.feedback)
        except Duplicate as dup:
            return JSONResponse({"status": "duplicate", "kept": dup.stored.answer,
                                 "state": session.state(annotator)}, status_code=409)
        except NotServed as e:
            return _error(409, str(e))
        out: dict[str, Any] = {"status": "stored", "rt_s": resp.rt_s, "state": session.state(annotator)}
        if session.feedback:
            out.update(correct=correct, gold=item.answer)
        return JSONResponse(out)

    async def flag(request: Request) -> Response:
        found = _planned(request)
        if isinstance(found, Response):
            return found
        annotator, item = found
        try:
            flagged = (await request.json()).get("flagged")
        except (ValueError, AttributeError):
            flagged = None
        if not isinstance(flagged, bool):
            return _error(400, 'body must be {"flagged": true|false}')
        await run_in_threadpool(session.store.set_flag, annotator, item.id, flagged)
        return JSONResponse({"item": item.id, "flagged": flagged})

    def image(request: Request) -> Response:
        rel = "images/" + request.path_params["path"]
        if rel not in images:  # whitelist: the path never reaches the file system unless listed
            return _error(404, "no such image")
        return FileResponse(session.dataset_dir / rel, headers={"Cache-Control": "private, max-age=3600"})

    async def not_found(request: Request, exc: Exception) -> Response:
        return _error(getattr(exc, "status_code", 404), getattr(exc, "detail", "not found"))

    routes = [
        Route("/", index), Route("/start", start), Route("/a/{annotator}", annotate),
        Route("/api/a/{annotator}/state", state),
        Route("/api/a/{annotator}/item/{item_id:path}", get_item),
        Route("/api/a/{annotator}/answer/{item_id:path}", answer, methods=["POST"]),
        Route("/api/a/{annotator}/flag/{item_id:path}", flag, methods=["POST"]),
        Route("/images/{path:path}", image),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_found},
                    middleware=[Middleware(SecurityHeaders), Middleware(BodyLimit)])
    app.state.session = session
    return app
