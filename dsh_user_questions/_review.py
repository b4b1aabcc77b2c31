"""What plan review and diff review share: one approve-or-not question, its verdict, the ask.

A review question has one option that approves (its intent's ``approve`` label) and one that
does not; the human may also write feedback instead, or close the question to talk instead
(the provider's ``ASK_CANCELLED``). `plan_review` and `diff_review` build their question and
name their outcome; reading the verdict and asking are written once, here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import attrs

from ._payloads import AskUserQuestionAnswer, AskUserQuestionItem, AskUserQuestionRequest
from .errors import AskCancelledError

if TYPE_CHECKING:
    from .harness import AbortSignal

__all__ = ["ReviewOutcome", "Verdict", "ask_review", "read_verdict"]


@attrs.frozen
class ReviewOutcome:
    """The human's verdict on something under review (a plan, a diff).

    ``approved`` is true only for an approval; ``feedback`` is the human's own words when they
    did not approve; ``talk_instead`` is true when they closed the question to talk instead.
    """

    approved: bool = attrs.field(validator=attrs.validators.instance_of(bool))
    feedback: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.instance_of(str))
    )
    talk_instead: bool = attrs.field(
        default=False, kw_only=True, validator=attrs.validators.instance_of(bool)
    )

    def __attrs_post_init__(self) -> None:
        if self.talk_instead and (self.approved or self.feedback is not None):
            raise ValueError("a talk-instead outcome is neither approved nor carries feedback")
        if self.approved and self.feedback is not None:
            raise ValueError("an approved outcome carries no feedback")


@attrs.frozen
class Verdict:
    """What an answer says about a review question: approved, and the feedback if any."""

    approved: bool
    feedback: str | None


def read_verdict(answer: AskUserQuestionAnswer, question_id: str, approve: str) -> Verdict:
    """Approved only for exactly one ``question_id`` item selecting exactly ``approve``.

    With no custom text. Anything else is not approved, with the custom text of the (first)
    ``question_id`` item as feedback.
    """
    items = [item for item in answer.answers if item.id == question_id]
    if len(items) == 1 and items[0].selected == (approve,) and items[0].custom is None:
        return Verdict(approved=True, feedback=None)
    feedback = next((item.custom for item in items if item.custom is not None), None)
    return Verdict(approved=False, feedback=feedback)


class Asks(Protocol):
    """What a review needs of the service (``ctx.user_questions``)."""

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer: ...


async def ask_review(
    service: Asks,
    question: AskUserQuestionItem,
    *,
    agent: object | None,
    signal: AbortSignal | None,
) -> AskUserQuestionAnswer | None:
    """Ask ``question`` alone; the answer, or ``None`` when the human closed it (talk instead).

    Only the provider's ``ASK_CANCELLED`` means "talk instead"; every other error propagates.
    """
    request = AskUserQuestionRequest(questions=(question,), agent=agent, signal=signal)
    try:
        return await service.ask(request)
    except AskCancelledError:
        return None
