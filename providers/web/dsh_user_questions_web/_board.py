"""The seam between the page and whatever holds the questions: the `QuestionBoard` protocol.

The page and its HTTP/SSE protocol (`dsh_user_questions_web.app.create_app`) only ever talk to a
board. `WebProvider` uses an in-process board whose asks are futures in the harness's loop; a
board over a database (the inbox) implements the same four methods and gets the same page.

A board lists its pending asks in wire form (``{"id", "agent", "createdAt", "questions"}``, the
questions in the core's wire form), tells listeners what changed (`BoardEvent`), and settles an
ask at most once through `QuestionBoard.submit` / `QuestionBoard.cancel`, answering with a
`Settlement`. Everything but `watch` is async, so a board may do I/O.

A board may also have (the page uses each when present): ``refusal(ask, person)`` (why
``person`` may not see a pending ask in wire form, or ``None``; without it the page applies
the core's `dsh_user_questions.team.may_answer` to the ask's ``audience``), ``async
opened(ask_id, caller)`` (a page showed the ask to ``caller``: the log's ``opened``) and
``async history(ask_id, caller)`` (the ask's log as ``{"event", "by", "surface", "at"}``
mappings, ``at`` in milliseconds; ``None`` when unknown or not for ``caller``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol

import attrs
from dsh_user_questions._identity import Caller

__all__ = ["BoardEvent", "Outcome", "QuestionBoard", "Settlement", "SettlementStatus"]

Outcome = Literal["answered", "cancelled", "withdrawn", "expired", "stopped"]
"""How an ask left the board: answered or closed on a page, withdrawn by its agent (abort,
timeout, cancelled task), expired (a durable board's question whose time ran out), or stopped
with the board."""

SettlementStatus = Literal[
    "accepted", "kept", "counted", "cancelled", "rejected", "refused", "not-pending"
]


@attrs.frozen
class BoardEvent:
    """One change on a board, pushed to every open page.

    ``name`` is ``"added"`` (``data`` is the ask in wire form), ``"resolved"`` (``{"id",
    "outcome"}``, and ``"by"`` when it was settled elsewhere than on a page: ``"link"`` for a
    one-question link, or the name of the surface that settled it, e.g. ``"cli"``) or
    ``"closed"`` (``{"reason"}``: the board is going away; pages are told why and their streams
    end). Events are idempotent for the page: an ``added`` for an ask it
    already shows and a ``resolved`` for one it never saw are ignored, so a board may deliver an
    event that a snapshot taken just after subscribing already reflects.
    """

    name: Literal["added", "resolved", "closed"]
    data: Mapping[str, Any]


@attrs.frozen
class Settlement:
    """What the poster of an answer or a close is told.

    ``accepted`` means the agent got exactly that answer (never only that it was queued);
    ``kept`` that a durable board stored it as the question's answer while no agent waits for it
    (its harness gets it when it resumes); ``cancelled`` that the ask was closed; ``rejected``
    that the answer broke a rule (listed in ``problems``; the ask stays pending);
    ``not-pending`` that it was already settled (``outcome`` says how, ``None`` when the id is
    unknown); ``refused`` that the poster may not answer it (``message``: the core's refusal,
    `dsh_user_questions.team.may_answer`; nothing recorded); ``counted`` that their approval
    of a review that needs several was counted and it is still pending (``approvers`` so far,
    of ``needed``).
    """

    status: SettlementStatus
    ask_id: str
    outcome: Outcome | None = None
    problems: tuple[str, ...] = ()
    message: str | None = None
    approvers: tuple[str, ...] = ()
    needed: int = 0

    @classmethod
    def accepted(cls, ask_id: str) -> Settlement:
        """The answer reached the agent."""
        return cls("accepted", ask_id)

    @classmethod
    def kept(cls, ask_id: str) -> Settlement:
        """The answer is the question's, stored; no agent waits for it now."""
        return cls("kept", ask_id)

    @classmethod
    def cancelled(cls, ask_id: str) -> Settlement:
        """The ask was closed; the agent gets ``ASK_CANCELLED``."""
        return cls("cancelled", ask_id)

    @classmethod
    def rejected(cls, ask_id: str, problems: Sequence[str]) -> Settlement:
        """The answer broke a rule; the ask stays pending."""
        return cls("rejected", ask_id, problems=tuple(problems))

    @classmethod
    def refused(cls, ask_id: str, message: str) -> Settlement:
        """The poster may not answer this ask (``message`` says why); nothing was recorded."""
        return cls("refused", ask_id, message=message)

    @classmethod
    def counted(cls, ask_id: str, approvers: Sequence[str], needed: int) -> Settlement:
        """An approval was counted; the review still waits for more (``needed`` in all)."""
        return cls("counted", ask_id, approvers=tuple(approvers), needed=needed)

    @classmethod
    def not_pending(cls, ask_id: str, outcome: Outcome | None) -> Settlement:
        """The ask was settled before (or never existed)."""
        return cls("not-pending", ask_id, outcome=outcome)


class QuestionBoard(Protocol):
    """Pending asks, their changes, and the one place they are settled."""

    async def pending(self) -> Sequence[Mapping[str, Any]]:
        """Every pending ask in wire form, oldest first."""
        ...

    def watch(self, listener: Callable[[BoardEvent], None]) -> Callable[[], None]:
        """Call ``listener`` (on the serving loop, never blocking) for every later change.

        Returns the function that stops the calls. The app subscribes before it reads
        `pending`, so nothing falls between the snapshot and the events.
        """
        ...

    async def submit(
        self, ask_id: str, answer: object, *, caller: Caller | None = None
    ) -> Settlement:
        """Settle the ask with ``answer`` (wire form, unchecked) if it is pending and valid.

        ``caller`` is who posts it (its person is the answer's ``answered_by``, its address
        the peer's); ``None``: the token holder.
        """
        ...

    async def cancel(self, ask_id: str, *, caller: Caller | None = None) -> Settlement:
        """Close the ask (the agent gets ``ASK_CANCELLED``) if it is pending (``caller``: as
        for `submit`)."""
        ...
