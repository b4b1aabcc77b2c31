"""Tell the human a question is waiting, wherever they are: notifications through Apprise.

`DSH_USER_QUESTIONS_NOTIFY` holds one or more Apprise URLs (``ntfy://...``, ``tgram://...``,
``slack://...``, ``mailto://...``, ``json://host/path``; separated by spaces or commas) or the
path of an Apprise configuration file. A durable provider (the inbox, the web provider) builds a
`Notification` with `notification_for` when a question starts waiting and hands it to
`Notifier.send`. Deciding that exactly one notification goes out per question is the provider's
job (the inbox decides it in its store, like the first answer); this module only sends.

Model text is untrusted: it comes from the core's view of the question (`view`, every text
`rules.inert_text`) and is sent inert in each service's own markup (plain text where the service
has a text format, escaped HTML for Telegram, escaped markdown without mentions for Discord), so
a question can never become markup, a mention or a link in a chat. A receiver that fails, hangs
or is slow never fails or delays an ask, a reminder or the process's exit: each target is sent
to in a daemon thread of its own, `Notifier.send` waits for the outcome at most a second,
failures are logged with the target in Apprise's privacy form (no token, no password) and it
returns ``False``.

Needs the optional dependency: ``pip install 'dsh-user-questions[notify]'``.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import os
import re
import threading
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ._input_text import describe_input
from ._payloads import AskUserQuestionRequest
from .rules import inert_text
from .view import request_view

__all__ = [
    "NOTIFY_ENV",
    "REMIND_ENV",
    "Notification",
    "Notifier",
    "notification_for",
    "redact_url",
    "remind_after",
]

NOTIFY_ENV = "DSH_USER_QUESTIONS_NOTIFY"
"""Apprise URLs (or an Apprise configuration file) to notify when a question starts waiting."""

REMIND_ENV = "DSH_USER_QUESTIONS_NOTIFY_REMIND"
"""Seconds after which one reminder is sent for a question still unanswered (unset: none)."""

_log = logging.getLogger("dsh_user_questions.notify")

_MAX_TITLE = 120
_MAX_QUESTION = 300


@attrs.frozen(kw_only=True)
class Notification:
    """One message to the human: a title, a plain-text body and the link that opens it."""

    title: str
    body: str
    link: str | None = None

    def text(self, escape: Callable[[str], str] | None = None) -> str:
        """The body with the link on a line of its own at the end; ``escape`` (a service's
        markup escaping) applies to the words, never to the link."""
        words = escape or _unchanged
        body = words(self.body)
        return body if self.link is None else f"{body}\n\n{words('Answer:')} {self.link}"


def _unchanged(text: str) -> str:
    return text


def _clip(shown: str, limit: int) -> str:
    """``shown`` (inert text already) on one line, shortened to ``limit`` characters."""
    line = " ".join(shown.split("\n"))
    return line if len(line) <= limit else line[: limit - 1] + "\u2026"


def notification_for(
    request: AskUserQuestionRequest,
    *,
    asker: str,
    link: str | None = None,
    reminder: bool = False,
) -> Notification:
    """The notification for a waiting ``request``: who asks, each header and question, a link.

    ``asker`` names who asks (a harness label, with the agent when there is one). The words are
    the core's view of each question (`dsh_user_questions.view.request_view`): inert text, put
    on one line and shortened; a typed answer says what it asks for in brackets (``[a number
    between 1 and 10]``, ``[pick files]``); the detail (a plan, a diff) is left out: the link
    shows it.
    """
    views = request_view(request)
    first = views[0] if views else None
    subject = "" if first is None else (first.header or first.question)
    lead = "Reminder: still waiting" if reminder else "A question is waiting"
    title = _clip(f"{lead}: {subject}" if subject else lead, _MAX_TITLE)
    lines = [f"{_clip(inert_text(asker), _MAX_TITLE)} asks:"]
    for view in views:
        text = _clip(view.question, _MAX_QUESTION)
        if view.input is not None:  # what is asked for, in plain words: "a number between 1 and 10"
            text += f" [{_clip(inert_text(describe_input(view.input)), _MAX_TITLE)}]"
        lines.append(f"- {_clip(view.header, 40)}: {text}" if view.header else f"- {text}")
    return Notification(title=title, body="\n".join(lines), link=link)


def redact_url(url: str) -> str:
    """``url`` with everything that may be a credential replaced by ``***``: the user name and
    password, the path and the query (for a URL Apprise cannot read; a target Apprise reads is
    shown in Apprise's own privacy form instead, see `Notifier`)."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        return "***"
    if not parts.scheme:
        return "***"
    userinfo = "***@" if "@" in parts.netloc else ""
    hidden = "/***" if parts.path.strip("/") or parts.query or parts.fragment else ""
    return f"{parts.scheme}://{userinfo}{host}{port}{hidden}"


def remind_after(environ: Mapping[str, str] | None = None) -> float | None:
    """The reminder delay from `REMIND_ENV` in seconds, or ``None`` when unset or empty.

    Raises ``ValueError`` naming the variable for anything but a positive number.
    """
    env = os.environ if environ is None else environ
    raw = env.get(REMIND_ENV, "").strip()
    if not raw:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        raise ValueError(f"{REMIND_ENV} must be a number of seconds, got {raw!r}") from None
    if not 0 < seconds < float("inf"):
        raise ValueError(f"{REMIND_ENV} must be a positive number of seconds, got {raw!r}")
    return seconds


_ASCII_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def _escape_html(text: str) -> str:
    return html.escape(text, quote=False)


def _escape_markdown(text: str) -> str:
    """Every ASCII punctuation character escaped with a backslash (CommonMark and Discord show
    an escaped character as itself): no emphasis, link, heading, list, quote or code."""
    return _ASCII_PUNCTUATION.sub(r"\\\1", text)


def _escape_discord(text: str) -> str:
    """Discord's markdown escaped, and every ``@`` followed by a zero-width space, so neither
    Discord nor Apprise's mention detection reads ``@everyone``, ``@here`` or ``<@123>``."""
    return _escape_markdown(text).replace("@", "@\u200b")


class _Target:
    """One Apprise service and the markup its messages are written in."""

    __slots__ = ("dialect", "format", "server", "shown")

    def __init__(self, server: Any, formats: Any) -> None:
        self.server = server
        # Apprise's own privacy form: tokens, webhook ids and passwords shortened or starred.
        try:
            self.shown = str(server.url(privacy=True))
        except Exception:  # pragma: no cover - a plugin that cannot print itself
            self.shown = f"{getattr(server, 'service_name', 'a service')} target"
        # What the service can take (its class's formats: ``?format=`` in the URL narrows the
        # object's to the one asked for).
        declared = tuple(
            formats(value)
            for source in (type(server).notify_format, server.notify_format)
            for value in (source if isinstance(source, (tuple, list)) else (source,))
        )
        protocol = getattr(server, "secure_protocol", None) or getattr(server, "protocol", "")
        protocols = protocol if isinstance(protocol, (tuple, list)) else (protocol,)
        if "discord" in protocols:
            # Discord reads markdown and mentions in plain content too.
            self.dialect, self.format = "discord", formats.TEXT
        elif formats.TEXT in declared:
            self.dialect, self.format = "text", formats.TEXT
        elif formats.HTML in declared:  # Telegram: HTML always parsed, so escape it ourselves
            self.dialect, self.format = "html", formats.HTML
        else:
            self.dialect, self.format = "markdown", formats.MARKDOWN
        # One format, whatever the URL says (``?format=markdown`` would make text markup).
        server.notify_format = self.format

    def render(self, notification: Notification) -> tuple[str, str]:
        """The title and the body in this service's markup, every character of them inert."""
        if self.dialect == "html":  # the link too: an & in it is &amp; in HTML
            return _escape_html(notification.title), _escape_html(notification.text())
        if self.dialect in ("discord", "markdown"):
            escape = _escape_discord if self.dialect == "discord" else _escape_markdown
            # The link is the provider's own address: it stays clickable.
            return escape(notification.title), notification.text(escape)
        return notification.title, notification.text()


class Notifier:
    """Sends `Notification` objects to a fixed set of Apprise targets; never raises on send.

    Build it with `from_env` (from `NOTIFY_ENV`) or from a list of URLs / a config file path.
    A URL Apprise does not know is a ``ValueError`` at once (anything that may be a credential
    redacted), so a typo shows when the provider starts, not when the first question waits.

    Each message is written in its service's own markup with every character of it inert: plain
    text where the service has a text format, escaped HTML for Telegram, escaped markdown with
    no mention for Discord (see ``docs/notifications.md``). A target is only ever logged in
    Apprise's privacy form (``tgram://1...c/987654``): no token, webhook id or password.

    Each target is sent to in a daemon thread of its own, never in Apprise's pool (which is
    joined at exit): a receiver that hangs keeps only that thread, never the loop, the ask or the
    process's exit. ``timeout`` bounds each connection and read (and `send_blocking`'s wait);
    ``wait`` bounds how long `send` waits for the outcome before going on (the delivery goes on
    in its thread, its failure logged), so whatever follows a send (a reminder) keeps its time.
    """

    def __init__(self, targets: Sequence[str], *, timeout: float = 15.0, wait: float = 1.0) -> None:
        try:
            import apprise
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise ImportError(
                f"{NOTIFY_ENV} is set but Apprise is not installed:"
                " pip install 'dsh-user-questions[notify]'"
            ) from err
        self._apprise: Any = apprise.Apprise()
        self.timeout = timeout
        self.wait = wait
        self.targets = tuple(targets)
        for target in self.targets:
            path = Path(target)
            if "://" not in target and path.is_file():
                config = apprise.AppriseConfig()
                if not config.add(str(path)) or not self._apprise.add(config):
                    raise ValueError(f"{NOTIFY_ENV}: {target} is no Apprise configuration file")
            elif not self._apprise.add(target):
                raise ValueError(f"{NOTIFY_ENV}: not an Apprise URL: {redact_url(target)}")
        servers = list(self._apprise)
        if not servers:
            raise ValueError(f"{NOTIFY_ENV}: names no notification target")
        self._targets = [_Target(server, apprise.NotifyFormat) for server in servers]
        for each in self._targets:
            server = each.server
            # No retry of Apprise's (a retry would wait in its pool) and no socket wait longer
            # than the timeout.
            for name in ("socket_connect_timeout", "socket_read_timeout"):
                current = getattr(server, name, None)
                if isinstance(current, (int, float)) and current > timeout:
                    setattr(server, name, timeout)

    @property
    def shown_targets(self) -> tuple[str, ...]:
        """Every target in Apprise's privacy form, as it is logged."""
        return tuple(target.shown for target in self._targets)

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, *, timeout: float = 15.0
    ) -> Notifier | None:
        """The notifier `NOTIFY_ENV` describes, or ``None`` when it is unset or empty."""
        env = os.environ if environ is None else environ
        raw = env.get(NOTIFY_ENV, "").strip()
        if not raw:
            return None
        if "://" not in raw and Path(raw).is_file():
            return cls([raw], timeout=timeout)
        return cls([part for part in re.split(r"[\s,]+", raw) if part], timeout=timeout)

    def _send_to(self, target: _Target, notification: Notification) -> bool:
        title, body = target.render(notification)
        try:
            ok = bool(target.server.notify(body=body, title=title, body_format=target.format))
        except Exception as error:
            # The exception's text may hold the full URL (a token in its path): only its kind.
            _log.warning(
                "sending a notification to %s failed: %s", target.shown, type(error).__name__
            )
            return False
        if not ok:
            _log.warning("the notification target %s refused %r", target.shown, notification.title)
        return ok

    def _start(self, notification: Notification, settle: Any) -> None:
        """Send to every target, each in a daemon thread; ``settle(ok)`` once all are done."""
        results: list[bool] = []
        lock = threading.Lock()
        count = len(self._targets)

        def run(target: _Target) -> None:
            ok = self._send_to(target, notification)
            with lock:
                results.append(ok)
                last = len(results) == count
            if last:
                settle(all(results))

        for target in self._targets:
            threading.Thread(target=run, args=(target,), name="dsh-notify", daemon=True).start()

    def send_blocking(self, notification: Notification) -> bool:
        """Send now and wait at most ``timeout`` seconds; ``True`` when every target took it.
        Logs failures; never raises."""
        done = threading.Event()
        outcome: list[bool] = []

        def settle(ok: bool) -> None:
            outcome.append(ok)
            done.set()

        self._start(notification, settle)
        if not done.wait(self.timeout):
            _log.warning("a notification took longer than %s s; going on without it", self.timeout)
            return False
        return outcome[0]

    async def send(self, notification: Notification) -> bool:
        """Send without blocking the loop; wait for the outcome at most ``wait`` seconds (and
        never longer than ``timeout``). Never raises.

        ``True`` when every target took it within that time; ``False`` when one refused or
        failed, or when the wait ended first (the delivery goes on in its threads, logged).
        """
        loop = asyncio.get_running_loop()
        done: asyncio.Future[bool] = loop.create_future()

        def settle_here(ok: bool) -> None:
            if not done.done():
                done.set_result(ok)

        def settle(ok: bool) -> None:
            # The loop may have closed while a slow receiver answered.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(settle_here, ok)

        self._start(notification, settle)
        limit = min(self.wait, self.timeout)
        try:
            return await asyncio.wait_for(asyncio.shield(done), limit)
        except asyncio.TimeoutError:
            # Not a failure yet: the threads log one if it comes.
            _log.info(
                "a notification took longer than %s s; going on without waiting for it", limit
            )
            return False
