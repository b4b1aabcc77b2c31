"""``dsh-inbox serve``: the web provider's page over the store, for every harness using it.

One server answers the questions of all the harnesses on the store: one person, or a team on
a shared PostgreSQL, answers every agent's questions in one place. The URL is stable across
restarts (a fixed port, and a token kept in the state directory), and since everything lives
in the store a restart loses nothing: the pages reconnect and read the pending questions again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import signal
import sys
import urllib.parse
from collections.abc import Callable, Collection
from typing import Any

from dsh_user_questions._identity import ProxyIdentity

from ._notices import LINKS_RENEW_EVERY, Notices
from ._record import State
from ._retention import retention_seconds
from ._store import Inbox
from ._uploads import open_upload, resolve_uploads
from ._url import default_sqlite_path

__all__ = ["DEFAULT_PORT", "ENV_TOKEN", "serve", "token_from"]

ENV_TOKEN = "DSH_USER_QUESTIONS_INBOX_TOKEN"
DEFAULT_PORT = 8765
_PRUNE_EVERY = 3600.0  # seconds between two prunes of records past the retention
_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
_log = logging.getLogger(__name__)


def token_from(given: str | None) -> str:
    """``--token``, else ``DSH_USER_QUESTIONS_INBOX_TOKEN``, else the one kept on this machine.

    The kept token (``serve-token`` beside the default SQLite file, mode 0600, in a folder made
    0700 when this makes it) is made on first use, so the page's URL survives a restart of the
    server.
    """
    token = (given or os.environ.get(ENV_TOKEN, "")).strip()
    if token:
        return token
    path = default_sqlite_path().parent / "serve-token"
    with contextlib.suppress(FileNotFoundError):
        kept = path.read_text().strip()
        if kept:
            return kept
    if not path.parent.is_dir():  # made here: readable by this user only, like the store's
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.parent.chmod(0o700)
    token = secrets.token_urlsafe(18)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(token + "\n")
    return token


def _hosts(
    host: str, port: int, extra: Collection[str], public_url: str | None = None
) -> frozenset[str]:
    """The Host values served: the bound names with the port, and by name with any port or
    none the ``--allowed-host`` names and the public URL's host, whose browser requests come
    from the public URL's origin only (see `dsh_user_questions._links.host_allowed` and
    `origin_allowed`)."""
    from dsh_user_questions._links import public_host, public_origin

    names = {*(_LOOPBACK if host in ("127.0.0.1", "localhost", "::1") else ())}
    names.add(f"[{host}]" if ":" in host else host)
    hosts = {f"{name.lower()}:{port}" for name in names if name}
    hosts.update(name.strip().lower() for name in extra if name.strip())
    if public_url is not None:
        hosts.update((public_host(public_url), public_origin(public_url)))
    return frozenset(hosts)


def serve(
    inbox: Inbox,
    *,
    host: str,
    port: int,
    token: str | None,
    allowed_hosts: Collection[str] = (),
    surface: str = "web",
    public_url: str | None = None,
    identity_header: str | None = None,
    trusted_proxies: Collection[str] = (),
) -> int:
    """Serve until SIGINT or SIGTERM; the exit status.

    With ``identity_header`` and ``trusted_proxies`` (``--identity-header``,
    ``--trusted-proxy``), the page and its links answer only people a trusted proxy names in
    that header (`dsh_user_questions._identity.ProxyIdentity`), and record them as who
    answered; without them, whoever holds the token answers as ``token``.

    With ``public_url`` (the address people reach this server by, e.g. through a reverse
    proxy), the server publishes it with a link secret in the store, so every notification
    about a question on this store carries a one-question answer link ``<public_url>/q/<token>``
    (see ``_link_page``); those links need no page token and open that question only.
    """
    try:
        import dsh_user_questions_web  # noqa: F401 (checked here for a clear message)
    except ImportError:
        print(
            "dsh-inbox: serve needs the web page: install dsh-user-questions-inbox[serve]",
            file=sys.stderr,
        )
        return 1
    try:
        identity = ProxyIdentity.from_settings(identity_header, trusted_proxies)
    except ValueError as err:
        print(f"dsh-inbox: {err}", file=sys.stderr)
        return 2
    if public_url is not None:
        parts = urllib.parse.urlsplit(public_url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
            print(
                "dsh-inbox: --public-url must be an http(s) URL without a query,"
                f" got {public_url!r}",
                file=sys.stderr,
            )
            return 2
        public_url = public_url.rstrip("/")
    return asyncio.run(
        _serve(inbox, host, port, token_from(token), allowed_hosts, surface, public_url, identity)
    )


async def _serve(
    inbox: Inbox,
    host: str,
    port: int,
    token: str,
    allowed_hosts: Collection[str],
    surface: str,
    public_url: str | None = None,
    identity: ProxyIdentity | None = None,
) -> int:
    from dsh_user_questions_web import Limits
    from dsh_user_questions_web.app import create_app
    from dsh_user_questions_web.server import ConnectionTable, bind_socket, start_server

    from ._board import InboxBoard

    loop = asyncio.get_running_loop()
    board = InboxBoard(inbox, surface=surface)
    await board.start()
    try:
        sock = bind_socket(host, port)
    except OSError as err:
        print(f"dsh-inbox: cannot listen on {host}:{port}: {err}", file=sys.stderr)
        await board.close("the server could not start")
        return 1
    bound = sock.getsockname()[1]
    hosts = _hosts(host, bound, allowed_hosts, public_url)
    limits = Limits()
    table = ConnectionTable(limits)
    app = create_app(
        board,
        token=token,
        allowed_hosts=lambda: hosts,
        limits=limits,
        connections=table,
        server_name="the inbox server",
        identity=identity,
    )
    notices = None
    if public_url is not None:
        from dsh_user_questions._links import public_prefix
        from dsh_user_questions_web.app import under_prefix

        notices = Notices(inbox)
        app = _with_links(app, inbox, notices, public_url, lambda: hosts, surface, identity)
        app = under_prefix(app, public_prefix(public_url))
    server = await start_server(app, sock, limits, table=table, name="dsh-inbox-serve")
    # Before the address is printed: whoever read it may stop the server at once, cleanly.
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    shown = f"[{shown}]" if ":" in shown else shown
    print(f"dsh-inbox: serving http://{shown}:{bound}/{token}/", flush=True)
    if public_url is not None:
        print(f"dsh-inbox: answer links in notifications open {public_url}/q/...", flush=True)
        print(f"dsh-inbox: the page is also at {public_url}/{token}/", flush=True)
    pruning = loop.create_task(_prune_now_and_then(inbox))
    keeping = None
    if notices is not None and public_url is not None:
        keeping = loop.create_task(_keep_links_published(notices, public_url))
    try:
        await stop.wait()
    finally:
        pruning.cancel()
        if keeping is not None:
            keeping.cancel()
        if notices is not None and public_url is not None:
            # Links to this address stop working with this server: notifications sent from
            # now on say how to answer without one, until a server publishes links again.
            with contextlib.suppress(Exception):
                await asyncio.to_thread(notices.withdraw_links, public_url)
        await board.close("the inbox server is stopping; it will be back at the same address")
        await server.stop()
    return 0


def _with_links(
    app: Any,
    inbox: Inbox,
    notices: Notices,
    public_url: str,
    hosts: Callable[[], frozenset[str]],
    surface: str,
    identity: ProxyIdentity | None = None,
) -> Any:
    """``app`` with ``/q/<token>`` (one-question links) served beside it, host-checked (and
    identity-checked with an ``identity``)."""
    from dsh_user_questions._link_page import with_links

    from ._link_page import link_routes

    secret = notices.publish_links(public_url)
    routes = link_routes(
        secret=lambda: secret,
        get=inbox.get,
        answer=lambda qid, answer, caller: inbox.answer(
            qid,
            resolve_uploads(inbox, qid, answer),
            surface=f"{surface}-link",
            by=caller.person,
            address=caller.address,
        ),
        cancel=lambda qid: inbox.settle(qid, State.CANCELLED, surface=f"{surface}-link"),
        to_thread=asyncio.to_thread,
        upload=lambda *file: open_upload(inbox, *file),
        opened=lambda qid, caller: inbox.record_event(
            qid, "opened", by=caller.person, surface=f"{surface}-link", address=caller.address
        ),
    )
    return with_links(app, routes, hosts, identity)


async def _keep_links_published(notices: Notices, public_url: str) -> None:
    # The published address counts as served only while it is renewed (see Notices): a server
    # killed without its clean stop leaves links that notifications soon stop carrying.
    while True:
        await asyncio.sleep(LINKS_RENEW_EVERY)
        try:
            await asyncio.to_thread(notices.publish_links, public_url)
        except Exception:  # the store is away for now: the next round tries again
            _log.warning("renewing the published public URL failed", exc_info=True)


async def _prune_now_and_then(inbox: Inbox) -> None:
    while True:
        retention = retention_seconds()
        if retention is not None:
            await asyncio.to_thread(inbox.prune, retention)
        await asyncio.sleep(_PRUNE_EVERY)
