"""The tool's new words: ``recommended`` options and ``secret`` questions (issue 21)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    UserQuestionError,
    UserQuestionErrorCode,
    rules,
    tool,
)
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import ScriptedProvider


def choice(*options: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A question in tool form, id ``pkg``, with ``options`` (pnpm and npm when none)."""
    question: dict[str, Any] = {
        "id": "pkg",
        "question": "Which package manager?",
        "options": list(options) or [{"label": "pnpm"}, {"label": "npm"}],
    }
    question.update(changes)
    return question


def token(**changes: Any) -> dict[str, Any]:
    """A secret question in tool form, id ``token``."""
    return {"id": "token", "question": "Your npm token?", "secret": True, **changes}


def problems_of(*questions: dict[str, Any]) -> tuple[str, ...]:
    """The INVALID_ARGS problems of tool arguments holding ``questions``."""
    with pytest.raises(UserQuestionError) as caught:
        tool.read_arguments({"questions": list(questions)})
    assert caught.value.code == UserQuestionErrorCode.INVALID_ARGS
    return caught.value.problems


# Recommended -------------------------------------------------------------------------------------


def test_recommended_reaches_the_request() -> None:
    """``"recommended": true`` on an option becomes ``AskUserQuestionOption.recommended``."""
    [question] = tool.read_arguments(
        {"questions": [choice({"label": "pnpm", "recommended": True}, {"label": "npm"})]}
    )
    assert [option.recommended for option in question.options] == [True, False]
    assert question.options[0].to_dict() == {"label": "pnpm", "recommended": True}


def test_two_recommended_on_a_single_select_is_invalid_args_with_the_path() -> None:
    """A second recommended option of a single-select names its own path and the first's."""
    options = [{"label": label, "recommended": True} for label in ("pnpm", "npm", "yarn")]
    assert problems_of(choice(*options)) == (
        "questions[0].options[1].recommended: must not be true:"
        " questions[0].options[0].recommended is already true, and a single-select question"
        " recommends at most one option",
        "questions[0].options[2].recommended: must not be true:"
        " questions[0].options[0].recommended is already true, and a single-select question"
        " recommends at most one option",
    )


def test_several_recommended_on_a_multi_select_are_fine() -> None:
    """A multi-select may recommend several options, as check_request allows."""
    options = [{"label": label, "recommended": True} for label in ("lint", "tests")]
    [question] = tool.read_arguments({"questions": [choice(*options, multi_select=True)]})
    assert all(option.recommended for option in question.options)


@given(
    flags=st.lists(st.sampled_from([True, False, None]), min_size=2, max_size=5),
    multi_select=st.booleans(),
)
def test_the_tool_refuses_exactly_what_check_request_refuses(
    flags: list[bool | None], multi_select: bool
) -> None:
    """For any pattern of recommended flags the tool and `rules.check_request` agree."""
    options = [
        {"label": f"option {index}"} | ({} if flag is None else {"recommended": flag})
        for index, flag in enumerate(flags)
    ]
    arguments = {"questions": [choice(*options, multi_select=multi_select)]}
    tool_problems: tuple[str, ...] = ()
    try:
        tool.read_arguments(arguments)
    except UserQuestionError as err:
        tool_problems = err.problems
    payload = AskUserQuestionItem(
        id="pkg",
        question="Which package manager?",
        options=[
            AskUserQuestionOption(o["label"], recommended=o.get("recommended", False))
            for o in options
        ],
        multi_select=multi_select,
    )
    rule_problems: tuple[str, ...] = ()
    try:
        rules.check_request(AskUserQuestionRequest(questions=[payload]))
    except UserQuestionError as err:
        rule_problems = err.problems
    assert bool(tool_problems) == bool(rule_problems), (tool_problems, rule_problems)
    assert all(".recommended: " in problem for problem in tool_problems)
    assert bool(rule_problems) == (not multi_select and flags.count(True) > 1)


def test_strict_mode_null_recommended_means_left_out() -> None:
    """OpenAI strict mode sends ``null`` for an unset flag: it reads as not recommended."""
    [question] = tool.read_arguments(
        {
            "questions": [
                choice(
                    {"label": "pnpm", "description": None, "recommended": None},
                    {"label": "npm", "description": None, "recommended": True},
                    header=None,
                    multi_select=None,
                    secret=None,
                )
            ]
        }
    )
    assert [option.recommended for option in question.options] == [False, True]
    assert question.secret is False


def test_recommended_must_be_a_boolean() -> None:
    """A recommended flag that is not a boolean is an invalid argument at its path."""
    assert problems_of(choice({"label": "pnpm", "recommended": "yes"}, {"label": "npm"})) == (
        "questions[0].options[0].recommended: must be a boolean, not a string",
    )


