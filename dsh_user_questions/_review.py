"""What plan review and diff review share: one approve-or-not question, its verdict, the ask.

A review question has one option that approves (its intent's ``approve`` label) and one that
does not; the human may also write feedback instead, or close the question to talk instead
(the provider's ``ASK_CANCELLED``). `plan_review` and `diff_review` check their subject, word
their question and name their outcome; each describes itself once as a `Review`, and building
the question, reading the verdict and asking are written once, here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

import attrs

from ._payloads import (
    AskUserQuestionAnswer,
    AskUserQuestionIntent,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
)
from .errors import AskCancelledError

if TYPE_CHECKING:
    from .harness import AbortSignal

__all__ = ["Asks", "Review", "ReviewOutcome"]

_D = TypeVar("_D")


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

    def _decide(self, approved: _D, not_approved: _D, talk_instead: _D) -> _D:
        """Which of the three decisions this outcome is."""
        if self.approved:
            return approved
        if self.talk_instead:
            return talk_instead
        return not_approved


_O = TypeVar("_O", bound=ReviewOutcome)


class Asks(Protocol):
    """What a review needs of the service (``ctx.user_questions``)."""

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer: ...


@attrs.frozen
class Review(Generic[_O]):
    """One kind of review: its question's id, header and intent, its two options, its outcome."""

    question_id: str
    header: str
    kind: str
    approve: AskUserQuestionOption
    reject: AskUserQuestionOption
    outcome: type[_O]

    def question(self, question: str, detail: str) -> AskUserQuestionItem:
        """The review question: ``question`` about ``detail``, approve first, then reject."""
        return AskUserQuestionItem(
            id=self.question_id,
            header=self.header,
            question=question,
            detail=detail,
            options=(self.approve, self.reject),
            intent=AskUserQuestionIntent(self.kind, self.approve.label),
        )

    def read(self, answer: AskUserQuestionAnswer) -> _O:
        """Approved only for exactly one item of this review selecting exactly the approve label.

        With no custom text. Anything else is not approved, with the custom text of the (first)
        item of this review as feedback.
        """
        items = [item for item in answer.answers if item.id == self.question_id]
        approving = (self.approve.label,)
        if len(items) == 1 and items[0].selected == approving and items[0].custom is None:
            return self.outcome(approved=True)
        feedback = next((item.custom for item in items if item.custom is not None), None)
        return self.outcome(approved=False, feedback=feedback)

    async def ask(
        self,
        service: Asks,
        question: AskUserQuestionItem,
        *,
        agent: object | None,
        signal: AbortSignal | None,
        audience: Iterable[str] = (),
        approvals: int = 1,
    ) -> _O:
        """Ask ``question`` alone and read its verdict; closing it is the talk-instead outcome.

        ``audience`` is the request's (who may answer); ``approvals`` other than 1 is set on
        the question's intent (how many of them must approve, `team.tally`). Only the
        provider's ``ASK_CANCELLED`` means "talk instead"; every other error propagates.
        """
        if approvals != 1 and question.intent is not None:
            intent = attrs.evolve(question.intent, approvals=approvals)
            question = attrs.evolve(question, intent=intent)
        request = AskUserQuestionRequest(
            questions=(question,), agent=agent, signal=signal, audience=audience
        )
        try:
            answer = await service.ask(request)
        except AskCancelledError:
            return self.outcome(approved=False, talk_instead=True)
        return self.read(answer)
