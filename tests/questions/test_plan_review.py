"""Plan review: the question, reading the verdict, and review_plan's three outcomes."""

from __future__ import annotations

import re

import pytest

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionIntent,
    AskUserQuestionOption,
    UserQuestionError,
    UserQuestionErrorCode,
    UserQuestionService,
)
from dsh_user_questions.harness import AbortController
from dsh_user_questions.plan_review import (
    PlanReviewDecision,
    PlanReviewOutcome,
    plan_review_question,
    read_plan_review,
    review_plan,
)
from dsh_user_questions.testing import WAIT_FOR_ABORT, ScriptedProvider

PLAN = "# Add caching\n\n1. Wrap the client.\n2. Test it.\n"
NOT_A_PLAN = (
    'a plan must be non-empty markdown whose first line is a level-1 ATX heading ("# " and text)'
)


def items(*answer_items: AskUserQuestionAnswerItem) -> AskUserQuestionAnswer:
    """An answer of the given items."""
    return AskUserQuestionAnswer(answers=answer_items)


def review(selected: tuple[str, ...] = (), custom: str | None = None) -> AskUserQuestionAnswerItem:
    """An answer item for the plan-review question."""
    return AskUserQuestionAnswerItem(id="plan-review", selected=selected, custom=custom)


# The question ----------------------------------------------------------------------------------


def test_question_is_exactly_the_spec() -> None:
    """The question has the spec's id, header, text, detail, options and intent."""
    question = plan_review_question(PLAN)
    assert question.id == "plan-review"
    assert question.header == "Plan review"
    assert question.question == "Approve this plan and leave plan mode?"
    assert question.detail == PLAN
    assert question.options == (
        AskUserQuestionOption(
            "Approve", "Leave plan mode; the plan is carried out from the next step."
        ),
        AskUserQuestionOption(
            "Keep planning", "Stay in plan mode; your feedback goes back to the model."
        ),
    )
    assert question.intent == AskUserQuestionIntent("plan-review", "Approve")
    assert question.multi_select is False


@pytest.mark.parametrize(
    "plan",
    ["# Plan", "\n\n  # Plan\nsteps", "#\tPlan", "# Plan #", "# 1"],
)
def test_plans_with_a_level_1_heading_first_are_accepted(plan: str) -> None:
    """A first line (after trimming) of "# " and text makes a plan, kept as given."""
    assert plan_review_question(plan).detail == plan


@pytest.mark.parametrize(
    "plan",
    ["", "   \n ", "Plan\n# Heading", "## Plan", "#Plan", "#", "#   ", "- # Plan", "text"],
)
def test_anything_else_is_a_value_error(plan: str) -> None:
    """Empty text, or a first line that is not a level-1 ATX heading, is a ValueError."""
    with pytest.raises(ValueError, match=re.escape(NOT_A_PLAN)) as caught:
        plan_review_question(plan)
    assert str(caught.value) == NOT_A_PLAN


def test_a_plan_must_be_text() -> None:
    """A plan that is not a str is a TypeError."""
    with pytest.raises(TypeError, match="plan must be a str, got bytes"):
        plan_review_question(b"# Plan")  # type: ignore[arg-type]


# Reading the verdict ---------------------------------------------------------------------------


def test_approve_alone_is_approved() -> None:
    """Exactly one plan-review item selecting exactly Approve, without custom, approves."""
    outcome = read_plan_review(items(review(("Approve",))))
    assert outcome == PlanReviewOutcome(approved=True, feedback=None)
    assert outcome.decision is PlanReviewDecision.APPROVED


