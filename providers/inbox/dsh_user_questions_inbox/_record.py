"""The question record: one ask as the store keeps it, from pending to its one final state."""

from __future__ import annotations

import enum
from typing import Any

import attrs
from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest

__all__ = ["AnswerOutcome", "QuestionRecord", "State"]


class State(str, enum.Enum):
    """Where a question stands. ``pending`` moves to exactly one of the other four, once."""

    PENDING = "pending"
    ANSWERED = "answered"
    WITHDRAWN = "withdrawn"  # the asker's signal aborted (or its task was cancelled)
    EXPIRED = "expired"  # the ask's timeout or the record's deadline passed
    CANCELLED = "cancelled"  # the human closed the question

    def __str__(self) -> str:
        return self.value

    @property
    def final(self) -> bool:
        """Whether no further transition can happen."""
        return self is not State.PENDING


class AnswerOutcome(str, enum.Enum):
    """What became of one answer given to the store."""

    APPLIED = "applied"  # this answer is the question's answer
    LATE = "late"  # the question was withdrawn or expired: kept as its late answer
    ALREADY_ANSWERED = "already-answered"  # another answer (or late answer) came first
    CLOSED = "closed"  # the human cancelled the question
    UNKNOWN = "unknown"  # no question has that id (never asked, or pruned)
    REFUSED = "refused"  # the person is not in the question's audience: nothing stored
    COUNTED = "counted"  # an approval of a review that needs more: counted, still pending

    def __str__(self) -> str:
        return self.value


@attrs.frozen(kw_only=True)
class QuestionRecord:
    """One question as the inbox stores it.

    ``request`` and the answers are kept in their JSON wire form. Times are seconds since the
    epoch. ``surface`` names who settled the question (``harness`` for a withdrawal or expiry
    by the asking process, ``cli``, ``web``...); the ``late_*`` fields hold the first answer
    that came after the question was withdrawn or expired. ``key`` is the request's
    caller-chosen key (one record per key); ``delivered_at`` says when the final outcome was
    handed to the asker (``None``: pending, or final while no asker waited); ``received_at``
    when the asking ``ask()`` returned the answer to its caller (the core's receipt), which is
    what a surface waits for before it says the answer was received. ``answered_by`` names who
    gave the applied answer (its ``answered_by``), when the surface knew.
    """

    id: str
    request: dict[str, Any]
    agent: str | None
    harness: str
    created: float
    deadline: float | None
    state: State
    answer: dict[str, Any] | None = None
    settled_at: float | None = None
    surface: str | None = None
    late_answer: dict[str, Any] | None = None
    late_at: float | None = None
    late_surface: str | None = None
    late_delivered_at: float | None = None
    key: str | None = None
    delivered_at: float | None = None
    received_at: float | None = None

    @property
    def delivered(self) -> bool:
        """Whether the final outcome (answer, or the error it means) reached its asker."""
        return self.delivered_at is not None

    @property
    def answered_by(self) -> str | None:
        """Who gave the applied answer (a person's id, ``token`` for the page's token holder),
        or ``None`` when unanswered or not named."""
        by = None if self.answer is None else self.answer.get("answered_by")
        return by if isinstance(by, str) else None

    @property
    def late(self) -> bool:
        """Whether an answer arrived after the question was withdrawn or expired."""
        return self.late_answer is not None

    def to_request(self) -> AskUserQuestionRequest:
        """The request as a payload (without agent or signal, which never travel)."""
        return AskUserQuestionRequest.from_dict(self.request)

    def to_answer(self) -> AskUserQuestionAnswer | None:
        """The applied answer as a payload, or ``None`` when the question was not answered."""
        return None if self.answer is None else AskUserQuestionAnswer.from_dict(self.answer)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping: every field, the state as its string, plus ``late``."""
        data = attrs.asdict(self, recurse=False)
        data["state"] = self.state.value
        data["late"] = self.late
        data["delivered"] = self.delivered
        data["answered_by"] = self.answered_by
        return data
