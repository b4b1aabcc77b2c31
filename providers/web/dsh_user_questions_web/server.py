"""The page server: uvicorn serving an ASGI app inside the caller's event loop, bounded.

`start_server` binds nothing itself: it serves a listening socket the caller made (see
`bind_socket`), so the caller knows the port before anything is served. The server's
connections are counted (`Limits.max_connections`, eviction of the oldest connection without a
request in progress) and each must send a whole request head within `Limits.header_timeout`.
Whenever serving ends (a clean `RunningServer.stop`, or the task cancelled because its event
loop is shutting down), the listening socket and every connection are closed.

Importing this module loads uvicorn; the provider imports it only when a server first starts.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import socket
from collections.abc import Callable, Generator
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from ._limits import Limits

__all__ = ["ConnectionTable", "RunningServer", "bind_socket", "start_server"]


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``/``port`` (``0``: a free port), not inheritable."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        # Python makes sockets non-inheritable already; said again because a child process
        # holding the port would keep it answering after the server is gone.
        sock.set_inheritable(False)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


class ConnectionTable:
    """The server's open connections: idle ones (oldest first) and busy ones.

    A connection is busy from a complete request head until its response is complete; an
    event stream is busy for its whole life. Room for a newcomer is made by closing the oldest
    idle connection that never showed the token, and only when there is none the oldest idle
    one that did, only when no other is left; connections opened in the last half second are
    spared (up to twice `Limits.max_connections`), so a burst of newcomers cannot push out a
    page's request still on its way. `drop` closes the connection of a request, for
    the app to shed a page that stopped reading.
    """

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._idle: collections.OrderedDict[Any, asyncio.TimerHandle] = collections.OrderedDict()
        self._busy: set[Any] = set()
        self._by_client: dict[object, Any] = {}
        self._trusted: set[Any] = set()
        self._opened: dict[Any, float] = {}

    def __len__(self) -> int:
        return len(self._idle) + len(self._busy)

    def opened(self, conn: Any) -> None:
        self._by_client[conn.client] = conn
        now = asyncio.get_running_loop().time()
        self._opened[conn] = now
        self._make_idle(conn)
        if len(self) <= self._limits.max_connections:
            return
        # Room is made by closing the oldest idle connection that never showed the token and
        # had its grace to send a request. Younger ones are spared up to twice the limit (one
        # may be a page's request still on its way, behind a burst of newcomers); beyond it the
        # oldest idle one without the token goes, and one that showed it only when no other is
        # left. Taken off the table at once, so the next newcomer picks another one even
        # before this one's connection_lost runs.
        settled = now - _GRACE
        untrusted = [c for c in self._idle if c not in self._trusted]
        victim = next((c for c in untrusted if self._opened[c] <= settled), None)
        if victim is None:
            if len(self) <= 2 * self._limits.max_connections:
                return
            victim = untrusted[0] if untrusted else next(iter(self._idle))
        self._idle.pop(victim).cancel()
        _close(victim)

    def lost(self, conn: Any) -> None:
        timer = self._idle.pop(conn, None)
        if timer is not None:
            timer.cancel()
        self._busy.discard(conn)
        self._trusted.discard(conn)
        self._opened.pop(conn, None)
        client = conn.client
        if self._by_client.get(client) is conn:
            del self._by_client[client]

    def busy(self, conn: Any) -> None:
        timer = self._idle.pop(conn, None)
        if timer is not None:
            timer.cancel()
            self._busy.add(conn)

    def idle(self, conn: Any) -> None:
        if conn in self._busy:
            self._busy.discard(conn)
            self._make_idle(conn)

    def trust(self, client: object) -> None:
        """The request of ``client`` showed the token: evict its connection only after others."""
        conn = self._by_client.get(client)
        if conn is not None:
            self._trusted.add(conn)

    def drop(self, client: object) -> None:
        """Close the connection of the request whose ASGI ``scope["client"]`` is ``client``."""
        conn = self._by_client.get(client)
        if conn is not None:
            # Abort, not close: a page that reads nothing would never take the rest.
            conn.transport.abort()

    def close_all(self) -> None:
        for conn in [*self._idle, *self._busy]:
            _close(conn)

    def _make_idle(self, conn: Any) -> None:
        loop = asyncio.get_running_loop()
        self._idle[conn] = loop.call_later(self._limits.header_timeout, _close, conn)


# Seconds a new connection has to send its request before it may be closed to make room.
_GRACE = 0.5


def _close(conn: Any) -> None:
    transport = conn.transport
    if not transport.is_closing():
        transport.close()


def _protocol(table: ConnectionTable) -> type[asyncio.Protocol]:
    class _Counted(H11Protocol):
        # uvicorn's h11 protocol, told to the table at each change of state.

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            table.opened(self)

        def connection_lost(self, exc: Exception | None) -> None:
            table.lost(self)
            super().connection_lost(exc)

        def handle_events(self) -> None:
            super().handle_events()
            if self.cycle is not None and not self.cycle.response_complete:
                table.busy(self)

        def on_response_complete(self) -> None:
            table.idle(self)
            super().on_response_complete()

    return _Counted


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


class RunningServer:
    """A server started by `start_server`; `stop` ends it, `task` is its serving task."""

    def __init__(
        self,
        server: _EmbeddedServer,
        task: asyncio.Task[None],
        table: ConnectionTable,
        port: int,
    ) -> None:
        self._server = server
        self.task = task
        self.connections = table
        self.port = port

    @property
    def running(self) -> bool:
        """Whether it still serves."""
        return not self.task.done()

    async def stop(self) -> None:
        """Stop serving and wait until the socket and every connection are closed."""
        self._server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


async def start_server(
    app: Callable[..., Any],
    sock: socket.socket,
    limits: Limits,
    *,
    table: ConnectionTable | None = None,
    on_end: Callable[[], None] | None = None,
    name: str = "dsh-user-questions-web",
) -> RunningServer:
    """Serve ``app`` on the listening ``sock`` in the running loop; return once it accepts.

    The socket belongs to the server from here on: it is closed when serving ends, however
    it ends (then ``on_end`` runs). Pass the ``table`` the app was given (see
    `dsh_user_questions_web.app.create_app`) so the app can shed slow pages.
    """
    loop = asyncio.get_running_loop()
    if table is None:
        table = ConnectionTable(limits)
    config = uvicorn.Config(
        app,
        http=_protocol(table),
        lifespan="off",
        ws="none",
        log_config=None,
        log_level="warning",
        access_log=False,
        server_header=False,
        date_header=False,
        timeout_keep_alive=max(1, int(limits.header_timeout)),
        timeout_graceful_shutdown=2,
        h11_max_incomplete_event_size=16 * 1024,
    )
    server = _EmbeddedServer(config)

    async def serve() -> None:
        try:
            await server.serve(sockets=[sock])
        finally:
            # Reached on a clean stop and when the loop ends with the server still serving
            # (asyncio.run cancels the task): nothing may outlive the loop.
            for listening in getattr(server, "servers", []):
                listening.close()
            table.close_all()
            sock.close()
            if on_end is not None:
                on_end()

    task = loop.create_task(serve(), name=name)
    ready = loop.create_task(server.ready.wait())
    try:
        await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        ready.cancel()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        raise
    if not ready.done():
        ready.cancel()
        task.result()  # raises why the server could not start
        raise RuntimeError("the web server stopped while starting")
    return RunningServer(server, task, table, sock.getsockname()[1])
