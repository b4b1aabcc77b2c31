"""Tell the human a question is waiting, wherever they are: notifications through Apprise.

`DSH_USER_QUESTIONS_NOTIFY` holds one or more Apprise URLs (``ntfy://...``, ``tgram://...``,
``slack://...``, ``mailto://...``, ``json://host/path``; separated by spaces or commas) or the
path of an Apprise configuration file. A durable provider (the inbox, the web provider) builds a
`Notification` with `notification_for` when a question starts waiting and hands it to
`Notifier.send`. Deciding that exactly one notification goes out per question is the provider's
job (the inbox decides it in its store, like the first answer); this module only sends.

Model text is untrusted: it comes from the core's view of the question (`view`, every text
`rules.inert_text`), crosses the border to every service through one rule, `chat_text` (it
mentions no one and links nowhere), and is then written in each service's own markup (plain
text where the service has a text format, escaped HTML for Telegram, escaped markdown for
Discord), so a question can never become markup, a mention or a link in a chat: the question's
own link is the only link a message carries. A receiver that fails, hangs
or is slow never fails or delays an ask, a reminder or the process's exit: each target is sent
to in a daemon thread of its own, `Notifier.send` waits for the outcome at most a second,
failures are logged with the target in Apprise's privacy form (no token, no password) and it
returns ``False``. No record of any level holds a target's secret: a filter on Apprise's
logger (and urllib3's) stars each one, from the moment a `Notifier` is made.

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
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ._i18n import _, for_language, review_text
from ._input_text import describe_input
from ._payloads import AskUserQuestionRequest
from .rules import inert_text
from .view import request_view

__all__ = [
    "NOTIFY_ENV",
    "REMIND_ENV",
    "Notification",
    "Notifier",
    "chat_text",
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

    def text(
        self,
        escape: Callable[[str], str] | None = None,
        *,
        link: Callable[[str], str] | None = None,
    ) -> str:
        """The body with the link on a line of its own at the end; ``escape`` (a service's
        markup escaping) applies to the words, ``link`` (``escape`` unless given) to the link:
        a service whose markup links an address by itself needs the link left as it is."""
        words = escape or _unchanged
        body = words(self.body)
        if self.link is None:
            return body
        shown = (link or words)(self.link)
        lead = words(_("Answer:"))
        return f"{body}\n\n{lead} {shown}"


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
    language: str | None = None,
) -> Notification:
    """The notification for a waiting ``request``: who asks, each header and question, a link.

    ``asker`` names who asks (a harness label, with the agent when there is one). The words are
    the core's view of each question (`dsh_user_questions.view.request_view`): inert text, put
    on one line and shortened; a typed answer says what it asks for in brackets (``[a number
    between 1 and 10]``, ``[pick files]``); the detail (a plan, a diff) is left out: the link
    shows it.
    The frame's words are in ``language`` (default: `DSH_USER_QUESTIONS_LANG`, else the locale).
    """
    tr = for_language(language)
    views = request_view(request)
    first = views[0] if views else None
    subject = "" if first is None else (first.header or first.question)
    if first is not None:
        subject = review_text(first.kind, subject, language)
    lead = tr("Reminder: still waiting") if reminder else tr("A question is waiting")
    title = _clip(f"{lead}: {subject}" if subject else lead, _MAX_TITLE)
    lines = [tr("{asker} asks:").format(asker=_clip(inert_text(asker), _MAX_TITLE))]
    for view in views:
        text = _clip(review_text(view.kind, view.question, language), _MAX_QUESTION)
        if view.input is not None:  # what is asked for, in plain words: "a number between 1 and 10"
            text += f" [{_clip(inert_text(describe_input(view.input, language)), _MAX_TITLE)}]"
        header = review_text(view.kind, view.header, language) if view.header else ""
        lines.append(f"- {_clip(header, 40)}: {text}" if header else f"- {text}")
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


# Every sign a chat service reads as "mention" (ASCII, fullwidth and small commercial at).
_AT = re.compile("([@\uff20\ufe6b])")
# Slack's special mentions (<!channel>, <!subteam^ID>), Discord's user, role and channel
# mentions (<@123>, <@&456>, <#42>).
_ANGLE = re.compile(r"<(?=[!#@\uff20\ufe6b])")
# An address with a scheme: https:// becomes hxxps[://], any other :// becomes [://].
_HTTP = re.compile(r"(?i)\b(h)tt(ps?)(?=://)")
# A dot (ASCII, ideographic, fullwidth, halfwidth) after any visible character and before a
# letter: a domain (example.com, пример.рф), also a file name (setup.py); and every dot of an
# IPv4 address.
_DOT = "[.\u3002\uff0e\uff61]"
_DOMAIN_DOT = re.compile(rf"(?<=\S){_DOT}(?=[^\W\d_])")
_IPV4 = re.compile(rf"(?<![\w.])\d{{1,3}}(?:{_DOT}\d{{1,3}}){{3}}(?![\w])")
_ZWSP = "\u200b"


def chat_text(text: str) -> str:
    """``text`` (inert already, see `dsh_user_questions.rules.inert_text`) as words that
    mention no one and link nowhere, in any chat or mail service: the one rule every message's
    title and body cross before a service's own markup escaping.

    - every ``@`` (also ``\uff20`` and ``\ufe6b``) is followed by a zero-width space, and so is
      the ``<`` of ``<!``, ``<#`` and ``<@``: ``@room``, ``@here``, ``@alice``, ``<@123>``,
      ``<!channel>`` and ``<#42>`` ping or link nobody (an e-mail address or ``@types/node``
      too: they read the same, and no mail client links the address);
    - an address is defanged: ``https://`` becomes ``hxxps[://]`` (``http`` ``hxxp``), every
      other ``://`` becomes ``[://]``, and a dot between a visible character and a letter,
      or in an IPv4 address, becomes ``[.]`` (``hxxps[://]example[.]com``, ``setup[.]py``), so
      no service links a bare domain either.

    A zero-width space the model wrote is a visible ``<U+200B>`` already (`inert_text`), so none
    of this can be undone from the text.
    """
    text = _AT.sub(rf"\1{_ZWSP}", text)
    text = _ANGLE.sub(f"<{_ZWSP}", text)
    text = _HTTP.sub(r"\1xx\2", text).replace("://", "[://]")
    text = _IPV4.sub(lambda found: re.sub(_DOT, "[.]", found.group()), text)
    return _DOMAIN_DOT.sub("[.]", text)


_ASCII_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def _escape_html(text: str) -> str:
    return html.escape(text, quote=False)


def _escape_markdown(text: str) -> str:
    """Every ASCII punctuation character escaped with a backslash (CommonMark and Discord show
    an escaped character as itself): no emphasis, link, heading, list, quote or code."""
    return _ASCII_PUNCTUATION.sub(r"\\\1", text)


# The loggers that see a target's secrets while it is sent to: Apprise's own (its services log
# their request URLs and payloads at DEBUG) and urllib3's (each request's path at DEBUG).
_SECRET_SEEING_LOGGERS = ("apprise", "urllib3.connectionpool", "urllib3.util.retry")
# A URL's pieces: what lies between its separators.
_URL_PIECES = re.compile(r"[^/:@?&=#,;\s]+")


def _secrets_of(server: Any) -> set[str]:
    """The pieces of ``server``'s URL that Apprise's privacy form hides (tokens, webhook ids,
    passwords), as written in the URL and decoded."""
    try:
        full = str(server.url(privacy=False))
        shown = set(_URL_PIECES.findall(str(server.url(privacy=True))))
    except Exception:  # pragma: no cover - a plugin that cannot print itself
        return set()
    found: set[str] = set()
    for piece in _URL_PIECES.findall(full):
        if piece not in shown:
            decoded = urllib.parse.unquote(piece)
            found.update((piece, decoded, urllib.parse.quote(decoded, safe="")))
    # Two characters or fewer are no secret worth starring every occurrence of in a log.
    return {each for each in found if len(each) > 2}


def _pieces_of(targets: Sequence[str]) -> set[str]:
    """Every piece of ``targets`` but a URL's scheme (a configuration file's whole text)."""
    found: set[str] = set()
    for target in targets:
        if "://" in target:
            found.update(_URL_PIECES.findall(target.partition("://")[2]))
        else:
            with contextlib.suppress(OSError, UnicodeDecodeError):
                found.update(_URL_PIECES.findall(Path(target).read_text("utf-8")))
    return {each for each in found if len(each) > 2}


class _Redactor(logging.Filter):
    """Stars every secret of a configured target in each record of the loggers that may see
    one (`_SECRET_SEEING_LOGGERS`; Apprise installs no handler of its own, so a filter on its
    logger is the one place every record passes, whoever handles it): the message with its
    arguments, and an exception's text. Secrets are kept for the life of the process."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None

    def keep_secret(self, *found: set[str]) -> None:
        """Star these secrets from now on, in every logger that may see them."""
        with self._lock:
            self._secrets.update(*found)
            self._compile(self._secrets)
        for name in _SECRET_SEEING_LOGGERS:
            logging.getLogger(name).addFilter(self)  # once: addFilter skips a filter it has

    @contextlib.contextmanager
    def hiding(self, pieces: set[str]) -> Iterator[None]:
        """Star ``pieces`` too while the block runs (what may be a secret before Apprise says
        which is)."""
        self.keep_secret()
        with self._lock:
            self._compile(self._secrets | pieces)
        try:
            yield
        finally:
            with self._lock:
                self._compile(self._secrets)

    def _compile(self, secrets: set[str]) -> None:
        longest_first = sorted(secrets, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, longest_first))) if secrets else None

    def redact(self, text: str) -> str:
        """``text`` with every secret kept so far replaced by ``***``."""
        pattern = self._pattern
        return text if pattern is None else pattern.sub("***", text)

    def filter(self, record: logging.LogRecord) -> bool:
        if self._pattern is None:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not fit: keep both, starred
            message = f"{record.msg} {record.args!r}"
        record.msg, record.args = self.redact(message), None
        if record.exc_info:
            record.exc_text = self.redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        elif record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


