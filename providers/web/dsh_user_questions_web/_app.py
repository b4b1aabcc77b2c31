"""The HTTP side: a Starlette app behind a guard that checks Host, token, Origin and size.

Routes (all under ``/<token>/``): the page and its two assets, ``events`` (server-sent events:
a snapshot of every pending ask, then ``added`` / ``resolved`` / ``bye``), ``state`` (the same
snapshot as JSON), and the two posts ``answer`` and ``cancel``.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator, Callable, Collection
from importlib import resources
from typing import Any

from dsh_user_questions import UserQuestionError, WireFormatError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._board import Board, Frame
from .answers import check_page_answer

# Seconds between SSE comments that keep idle proxies and the page's connection check happy.
KEEPALIVE_SECONDS = 15.0

_SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self';"
        b" img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]

_NOT_PENDING = {
    "answered": "it was already answered",
    "cancelled": "it was closed",
    "withdrawn": "the agent withdrew it",
    "stopped": "the provider stopped",
}


def _asset(name: str) -> bytes:
    return resources.files(__package__).joinpath("_static", name).read_bytes()


class Guard:
    """ASGI middleware: Host (DNS rebinding), token (401), Origin (cross-site) and body size.

    ``allowed_hosts`` are ``host:port`` values the Host header may carry; the token is the first
    path segment of every route.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str,
        allowed_hosts: Callable[[], Collection[str]],
        max_body_bytes: int,
    ) -> None:
        self._app = app
        self._prefix = f"/{token}"
        self._allowed_hosts = allowed_hosts
        self._max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        headers = {key.decode("latin-1"): value for key, value in scope["headers"]}

        async def secured_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message["headers"], *_SECURITY_HEADERS]}
            await send(message)

        denial = self._deny(scope, headers)
        if denial is not None:
            await denial(scope, receive, secured_send)
            return
        await self._app(scope, receive, secured_send)

    def _deny(self, scope: Scope, headers: dict[str, bytes]) -> Response | None:
        host = headers.get("host", b"").decode("latin-1").lower()
        allowed = self._allowed_hosts()
        if host not in allowed:
            return PlainTextResponse("forbidden: unexpected Host header", status_code=403)
        path: str = scope["path"]
        given = path.split("/", 2)[1] if path.startswith("/") else ""
        if not secrets.compare_digest(f"/{given}".encode(), self._prefix.encode()):
            return PlainTextResponse("unauthorized: the URL's token is missing or wrong", 401)
        origin = headers.get("origin")
        if origin is not None and origin.decode("latin-1").lower() not in {
            f"http://{name}" for name in allowed
        }:
            return PlainTextResponse("forbidden: cross-origin request", status_code=403)
        fetch_site = headers.get("sec-fetch-site", b"").decode("latin-1")
        if scope["method"] != "GET" and fetch_site not in ("", "same-origin", "none"):
            return PlainTextResponse("forbidden: cross-site request", status_code=403)
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self._max_body_bytes):
            return PlainTextResponse("request body too large", status_code=413)
        return None


class _TooLarge(Exception):
    pass


async def _read_body(request: Request, limit: int) -> bytes:
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise _TooLarge
    return bytes(body)


def _invalid(*problems: str) -> JSONResponse:
    return JSONResponse({"status": "invalid", "problems": list(problems)}, status_code=400)


def build_app(
    board: Board,
    *,
    token: str,
    allowed_hosts: Callable[[], Collection[str]],
    max_body_bytes: int,
) -> Guard:
    """The guarded ASGI app serving ``board``."""
    page = _asset("index.html")
    script = _asset("app.js")
    style = _asset("app.css")
    base = f"/{token}"

    async def index(_request: Request) -> Response:
        return Response(page, media_type="text/html; charset=utf-8")

    async def to_index(_request: Request) -> Response:
        return RedirectResponse(f"{base}/", status_code=307)

    async def app_js(_request: Request) -> Response:
        return Response(script, media_type="text/javascript; charset=utf-8")

    async def app_css(_request: Request) -> Response:
        return Response(style, media_type="text/css; charset=utf-8")

    async def state(_request: Request) -> Response:
        return JSONResponse({"pending": [ask.wire() for ask in board.pending()]})

    async def events(_request: Request) -> Response:
        queue = board.subscribe()
        return StreamingResponse(
            _stream(board, queue),
            media_type="text/event-stream",
            headers={"x-accel-buffering": "no"},
        )

    async def read_post(request: Request, keys: set[str]) -> dict[str, Any] | Response:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            return PlainTextResponse("send application/json", status_code=415)
        try:
            body = await _read_body(request, max_body_bytes)
        except _TooLarge:
            return PlainTextResponse("request body too large", status_code=413)
        try:
            data = json.loads(body)
        except ValueError:
            return _invalid("the body is not JSON")
        if not isinstance(data, dict):
            return _invalid("the body must be a JSON object")
        problems = [f"{key}: unknown key" for key in data if key not in keys]
        problems += [f"{key}: missing" for key in sorted(keys) if key not in data]
        if not problems and not isinstance(data["id"], str):
            problems.append("id: must be a string")
        if problems:
            return _invalid(*problems)
        return data

    def not_pending(ask_id: str) -> Response:
        outcome = board.outcome(ask_id)
        why = "no such question" if outcome is None else _NOT_PENDING[outcome]
        return JSONResponse(
            {
                "status": "not-pending",
                "id": ask_id,
                "outcome": outcome,
                "message": f"question {ask_id} is not pending: {why}",
            },
            status_code=409,
        )

    async def answer(request: Request) -> Response:
        data = await read_post(request, {"id", "answer"})
        if isinstance(data, Response):
            return data
        ask_id: str = data["id"]
        ask = board.get(ask_id)
        if ask is None:
            return not_pending(ask_id)
        try:
            parsed = check_page_answer(ask.request.questions, data["answer"])
        except UserQuestionError as err:
            cause = err.__cause__
            problems = (
                [f"answer.{problem}" for problem in cause.problems]
                if isinstance(cause, WireFormatError)
                else [err.message]
            )
            return JSONResponse(
                {"status": "rejected", "id": ask_id, "problems": problems}, status_code=422
            )
        board.resolve(ask_id, "answered", parsed)
        return JSONResponse({"status": "accepted", "id": ask_id})

    async def cancel(request: Request) -> Response:
        data = await read_post(request, {"id"})
        if isinstance(data, Response):
            return data
        ask_id = data["id"]
        if not board.resolve(ask_id, "cancelled", UserQuestionError.cancelled()):
            return not_pending(ask_id)
        return JSONResponse({"status": "cancelled", "id": ask_id})

    app = Starlette(
        routes=[
            Route(base, to_index, methods=["GET"]),
            Route(f"{base}/", index, methods=["GET"]),
            Route(f"{base}/app.js", app_js, methods=["GET"]),
            Route(f"{base}/app.css", app_css, methods=["GET"]),
            Route(f"{base}/state", state, methods=["GET"]),
            Route(f"{base}/events", events, methods=["GET"]),
            Route(f"{base}/answer", answer, methods=["POST"]),
            Route(f"{base}/cancel", cancel, methods=["POST"]),
        ]
    )
    return Guard(app, token=token, allowed_hosts=allowed_hosts, max_body_bytes=max_body_bytes)


async def _stream(board: Board, queue: asyncio.Queue[Frame]) -> AsyncIterator[bytes]:
    try:
        yield b"retry: 1000\n\n"
        while True:
            try:
                frame = await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
            except asyncio.TimeoutError:
                yield b": keepalive\n\n"
                continue
            if frame is None:
                return
            yield frame
    finally:
        board.unsubscribe(queue)
