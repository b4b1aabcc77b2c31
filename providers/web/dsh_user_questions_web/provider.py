"""`WebProvider`: the user-questions provider that asks the human in a browser page."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import secrets
import socket
import sys
import warnings
from collections.abc import Generator, Iterable, Mapping
from types import TracebackType

import uvicorn
from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    UserQuestionError,
)

from ._app import build_app
from ._board import Board

__all__ = ["ENV_ALLOWED_HOSTS", "ENV_HOST", "ENV_PORT", "WebProvider", "WebProviderWarning"]

ENV_HOST = "DSH_USER_QUESTIONS_WEB_HOST"
"""Environment variable: the address to bind (default ``127.0.0.1``)."""
ENV_PORT = "DSH_USER_QUESTIONS_WEB_PORT"
"""Environment variable: the port to bind (default ``0``, a free port)."""
ENV_ALLOWED_HOSTS = "DSH_USER_QUESTIONS_WEB_ALLOWED_HOSTS"
"""Environment variable: extra comma-separated host names the page may be reached by."""

DEFAULT_MAX_BODY_BYTES = 256 * 1024
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_STOPPED = "the web provider was stopped"


class WebProviderWarning(UserWarning):
    """The web provider was configured in a way that weakens its protection."""


class _EmbeddedServer(uvicorn.Server):
    """A uvicorn server that lives inside someone else's event loop and process."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        # The harness owns SIGINT and SIGTERM; uvicorn must not take them over.
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        self.ready.set()