_REDACTOR = _Redactor()


class _Target:
    """One Apprise service and the markup its messages are written in."""

    __slots__ = ("dialect", "format", "server", "shown", "tags")

    def __init__(self, server: Any, formats: Any) -> None:
        self.server = server
        # The Apprise tags it carries (a configuration file's ``ana=URL``): whose target it is.
        self.tags = frozenset(str(tag) for tag in getattr(server, "tags", ()) or ())
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
        """The title and the body in this service's markup: the words through `chat_text` and
        then the markup's escaping; the link (the provider's own address) stays clickable."""
        markup = _MARKUP[self.dialect]

        def words(text: str) -> str:
            return markup(chat_text(text))

        # In HTML the link is escaped too (an & in it is &amp;); markdown leaves it as it is.
        link = _escape_html if self.dialect == "html" else _unchanged
        return words(notification.title), notification.text(words, link=link)


_MARKUP: dict[str, Callable[[str], str]] = {
    "text": _unchanged,
    "html": _escape_html,
    # Discord reads markdown in plain content too; chat_text already broke every mention.
    "discord": _escape_markdown,
    "markdown": _escape_markdown,
}


class Notifier:
    """Sends `Notification` objects to a fixed set of Apprise targets; never raises on send.

    Build it with `from_env` (from `NOTIFY_ENV`) or from a list of URLs / a config file path.
    A URL Apprise does not know is a ``ValueError`` at once (anything that may be a credential
    redacted), so a typo shows when the provider starts, not when the first question waits.

    Each message's words cross `chat_text` (no mention, no link) and are written in its
    service's own markup with every character of them inert: plain text where the service has a
    text format, escaped HTML for Telegram, escaped markdown for Discord (see
    ``docs/notifications.md``). A target is only ever logged in
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
        # While Apprise reads the URLs (it logs what it parsed at TRACE), every piece of them is
        # starred; then only what its privacy form hides (below).
        with _REDACTOR.hiding(_pieces_of(self.targets)):
            for target in self.targets:
                path = Path(target)
                if "://" not in target and path.is_file():
                    config = apprise.AppriseConfig()
                    if not config.add(str(path)) or not self._apprise.add(config):
                        raise ValueError(f"{NOTIFY_ENV}: {target} is no Apprise configuration file")
                elif not self._apprise.add(target):
                    raise ValueError(f"{NOTIFY_ENV}: not an Apprise URL: {redact_url(target)}")
            servers = list(self._apprise)  # a configuration file is read here
            _REDACTOR.keep_secret(*(_secrets_of(server) for server in servers))
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

    def reaches(self, tags: Sequence[str]) -> tuple[str, ...]:
        """Those of ``tags`` (Apprise tags) that some target carries, in their order."""
        carried = frozenset().union(*(target.tags for target in self._targets))
        return tuple(dict.fromkeys(tag for tag in tags if tag in carried))

    def _chosen(self, tags: Sequence[str] | None) -> list[_Target]:
        if tags is None:
            return list(self._targets)
        wanted = frozenset(tags)
        return [target for target in self._targets if target.tags & wanted]

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

    def _start(
        self, notification: Notification, settle: Any, tags: Sequence[str] | None = None
    ) -> None:
        """Send to every target (those carrying one of ``tags``, when given), each in a daemon
        thread; ``settle(ok)`` once all are done (``False`` at once when none is chosen)."""
        results: list[bool] = []
        lock = threading.Lock()
        chosen = self._chosen(tags)
        count = len(chosen)
        if not chosen:
            settle(False)
            return

        def run(target: _Target) -> None:
            ok = self._send_to(target, notification)
            with lock:
                results.append(ok)
                last = len(results) == count
            if last:
                settle(all(results))

        for target in chosen:
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

    async def send(self, notification: Notification, *, tags: Sequence[str] | None = None) -> bool:
        """Send without blocking the loop; wait for the outcome at most ``wait`` seconds (and
        never longer than ``timeout``). Never raises.

        ``tags``: only the targets carrying one of these Apprise tags (a question's audience,
        `team.People.tags_for`); ``None``: every target.
        ``True`` when every chosen target took it within that time; ``False`` when one refused
        or failed, none carries a tag, or the wait ended first (the delivery goes on in its
        threads, logged).
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

        self._start(notification, settle, tags)
        limit = min(self.wait, self.timeout)
        try:
            return await asyncio.wait_for(asyncio.shield(done), limit)
        except asyncio.TimeoutError:
            # Not a failure yet: the threads log one if it comes.
            _log.info(
                "a notification took longer than %s s; going on without waiting for it", limit
            )
            return False
