"""What the model is told when its call is wrong: every sentence once, never Python's words.

Issue 19, point 6: option labels that mean the UI's own "Other" or "Skip" in any common spelling
are refused with the hint; a number too long to read is "too long", not Python advice; a plan
put in a question's ``detail`` is told where plans go.
"""

from __future__ import annotations

import pytest

from dsh_user_questions import UserQuestionError, tool


def _problems(arguments: object) -> list[str]:
    with pytest.raises(UserQuestionError) as caught:
        tool.read_arguments(arguments)
    assert caught.value.code == "INVALID_ARGS"
    return list(caught.value.problems)


def _choice(*labels: str) -> dict[str, object]:
    return {
        "questions": [
            {"id": "a", "question": "Which one?", "options": [{"label": lab} for lab in labels]}
        ]
    }


@pytest.mark.parametrize(
    ("label", "meaning"),
    [
        ("Other", "Other"),
        ("Other:", "Other"),
        ("other...", "Other"),
        ("\uff2f\uff54\uff48\uff45\uff52", "Other"),  # fullwidth
        ("OTHER", "Other"),
        ("Skip", "Skip"),
        ("skip.", "Skip"),
    ],
)
def test_a_label_meaning_other_or_skip_is_refused_with_the_hint(label: str, meaning: str) -> None:
    """Each spelling is refused at its path, with the hint that the UI adds the choice itself."""
    problems = _problems(_choice("pnpm", label))
    assert problems == [
        f'questions[0].options[1].label: must not be "{meaning}": the UI always adds '
        + (
            'an "Other" choice for the user\'s own words (and a way to skip); leave it out'
            if meaning == "Other"
            else 'a way to skip (and an "Other" choice for the user\'s own words); leave it out'
        )
    ]


@pytest.mark.parametrize(
    "label",
    [
        "Otherwise",
        "Skipper",
        "Another",
        "Other tools",
        "Others",
        "Other (please specify)",
        "Skip (I don't know)",
        "Skip tests",
        "None of the above",
        "Something else",
    ],
)
def test_labels_that_only_start_like_other_or_skip_pass(label: str) -> None:
    """Only labels that mean the reserved choice are refused."""
    assert tool.read_arguments(_choice("pnpm", label))[0].options[1].label == label


@pytest.mark.parametrize(
    "text",
    [
        '{"questions": [' + "7" * 5000 + "]}",
        '{"questions": [{"id": "a", "question": "Q?", "options": ' + "1" * 9000 + "}]}",
    ],
)
def test_a_number_too_long_never_gets_python_advice(text: str) -> None:
    """A 5,000-digit literal is a number with too many digits, with no word of Python in it."""
    problems = _problems(text)
    assert len(problems) == 1
    assert problems[0].startswith("not valid JSON: a number has more than ")
    for word in ("sys.", "set_int_max_str_digits", "Python", "integer string conversion"):
        assert word not in problems[0]


def test_a_plan_in_detail_is_told_how_plan_review_works() -> None:
    """``detail`` is unknown, and the one added sentence says plans go to plan review."""
    problems = _problems(
        {"questions": [{"id": "plan", "question": "Approve?", "detail": "# Plan\n1. do it"}]}
    )
    assert len(problems) == 1
    problem = problems[0]
    assert problem.startswith(
        "questions[0].detail: unknown property; allowed: id, question, header, options,"
        " multi_select, secret, allow_other, input (a plan is not a question:"
    )
    assert "dsh_user_questions.plan_review" in problem
    assert ". " not in problem  # one sentence


def test_an_unknown_top_level_detail_gets_no_plan_hint() -> None:
    """The hint is for a question's ``detail`` only; elsewhere it is just unknown."""
    problems = _problems({"questions": [{"id": "a", "question": "Q?"}], "detail": "x"})
    assert problems == ["detail: unknown property; allowed: questions"]
