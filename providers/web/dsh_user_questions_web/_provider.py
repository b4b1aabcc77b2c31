"""`WebProvider`: the user-questions provider that asks the human in a browser page."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import re
import secrets
import socket
import sys
import urllib.parse
import warnings
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

import attrs
from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest, UserQuestionError
from dsh_user_questions._identity import Caller, ProxyIdentity
from dsh_user_questions.providing import receipt

from ._limits import Limits
from ._local_board import LocalBoard, PendingAsk

if TYPE_CHECKING:
    from dsh_user_questions._link_page import LinkedQuestion
    from dsh_user_questions._notify import Notifier

    from .app import PageApp
    from .server import RunningServer

__all__ = [
    "ENV_ALLOWED_HOSTS",
    "ENV_HOST",
    "ENV_IDENTITY_HEADER",
    "ENV_PORT",
    "ENV_PUBLIC_URL",
    "ENV_TOKEN",
    "ENV_TRUSTED_PROXIES",
    "WebProvider",
    "WebProviderWarning",
]

ENV_HOST = "DSH_USER_QUESTIONS_WEB_HOST"
"""Environment variable: the address to bind (default ``127.0.0.1``)."""
ENV_PORT = "DSH_USER_QUESTIONS_WEB_PORT"
"""Environment variable: the port to bind (default ``0``, a free one)."""
ENV_ALLOWED_HOSTS = "DSH_USER_QUESTIONS_WEB_ALLOWED_HOSTS"
"""Environment variable: extra comma-separated host names the page may be reached by."""
ENV_TOKEN = "DSH_USER_QUESTIONS_WEB_TOKEN"
"""Environment variable: a fixed token (default: a new random one per provider)."""
ENV_PUBLIC_URL = "DSH_USER_QUESTIONS_WEB_PUBLIC_URL"
"""Environment variable: the address the page is reached by from elsewhere (a tunnel, a proxy),
for the answer links in notifications (default: the local address)."""
ENV_IDENTITY_HEADER = "DSH_USER_QUESTIONS_WEB_IDENTITY_HEADER"
"""Environment variable: the header a logging-in reverse proxy names the person in (e.g.
``X-Forwarded-User``), believed only from `ENV_TRUSTED_PROXIES` (default: none, the page knows
no people and records ``token``)."""
ENV_TRUSTED_PROXIES = "DSH_USER_QUESTIONS_WEB_TRUSTED_PROXIES"
"""Environment variable: comma-separated addresses or CIDR networks of the proxies whose
`ENV_IDENTITY_HEADER` is believed (the TCP peer's address, e.g. ``127.0.0.1/32``)."""

_log = logging.getLogger(__name__)

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_STOPPED = "the web provider was stopped"
_LOOP_ENDED = "the event loop serving the page ended"
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,128}")


class WebProviderWarning(UserWarning):
    """The web provider was configured in a way that weakens its protection."""