async def test_a_skip_never_becomes_the_recommended_option(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """A skipped question with a recommended option comes back skipped, not recommended."""
    scripted_provider.push(AskUserQuestionAnswer([AskUserQuestionAnswerItem(id="pkg")]))
    arguments = {"questions": [choice({"label": "pnpm", "recommended": True}, {"label": "npm"})]}
    result = await tool.run(dsh_context, arguments)
    assert result.content == '{"answers":[{"id":"pkg","selected":[]}]}'
    [request] = scripted_provider.requests
    assert request.questions[0].options[0].recommended is True


async def test_a_label_ending_recommended_reads_as_recommended(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """A label ending " (Recommended)" (Claude Code's way) is the option without the suffix,
    recommended; the answer names the label without it."""
    scripted_provider.push({"answers": [{"id": "pkg", "selected": ["pnpm"]}]})
    result = await tool.run(
        dsh_context,
        {"questions": [choice({"label": "pnpm (Recommended)"}, {"label": "npm"})]},
    )
    assert result.content == '{"answers":[{"id":"pkg","selected":["pnpm"]}]}'
    [request] = scripted_provider.requests
    assert [(o.label, o.recommended) for o in request.questions[0].options] == [
        ("pnpm", True),
        ("npm", False),
    ]


# Secrets ---------------------------------------------------------------------------------------

SECRET = "npm_s3cr3t-T0ken"


async def test_a_secret_reaches_the_harness_not_the_model(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """By default the model reads the placeholder; the harness reads `ToolResult.secrets`."""
    scripted_provider.push({"answers": [{"id": "token", "custom": SECRET}]})
    result = await tool.run(dsh_context, {"questions": [token()]})
    assert result.content == json.dumps(
        {"answers": [{"id": "token", "selected": [], "custom": rules.SECRET_PLACEHOLDER}]},
        separators=(",", ":"),
    )
    assert result.secrets == {"token": SECRET}
    assert scripted_provider.requests[0].questions[0].secret is True
    for shown in (
        repr(result),
        json.dumps(result.to_anthropic("t1")),
        json.dumps(result.to_openai("t1")),
        json.dumps(result.to_responses("t1")),
    ):
        assert SECRET not in shown


async def test_reveal_secrets_lets_the_model_see_it(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """``reveal_secrets=True`` puts the clear text in the model's result as well."""
    scripted_provider.push({"answers": [{"id": "token", "custom": SECRET}]})
    result = await tool.run(dsh_context, {"questions": [token()]}, reveal_secrets=True)
    assert result.content == f'{{"answers":[{{"id":"token","selected":[],"custom":"{SECRET}"}}]}}'
    assert result.secrets == {"token": SECRET}


async def test_only_the_secret_question_is_redacted(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """Beside a secret, other questions' answers (custom text included) reach the model."""
    scripted_provider.push(
        {
            "answers": [
                {"id": "name", "custom": "parsnip"},
                {"id": "token", "custom": SECRET},
            ]
        }
    )
    questions = [{"id": "name", "question": "Project name?"}, token()]
    result = await tool.run(dsh_context, {"questions": questions})
    assert json.loads(result.content) == {
        "answers": [
            {"id": "name", "selected": [], "custom": "parsnip"},
            {"id": "token", "selected": [], "custom": rules.SECRET_PLACEHOLDER},
        ]
    }
    assert result.secrets == {"token": SECRET}


async def test_a_skipped_secret_has_no_secret(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """A secret question skipped gives the model a skip and the harness nothing."""
    scripted_provider.push({"answers": [{"id": "token", "selected": []}]})
    result = await tool.run(dsh_context, {"questions": [token()]})
    assert result.content == '{"answers":[{"id":"token","selected":[]}]}'
    assert result.secrets == {}


def test_secrets_are_read_only_and_not_compared() -> None:
    """`ToolResult.secrets` cannot be changed, and two results differing only there are equal."""
    result = tool.ToolResult("x", secrets={"token": SECRET})
    with pytest.raises(TypeError):
        result.secrets["token"] = "other"  # type: ignore[index]
    assert result == tool.ToolResult("x")
    assert tool.ToolResult("x").secrets == {}


def test_a_secret_with_options_is_invalid_args() -> None:
    """A secret question is free text: options or multi_select are refused at its path."""
    assert problems_of(token(options=[{"label": "a"}, {"label": "b"}])) == (
        "questions[0].secret: may be true only for a free-text question (no options; got 2)",
    )
    assert problems_of(token(options=[{"label": "a"}, {"label": "b"}], multi_select=True)) == (
        "questions[0].secret: may be true only for a free-text question (no options; got 2)",
        "questions[0].secret: may be true only for a single free-text answer, not with"
        " multi_select",
    )
