"""The MCP server behind ``dsh-ask mcp``: the user-questions tools over stdio or Streamable HTTP.

Two tools: ``ask_user_question`` (the model-facing tool of `dsh_user_questions.tool`, same
schema, same results) and ``review_plan`` (plan review: approve, keep planning, or talk
instead). A successful call's result is the JSON text and the same value as
``structuredContent``, which the tool's ``outputSchema`` (`ANSWER_SCHEMA`,
`VERDICT_SCHEMA`) describes; a failed call is the ``Error: ...`` text with ``isError``.
Each call asks through ``ctx.user_questions``; a request the client cancels
(``notifications/cancelled``) cancels the pending ask, and with it the provider's question.
Over Streamable HTTP (`serve_http`), so does a call whose HTTP request is over before its
answer (the client closed the stream, went away, or its session ended): there is no event
store, so no client could ever receive that answer.
A question marked ``secret`` is refused (``NOT_INTERACTIVE``): a tool result goes into the
model's context, so there is nowhere to keep the answer out of it.

While the human has not answered, a call whose client gave a progress token gets a
``notifications/progress`` after a second, then every `PROGRESS_INTERVAL` seconds, so a
client that resets its request timeout on progress (the TypeScript SDK's
``resetTimeoutOnProgress``) keeps waiting.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import socket
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Final, TypeVar

import anyio
import anyio.abc
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import __version__, tool
from ..errors import HarnessError, UserQuestionError
from ..plan_review import review_plan

__all__ = [
    "ANSWER_SCHEMA",
    "HTTP_PATH",
    "PROGRESS_INTERVAL",
    "PROGRESS_INTERVAL_ENV",
    "REVIEW_PLAN",
    "SERVER_NAME",
    "VERDICT_SCHEMA",
    "build_server",
    "serve_http",
    "serve_stdio",
]

SERVER_NAME: Final = "dsh-user-questions"
REVIEW_PLAN: Final = "review_plan"
PROGRESS_INTERVAL: Final = 10.0
"""Seconds between two progress notifications while a human has not answered."""
FIRST_PROGRESS: Final = 1.0
"""Seconds before the first progress notification (or the interval, when that is shorter)."""
PROGRESS_INTERVAL_ENV: Final = "DSH_ASK_MCP_PROGRESS_INTERVAL"
"""Environment variable `serve_stdio` and `serve_http` read the interval from (seconds)."""
HTTP_PATH: Final = "/mcp"
"""The path `serve_http` serves the MCP endpoint at."""

ANSWER_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "description": "The user's answer: one item per answered question (a skipped one may be"
    " left out, or kept with selected []).",
    "required": ["answers"],
    "additionalProperties": False,
    "properties": {
        "answers": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "selected"],
                "additionalProperties": False,
                "properties": {
                    "id": {"type": "string", "description": "The question's id."},
                    "selected": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "The labels of the options picked.",
                    },
                    "custom": {
                        "type": "string",
                        "description": "The user's own words (Other), when given.",
                    },
                },
            },
        }
    },
}
"""The ``outputSchema`` of ``ask_user_question``: the answer's wire form."""

VERDICT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["decision"],
    "additionalProperties": False,
    "properties": {
        "decision": {"type": "string", "enum": ["approved", "keep-planning", "talk-instead"]},
        "feedback": {"type": "string", "description": "The user's own words, when given."},
    },
}
"""The ``outputSchema`` of ``review_plan``: the decision, and any feedback."""

_REVIEW_PLAN_DESCRIPTION = """\
Ask the user to review your plan before you carry it out, and wait for the verdict. The plan is \
markdown whose first line is a level-1 heading ("# Title").

The result is JSON: {"decision":"approved"} means carry the plan out; \
{"decision":"keep-planning","feedback":"..."} means stay in planning and revise it (feedback, \
when present, is the user's own words); {"decision":"talk-instead"} means the user closed the \
review to talk: stop and wait for their next message."""

_REVIEW_PLAN_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["plan"],
    "additionalProperties": False,
    "properties": {
        "plan": {
            "type": "string",
            "description": "The plan as markdown; its first line is a level-1 heading.",
            "minLength": 1,
        }
    },
}