@pytest.mark.parametrize(
    ("answer", "feedback"),
    [
        pytest.param(items(review(("Keep planning",))), None, id="keep-planning"),
        pytest.param(items(review((), "Split step 2")), "Split step 2", id="custom-only"),
        pytest.param(
            items(review(("Approve",), "but rename it")), "but rename it", id="approve-with-custom"
        ),
        pytest.param(items(review()), None, id="skipped"),
        pytest.param(items(), None, id="no-items"),
        pytest.param(items(review(("Approve",)), review(("Approve",))), None, id="two-items"),
        pytest.param(items(review(("Approve", "Keep planning"))), None, id="both-selected"),
        pytest.param(
            items(AskUserQuestionAnswerItem(id="other", selected=("Approve",))),
            None,
            id="other-id",
        ),
    ],
)
def test_anything_else_keeps_planning(answer: AskUserQuestionAnswer, feedback: str | None) -> None:
    """Any other answer keeps planning, with the custom text as feedback."""
    outcome = read_plan_review(answer)
    assert outcome == PlanReviewOutcome(approved=False, feedback=feedback)
    assert outcome.decision is PlanReviewDecision.KEEP_PLANNING


def test_outcome_rejects_contradictions() -> None:
    """An outcome cannot be both approved and talk-instead, nor approved with feedback."""
    with pytest.raises(ValueError, match="talk-instead"):
        PlanReviewOutcome(approved=True, talk_instead=True)
    with pytest.raises(ValueError, match="approved outcome carries no feedback"):
        PlanReviewOutcome(approved=True, feedback="x")


def test_decision_values_are_plain_strings() -> None:
    """The decisions compare equal to their plain names."""
    assert [str(d) for d in PlanReviewDecision] == ["approved", "keep-planning", "talk-instead"]
    plain: str = "talk-instead"
    assert plain == PlanReviewDecision.TALK_INSTEAD


# review_plan -----------------------------------------------------------------------------------


async def test_review_plan_approved(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """review_plan asks the plan-review question and returns the approval."""
    scripted_provider.push(items(review(("Approve",))))
    outcome = await review_plan(user_questions, PLAN)
    assert outcome.decision is PlanReviewDecision.APPROVED
    [request] = scripted_provider.requests
    assert request.questions == (plan_review_question(PLAN),)


async def test_review_plan_keep_planning_with_feedback(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """review_plan returns keep planning with the user's words."""
    scripted_provider.push(items(review((), "Use a dict, not Redis")))
    outcome = await review_plan(user_questions, PLAN)
    assert outcome == PlanReviewOutcome(approved=False, feedback="Use a dict, not Redis")


async def test_review_plan_cancelled_is_talk_instead(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """The provider's ASK_CANCELLED becomes the talk-instead outcome, not an error."""
    scripted_provider.push(UserQuestionError.cancelled())
    outcome = await review_plan(user_questions, PLAN)
    assert outcome == PlanReviewOutcome(approved=False, feedback=None, talk_instead=True)
    assert outcome.decision is PlanReviewDecision.TALK_INSTEAD


async def test_review_plan_passes_agent_and_signal(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """The signal reaches the request, and an abort propagates as ASK_ABORTED."""
    controller = AbortController()
    controller.abort()
    with pytest.raises(UserQuestionError) as caught:
        await review_plan(user_questions, PLAN, signal=controller.signal)
    assert caught.value.code == UserQuestionErrorCode.ASK_ABORTED
    assert scripted_provider.requests == []


async def test_review_plan_other_errors_propagate(user_questions: UserQuestionService) -> None:
    """Without a provider, NO_PROVIDER propagates with its own message."""
    with pytest.raises(UserQuestionError) as caught:
        await review_plan(user_questions, PLAN)
    assert caught.value.code == UserQuestionErrorCode.NO_PROVIDER
    assert caught.value.message == "no user-questions provider is registered"


async def test_review_plan_rejects_a_bad_plan_before_asking(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """A plan without its heading is a ValueError and the provider is never asked."""
    scripted_provider.push(WAIT_FOR_ABORT)
    with pytest.raises(ValueError, match="level-1 ATX heading"):
        await review_plan(user_questions, "no heading")
    assert scripted_provider.requests == []
