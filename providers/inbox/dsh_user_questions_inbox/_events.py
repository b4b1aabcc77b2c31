"""The log of every step: an append-only table of a question's events, one row per step.

Each state change of a record writes its event in the same transaction as the change (`step`
gives the statement `Engine.write_steps` runs after the change). The event's row is written
only when the change it tells of is in the record (the state it names, and no such event yet),
so a change that lost a race (another process answered first) logs nothing. Events hold who,
from which surface, and when; never an answer's text (a secret's answer is logged as given, and
so is every other: what was answered is in the record, not in its log). Retention deletes a
record's events with the record (`Inbox.prune`).

Events: ``asked``, ``answered`` (``by`` whom, from ``surface``), ``answered-late`` (an answer
kept after the question was withdrawn or expired), ``withdrawn``, ``expired``, ``cancelled``
(closed by a person on a surface), ``delivered`` (its outcome handed to its asker);
``approved`` (one approval of a review that needs several, once per person), ``refused`` (a
person outside the question's audience tried to answer: nothing else stored), ``notified``
(``by`` the Apprise tag, or the target in Apprise's privacy form, a notification was sent to),
``escalated`` (``by`` the audience it was escalated to, once), ``opened`` (a surface showed the
question to ``by``).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any, Final

import attrs

__all__ = ["EVENTS_TABLES", "SURFACE_EVENTS", "InboxEvent", "step"]

EVENTS_TABLES: Final = (
    "CREATE TABLE IF NOT EXISTS dsh_inbox_events (id TEXT PRIMARY KEY,"
    " question_id TEXT NOT NULL, at DOUBLE PRECISION NOT NULL, event TEXT NOT NULL,"
    " person TEXT, surface TEXT, address TEXT)",
    "CREATE INDEX IF NOT EXISTS dsh_inbox_events_question ON dsh_inbox_events (question_id, at)",
    "CREATE INDEX IF NOT EXISTS dsh_inbox_events_at ON dsh_inbox_events (at)",
)

# The record must show the change the event tells of: its condition on dsh_inbox_questions.
_SHOWN: Final[Mapping[str, str]] = {
    "asked": "TRUE",
    "answered": "state = 'answered'",
    "answered-late": "late_answer IS NOT NULL",
    "withdrawn": "state = 'withdrawn'",
    "expired": "state = 'expired'",
    "cancelled": "state = 'cancelled'",
    "delivered": "delivered_at IS NOT NULL",
    "approved": "state = 'pending'",
    "refused": "TRUE",
    "notified": "TRUE",
    "escalated": "state = 'pending'",
    "opened": "TRUE",
}
# How often an event may be logged for one question: once (a state change), once per person
# (an approval), or at every step (a refusal, a notification sent, a page opened).
_ONCE: Final[Mapping[str, str]] = {
    "approved": " AND COALESCE(person, '') = COALESCE(:person, '')",
    "refused": "",
    "notified": "",
    "opened": "",
}
SURFACE_EVENTS: Final = frozenset({"opened"})
"""The events a surface records of its own (`Inbox.record_event`)."""


def step(
    question_id: str,
    event: str,
    at: float,
    *,
    by: str | None = None,
    surface: str | None = None,
    address: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """The statement writing ``event`` for the question, if its record shows it: once (once
    per person for ``approved``; at every step for ``refused``, ``notified``, ``opened``)."""
    once = _ONCE.get(event, None)
    sql = (
        "INSERT INTO dsh_inbox_events (id, question_id, at, event, person, surface, address)"
        " SELECT :event_id, :question_id, :at, :event, :person, :surface, :address"
        " WHERE EXISTS (SELECT 1 FROM dsh_inbox_questions WHERE id = :question_id"
        f" AND {_SHOWN[event]})"
    )
    if once != "":
        sql += (
            " AND NOT EXISTS (SELECT 1 FROM dsh_inbox_events WHERE question_id = :question_id"
            f" AND event = :event{once or ''})"
        )
    return sql, {
        "event_id": secrets.token_hex(12),
        "question_id": question_id,
        "at": at,
        "event": event,
        "person": by,
        "surface": surface,
        "address": address,
    }


@attrs.frozen(kw_only=True)
class InboxEvent:
    """One step of a question's life: ``event`` ``by`` whom (a person's id, when named), from
    which ``surface`` (and network ``address``, when a page knew it), ``at`` (seconds since the
    epoch)."""

    question_id: str
    event: str
    at: float
    by: str | None = None
    surface: str | None = None
    address: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping of every field."""
        return attrs.asdict(self)
