"""Notifications for waiting questions, decided in the store: exactly one per question.

Every process on a store (harnesses and ``dsh-inbox serve``) may notice a question that starts
waiting; the one whose claim is written first sends the notification, as the first answer wins.
A claim is a row ``(question, kind)`` in ``dsh_inbox_notices``: ``first`` for the notification,
``reminder`` for the one reminder after ``DSH_USER_QUESTIONS_NOTIFY_REMIND`` seconds,
``escalation`` for the one notification of the people file's ``[escalation]`` audience.

A question with an audience is notified to its people's Apprise tags only (`team.People`); one
without an audience to every target. Each notification sent is a ``notified`` event naming the
tag (or, without an audience, each target in Apprise's privacy form: never a credential).

``dsh-inbox serve --public-url URL`` writes its public address and a link secret into
``dsh_inbox_settings``, so any process on the store can put a one-question answer link into
its notification (the store is the trust boundary: whoever can read it can answer anyway).
The address counts only while it is served: the server renews it every `LINKS_RENEW_EVERY`
seconds and withdraws it when it stops, and an address not renewed for `LINKS_FRESH_FOR`
seconds (a server killed without its clean stop) is no longer put into notifications.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import secrets
import time
from collections.abc import Mapping

from dsh_user_questions._notify import Notification, Notifier, notification_for, remind_after

from ._link_page import asker, link_for
from ._record import QuestionRecord, State
from ._store import Inbox

__all__ = ["LINKS_FRESH_FOR", "LINKS_RENEW_EVERY", "Notices", "QuestionNotifier"]

LINKS_RENEW_EVERY = 30.0
"""Seconds between two renewals of the published public URL by its server."""
LINKS_FRESH_FOR = 120.0
"""Seconds a published public URL counts as served after its last renewal."""

_log = logging.getLogger(__name__)

_TABLES = (
    "CREATE TABLE IF NOT EXISTS dsh_inbox_notices (question_id TEXT NOT NULL,"
    " kind TEXT NOT NULL, at DOUBLE PRECISION NOT NULL, PRIMARY KEY (question_id, kind))",
    "CREATE TABLE IF NOT EXISTS dsh_inbox_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
)


class Notices:
    """The store's side: claims of notifications, and the public link settings."""

    def __init__(self, inbox: Inbox) -> None:
        self.inbox = inbox
        for statement in _TABLES:
            inbox._engine.write(statement, {})

    def claim(self, question_id: str, kind: str) -> bool:
        """Whether this call is the one that sends ``kind`` for the question (first wins)."""
        return bool(
            self.inbox._engine.write(
                "INSERT INTO dsh_inbox_notices (question_id, kind, at)"
                " VALUES (:id, :kind, :at) ON CONFLICT DO NOTHING",
                {"id": question_id, "kind": kind, "at": time.time()},
            )
        )

    def publish_links(self, public_url: str) -> bytes:
        """Record ``public_url`` and this store's link secret (made once); return the secret."""
        # The secret is kept whatever became of the URL: links sent earlier open again.
        encoded = self._settings().get("link_secret")
        if encoded is None:
            encoded = base64.b64encode(secrets.token_bytes(32)).decode("ascii")
        secret = base64.b64decode(encoded)
        settings = (
            ("link_secret", encoded),
            ("public_url", public_url),
            ("public_url_at", repr(time.time())),
        )
        for name, value in settings:
            self.inbox._engine.write(
                "INSERT INTO dsh_inbox_settings (name, value) VALUES (:name, :value)"
                " ON CONFLICT (name) DO UPDATE SET value = :value",
                {"name": name, "value": value},
            )
        return secret

    def _settings(self) -> Mapping[str, str]:
        rows = self.inbox._engine.read(
            "SELECT name, value FROM dsh_inbox_settings"
            " WHERE name IN ('public_url', 'link_secret', 'public_url_at')",
            {},
        )
        return {str(name): str(value) for name, value in rows}

    def withdraw_links(self, public_url: str) -> None:
        """Stop publishing ``public_url`` (its server stops); another server's is left alone.

        The link secret stays: links sent earlier work again once a server publishes them.
        """
        self.inbox._engine.write(
            "DELETE FROM dsh_inbox_settings WHERE name = 'public_url' AND value = :value",
            {"value": public_url},
        )

    def link_settings(self, *, now: float | None = None) -> tuple[str, bytes] | None:
        """The served public URL and link secret, or ``None`` when no server serves links now
        (none published one, it was withdrawn, or not renewed for `LINKS_FRESH_FOR` seconds)."""
        found = self._settings()
        if "public_url" not in found or "link_secret" not in found:
            return None
        try:
            renewed = float(found.get("public_url_at", ""))
        except ValueError:  # written by a server from before renewals: not known to be served
            return None
        if (time.time() if now is None else now) - renewed > LINKS_FRESH_FOR:
            return None
        return found["public_url"], base64.b64decode(found["link_secret"])


