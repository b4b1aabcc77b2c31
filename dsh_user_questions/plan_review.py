"""Plan review: the human's consent before an agent leaves plan mode (``exit_plan_mode``).

`plan_review_question` turns a markdown plan into the one question a provider shows as an
approve / keep planning / talk instead card; `read_plan_review` reads the answer;
`review_plan` does both around an ask and tells the three outcomes apart.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

import attrs

from ._i18n import N_
from ._payloads import AskUserQuestionAnswer, AskUserQuestionItem, AskUserQuestionOption
from ._review import Asks, Review, ReviewOutcome

if TYPE_CHECKING:
    from .harness import AbortSignal

__all__ = [
    "PlanReviewDecision",
    "PlanReviewOutcome",
    "plan_review_question",
    "read_plan_review",
    "review_plan",
]

PLAN_REVIEW_ID: Final = "plan-review"
PLAN_REVIEW_INTENT: Final = "plan-review"
APPROVE: Final = N_("Approve")
KEEP_PLANNING: Final = N_("Keep planning")

_HEADER = N_("Plan review")
_QUESTION = N_("Approve this plan and leave plan mode?")
_APPROVE_DESCRIPTION = N_("Leave plan mode; the plan is carried out from the next step.")
_KEEP_PLANNING_DESCRIPTION = N_("Stay in plan mode; your feedback goes back to the model.")
_NOT_A_PLAN = (
    'a plan must be non-empty markdown whose first line is a level-1 ATX heading ("# " and text)'
)
# After trimming, the first line is "#", a space or tab, then something that is not blank.
_HEADING = re.compile(r"#[ \t]+\S")


class PlanReviewDecision(str, enum.Enum):
    """What the human decided about a plan."""

    APPROVED = "approved"
    """Leave plan mode and carry the plan out."""
    KEEP_PLANNING = "keep-planning"
    """Stay in plan mode; ``feedback`` says what to change, if the human wrote anything."""
    TALK_INSTEAD = "talk-instead"
    """The human closed the question (the provider's ``ASK_CANCELLED``): stop and wait for
    their next message, still in plan mode."""

    __str__ = str.__str__  # the value, as the str it is


@attrs.frozen
class PlanReviewOutcome(ReviewOutcome):
    """The human's verdict on a plan.

    ``approved`` is true only for an approval; ``feedback`` is the human's own words when they
    kept planning; ``talk_instead`` is true when they closed the question to talk instead.
    ``decision`` names which of the three it is.
    """

    @property
    def decision(self) -> PlanReviewDecision:
        """Approved, keep planning, or talk instead."""
        return self._decide(
            PlanReviewDecision.APPROVED,
            PlanReviewDecision.KEEP_PLANNING,
            PlanReviewDecision.TALK_INSTEAD,
        )


_PLAN_REVIEW = Review(
    question_id=PLAN_REVIEW_ID,
    header=_HEADER,
    kind=PLAN_REVIEW_INTENT,
    approve=AskUserQuestionOption(APPROVE, _APPROVE_DESCRIPTION),
    reject=AskUserQuestionOption(KEEP_PLANNING, _KEEP_PLANNING_DESCRIPTION),
    outcome=PlanReviewOutcome,
)


def plan_review_question(plan: str) -> AskUserQuestionItem:
    """The question asking the human to approve ``plan`` (markdown) and leave plan mode.

    ``plan`` must be non-empty markdown whose first line, after trimming, is a level-1 ATX
    heading (``# `` and text); anything else is a `ValueError`. The plan is the question's
    ``detail``, as given.
    """
    if not isinstance(plan, str):
        raise TypeError(f"plan must be a str, got {type(plan).__name__}")
    if not _HEADING.match(plan.strip().partition("\n")[0]):
        raise ValueError(_NOT_A_PLAN)
    return _PLAN_REVIEW.question(_QUESTION, plan)


def read_plan_review(answer: AskUserQuestionAnswer) -> PlanReviewOutcome:
    """The verdict in ``answer`` to the `plan_review_question`.

    Approved only when the answer has exactly one ``plan-review`` item, whose ``selected`` is
    exactly ``("Approve",)`` and which has no custom text. Anything else keeps planning, with the
    custom text of the (first) ``plan-review`` item as feedback.
    """
    return _PLAN_REVIEW.read(answer)


async def review_plan(
    service: Asks,
    plan: str,
    *,
    agent: object | None = None,
    signal: AbortSignal | None = None,
    audience: Iterable[str] = (),
    approvals: int = 1,
) -> PlanReviewOutcome:
    """Ask the human to approve ``plan`` through ``service`` (``ctx.user_questions``).

    ``audience`` (person ids and ``group:NAME``) is who may answer; ``approvals`` how many
    distinct people of it must approve before it is approved (the first who does not settles
    it at once; docs/team.md). The provider's ``ASK_CANCELLED`` becomes the talk-instead
    outcome; every other error (``ASK_ABORTED``, ``NO_PROVIDER``, ``BAD_INTENT`` for
    ``approvals`` the audience cannot give, a bad plan's `ValueError`, ...) propagates
    unchanged.
    """
    return await _PLAN_REVIEW.ask(
        service,
        plan_review_question(plan),
        agent=agent,
        signal=signal,
        audience=audience,
        approvals=approvals,
    )