def _tools() -> list[types.Tool]:
    return [
        types.Tool.model_validate({**tool.mcp_tool(), "outputSchema": ANSWER_SCHEMA}),
        types.Tool(
            name=REVIEW_PLAN,
            description=_REVIEW_PLAN_DESCRIPTION,
            input_schema=_REVIEW_PLAN_SCHEMA,
            output_schema=VERDICT_SCHEMA,
        ),
    ]


def _text(content: str, *, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=content)], is_error=is_error)


def _structured(value: dict[str, Any]) -> types.CallToolResult:
    """A successful result: ``value`` as compact JSON text and as ``structuredContent``."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=value)


async def _ask(ctx: Any, arguments: dict[str, Any]) -> types.CallToolResult:
    secret = _secret_question(arguments)
    if secret is not None:  # a tool result goes to the model: nowhere to keep a secret out
        err = UserQuestionError.not_interactive(
            "an MCP tool result goes into the model's context, so dsh-ask mcp cannot take the"
            f" secret answer of question {json.dumps(secret, ensure_ascii=False)}"
        )
        return _text(tool.ToolResult.from_error(err).content, is_error=True)
    result = await tool.run(ctx, arguments)
    if result.is_error:
        return _text(result.content, is_error=True)
    # The text is the tool's own answer JSON; the structured value is that same JSON, read back.
    return types.CallToolResult(
        content=[types.TextContent(text=result.content)],
        structured_content=json.loads(result.content),
    )


def _secret_question(arguments: dict[str, Any]) -> str | None:
    """The id of the first question the arguments mark ``secret: true``, if any."""
    questions = arguments.get("questions")
    for question in questions if isinstance(questions, list) else ():
        if isinstance(question, dict) and question.get("secret") is True:
            return str(question.get("id", ""))
    return None


async def _review(ctx: Any, arguments: dict[str, Any]) -> types.CallToolResult:
    plan = arguments.get("plan")
    # Worded like the tool's own problems: the path, then what is wrong with it.
    problems = []
    if "plan" not in arguments:
        problems.append("plan: is required")
    elif not isinstance(plan, str):
        problems.append("plan: must be a string")
    problems.extend(
        f"{_shown(name)}: unknown property; allowed: plan" for name in arguments if name != "plan"
    )
    if problems or not isinstance(plan, str):
        return _text("Error: invalid arguments: " + "; ".join(problems), is_error=True)
    service = ctx.get("user_questions")
    try:
        if service is None:
            raise UserQuestionError.no_provider()
        outcome = await review_plan(service, plan)
    except ValueError as err:  # not a plan: no level-1 heading first
        return _text(f"Error: invalid arguments: plan: {err}", is_error=True)
    except HarnessError as err:
        return _text(tool.ToolResult.from_error(err).content, is_error=True)
    verdict: dict[str, str] = {"decision": outcome.decision.value}
    if outcome.feedback is not None:
        verdict["feedback"] = outcome.feedback
    return _structured(verdict)


def _shown(name: str) -> str:
    """A property name the model made up, safe to echo: plain, or JSON-quoted and cut short."""
    if name.isidentifier() and name.isascii() and len(name) <= 64:
        return name
    return json.dumps(name[:40] + ("..." if len(name) > 40 else ""))


_T = TypeVar("_T")

_log = logging.getLogger("dsh_user_questions.mcp")
_EXCHANGE: Final = "dsh_user_questions.mcp.exchange"
"""The key, in an HTTP request's ASGI ``state``, of its `_Exchange`."""


class _Exchange:
    """One POST's HTTP exchange: over once the client disconnects or the response ends.

    The tool calls waiting on it are cancelled when it is over (their answer could no longer
    reach the client); a call that starts after that is cancelled at once.
    """

    def __init__(self) -> None:
        self.over = False
        self._waiting: set[anyio.CancelScope] = set()

    def end(self) -> None:
        self.over = True
        for scope in self._waiting:
            scope.cancel()

    @contextlib.contextmanager
    def cancels(self, scope: anyio.CancelScope) -> Iterator[None]:
        """Cancel ``scope`` when the exchange is over, while in this block."""
        if self.over:
            scope.cancel()
        self._waiting.add(scope)
        try:
            yield
        finally:
            self._waiting.discard(scope)


