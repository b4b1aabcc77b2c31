"""`create_app`: the page and its HTTP/SSE protocol over any `QuestionBoard`.

``create_app(board, token=..., allowed_hosts=...)`` returns an ASGI app. `WebProvider` serves
it over its in-process board; ``dsh-inbox serve`` serves it over a database board. Serve it
with `dsh_user_questions_web.server.start_server` (pass the same `ConnectionTable` to both) to
get the connection bounds of `Limits`; any ASGI server works, without them.

Routes, all under ``/<token>/``: the page (``""``, ``app.js``, ``app.css``), ``events``
(server-sent events: ``snapshot`` ``{"stream", "n", "pending": [ask...]}`` first on every
connection, then ``added`` (an ask), ``resolved`` (``{"id", "outcome"}``, and ``"by"`` when
settled elsewhere, see `BoardEvent`), ``ping`` (``{"n"}``) and ``bye`` (``{"reason"}``, then
the stream ends)), ``state`` (the snapshot as JSON), and the posts ``answer`` (``{"id",
"answer"}``), ``cancel`` (``{"id"}``) and ``alive`` (``{"id": stream, "n"}``: the page read
heartbeat ``n``; a stream that does not confirm one within `Limits.write_timeout` is
dropped, see `dsh_user_questions_web._stream`). An ask as the page gets it holds each
question as the core's one view of it, `dsh_user_questions.view.QuestionView` (see
`dsh_user_questions_web._stream.page_form`).

Every client input gets a 4xx answer, never a 500: ``400`` for a body that is not JSON, is
nested too deep, or is not ``{id, answer}`` with a well-formed id; ``408`` for a body sent too
slowly; ``413`` too large; ``415`` not JSON; ``409`` not pending; ``422`` an answer breaking a
rule (the ask stays pending).
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from collections.abc import Callable, Collection, Mapping
from importlib import resources
from typing import Any

from dsh_user_questions._i18n import N_, html_lang, language_from_accept
from dsh_user_questions._identity import CALLER_KEY, TOKEN_HOLDER, Caller, ProxyIdentity
from dsh_user_questions.rules import inert_text
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from ._board import QuestionBoard, Settlement
from ._files import candidates, receive
from ._guard import Guard
from ._i18n import for_language, localize_page
from ._limits import Limits
from ._stream import EventHub, encode
from .server import ConnectionTable

__all__ = ["PageApp", "create_app", "under_prefix"]

_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")

_NOT_PENDING = {
    "answered": N_("it was already answered"),
    "cancelled": N_("it was closed"),
    "withdrawn": N_("the agent no longer waits for it"),
    "expired": N_("its time ran out"),
    "stopped": N_("the question server stopped"),
    None: N_("it is not known here"),
}
# What a page shows for an answer a durable board kept while no agent waits for it.
_KEPT = N_(
    "Answer saved. No agent is waiting for it right now: its harness gets it when it resumes."
)


def _asset(name: str) -> bytes:
    return resources.files(__package__).joinpath("_static", name).read_bytes()


def _json(data: object, status: int = 200) -> Response:
    return Response(encode(data), status_code=status, media_type="application/json")


def _invalid(*problems: str) -> Response:
    return _json({"status": "invalid", "problems": list(problems)}, 400)


class _BadBody(Exception):
    def __init__(self, response: Response) -> None:
        super().__init__()
        self.response = response


class PageApp:
    """The guarded ASGI app of `create_app`; `page_count` counts open event streams."""

    def __init__(self, app: Guard, hub: EventHub) -> None:
        self._app = app
        self._hub = hub

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self._app(scope, receive, send)

    @property
    def page_count(self) -> int:
        """How many event streams (open pages) are connected."""
        return self._hub.page_count


def create_app(
    board: QuestionBoard,
    *,
    token: str,
    allowed_hosts: Callable[[], Collection[str]],
    limits: Limits | None = None,
    connections: ConnectionTable | None = None,
    server_name: str | None = None,
    identity: ProxyIdentity | None = None,
) -> PageApp:
    """The page and protocol serving ``board`` behind the token, Host and Origin checks.

    ``allowed_hosts()`` returns the ``host:port`` values the Host header may carry (a callable,
    so the port can be filled in once bound). ``connections`` is the table of the server
    that will serve the app, used to shed pages that stop reading. ``server_name`` is what
    the page calls its server when it cannot reach it (default "the harness"; ``dsh-inbox
    serve`` says "the inbox server"). With an ``identity``, the page answers only people a
    trusted proxy names (`dsh_user_questions._identity.ProxyIdentity`; the `Guard` refuses
    every other request, 401 or 403); the board is told who posts (``caller``).
    """
    limits = limits or Limits()
    hub = EventHub(board, limits, connections.drop if connections is not None else None)
    page, script, style = _asset("index.html"), _asset("app.js"), _asset("app.css")
    if server_name:  # who the page tells the user is unreachable (default: the harness)
        named = f'<html lang="en" data-server="{html.escape(server_name, quote=True)}">'
        page = page.replace(b'<html lang="en">', named.encode(), 1)
    if getattr(board, "history", None) is not None:  # the cards offer their history
        page = page.replace(b'<html lang="en"', b'<html lang="en" data-history="1"', 1)
    base = f"/{token}"

    async def index(request: Request) -> Response:
        language = language_from_accept(request.headers.get("accept-language"))
        return Response(
            localize_page(page, language),
            media_type="text/html; charset=utf-8",
            headers={"Vary": "Accept-Language", "Content-Language": html_lang(language)},
        )

    async def to_index(_request: Request) -> Response:
        # Relative, so it stays under a reverse proxy's path prefix.
        return RedirectResponse(f"{token}/", status_code=307)

    async def app_js(_request: Request) -> Response:
        return Response(script, media_type="text/javascript; charset=utf-8")

    async def app_css(_request: Request) -> Response:
        return Response(style, media_type="text/css; charset=utf-8")

    async def state(request: Request) -> Response:
        asks = await hub.snapshot(_caller(request).person)
        body = b'{"pending":[' + b",".join(asks) + b"]}"
        return Response(body, media_type="application/json")

    async def read_post(request: Request, keys: set[str]) -> dict[str, Any]:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise _BadBody(PlainTextResponse("send application/json", status_code=415))
        try:
            reading = _read_body(request, limits.max_body_bytes)
            body = await asyncio.wait_for(reading, limits.body_timeout)
        except asyncio.TimeoutError:
            slow = PlainTextResponse("the body was sent too slowly", status_code=408)
            raise _BadBody(slow) from None
        if body is None:
            raise _BadBody(PlainTextResponse("request body too large", status_code=413))
        try:
            data = json.loads(body)
        except RecursionError:
            raise _BadBody(_invalid("the body is nested too deeply")) from None
        except ValueError:
            raise _BadBody(_invalid("the body is not JSON (UTF-8)")) from None
        if not isinstance(data, dict):
            raise _BadBody(_invalid("the body must be a JSON object"))
        problems = [f"{key}: unknown key" for key in sorted(data) if key not in keys][:10]
        problems += [f"{key}: missing" for key in sorted(keys) if key not in data]
        if not problems and not (isinstance(data["id"], str) and _ID.fullmatch(data["id"])):
            problems.append("id: must be a question id (letters, digits and . _ : -)")
        if problems:
            raise _BadBody(_invalid(*problems))
        return data

    def settlement_response(settled: Settlement, request: Request) -> Response:
        # A message is shown on the page as it is: in the reader's language.
        tr = for_language(language_from_accept(request.headers.get("accept-language")))
        if settled.status in ("accepted", "cancelled"):
            return _json({"status": settled.status, "id": settled.ask_id})
        if settled.status == "kept":
            return _json({"status": "kept", "id": settled.ask_id, "message": tr(_KEPT)})
        if settled.status == "refused":
            body = {"status": "refused", "id": settled.ask_id, "message": settled.message}
            return _json(body, 403)
        if settled.status == "counted":
            have, needed = len(settled.approvers), settled.needed
            shown = tr("approved by {people} ({have} of {needed})").format(
                people=", ".join(inert_text(person) for person in settled.approvers),
                have=have,
                needed=needed,
            )
            return _json(
                {
                    "status": "counted",
                    "id": settled.ask_id,
                    "approvedBy": [inert_text(person) for person in settled.approvers],
                    "needed": needed,
                    "message": shown,
                }
            )
        if settled.status == "rejected":
            problems = list(settled.problems)
            return _json({"status": "rejected", "id": settled.ask_id, "problems": problems}, 422)
        why = tr(_NOT_PENDING.get(settled.outcome, _NOT_PENDING[None]))
        return _json(
            {
                "status": "not-pending",
                "id": settled.ask_id,
                "outcome": settled.outcome,
                "message": tr("This question is no longer pending: {why}.").format(why=why),
            },
            409,
        )

    async def answer(request: Request) -> Response:
        try:
            data = await read_post(request, {"id", "answer"})
        except _BadBody as bad:
            return bad.response
        try:
            settled = await board.submit(data["id"], data["answer"], caller=_caller(request))
        except RecursionError:
            return _invalid("answer: nested too deeply")
        return settlement_response(settled, request)

    async def alive(request: Request) -> Response:
        try:
            data = await read_post(request, {"id", "n"})
        except _BadBody as bad:
            return bad.response
        seen = data["n"]
        if not isinstance(seen, int) or isinstance(seen, bool) or seen < 0:
            return _invalid("n: must be a heartbeat number (an integer, 0 or more)")
        if not hub.confirm(data["id"], seen):
            return _json({"status": "unknown-stream", "id": data["id"]}, 404)
        return _json({"status": "ok", "id": data["id"]})

    async def cancel(request: Request) -> Response:
        try:
            data = await read_post(request, {"id"})
        except _BadBody as bad:
            return bad.response
        settled = await board.cancel(data["id"], caller=_caller(request))
        return settlement_response(settled, request)

    async def opened(request: Request) -> Response:
        try:
            data = await read_post(request, {"id"})
        except _BadBody as bad:
            return bad.response
        tell = getattr(board, "opened", None)
        if tell is not None:
            await tell(data["id"], _caller(request))
        return _json({"status": "ok", "id": data["id"]})

    async def history(request: Request) -> Response:
        ask_id = request.query_params.get("ask", "")
        if not _ID.fullmatch(ask_id):
            return _invalid("ask: must be a question id (letters, digits and . _ : -)")
        read = getattr(board, "history", None)
        events = None if read is None else await read(ask_id, _caller(request))
        if events is None:
            return _json({"status": "not-found", "message": "no history of that question"}, 404)
        tr = for_language(language_from_accept(request.headers.get("accept-language")))
        return _json({"id": ask_id, "events": [_event_line(event, tr) for event in events]})

    async def files(request: Request) -> Response:
        ask_id = request.query_params.get("ask", "")
        question_id = request.query_params.get("question", "")
        if not (_ID.fullmatch(ask_id) and _ID.fullmatch(question_id)):
            return _invalid("ask, question: must be ids (letters, digits and . _ : -)")
        refused = await hub.refusal_of(ask_id, _caller(request).person)
        if refused is not None:  # only its audience may read a question's files
            return _json({"status": "refused", "message": refused}, 403)
        listed = await candidates(board, ask_id, question_id)
        if listed is None:
            return _json({"status": "not-found", "message": "no such pending file question"}, 404)
        return Response(listed, media_type="application/json")

    async def upload(request: Request) -> Response:
        ask_id = request.query_params.get("ask", "")
        refused = await hub.refusal_of(ask_id, _caller(request).person)
        if refused is not None:  # an outsider's file is never stored
            return _json({"status": "refused", "message": refused}, 403)
        return await receive(board, request, limits)

    app = Starlette(
        routes=[
            Route(base, to_index, methods=["GET"]),
            Route(f"{base}/", index, methods=["GET"]),
            Route(f"{base}/app.js", app_js, methods=["GET"]),
            Route(f"{base}/app.css", app_css, methods=["GET"]),
            Route(f"{base}/state", state, methods=["GET"]),
            Route(f"{base}/events", hub, methods=["GET"]),
            Route(f"{base}/answer", answer, methods=["POST"]),
            Route(f"{base}/cancel", cancel, methods=["POST"]),
            Route(f"{base}/alive", alive, methods=["POST"]),
            Route(f"{base}/opened", opened, methods=["POST"]),
            Route(f"{base}/history", history, methods=["GET"]),
            Route(f"{base}/files", files, methods=["GET"]),
            Route(f"{base}/upload", upload, methods=["POST"]),
        ]
    )
    guard = Guard(
        app,
        token=token,
        allowed_hosts=allowed_hosts,
        max_body_bytes=limits.max_body_bytes,
        streamed=(f"{base}/upload",),
        on_trusted=connections.trust if connections is not None else None,
        identity=identity,
    )
    return PageApp(guard, hub)


def under_prefix(app: Any, prefix: str) -> Any:
    """``app`` also answering under the path ``prefix`` (``/questions``; ``""``: as is).

    For a reverse proxy that passes its path prefix on (nginx ``proxy_pass`` without a URI): a
    request under ``prefix`` reaches ``app`` without it; any
    other request (a proxy that strips the prefix, a local visit) reaches ``app`` unchanged.
    The page's own addresses are relative, so both work.
    """
    prefix = prefix.rstrip("/")
    if not prefix:
        return app
    raw_prefix = prefix.encode("utf-8")

    async def stripped(scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and (path == prefix or path.startswith(prefix + "/")):
            raw = scope.get("raw_path")
            scope = {**scope, "path": path[len(prefix) :] or "/"}
            if isinstance(raw, bytes) and raw.startswith(raw_prefix):
                scope["raw_path"] = raw[len(raw_prefix) :] or b"/"
            else:
                scope.pop("raw_path", None)
        await app(scope, receive, send)

    return stripped


def _event_line(event: Mapping[str, Any], tr: Callable[[str], str]) -> dict[str, Any]:
    """One event of a question's history as the page shows it: ``at`` (ms) and ``text`` (the
    event's English name, who and where as inert text, in the reader's language)."""
    name = inert_text(str(event.get("event", "")))
    by, surface = event.get("by"), event.get("surface")
    where = inert_text(str(surface)) if surface else "?"
    if by:
        text = tr("{event} by {person} on {surface}").format(
            event=name, person=inert_text(str(by)), surface=where
        )
    else:
        text = tr("{event} on {surface}").format(event=name, surface=where)
    return {"at": event.get("at"), "text": text}


def _caller(request: Request) -> Caller:
    """Who posts: the `Guard` put it in the scope (a bare app, in a test: the token holder)."""
    caller = request.scope.get(CALLER_KEY)
    return caller if isinstance(caller, Caller) else Caller(TOKEN_HOLDER)


async def _read_body(request: Request, limit: int) -> bytes | None:
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)