class WebProvider:
    """Asks the human through a local web page, served from the harness's own event loop.

    The server starts on the first `ask` (or on `start`), bound to ``host`` (loopback by
    default) on ``port`` (``0``: a free one; fix it, and the ``token``, so that open tabs
    find a restarted harness). The page's `url` carries the `token` and is printed to stderr
    each time the server starts. Every open page shows every pending ask; the first valid
    answer wins, and a page is told "accepted" only when the agent got that answer. `stop`
    fails every pending ask with ``ASK_ABORTED`` and ends the pages' event streams; the server
    also stops, closing its socket, when the event loop it serves in ends.

    With a ``notifier`` (`dsh_user_questions._notify.Notifier`; `from_env` builds one from
    ``DSH_USER_QUESTIONS_NOTIFY``), each ask sends one notification when it starts waiting,
    and one reminder after ``remind`` seconds while it is still unanswered. Its link opens that
    one question only (``/q/<token>``, `dsh_user_questions._link_page`): signed with a secret of
    this provider, expiring with the question (its timeout, else after a week), never the
    page's token. The link starts with ``public_url`` (the address the server is reached by
    from elsewhere: a tunnel, a reverse proxy; its host is then allowed too), else the local
    address. A notifier that fails, hangs or is slow never fails or delays an ask.

    Register it with ``ctx.user_questions.register_provider(WebProvider())``, or install the
    distribution: its ``dsh`` entry point (`dsh_user_questions_web.plugin`) does it for you.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        allowed_hosts: Iterable[str] = (),
        limits: Limits | None = None,
        max_body_bytes: int | None = None,
        announce: bool = True,
        notifier: Notifier | None = None,
        remind: float | None = None,
        public_url: str | None = None,
        identity_header: str | None = None,
        trusted_proxies: Iterable[str] = (),
    ) -> None:
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be between 0 and 65535, got {port}")
        if token is not None and not _TOKEN.fullmatch(token):
            raise ValueError(
                f"token must be 16 to 128 letters, digits, '-' or '_' (got {len(token)} characters)"
            )
        limits = limits or Limits()
        if max_body_bytes is not None:
            limits = attrs.evolve(limits, max_body_bytes=max_body_bytes)
        self._host = host
        self._port = port
        self._extra_hosts = tuple(name.strip().lower() for name in allowed_hosts if name.strip())
        self._limits = limits
        self._announce = announce
        self._token = token or secrets.token_urlsafe(24)
        self._board = LocalBoard()
        self._server: RunningServer | None = None
        self._starting: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sock: socket.socket | None = None
        self._allowed: frozenset[str] = frozenset()
        self._bound_port: int | None = None
        self._stops = 0
        self._app: PageApp | None = None
        self._notifier = notifier
        self._remind = remind
        self._public_url = _checked_public_url(public_url)
        self._identity = ProxyIdentity.from_settings(
            identity_header,
            trusted_proxies,
            header_option="identity_header",
            proxy_option="trusted_proxies",
        )
        self._link_secret = secrets.token_bytes(32)
        self._notifying: set[asyncio.Task[None]] = set()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WebProvider:
        """A provider configured from ``DSH_USER_QUESTIONS_WEB_HOST`` / ``_PORT`` / ``_TOKEN``
        / ``_ALLOWED_HOSTS`` / ``_PUBLIC_URL`` / ``_IDENTITY_HEADER`` / ``_TRUSTED_PROXIES``
        (unset variables keep the defaults; a bad value raises `ValueError` naming its
        variable)."""
        env = os.environ if environ is None else environ
        host = env.get(ENV_HOST, "").strip() or "127.0.0.1"
        raw_port = env.get(ENV_PORT, "").strip() or "0"
        try:
            port = int(raw_port)
        except ValueError:
            raise ValueError(f"{ENV_PORT} must be a port number, got {raw_port!r}") from None
        token = env.get(ENV_TOKEN, "").strip() or None
        extra = env.get(ENV_ALLOWED_HOSTS, "").split(",")
        public_url = env.get(ENV_PUBLIC_URL, "").strip() or None
        identity_header = env.get(ENV_IDENTITY_HEADER, "").strip() or None
        trusted_proxies = env.get(ENV_TRUSTED_PROXIES, "").split(",")
        # Checked here too, so that a bad value's error names its variable.
        ProxyIdentity.from_settings(
            identity_header,
            trusted_proxies,
            header_option=ENV_IDENTITY_HEADER,
            proxy_option=ENV_TRUSTED_PROXIES,
        )
        notifier = remind = None
        if env.get("DSH_USER_QUESTIONS_NOTIFY", "").strip():
            from dsh_user_questions._notify import Notifier, remind_after

            notifier = Notifier.from_env(env)
            remind = remind_after(env)
        return cls(
            host=host,
            port=port,
            token=token,
            allowed_hosts=extra,
            notifier=notifier,
            remind=remind,
            public_url=public_url,
            identity_header=identity_header,
            trusted_proxies=trusted_proxies,
        )

    @property
    def token(self) -> str:
        """The secret every URL of this provider carries as its first path segment."""
        return self._token

    @property
    def page_count(self) -> int:
        """How many event streams are open (the tabs of one browser share one)."""
        return self._app.page_count if self._app is not None and self.running else 0

    @property
    def limits(self) -> Limits:
        """The bounds of the page server."""
        return self._limits

    @property
    def url(self) -> str | None:
        """The page's address (with the token), or ``None`` while the server is not serving."""
        if self._bound_port is None or not self.running:
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
        return self._server is not None and self._server.running

    @property
    def pending_count(self) -> int:
        """How many asks are waiting for the human."""
        return self._board.pending_count

    async def start(self) -> str:
        """Start the server in the running event loop if it is not serving yet; return `url`.

        Raises `RuntimeError` when `stop` is called before the server is up.
        """
        loop = asyncio.get_running_loop()
        self._adopt(loop)
        stops = self._stops
        if not self.running:
            starting = self._begin_start(loop)
            await asyncio.shield(starting)
        if self._stops != stops or self.url is None:
            raise RuntimeError("the web provider was stopped while starting")
        return self.url

    def _begin_start(self, loop: asyncio.AbstractEventLoop) -> asyncio.Task[None]:
        """The task starting the server: the one in progress, or a new one."""
        if self._starting is None or self._starting.done():
            starting = loop.create_task(self._serve(), name="dsh-user-questions-web start")
            stops = self._stops

            def started(task: asyncio.Task[None]) -> None:
                if self._starting is task:
                    self._starting = None
                error = None if task.cancelled() else task.exception()
                if error is not None and self._stops == stops:
                    # The asks waiting for this server learn why it is not there.
                    message = f"the web provider could not start its server: {error}"
                    self._board.fail_all(lambda: _start_failed(message, error))

            starting.add_done_callback(started)
            self._starting = starting
        return self._starting

    async def _serve(self) -> None:
        # Loaded here, not at import: loading the plugin stays as light as the core.
        from dsh_user_questions._links import public_host, public_origin, public_prefix

        from .app import create_app, under_prefix
        from .server import ConnectionTable, bind_socket, start_server

        if not _is_loopback(self._host):
            warnings.warn(
                f"the web provider binds {self._host}, not loopback: anyone who can reach it"
                " and learns the URL can answer for you",
                WebProviderWarning,
                stacklevel=2,
            )
        sock = bind_socket(self._host, self._port)
        self._sock = sock
        port = sock.getsockname()[1]
        allowed = {f"{name}:{port}" for name in _LOOPBACK_NAMES}
        if not _is_wildcard(self._host):
            allowed.add(f"[{self._host}]:{port}" if ":" in self._host else f"{self._host}:{port}")
        # A bare extra name is allowed with any port or none (a proxy may send either).
        allowed.update(self._extra_hosts)
        if self._public_url is not None:
            # Its name with any port or none; a browser only from the public URL's origin.
            allowed.update((public_host(self._public_url), public_origin(self._public_url)))
        self._allowed = frozenset(name.lower() for name in allowed)
        table = ConnectionTable(self._limits)
        app = self._app = create_app(
            self._board,
            token=self._token,
            allowed_hosts=lambda: self._allowed,
            limits=self._limits,
            connections=table,
            identity=self._identity,
        )
        served: Any = app
        if self._notifier is not None or self._public_url is not None:
            from dsh_user_questions._link_page import link_routes, with_links

            routes = link_routes(
                secret=lambda: self._link_secret,
                get=self._linked,
                answer=self._answer_linked,
                cancel=lambda ask_id: self._board.cancel(ask_id, by="link"),
                upload=lambda *file: self._board.open_upload(*file),
            )
            served = with_links(app, routes, lambda: self._allowed, self._identity)
        if self._public_url is not None:
            served = under_prefix(served, public_prefix(self._public_url))
        server = await start_server(served, sock, self._limits, table=table, on_end=self._ended)
        self._server = server
        self._bound_port = port
        if self._announce:
            print(f"dsh-user-questions-web: answer questions at {self.url}", file=sys.stderr)
            if self._public_url is not None:
                print(
                    "dsh-user-questions-web: or, from elsewhere, at"
                    f" {self._public_url}/{self._token}/",
                    file=sys.stderr,
                )

    def _ended(self) -> None:
        # The server stopped serving, cleanly or because its loop is ending: nobody can
        # answer the asks still pending any more.
        self._board.fail_all(lambda: UserQuestionError.aborted(_LOOP_ENDED))
        self._bound_port = None

    async def stop(self, reason: str | None = None) -> None:
        """Stop the server; every pending ask fails with ``ASK_ABORTED`` saying why.

        ``reason`` is appended to the error message (default: the web provider was stopped)
        and shown on the open pages, whose event streams then end. A `start` in progress is
        stopped as soon as it is up. A later `ask` starts the server again.
        """
        why = reason or _STOPPED
        self._adopt(asyncio.get_running_loop())  # a server of an ended loop is gone already
        self._stops += 1
        for task in list(self._notifying):
            task.cancel()  # reminders; a notification being sent stops waiting for its target
        self._board.fail_all(lambda: UserQuestionError.aborted(why))
        self._board.close(why)
        starting = self._starting
        if starting is not None and not starting.done():
            with contextlib.suppress(Exception):
                await asyncio.shield(starting)
        server, self._server = self._server, None
        self._bound_port = None
        if server is not None:
            await server.stop()

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

    def ask(self, request: AskUserQuestionRequest) -> asyncio.Future[AskUserQuestionAnswer]:
        """Show the request on every open page; the future is the human's answer.

        The future fails with ``ASK_CANCELLED`` when the human closes the question and with
        ``ASK_ABORTED`` when the request's signal aborts or the provider stops; cancelling it
        (or the task awaiting it) takes the question off every page. The answer is handed over
        by setting this future's result; the page hears "accepted" only once the core's receipt
        says ``ask()`` returned it to its caller.
        """
        taken = receipt(request)  # first, while the ask is in flight
        # A request the service is not asking has a receipt that is already False: then the
        # future holding the answer is all there is (the provider driven directly).
        known = None if taken.done() and taken.taken is False else taken
        loop = asyncio.get_running_loop()
        self._adopt(loop)
        signal = request.signal
        if signal is not None and signal.aborted:
            failed: asyncio.Future[AskUserQuestionAnswer] = loop.create_future()
            failed.set_exception(UserQuestionError.aborted_by(signal))
            return failed
        ask = self._board.add(request, _agent_label(request.agent), known)
        if not self.running:
            self._begin_start(loop)
        if self._notifier is not None:
            task = loop.create_task(self._notify(ask, self._notifier))
            self._notifying.add(task)
            task.add_done_callback(self._notifying.discard)
        if signal is not None:
            board, ask_id = self._board, ask.id

            def withdraw() -> None:
                board.withdraw(ask_id, UserQuestionError.aborted_by(signal))

            def on_abort() -> None:
                # May run on the aborting thread: hop onto the loop that owns the board.
                with contextlib.suppress(RuntimeError):  # that loop has closed
                    loop.call_soon_threadsafe(withdraw)

            remove = signal.add_listener(on_abort)
            ask.future.add_done_callback(lambda _: remove())
        return ask.future

    # -- notifications and one-question links ----------------------------------------------

    def link(self, ask: PendingAsk) -> str | None:
        """The one-question link of a pending ask, or ``None`` while the server is not serving."""
        from dsh_user_questions._link_page import LINK_TTL, link_url

        if self._public_url is not None:
            base = self._public_url
        elif self.url is not None:
            base = self.url.removesuffix(f"/{self._token}/")
        else:
            return None
        timeout = ask.request.timeout
        expires = ask.created_ms / 1000 + (LINK_TTL if timeout is None else timeout)
        return link_url(base, self._link_secret, ask.id, expires_at=expires)

    async def _notify(self, ask: PendingAsk, notifier: Notifier) -> None:
        """The ask's notification, then its one reminder while it is still unanswered."""
        from dsh_user_questions._notify import notification_for

        asker = _asker(ask)
        try:
            with contextlib.suppress(RuntimeError):  # stopped while starting: no link
                await self.start()
            await notifier.send(notification_for(ask.request, asker=asker, link=self.link(ask)))
            if self._remind is None or ask.future.done():
                return
            sleeping = asyncio.ensure_future(asyncio.sleep(self._remind))
            ask.future.add_done_callback(lambda _: sleeping.cancel())
            with contextlib.suppress(asyncio.CancelledError):
                await sleeping
            if not ask.future.done():
                note = notification_for(
                    ask.request, asker=asker, link=self.link(ask), reminder=True
                )
                await notifier.send(note)
        except asyncio.CancelledError:
            raise
        except Exception:
            _log.warning("notifying about question %s failed", ask.id, exc_info=True)

    async def _linked(self, ask_id: str) -> LinkedQuestion | None:
        from dsh_user_questions._link_page import LinkedQuestion

        ask = self._board.get(ask_id)
        if ask is not None:
            return LinkedQuestion(request=ask.request, asker=_asker(ask))
        outcome = self._board.outcome(ask_id)
        if outcome is None:
            return None
        return LinkedQuestion(request=None, asker="your agent", outcome=outcome)

    async def _answer_linked(
        self, ask_id: str, answer: dict[str, Any], caller: Caller
    ) -> str | None:
        taken = await self._board.submit(ask_id, answer, by="link", caller=caller)
        if taken.status == "rejected":
            raise UserQuestionError.bad_answer(*taken.problems)
        return None if taken.status == "accepted" else str(taken.outcome or "not pending")

    def _adopt(self, loop: asyncio.AbstractEventLoop) -> None:
        """Serve in ``loop``; forget a server whose loop has ended (e.g. a second asyncio.run)."""
        if self._loop is loop:
            return
        if self._loop is None:
            self._loop = loop
            return
        if self._loop is not None and not self._loop.is_closed() and self._loop.is_running():
            raise RuntimeError("the web provider is already serving in another event loop")
        if self._sock is not None:
            self._sock.close()  # already closed when that loop cancelled the server's task
        self._board.fail_all(lambda: UserQuestionError.aborted(_LOOP_ENDED))
        self._board = LocalBoard()
        self._server = None
        self._starting = None
        self._sock = None
        self._bound_port = None
        self._loop = loop


def _asker(ask: PendingAsk) -> str:
    """Who asks, as notifications and the link page name them."""
    return "your agent" if ask.agent is None else f"agent {ask.agent}"


def _checked_public_url(url: str | None) -> str | None:
    """``url`` without a trailing slash; ``ValueError`` unless it is http(s)://host[:port][/path]."""
    if url is None:
        return None
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ValueError(
            f"a public URL must be http(s)://host[:port][/path] without query or fragment,"
            f" got {url!r}"
        )
    return url.strip().rstrip("/")


def _start_failed(message: str, err: BaseException) -> RuntimeError:
    error = RuntimeError(message)
    error.__cause__ = err
    return error


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