class _WatchRequests:
    """ASGI middleware: each POST gets an `_Exchange`, ended once its HTTP exchange is over.

    Over when the client disconnects (the server hears ``http.disconnect``) or the response
    ends, whichever comes first. A tool call's handler finds it through the request the SDK
    hands it (``rctx.request``, a Starlette ``Request`` on this ASGI scope).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        exchange = _Exchange()
        scope.setdefault("state", {})[_EXCHANGE] = exchange

        async def watched() -> Message:
            message = await receive()
            if message["type"] == "http.disconnect":
                exchange.end()
            return message

        try:
            await self.app(scope, watched, send)
        finally:
            exchange.end()


def _exchange_of(rctx: Any) -> _Exchange | None:
    """The `_Exchange` `_WatchRequests` gave this call's HTTP request; ``None`` off HTTP."""
    scope = getattr(getattr(rctx, "request", None), "scope", None)
    state = scope.get("state") if isinstance(scope, dict) else None
    exchange = state.get(_EXCHANGE) if isinstance(state, dict) else None
    return exchange if isinstance(exchange, _Exchange) else None


async def _while_connected(
    rctx: Any, work: Callable[[], Awaitable[types.CallToolResult]]
) -> types.CallToolResult:
    """Await ``work()`` unless the call's HTTP exchange is over first: then cancel it.

    Cancelling the work cancels the pending ask, exactly as ``notifications/cancelled`` does
    (the SDK cancels the handler then): the provider withdraws the question and its receipt
    is ``False``, so no surface tells the human "accepted" for an answer nobody receives.
    """
    exchange = _exchange_of(rctx)
    if exchange is None:
        return await work()
    with anyio.CancelScope() as scope, exchange.cancels(scope):
        return await work()
    _log.warning(
        "MCP request %s: the client went away before the user answered; its question was withdrawn",
        getattr(rctx, "request_id", "?"),
    )
    # Written to a stream nobody reads any more; the SDK drops it.
    return _text("Error: the client closed the request before the user answered", is_error=True)


async def _waiting(rctx: Any, interval: float, work: Callable[[], Awaitable[_T]]) -> _T:
    """Await ``work()``, telling the client every ``interval`` seconds that the call still waits.

    Only when the request carries a progress token (the client asked for progress). The first
    notification comes after `FIRST_PROGRESS` seconds (no human answers sooner, so every real
    wait shows at once that the server is alive), then one every ``interval``; the progress is
    the seconds waited so far, which grows with every notification as the protocol requires.
    """
    meta = getattr(rctx, "meta", None) or {}
    if meta.get("progress_token") is None:
        return await work()

    async def heartbeat() -> None:
        waited, pause = 0.0, min(FIRST_PROGRESS, interval)
        while True:
            await anyio.sleep(pause)
            waited, pause = waited + pause, interval
            try:
                await rctx.session.report_progress(
                    waited, message=f"waiting for the user to answer ({waited:g} s)"
                )
            except Exception:  # the client is gone: its cancel, not ours, ends the ask
                return

    async with anyio.create_task_group() as group:
        group.start_soon(heartbeat)
        result = await work()
        group.cancel_scope.cancel()
    return result