class QuestionNotifier:
    """Sends the one notification (and the one reminder) of each question a process adds.

    `question_waiting` never blocks and never raises: the claim and the send run in a task
    (the store call in a thread), bounded by the notifier's timeout, failures logged.
    """

    def __init__(self, inbox: Inbox, notifier: Notifier, *, remind: float | None = None) -> None:
        self.notices = Notices(inbox)
        self.notifier = notifier
        self.remind = remind
        self._tasks: set[asyncio.Task[None]] = set()

    @classmethod
    def from_env(cls, inbox: Inbox) -> QuestionNotifier | None:
        """The notifier ``DSH_USER_QUESTIONS_NOTIFY`` asks for, or ``None`` when unset."""
        notifier = Notifier.from_env()
        if notifier is None:
            return None
        return cls(inbox, notifier, remind=remind_after())

    def question_waiting(self, record: QuestionRecord) -> None:
        """Notify about ``record`` (once across the store), from the running loop."""
        task = asyncio.get_running_loop().create_task(self._notify(record))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _notify(self, record: QuestionRecord) -> None:
        try:
            await self._send(record, "first")
            later: list[tuple[float, str]] = []
            if self.remind is not None:
                later.append((record.created + self.remind, "reminder"))
            if record.request.get("audience"):  # the people file matters to these only
                people = await asyncio.to_thread(lambda: self.notices.inbox.people)
                if people.escalate_after is not None:
                    later.append((record.created + people.escalate_after, "escalation"))
            for when, kind in sorted(later):
                await asyncio.sleep(max(0.0, when - time.time()))
                current = await asyncio.to_thread(self.notices.inbox.get, record.id)
                if current is None or current.state is not State.PENDING:
                    return
                await self._send(current, kind)
        except asyncio.CancelledError:
            raise
        except Exception:
            _log.warning("notifying about question %s failed", record.id, exc_info=True)

    async def _send(self, record: QuestionRecord, kind: str) -> bool:
        inbox = self.notices.inbox
        if not await asyncio.to_thread(self.notices.claim, record.id, kind):
            return False  # another process on the store sends this one
        tags = await asyncio.to_thread(self._tags, record, kind)
        if kind == "escalation":
            await asyncio.to_thread(inbox._escalate, record)
        if tags is not None and not tags:
            _log.warning(
                "question %s: no notification target carries a tag of its audience; nobody"
                " was notified",
                record.id,
            )
            return False
        settings = await asyncio.to_thread(self.notices.link_settings)
        if tags is None:  # no audience: one message to every target, its link for anyone
            return await self._send_to(record, kind, settings, None, None)
        # An audience: one message per person, each with a link of their own (the link names
        # its recipient, who answers through it when no logging-in proxy names the person).
        people = await asyncio.to_thread(lambda: inbox.people)
        sent = False
        for person in await asyncio.to_thread(self._persons, record, kind):
            theirs = tuple(tag for tag in people.tags_for([person]) if tag in tags)
            if theirs:
                sent = await self._send_to(record, kind, settings, person, theirs) or sent
        return sent

    async def _send_to(
        self,
        record: QuestionRecord,
        kind: str,
        settings: tuple[str, bytes] | None,
        person: str | None,
        tags: tuple[str, ...] | None,
    ) -> bool:
        """One notification of ``record`` to the targets of ``tags`` (``None``: all), its link
        made for ``person`` (``None``: nobody named); logged as ``notified`` once sent."""
        inbox = self.notices.inbox
        link = (
            None
            if settings is None
            else link_for(settings[0], settings[1], record, recipient=person)
        )
        note = notification_for(
            record.to_request(), asker=asker(record), link=link, reminder=kind == "reminder"
        )
        if link is None:  # no server published links: say how to answer from a shell
            note = Notification(
                title=note.title,
                body=f"{note.body}\n\nAnswer with: dsh-inbox answer {record.id}",
            )
        # Without an audience, sent as before (a notifier of one's own need not take tags).
        sent = await (
            self.notifier.send(note) if tags is None else self.notifier.send(note, tags=tags)
        )
        if sent:  # who was notified: the tags, or (no audience) each target's privacy form
            for whom in tags if tags is not None else self.notifier.shown_targets:
                await asyncio.to_thread(
                    inbox._log_step, record.id, "notified", by=whom, surface="notify"
                )
        return sent

    def _persons(self, record: QuestionRecord, kind: str) -> list[str]:
        """The people a notification of ``record`` goes to: its audience's (the escalation's,
        for an escalation), expanded, in order."""
        people = self.notices.inbox.people
        audience = tuple(record.request.get("audience") or ())
        if kind == "escalation":
            audience = people.escalate_to
        return sorted(people.expand(audience))

    def _tags(self, record: QuestionRecord, kind: str) -> tuple[str, ...] | None:
        """The Apprise tags to notify about ``record``: ``None`` (every target) without an
        audience; else those of its audience's people (of the escalation's people, for an
        escalation) that some target carries."""
        audience = tuple(record.request.get("audience") or ())
        if not audience:
            return None
        people = self.notices.inbox.people
        if kind == "escalation":
            audience = people.escalate_to
        return self.notifier.reaches(people.tags_for(sorted(people.expand(audience))))

    def cancel(self) -> None:
        """Stop pending reminders (from any thread); a send already under way times out."""
        for task in list(self._tasks):
            with contextlib.suppress(RuntimeError):  # its loop is closed already
                task.get_loop().call_soon_threadsafe(task.cancel)

    async def aclose(self) -> None:
        """Stop pending reminders; a notification already being sent finishes or times out."""
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
