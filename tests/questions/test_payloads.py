"""Payloads: immutable attrs classes, type checks at construction, the JSON wire form."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionIntent,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    WireFormatError,
)
from dsh_user_questions.harness import AbortController, Agent
from dsh_user_questions.testing import make_plan_question as plan_question
from dsh_user_questions.testing import make_question as pkg_question

# Construction ----------------------------------------------------------------------------------


def test_payloads_are_frozen() -> None:
    """Assigning to a payload field raises: payloads are immutable."""
    option = AskUserQuestionOption("pnpm")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        option.label = "npm"  # type: ignore[misc]


def test_sequences_are_stored_as_tuples() -> None:
    """Lists and generators given for sequences are stored as tuples."""
    item = AskUserQuestionItem(
        id="q", question="?", options=(AskUserQuestionOption(x) for x in "ab")
    )
    answer = AskUserQuestionAnswerItem(id="q", selected=["a", "b"])
    assert item.options == (AskUserQuestionOption("a"), AskUserQuestionOption("b"))
    assert answer.selected == ("a", "b")
    assert AskUserQuestionAnswer([answer]).answers == (answer,)


def test_a_string_is_not_accepted_as_a_sequence() -> None:
    """``selected="pnpm"`` is a TypeError, not a tuple of letters."""
    with pytest.raises(TypeError, match="selected must be an iterable of items"):
        AskUserQuestionAnswerItem(id="q", selected="pnpm")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: AskUserQuestionOption(3), "'label' must be <class 'str'>"),  # type: ignore[arg-type]
        (lambda: AskUserQuestionOption("a", 1), "'description' must be"),  # type: ignore[arg-type]
        (lambda: AskUserQuestionIntent("plan-review", None), "'approve' must be"),  # type: ignore[arg-type]
        (lambda: AskUserQuestionItem(id=1, question="?"), "'id' must be"),  # type: ignore[arg-type]
        (lambda: AskUserQuestionItem(id="q", question="?", multi_select="yes"), "'multi_select'"),  # type: ignore[arg-type]
        (lambda: AskUserQuestionItem(id="q", question="?", options=["a"]), r"options\[0\] must be"),  # type: ignore[list-item]
        (
            lambda: AskUserQuestionItem(id="q", question="?", intent="plan-review"),
            "'intent' must be",
        ),  # type: ignore[arg-type]
        (lambda: AskUserQuestionAnswerItem(id="q", selected=[1]), r"selected\[0\] must be str"),  # type: ignore[list-item]
        (lambda: AskUserQuestionRequest(questions=[{"id": "q"}]), r"questions\[0\] must be"),  # type: ignore[list-item]
        (lambda: AskUserQuestionAnswer(answers=None), "answers must be an iterable"),  # type: ignore[arg-type]
    ],
)
def test_wrong_field_types_raise_type_error_naming_the_field(build: Any, message: str) -> None:
    """A field of the wrong type is a TypeError whose message names that field."""
    with pytest.raises(TypeError, match=message):
        build()


def test_empty_questions_and_bad_intents_can_still_be_built() -> None:
    """The rules no type can carry are left to ask(): such requests can be constructed."""
    empty = AskUserQuestionRequest(questions=[])
    odd = plan_question(detail=None, intent=AskUserQuestionIntent("plan-review", "Nope"))
    assert empty.questions == ()
    assert odd.intent is not None
    assert odd.intent.approve == "Nope"


def test_request_carries_agent_and_signal_but_they_never_travel() -> None:
    """agent and signal are kept on the request, and left out of its wire form."""
    agent, controller = Agent("root"), AbortController()
    request = AskUserQuestionRequest(
        questions=[pkg_question()], agent=agent, signal=controller.signal
    )
    assert request.agent is agent
    assert request.signal is controller.signal
    assert set(request.to_dict()) == {"questions"}


# Wire form -------------------------------------------------------------------------------------


def test_item_wire_form_uses_snake_case_and_omits_none() -> None:
    """to_dict writes multi_select (as the model writes it) and leaves out keys whose value is
    None."""
    assert pkg_question(header=None, multi_select=True).to_dict() == {
        "id": "pkg",
        "question": "Which package manager?",
        "options": [
            {"label": "pnpm", "description": "Fast, disk-efficient"},
            {"label": "npm", "description": "The default"},
        ],
        "multi_select": True,
    }


def test_intent_and_detail_travel() -> None:
    """A plan-review item writes its detail and intent."""
    data = plan_question().to_dict()
    assert data["detail"] == "# Plan\n\n1. Do it"
    assert data["intent"] == {"kind": "plan-review", "approve": "Approve"}


def test_answer_item_always_writes_selected() -> None:
    """selected is written even when empty; custom only when present."""
    assert AskUserQuestionAnswerItem(id="q").to_dict() == {"id": "q", "selected": []}
    assert AskUserQuestionAnswerItem(id="q", custom="x").to_dict() == {
        "id": "q",
        "selected": [],
        "custom": "x",
    }


def test_request_from_dict_takes_agent_and_signal_from_the_caller() -> None:
    """from_dict reads the questions (the seed's multiSelect spelling too) and attaches the
    caller's agent and signal."""
    agent = Agent("a")
    request = AskUserQuestionRequest.from_dict(
        {"questions": [{"id": "q", "question": "?", "multiSelect": True}]}, agent=agent
    )
    assert request.questions == (AskUserQuestionItem(id="q", question="?", multi_select=True),)
    assert request.agent is agent


def test_unknown_key_is_rejected_with_its_path() -> None:
    """An unknown key deep inside is reported with its full path and the allowed keys."""
    with pytest.raises(WireFormatError) as info:
        AskUserQuestionRequest.from_dict(
            {"questions": [{"id": "q", "question": "?", "options": [{"label": "a", "lable": "b"}]}]}
        )
    assert info.value.problems == (
        "questions[0].options[0].lable: unknown property; allowed: label, description, preview,"
        " recommended",
    )


def test_every_problem_is_reported_at_once() -> None:
    """from_dict lists every bad field, each with its path, in one error."""
    with pytest.raises(WireFormatError) as info:
        AskUserQuestionRequest.from_dict(
            {
                "questions": [
                    {"id": 7, "question": "?", "multiSelect": "yes"},
                    {"question": "?", "options": [{"label": None}], "intent": {"kind": "x"}},
                ]
            }
        )
    assert info.value.problems == (
        "questions[0].id: must be a string, not a number",
        "questions[0].multiSelect: must be a boolean, not a string",
        "questions[1].id: is required",
        "questions[1].options[0].label: must be a string, not null",
        "questions[1].intent.approve: is required",
    )
    assert str(info.value) == "; ".join(info.value.problems)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ([], "must be an object, not an array"),
        ({"questions": None}, "questions: must be an array, not null"),
        ({"questions": "q"}, "questions: must be an array, not a string"),
        ({}, "questions: is required"),
        ({"questions": [3]}, "questions[0]: must be an object, not a number"),
    ],
)
def test_wrong_shapes_are_named(data: object, problem: str) -> None:
    """A value of the wrong JSON type is reported with its path and both types."""
    with pytest.raises(WireFormatError) as info:
        AskUserQuestionRequest.from_dict(data)
    assert info.value.problems == (problem,)