class WebProvider:
    """Asks the human through a local web page, served from the harness's own event loop.

    The server starts on the first `ask` (or on `start`), bound to ``host`` (loopback by
    default) on ``port`` (``0``: a free one). The page's `url` carries a random `token` and is
    printed to stderr when the server starts. Every open page shows every pending ask; the first
    valid answer wins. `stop` fails every pending ask with ``ASK_ABORTED``.

    Register it with ``ctx.user_questions.register_provider(WebProvider())``, or install the
    distribution: its ``dsh`` entry point (`dsh_user_questions_web.plugin`) does it for you.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        allowed_hosts: Iterable[str] = (),
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        announce: bool = True,
    ) -> None:
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be between 0 and 65535, got {port}")
        if max_body_bytes < 1024:
            raise ValueError(f"max_body_bytes must be at least 1024, got {max_body_bytes}")
        self._host = host
        self._port = port
        self._extra_hosts = tuple(name.strip().lower() for name in allowed_hosts if name.strip())
        self._max_body_bytes = max_body_bytes
        self._announce = announce
        self._token = secrets.token_urlsafe(24)
        self._board = Board()
        self._server: _EmbeddedServer | None = None
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._bound_port: int | None = None
        self._allowed: frozenset[str] = frozenset()
        self._starting: asyncio.Future[None] | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WebProvider:
        """A provider configured from ``DSH_USER_QUESTIONS_WEB_HOST`` / ``_PORT`` /
        ``_ALLOWED_HOSTS`` (unset variables keep the defaults)."""
        env = os.environ if environ is None else environ
        host = env.get(ENV_HOST, "").strip() or "127.0.0.1"
        raw_port = env.get(ENV_PORT, "").strip() or "0"
        try:
            port = int(raw_port)
        except ValueError:
            raise ValueError(f"{ENV_PORT} must be a port number, got {raw_port!r}") from None
        extra = env.get(ENV_ALLOWED_HOSTS, "").split(",")
        return cls(host=host, port=port, allowed_hosts=extra)

    @property
    def token(self) -> str:
        """The secret every URL of this provider carries as its first path segment."""
        return self._token

    @property
    def url(self) -> str | None:
        """The page's address (with the token), or ``None`` until the server has started."""
        if self._bound_port is None:
            return None
        host = self._host
        if _is_wildcard(host):
            host = "127.0.0.1"
        elif ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self._bound_port}/{self._token}/"

    @property
    def running(self) -> bool:
        """Whether the server is serving."""
        return self._task is not None and not self._task.done()

    @property
    def pending_count(self) -> int:
        """How many asks are waiting for the human."""
        return len(self._board.pending())

    async def start(self) -> str:
        """Start the server in the running event loop if it is not serving yet; return `url`."""
        loop = asyncio.get_running_loop()
        if self._loop is not None and self._loop is not loop:
            if not self._loop.is_closed() and self._loop.is_running():
                raise RuntimeError("the web provider is already serving in another event loop")
            # The loop it served in has ended (e.g. a second asyncio.run): start afresh here.
            self._reset()
        while self._starting is not None:
            await asyncio.shield(self._starting)
        if self.running:
            assert self.url is not None
            return self.url
        self._starting = loop.create_future()
        try:
            await self._serve(loop)
        finally:
            self._starting.set_result(None)
            self._starting = None
        assert self.url is not None
        if self._announce:
            print(f"dsh-user-questions-web: answer questions at {self.url}", file=sys.stderr)
        return self.url

    async def _serve(self, loop: asyncio.AbstractEventLoop) -> None:
        if not _is_loopback(self._host):
            warnings.warn(
                f"the web provider binds {self._host}, not loopback: anyone who can reach it"
                " and learns the URL can answer for you",
                WebProviderWarning,
                stacklevel=4,
            )
        sock = _bind(self._host, self._port)
        port = sock.getsockname()[1]
        allowed = {f"{name}:{port}" for name in _LOOPBACK_NAMES}
        if not _is_wildcard(self._host):
            allowed.add(f"[{self._host}]:{port}" if ":" in self._host else f"{self._host}:{port}")
        for name in self._extra_hosts:
            allowed.add(name if _has_port(name) else f"{name}:{port}")
        self._allowed = frozenset(name.lower() for name in allowed)
        app = build_app(
            self._board,
            token=self._token,
            allowed_hosts=lambda: self._allowed,
            max_body_bytes=self._max_body_bytes,
        )
        config = uvicorn.Config(
            app,
            lifespan="off",
            ws="none",
            log_config=None,
            log_level="warning",
            access_log=False,
            server_header=False,
            timeout_graceful_shutdown=2,
        )
        server = _EmbeddedServer(config)
        task = loop.create_task(server.serve(sockets=[sock]), name="dsh-user-questions-web")
        ready = loop.create_task(server.ready.wait())
        await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():
            ready.cancel()
            sock.close()
            task.result()  # raises why the server could not start
            raise RuntimeError("the web server stopped while starting")
        self._server, self._task, self._loop = server, task, loop
        self._bound_port = port

    async def stop(self, reason: str | None = None) -> None:
        """Stop the server; every pending ask fails with ``ASK_ABORTED`` saying why.

        ``reason`` is appended to the error message (default: the web provider was stopped)
        and shown on the open pages. A later `ask` starts the server again.
        """
        why = reason or _STOPPED
        self._board.fail_all(lambda: UserQuestionError.aborted(why))
        self._board.close_streams(why)
        server, task = self._server, self._task
        self._server = self._task = None
        self._bound_port = None
        if server is not None and task is not None:
            server.should_exit = True
            await task

    async def __aenter__(self) -> WebProvider:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        """Show the request on every open page and wait for the human's answer.

        Raises ``ASK_CANCELLED`` when the human closes the question and ``ASK_ABORTED`` when the
        request's signal aborts or the provider stops; both take the question off every page, as
        does cancelling the awaiting task.
        """
        signal = request.signal
        if signal is not None and signal.aborted:
            raise UserQuestionError.aborted() from _cause(signal.reason)
        await self.start()
        ask = self._board.add(request, _agent_label(request.agent))
        loop = asyncio.get_running_loop()
        remove = None
        if signal is not None:

            def withdraw() -> None:
                error = UserQuestionError.aborted()
                error.__cause__ = _cause(signal.reason)
                self._board.resolve(ask.id, "withdrawn", error)

            def on_abort() -> None:
                # May run on the aborting thread: hop onto the loop that owns the board.
                with contextlib.suppress(RuntimeError):  # that loop has closed
                    loop.call_soon_threadsafe(withdraw)

            remove = signal.add_listener(on_abort)
            if signal.aborted:
                withdraw()
        try:
            return await ask.future
        except asyncio.CancelledError:
            self._board.resolve(ask.id, "withdrawn")
            raise
        finally:
            if remove is not None:
                remove()

    def _reset(self) -> None:
        self._board = Board()
        self._server = self._task = None
        self._loop = None
        self._bound_port = None
        self._starting = None


def _cause(reason: object) -> BaseException | None:
    return reason if isinstance(reason, BaseException) else None


def _agent_label(agent: object) -> str | None:
    if agent is None:
        return None
    agent_id = getattr(agent, "id", None)
    label = str(agent_id if agent_id is not None else agent)
    return label if len(label) <= 120 else label[:119] + "\u2026"


def _is_wildcard(host: str) -> bool:
    return host in ("", "0.0.0.0", "::")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _has_port(name: str) -> bool:
    tail = name.rsplit("]", 1)[-1]
    return ":" in tail


def _bind(host: str, port: int) -> socket.socket:
    family, kind, proto, _, address = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        sock.set_inheritable(True)
    except OSError:
        sock.close()
        raise
    return sock