def build_server(ctx: Any, *, progress_interval: float = PROGRESS_INTERVAL) -> Server[Any]:
    """The MCP server (the SDK's low-level `Server`) asking through ``ctx.user_questions``.

    ``ctx`` is a harness context (anything with ``get("user_questions")``). Run it on any
    transport the SDK offers; `serve_stdio` runs it on this process's stdin and stdout.
    ``progress_interval`` is the seconds between two progress notifications of a call that
    waits for the human (sent only when the client gave a progress token). The server's
    ``serverInfo`` names it ``dsh-user-questions`` with this package's version.
    """
    if not (isinstance(progress_interval, (int, float)) and 0 < progress_interval < math.inf):
        raise ValueError(f"progress_interval must be a positive number, not {progress_interval!r}")
    tools = _tools()

    async def list_tools(
        _rctx: Any, _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(_rctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        if params.name == tool.NAME:
            return await _while_connected(
                _rctx, lambda: _waiting(_rctx, progress_interval, lambda: _ask(ctx, arguments))
            )
        if params.name == REVIEW_PLAN:
            return await _while_connected(
                _rctx,
                lambda: _waiting(_rctx, progress_interval, lambda: _review(ctx, arguments)),
            )
        raise MCPError(
            types.INVALID_PARAMS,
            f"unknown tool {params.name!r}; this server has {tool.NAME} and {REVIEW_PLAN}",
        )

    return Server(
        SERVER_NAME, version=__version__, on_list_tools=list_tools, on_call_tool=call_tool
    )


def _interval_from_environment() -> float:
    text = os.environ.get(PROGRESS_INTERVAL_ENV, "").strip()
    if not text:
        return PROGRESS_INTERVAL
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise ValueError(
            f"{PROGRESS_INTERVAL_ENV} must be a positive number of seconds, not {text!r}"
        )
    return value


async def serve_stdio(ctx: Any, *, progress_interval: float | None = None) -> None:
    """Serve `build_server` over stdin and stdout until the client closes the connection.

    The protocol owns stdin and stdout, so while serving, a provider that talks to the terminal
    finds it on file descriptors 0 and 1: they point at the controlling terminal
    (``/dev/tty``) when there is one, and otherwise at the null device and stderr.
    ``progress_interval`` defaults to ``$DSH_ASK_MCP_PROGRESS_INTERVAL``, else 10 seconds.
    """
    interval = _interval_from_environment() if progress_interval is None else progress_interval
    server = build_server(ctx, progress_interval=interval)
    async with stdio_server() as (read_stream, write_stream):
        with _standard_streams_on_terminal():
            await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(
    ctx: Any,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    progress_interval: float | None = None,
    task_status: anyio.abc.TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve `build_server` over MCP Streamable HTTP at ``http://HOST:PORT/mcp`` until cancelled.

    The SDK's own Streamable HTTP app (sessions, SSE streams, ``DELETE`` to end a session),
    run by uvicorn on asyncio. A call whose HTTP request is over before the human answered
    (the client closed its stream or went away, its session ended) is cancelled at once, as
    ``notifications/cancelled`` cancels it: the provider withdraws the question. There is no
    event store, so a client cannot resume a call's stream; it calls again.

    Bound to a loopback address (the default), the SDK's DNS rebinding protection admits only
    loopback ``Host`` and ``Origin`` headers; bound to any other address, anyone who reaches the
    port can ask the human, so put it behind what guards your network. Port ``0`` picks a free port.
    Started with ``task_group.start``, the start value is the endpoint's URL once the socket
    listens. Raises `OSError` when the address cannot be bound. ``progress_interval`` is as for
    `serve_stdio`.
    """
    import uvicorn  # the SDK's dependency for its HTTP transports; loaded only here

    interval = _interval_from_environment() if progress_interval is None else progress_interval
    server = build_server(ctx, progress_interval=interval)
    app = _WatchRequests(server.streamable_http_app(host=host, streamable_http_path=HTTP_PATH))
    sock = _listening_socket(host, port)
    bound_port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    web = uvicorn.Server(
        uvicorn.Config(app, log_config=None, log_level="warning", lifespan="on", access_log=False)
    )
    try:
        task_status.started(f"http://{shown}:{bound_port}{HTTP_PATH}")
        try:
            await web.serve(sockets=[sock])
        except anyio.get_cancelled_exc_class():
            web.should_exit = True
            with anyio.CancelScope(shield=True):  # close the sessions, then end the lifespan
                if web.started:
                    await web.shutdown(sockets=[sock])
            raise
    finally:
        sock.close()


def _listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket listening on ``host`` and ``port`` (IPv4 or IPv6, as ``host`` resolves)."""
    family, kind, proto, _name, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


@contextlib.contextmanager
def _standard_streams_on_terminal() -> Iterator[None]:
    """Point fds 0 and 1 at ``/dev/tty`` while the protocol runs on the SDK's private copies.

    Only when the SDK moved the protocol off fds 0 and 1 (it points them at the null device
    and stderr): were they still the protocol's pipes, writing a prompt there would corrupt it.
    """
    if not _diverted():
        yield
        return
    try:
        tty = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:  # no controlling terminal: providers read EOF and write to stderr
        yield
        return
    saved = {0: os.dup(0), 1: os.dup(1)}
    try:
        for fd in saved:
            os.dup2(tty, fd)
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        for fd, copy in saved.items():  # back to the null device and stderr, as the SDK left them
            with contextlib.suppress(OSError):
                os.dup2(copy, fd)
        for fd in (*saved.values(), tty):
            with contextlib.suppress(OSError):
                os.close(fd)


def _diverted() -> bool:
    try:
        stdin, null = os.fstat(0), os.stat(os.devnull)
        stdout, stderr = os.fstat(1), os.fstat(2)
    except OSError:
        return False
    return os.path.samestat(stdin, null) and os.path.samestat(stdout, stderr)
