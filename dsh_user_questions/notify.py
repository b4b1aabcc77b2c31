"""Tell the human a question is waiting, wherever they are: notifications through Apprise.

`DSH_USER_QUESTIONS_NOTIFY` holds one or more Apprise URLs (``ntfy://...``, ``tgram://...``,
``slack://...``, ``mailto://...``, ``json://host/path``; separated by spaces or commas) or the
path of an Apprise configuration file. A durable provider (the inbox, the web provider) builds a
`Notification` with `notification_for` when a question starts waiting and hands it to
`Notifier.send`. Deciding that exactly one notification goes out per question is the provider's
job (the inbox decides it in its store, like the first answer); this module only sends.

Model text is untrusted: every notification is sent as plain text (each Apprise service is set
to its text format, whatever its URL says), built from `rules.inert_text`, so a question can
never become markup, a mention or a link in a chat. A receiver that fails, hangs or is slow
never fails or delays an ask: `Notifier.send` runs in a thread of its own, waits at most
``timeout`` seconds, logs what went wrong and returns ``False``.

Needs the optional dependency: ``pip install 'dsh-user-questions[notify]'``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .payloads import AskUserQuestionRequest
from .rules import inert_text

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

    def text(self) -> str:
        """The body with the link on a line of its own at the end."""
        return self.body if self.link is None else f"{self.body}\n\nAnswer: {self.link}"


def _short(text: str, limit: int) -> str:
    shown = inert_text(text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "\u2026"


def notification_for(
    request: AskUserQuestionRequest,
    *,
    asker: str,
    link: str | None = None,
    reminder: bool = False,
) -> Notification:
    """The notification for a waiting ``request``: who asks, each header and question, a link.

    ``asker`` names who asks (a harness label, with the agent when there is one). All model
    text goes through `rules.inert_text` on one line and is shortened; the detail (a plan, a
    diff) is left out: the link shows it.
    """
    first = request.questions[0] if request.questions else None
    subject = "" if first is None else (first.header or first.question)
    lead = "Reminder: still waiting" if reminder else "A question is waiting"
    title = _short(f"{lead}: {subject}" if subject else lead, _MAX_TITLE)
    lines = [f"{_short(asker, _MAX_TITLE)} asks:"]
    for question in request.questions:
        text = _short(question.question, _MAX_QUESTION)
        lines.append(f"- {_short(question.header, 40)}: {text}" if question.header else f"- {text}")
    return Notification(title=title, body="\n".join(lines), link=link)


_USERINFO = re.compile(r"(?<=://)([^/@\s]*)@")


def redact_url(url: str) -> str:
    """``url`` with any user name and password replaced by ``***`` (for messages and logs)."""
    return _USERINFO.sub("***@", url)


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


class Notifier:
    """Sends `Notification` objects to a fixed set of Apprise targets; never raises on send.

    Build it with `from_env` (from `NOTIFY_ENV`) or from a list of URLs / a config file path.
    A URL Apprise does not know is a ``ValueError`` at once (its password redacted), so a typo
    shows when the provider starts, not when the first question waits.
    """

    def __init__(self, targets: Sequence[str], *, timeout: float = 15.0) -> None:
        try:
            import apprise
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise ImportError(
                f"{NOTIFY_ENV} is set but Apprise is not installed:"
                " pip install 'dsh-user-questions[notify]'"
            ) from err
        self._apprise: Any = apprise.Apprise()
        self.timeout = timeout
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
        # Plain text on every service: model text never becomes markup, whatever the URL says.
        for server in servers:
            server.notify_format = apprise.NotifyFormat.TEXT

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

    def send_blocking(self, notification: Notification) -> bool:
        """Send now, in this thread; ``True`` when every target took it. Logs failures."""
        import apprise

        try:
            result = self._apprise.notify(
                title=notification.title,
                body=notification.text(),
                body_format=apprise.NotifyFormat.TEXT,
            )
        except Exception:
            _log.warning("sending a notification failed", exc_info=True)
            return False
        if not result:
            _log.warning(
                "a notification target refused %r (targets: %s)",
                notification.title,
                ", ".join(redact_url(target) for target in self.targets),
            )
        return bool(result)

    async def send(self, notification: Notification) -> bool:
        """Send without blocking the loop; wait at most ``timeout`` seconds. Never raises.

        The send runs in a daemon thread of its own: a receiver that hangs keeps only that
        thread, never the loop, the ask or the process's exit.
        """
        loop = asyncio.get_running_loop()
        done: asyncio.Future[bool] = loop.create_future()

        def settle(ok: bool) -> None:
            if not done.done():
                done.set_result(ok)

        def run() -> None:
            ok = self.send_blocking(notification)
            # The loop may have closed while a slow receiver answered.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(settle, ok)

        threading.Thread(target=run, name="dsh-notify", daemon=True).start()
        try:
            return await asyncio.wait_for(asyncio.shield(done), self.timeout)
        except asyncio.TimeoutError:
            _log.warning("a notification took longer than %s s; going on without it", self.timeout)
            return False