def test_answer_from_dict_reports_bad_labels() -> None:
    """A non-string label in selected is reported with its index."""
    with pytest.raises(WireFormatError) as info:
        AskUserQuestionAnswer.from_dict({"answers": [{"id": "q", "selected": ["a", 2]}]})
    assert info.value.problems == ("answers[0].selected[1]: must be a string, not a number",)


def test_wire_form_error_is_a_value_error() -> None:
    """Callers that catch ValueError also catch wire-form errors."""
    with pytest.raises(ValueError, match="id: is required"):
        AskUserQuestionAnswerItem.from_dict({})


# Round trips -----------------------------------------------------------------------------------

text = st.text(max_size=20)
options = st.builds(AskUserQuestionOption, text, st.none() | text)
intents = st.builds(AskUserQuestionIntent, text, text, approvals=st.integers(-2, 5))
items = st.builds(
    AskUserQuestionItem,
    id=text,
    question=text,
    detail=st.none() | text,
    header=st.none() | text,
    options=st.lists(options, max_size=4),
    multi_select=st.booleans(),
    intent=st.none() | intents,
)
answer_items = st.builds(
    AskUserQuestionAnswerItem,
    id=text,
    selected=st.lists(text, max_size=4),
    custom=st.none() | text,
)


@given(st.lists(items, max_size=4), st.lists(text, max_size=3))
def test_request_round_trips_through_json(
    questions: list[AskUserQuestionItem], audience: list[str]
) -> None:
    """Any request (its audience and intents' approvals too) survives to_dict, JSON text and
    from_dict unchanged."""
    request = AskUserQuestionRequest(questions=questions, audience=audience)
    again = AskUserQuestionRequest.from_dict(json.loads(json.dumps(request.to_dict())))
    assert again == request


@given(st.lists(answer_items, max_size=4))
def test_answer_round_trips_through_json(answers: list[AskUserQuestionAnswerItem]) -> None:
    """Any answer survives to_dict, JSON text and from_dict unchanged."""
    answer = AskUserQuestionAnswer(answers)
    assert AskUserQuestionAnswer.from_dict(json.loads(json.dumps(answer.to_dict()))) == answer


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_from_dict_of_any_json_builds_or_raises_wire_format_error(data: object) -> None:
    """No JSON value makes from_dict fail with anything but a WireFormatError."""
    for cls in (AskUserQuestionRequest, AskUserQuestionAnswer):
        try:
            cls.from_dict(data)
        except WireFormatError as error:
            # Building is as valid an outcome as the error: pytest.raises does not apply here.
            assert error.problems  # noqa: PT017
            assert all(": " in p or p.startswith("must be") for p in error.problems)  # noqa: PT017


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (
            {"questions": [{"id": 7, "question": "?"}]},
            "questions[0].id: must be a string, not a number",
        ),
        ({"questions": [{"id": "q"}]}, "questions[0].question: is required"),
        ({"questions": "q"}, "questions: must be an array, not a string"),
        ({"questions": [None]}, "questions[0]: must be an object, not null"),
        ([], "must be an object, not an array"),
    ],
)
def test_payloads_and_the_tool_word_a_problem_alike(data: object, problem: str) -> None:
    """The same fault reads the same from a payload's from_dict and from the tool's check."""
    from dsh_user_questions import UserQuestionError, tool

    with pytest.raises(WireFormatError) as from_payload:
        AskUserQuestionRequest.from_dict(data)
    with pytest.raises(UserQuestionError) as from_tool:
        tool.read_arguments(data)
    assert from_tool.value.code == "INVALID_ARGS"
    assert from_payload.value.problems == (problem,)
    assert from_tool.value.problems == (problem,)


