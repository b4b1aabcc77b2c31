"""The request and answer rules that the service applies and providers import."""

from __future__ import annotations

import pytest

from dsh_user_questions import AskUserQuestionIntent, AskUserQuestionRequest, UserQuestionError
from dsh_user_questions.rules import check_answer, check_request, is_plan_review
from dsh_user_questions.testing import make_plan_question, make_question, make_request


def test_check_request_refuses_an_empty_request() -> None:
    """No question is EMPTY_QUESTIONS, as ask() says."""
    with pytest.raises(UserQuestionError) as info:
        check_request(AskUserQuestionRequest(questions=()))
    assert info.value.code == "EMPTY_QUESTIONS"


@pytest.mark.parametrize(
    ("question", "message"),
    [
        (
            make_plan_question(intent=AskUserQuestionIntent("plan-review", "Ship")),
            'question plan-review declares intent plan-review whose approve label "Ship"'
            " names none of its options",
        ),
        (
            make_plan_question(detail=None),
            "question plan-review declares intent plan-review without the detail it reviews",
        ),
    ],
)
def test_check_request_refuses_a_broken_intent(question: object, message: str) -> None:
    """An intent naming no option, or without a detail, is BAD_INTENT with its exact message."""
    with pytest.raises(UserQuestionError) as info:
        check_request(make_request(make_question(), question))  # type: ignore[arg-type]
    assert info.value.code == "BAD_INTENT"
    assert str(info.value) == message


def test_check_request_passes_a_good_request() -> None:
    """A plain question and a plan review pass."""
    check_request(make_request(make_question(), make_plan_question()))


def test_is_plan_review_only_for_a_valid_plan_review() -> None:
    """Only a plan-review intent that names an option, with a detail, is drawn as a review."""
    assert is_plan_review(make_plan_question())
    assert not is_plan_review(make_question())
    assert not is_plan_review(make_plan_question(detail=None))
    assert not is_plan_review(make_plan_question(intent=AskUserQuestionIntent("plan-review", "X")))
    assert not is_plan_review(make_plan_question(intent=AskUserQuestionIntent("other", "Approve")))


def test_check_answer_takes_the_request_and_lists_every_problem() -> None:
    """check_answer(request, answer) reports all broken rules as problems, in item order."""
    request = make_request(make_question())
    wire = {
        "answers": [
            {"id": "nope", "selected": []},
            {"id": "pkg", "selected": ["pnpm", "npm"]},
        ]
    }
    with pytest.raises(UserQuestionError) as info:
        check_answer(request, wire)
    assert info.value.code == "BAD_ANSWER"
    assert info.value.problems == (
        'answers[0] (question "nope") names no question that was asked',
        'answers[1] (question "pkg") selects 2 options of a single-select question',
    )
    assert str(info.value) == "the user-questions provider gave a bad answer: " + "; ".join(
        info.value.problems
    )


def test_check_answer_reports_wire_form_problems_with_their_paths() -> None:
    """A mapping that is no answer in wire form gives each path as a problem."""
    with pytest.raises(UserQuestionError) as info:
        check_answer(make_request(), {"answers": [{"id": "pkg", "selected": "pnpm"}]})
    assert info.value.code == "BAD_ANSWER"
    assert info.value.problems == ("answers[0].selected: must be an array, not a string",)
    assert "it is not in wire form: answers[0].selected" in str(info.value)


def test_check_answer_returns_the_payload() -> None:
    """A good wire-form answer comes back as the payload, for a request or its questions."""
    request = make_request()
    wire = {"answers": [{"id": "pkg", "selected": ["npm"]}]}
    assert check_answer(request, wire) == check_answer(request.questions, wire)
    assert check_answer(request, wire).answers[0].selected == ("npm",)