# Third-release fields: one wire form ------------------------------------------------------------


def test_to_dict_is_read_back_by_from_dict_with_every_field() -> None:
    """recommended, secret, key and timeout round-trip through the one wire form."""
    request = AskUserQuestionRequest(
        questions=[
            AskUserQuestionItem(
                id="pkg",
                question="Which?",
                options=[
                    AskUserQuestionOption("pnpm", recommended=True),
                    AskUserQuestionOption("npm"),
                ],
                multi_select=True,
            ),
            AskUserQuestionItem(id="token", question="API token?", secret=True),
        ],
        key="thread-1:call_7",
        timeout=30,
    )
    data = request.to_dict()
    assert data["key"] == "thread-1:call_7"
    assert data["timeout"] == 30
    assert data["questions"][0]["options"][0] == {"label": "pnpm", "recommended": True}
    assert data["questions"][1]["secret"] is True
    assert "multiSelect" not in json.dumps(data)
    assert AskUserQuestionRequest.from_dict(json.loads(json.dumps(data))) == request


def test_both_spellings_of_multi_select_at_once_are_refused() -> None:
    """multi_select and multiSelect together is a problem at multiSelect."""
    with pytest.raises(WireFormatError) as info:
        AskUserQuestionItem.from_dict(
            {"id": "q", "question": "?", "multi_select": True, "multiSelect": True}
        )
    assert info.value.problems == (
        "multiSelect: give multi_select only (multiSelect is its old name)",
    )


@pytest.mark.parametrize("key", ["", "has space", "x" * 257, "tab\t", "\u00e9"])
def test_a_bad_key_is_refused_with_the_rule(key: str) -> None:
    """A key outside KEY_PATTERN is a ValueError when built and a WireFormatError when read."""
    with pytest.raises(ValueError, match="key must be 1 to 256 characters"):
        AskUserQuestionRequest(questions=(), key=key)
    with pytest.raises(WireFormatError) as info:
        AskUserQuestionRequest.from_dict({"questions": [], "key": key})
    assert info.value.problems == (
        "key: must be 1 to 256 characters, each a letter, digit or one of ._:/@+=#~-",
    )


def test_recommended_and_secret_are_type_checked() -> None:
    """recommended and secret must be bools."""
    with pytest.raises(TypeError):
        AskUserQuestionOption("a", recommended="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        AskUserQuestionItem(id="a", question="?", secret=1)  # type: ignore[arg-type]


class TestAllowOther:
    """``allow_other`` false: the human may only pick among the options."""

    def test_defaults_to_true_and_is_written_only_when_false(self) -> None:
        """A question allows free text by default; the wire form names allow_other only when
        it is false, and reads it back."""
        plain = pkg_question()
        assert plain.allow_other is True
        assert "allow_other" not in plain.to_dict()
        closed = pkg_question(allow_other=False)
        data = closed.to_dict()
        assert data["allow_other"] is False
        assert AskUserQuestionItem.from_dict(data) == closed
        assert AskUserQuestionItem.from_dict({**data, "allow_other": None}).allow_other is True

    def test_a_request_round_trips_it(self) -> None:
        """allow_other survives a request's wire form, next to questions that allow free text."""
        request = AskUserQuestionRequest(
            questions=(pkg_question(allow_other=False), pkg_question(id="b"))
        )
        back = AskUserQuestionRequest.from_dict(json.loads(json.dumps(request.to_dict())))
        assert [question.allow_other for question in back.questions] == [False, True]

    def test_a_non_boolean_is_named_with_its_path(self) -> None:
        """allow_other must be a boolean; from_dict names its path."""
        with pytest.raises(WireFormatError) as info:
            AskUserQuestionRequest.from_dict(
                {"questions": [{"id": "q", "question": "?", "allow_other": "no"}]}
            )
        assert info.value.problems == ("questions[0].allow_other: must be a boolean, not a string",)

    def test_the_constructor_type_checks_it(self) -> None:
        """allow_other must be a bool in Python too."""
        with pytest.raises(TypeError):
            AskUserQuestionItem(id="a", question="?", allow_other=0)  # type: ignore[arg-type]
