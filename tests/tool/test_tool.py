"""The model-facing tool: its schema, its exports, validation messages and run() results."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    UserQuestionError,
    UserQuestionErrorCode,
    _tool_schema,
    plugin,
    rules,
    tool,
)
from dsh_user_questions.errors import StoreError
from dsh_user_questions.harness import AbortController, Agent, HarnessContext
from dsh_user_questions.testing import WAIT_FOR_ABORT, ScriptedProvider


def pkg(**changes: Any) -> dict[str, Any]:
    """A valid question in tool form, id ``pkg``, with ``changes`` applied (None deletes)."""
    question: dict[str, Any] = {
        "id": "pkg",
        "header": "Package manager",
        "question": "Which package manager?",
        "options": [
            {"label": "pnpm (Recommended)", "description": "Fast"},
            {"label": "npm"},
        ],
    }
    question.update(changes)
    return {key: value for key, value in question.items() if value is not None}


def args_of(*questions: dict[str, Any]) -> dict[str, Any]:
    """Tool arguments holding ``questions`` (``pkg()`` when none)."""
    return {"questions": list(questions) or [pkg()]}


def invalid_message(arguments: object) -> str:
    """The message of the INVALID_ARGS error ``arguments`` give."""
    with pytest.raises(UserQuestionError) as caught:
        tool.read_arguments(arguments)
    assert caught.value.code == UserQuestionErrorCode.INVALID_ARGS
    return caught.value.message


# The schema and the exports --------------------------------------------------------------------


def test_schema_is_a_valid_draft_7_schema() -> None:
    """The published schema is itself valid JSON Schema."""
    jsonschema.Draft7Validator.check_schema(tool.input_schema())


def test_input_schema_is_a_fresh_copy() -> None:
    """Changing a returned schema changes neither later schemas nor validation."""
    schema = tool.input_schema()
    schema["properties"]["questions"]["maxItems"] = 1000
    assert tool.input_schema()["properties"]["questions"]["maxItems"] == _tool_schema.MAX_QUESTIONS
    too_many = args_of(*(pkg(id=f"q{i}") for i in range(_tool_schema.MAX_QUESTIONS + 1)))
    assert "questions: must have at most 6 items (got 7)" in invalid_message(too_many)


def test_schema_states_the_limits_and_the_rules_it_cannot_carry() -> None:
    """The schema carries the limits; its descriptions state the rules no keyword carries."""
    schema = tool.input_schema()
    questions = schema["properties"]["questions"]
    item = questions["items"]["properties"]
    assert (questions["minItems"], questions["maxItems"]) == (1, _tool_schema.MAX_QUESTIONS)
    assert item["id"]["maxLength"] == _tool_schema.MAX_ID_LENGTH
    assert item["question"]["maxLength"] == _tool_schema.MAX_QUESTION_LENGTH
    assert item["header"]["maxLength"] == _tool_schema.MAX_HEADER_LENGTH
    assert item["options"]["maxItems"] == _tool_schema.MAX_OPTIONS
    option = item["options"]["items"]["properties"]
    assert option["label"]["maxLength"] == _tool_schema.MAX_LABEL_LENGTH
    assert option["description"]["maxLength"] == _tool_schema.MAX_DESCRIPTION_LENGTH
    assert "unique in the call" in item["id"]["description"]
    assert "Unique in the question, ignoring case" in option["label"]["description"]
    assert 'Never "Other"' in item["options"]["description"]
    assert "2 or more" in item["options"]["description"]
    assert set(item) == {
        "id",
        "question",
        "header",
        "options",
        "multi_select",
        "secret",
        "allow_other",
        "input",
    }
    assert set(option) == {"label", "description", "preview", "recommended"}
    assert option["preview"]["maxLength"] == _tool_schema.MAX_PREVIEW_LENGTH
    assert "At most one per single-select" in option["recommended"]["description"]
    assert questions["items"]["required"] == ["id", "question"]


def test_openai_export_shape() -> None:
    """openai_tool() is a function tool with the name, the description and the schema."""
    assert tool.openai_tool() == {
        "type": "function",
        "function": {
            "name": "ask_user_question",
            "description": tool.DESCRIPTION,
            "parameters": tool.input_schema(),
        },
    }


def test_anthropic_export_shape() -> None:
    """anthropic_tool() has name, description and input_schema, the same as OpenAI's."""
    assert tool.anthropic_tool() == {
        "name": "ask_user_question",
        "description": tool.DESCRIPTION,
        "input_schema": tool.input_schema(),
    }


def test_exports_are_json_serializable() -> None:
    """Both exports survive a JSON round trip unchanged, as an API request needs."""
    for exported in (tool.openai_tool(), tool.anthropic_tool()):
        assert json.loads(json.dumps(exported)) == exported


def test_description_guides_the_model() -> None:
    """The description covers when to ask, the recommended option, ids and the answer shape."""
    for phrase in ('"recommended": true', '"id"', '"selected"', '"custom"', "invalid arguments"):
        assert phrase in tool.DESCRIPTION


# Success ---------------------------------------------------------------------------------------


def answer(*items: AskUserQuestionAnswerItem) -> AskUserQuestionAnswer:
    """An answer of ``items``."""
    return AskUserQuestionAnswer(answers=items)


async def test_single_select_golden(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """A single-select answer is compact JSON with id then selected, no custom."""
    scripted_provider.push(answer(AskUserQuestionAnswerItem(id="pkg", selected=("npm",))))
    result = await tool.run(dsh_context, args_of())
    assert result == tool.ToolResult('{"answers":[{"id":"pkg","selected":["npm"]}]}')
    assert (result.is_error, result.error) == (False, None)


async def test_multi_select_with_custom_and_non_ascii_golden(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """custom follows selected, and non-ASCII text is kept, not escaped."""
    arguments = args_of(
        pkg(
            id="langs",
            multi_select=True,
            options=[{"label": "Français"}, {"label": "日本語"}, {"label": "English"}],
        )
    )
    scripted_provider.push(
        answer(
            AskUserQuestionAnswerItem(
                id="langs", selected=("Français", "日本語"), custom="und Deutsch ✓"
            )
        )
    )
    result = await tool.run(dsh_context, arguments)
    assert result.content == (
        '{"answers":[{"id":"langs","selected":["Français","日本語"],"custom":"und Deutsch ✓"}]}'
    )


async def test_custom_only_and_skipped_golden(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """A free-text answer keeps an empty selected; a skipped question is an empty item."""
    arguments = args_of(pkg(), {"id": "name", "question": "Project name?"})
    scripted_provider.push(
        answer(
            AskUserQuestionAnswerItem(id="pkg"),
            AskUserQuestionAnswerItem(id="name", custom="demo"),
        )
    )
    result = await tool.run(dsh_context, arguments)
    assert result.content == (
        '{"answers":[{"id":"pkg","selected":[]},{"id":"name","selected":[],"custom":"demo"}]}'
    )


async def test_empty_answer_golden(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """An answer with no items is ``{"answers":[]}``."""
    scripted_provider.push({"answers": []})
    assert (await tool.run(dsh_context, args_of())).content == '{"answers":[]}'


async def test_request_carries_every_field_agent_and_signal(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """The provider gets the questions in payload form, and the caller's agent and signal."""
    agent = Agent("main")
    assert dsh_context.agents is not None
    dsh_context.agents.enter(agent)  # type: ignore[attr-defined]
    controller = AbortController()
    scripted_provider.push({"answers": []})
    arguments = args_of(pkg(multi_select=True), {"id": "name", "question": "Name?"})
    await tool.run(dsh_context, arguments, agent=agent, signal=controller.signal)
    [request] = scripted_provider.requests
    assert request.agent is agent
    assert request.signal is controller.signal
    assert request.to_dict() == {
        "questions": [
            {
                "id": "pkg",
                "header": "Package manager",
                "question": "Which package manager?",
                "options": [
                    {"label": "pnpm", "description": "Fast", "recommended": True},
                    {"label": "npm"},
                ],
                "multi_select": True,
            },
            {"id": "name", "question": "Name?", "options": [], "multi_select": False},
        ]
    }


@pytest.mark.parametrize("form", ["str", "bytes", "parsed"])
async def test_arguments_as_text_bytes_or_parsed(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider, form: str
) -> None:
    """The arguments may be JSON text, UTF-8 bytes or the parsed value, with the same result."""
    text = json.dumps(args_of(), ensure_ascii=False)
    arguments: object = {"str": text, "bytes": text.encode(), "parsed": json.loads(text)}[form]
    scripted_provider.push(answer(AskUserQuestionAnswerItem(id="pkg", selected=("npm",))))
    result = await tool.run(dsh_context, arguments)
    assert result.content == '{"answers":[{"id":"pkg","selected":["npm"]}]}'


# Failures of the ask ---------------------------------------------------------------------------


# The class of each outcome's error: ToolResult.error["name"] (README: the exception's class).
ERROR_NAMES = {
    "NO_PROVIDER": "ProviderSetupError",
    "ASK_CANCELLED": "AskCancelledError",
    "ASK_ABORTED": "AskAbortedError",
    "CALLER_NOT_LIVE": "CallerRefusedError",
    "DELEGATED_CALLER": "CallerRefusedError",
    "BAD_ANSWER": "BadAnswerError",
    "INVALID_ARGS": "InvalidRequestError",
}


def error_result(message: str, code: str) -> tool.ToolResult:
    """The expected result of a failed call."""
    return tool.ToolResult(
        content=f"Error: {message}",
        is_error=True,
        error={"name": ERROR_NAMES[code], "code": code},
    )


async def test_no_provider_result(dsh_context: HarnessContext) -> None:
    """No provider gives the NO_PROVIDER error result."""
    result = await tool.run(dsh_context, args_of())
    assert result == error_result("no user-questions provider is registered", "NO_PROVIDER")


async def test_context_without_the_service_is_no_provider() -> None:
    """A context where the plugin is not registered gives NO_PROVIDER, not an exception."""
    result = await tool.run(HarnessContext(), args_of())
    assert result == error_result("no user-questions provider is registered", "NO_PROVIDER")


async def test_cancelled_result(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """The human closing the question gives ASK_CANCELLED."""
    scripted_provider.push(UserQuestionError.cancelled())
    result = await tool.run(dsh_context, args_of())
    assert result == error_result("the user cancelled ask_user_question", "ASK_CANCELLED")


async def test_aborted_result(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """An aborted signal gives ASK_ABORTED."""
    controller = AbortController()
    scripted_provider.push(WAIT_FOR_ABORT)
    pending = asyncio.ensure_future(tool.run(dsh_context, args_of(), signal=controller.signal))
    await asyncio.sleep(0)
    controller.abort()
    result = await pending
    assert result == error_result(
        "ask_user_question was aborted before the user answered", "ASK_ABORTED"
    )


async def test_caller_not_live_result(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """An agent the registry does not hold gives CALLER_NOT_LIVE."""
    result = await tool.run(dsh_context, args_of(), agent=Agent("ghost"))
    assert result == error_result(
        "human interaction requires the exact live calling agent when an agent is supplied",
        "CALLER_NOT_LIVE",
    )
    assert scripted_provider.requests == []


async def test_delegated_caller_result(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """A child agent owned by another live agent gives DELEGATED_CALLER."""
    parent, child = Agent("parent"), Agent("child")
    registry: Any = dsh_context.agents
    registry.enter(parent)
    registry.enter(child, owner=parent)
    result = await tool.run(dsh_context, args_of(), agent=child)
    assert result.error == {"name": "CallerRefusedError", "code": "DELEGATED_CALLER"}
    assert result.content.startswith("Error: human interaction is unavailable while")


async def test_bad_answer_result(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """A provider's answer naming an option never offered gives BAD_ANSWER."""
    scripted_provider.push({"answers": [{"id": "pkg", "selected": ["yarn"]}]})
    result = await tool.run(dsh_context, args_of())
    assert result.error == {"name": "BadAnswerError", "code": "BAD_ANSWER"}
    assert result.content.startswith("Error: the user-questions provider gave a bad answer: ")


async def test_provider_bug_propagates(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """A provider's own exception (not a HarnessError) propagates unchanged."""
    scripted_provider.push(RuntimeError("screen gone"))
    with pytest.raises(RuntimeError, match="screen gone"):
        await tool.run(dsh_context, args_of())


async def test_cancelling_the_call_propagates(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """Cancelling the task awaiting run() raises CancelledError, not an error result."""
    scripted_provider.push(WAIT_FOR_ABORT)
    task = asyncio.ensure_future(tool.run(dsh_context, args_of()))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_invalid_arguments_result(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """Invalid arguments give INVALID_ARGS without asking anyone."""
    result = await tool.run(dsh_context, "[]")
    assert result == error_result(
        "invalid arguments: must be an object, not an array", "INVALID_ARGS"
    )
    assert scripted_provider.requests == []


# One test per kind of invalid argument ---------------------------------------------------------

TEXT_ERROR = (
    "must not contain control characters, terminal escape sequences or bidirectional overrides"
)
LONG = "x" * 1000
NPM = {"label": "npm"}


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param(
            "{questions",
            "not valid JSON: Expecting property name enclosed in double"
            " quotes: line 1 column 2 (char 1)",
            id="not-json",
        ),
        pytest.param("", "not valid JSON: Expecting value: line 1 column 1 (char 0)", id="empty"),
        pytest.param("[" * 100_000, "not valid JSON: nested too deeply", id="too-deep"),
        pytest.param(
            b"\xff{}",
            "not valid JSON: 'utf-8' codec can't decode byte 0xff in"
            " position 0: invalid start byte",
            id="not-utf8",
        ),
        pytest.param([], "must be an object, not an array", id="root-array"),
        pytest.param(None, "must be an object, not null", id="root-null"),
        pytest.param('"{}"', "must be an object, not a string", id="root-string"),
        pytest.param({}, "questions: is required", id="questions-missing"),
        pytest.param(
            {"questions": [pkg()], "model": "x"},
            "model: unknown property; allowed: questions",
            id="root-unknown-property",
        ),
        pytest.param(
            {"questions": {}},
            "questions: must be an array, not an object",
            id="questions-not-array",
        ),
        pytest.param({"questions": []}, "questions: must have at least 1 item", id="no-question"),
        pytest.param(
            args_of(*(pkg(id=f"q{i}") for i in range(7))),
            "questions: must have at most 6 items (got 7)",
            id="too-many-questions",
        ),
        pytest.param(
            {"questions": ["Which?"]},
            "questions[0]: must be an object, not a string",
            id="question-not-object",
        ),
        pytest.param(args_of(pkg(id=None)), "questions[0].id: is required", id="id-missing"),
        pytest.param(
            args_of(pkg(question=None)), "questions[0].question: is required", id="question-missing"
        ),
        pytest.param(
            args_of(pkg(detail="# Plan")),
            "questions[0].detail: unknown property;"
            " allowed: id, question, header, options, multi_select, secret, allow_other, input"
            " (a plan is not a question: the harness asks for its review itself when you leave plan"
            " mode, through dsh_user_questions.plan_review, so ask here only what you need to"
            " know)",
            id="question-unknown-property",
        ),
        pytest.param(
            args_of(pkg(multiSelect=True)),
            "questions[0].multiSelect: unknown property (did you mean multi_select?);"
            " allowed: id, question, header, options, multi_select, secret, allow_other, input",
            id="camel-case-property",
        ),
        pytest.param(
            args_of(pkg(id=7)),
            "questions[0].id: must be a string, not a number",
            id="id-not-string",
        ),
        pytest.param(args_of(pkg(id="")), "questions[0].id: must not be empty", id="id-empty"),
        pytest.param(
            args_of(pkg(id="package manager")),
            "questions[0].id: must start with a letter or digit and contain only letters,"
            " digits, '_', '-' and '.'",
            id="id-characters",
        ),
        pytest.param(
            args_of(pkg(id="a" * 65)),
            "questions[0].id: must be at most 64 characters (got 65)",
            id="id-too-long",
        ),
        pytest.param(
            args_of(pkg(question="")),
            "questions[0].question: must not be empty",
            id="question-empty",
        ),
        pytest.param(
            args_of(pkg(question=LONG)),
            "questions[0].question: must be at most 500 characters (got 1000)",
            id="question-too-long",
        ),
        pytest.param(
            args_of(pkg(header=LONG)),
            "questions[0].header: must be at most 40 characters (got 1000)",
            id="header-too-long",
        ),
        pytest.param(
            args_of(pkg(header="   ")),
            "questions[0].header: must not start with whitespace",
            id="header-blank",
        ),
        pytest.param(
            args_of(pkg(question="Which?\n")),
            f"questions[0].question: {TEXT_ERROR} (found U+000A at index 6)",
            id="trailing-newline",
        ),
        pytest.param(
            args_of(pkg(id="pkg\n")),
            "questions[0].id: must start with a letter or digit and contain only letters,"
            " digits, '_', '-' and '.'",
            id="id-trailing-newline",
        ),
        pytest.param(
            args_of(pkg(question="Pick \x1b[31mred\x1b[0m?")),
            f"questions[0].question: {TEXT_ERROR} (found U+001B at index 5)",
            id="terminal-escape",
        ),
        pytest.param(
            args_of(pkg(question="Line one\nline two?")),
            f"questions[0].question: {TEXT_ERROR} (found U+000A at index 8)",
            id="newline",
        ),
        pytest.param(
            args_of(pkg(header="Tab\there")),
            f"questions[0].header: {TEXT_ERROR} (found U+0009 at index 3)",
            id="tab",
        ),
        pytest.param(
            args_of(pkg(question="C1 \x9b31m?")),
            f"questions[0].question: {TEXT_ERROR} (found U+009B at index 3)",
            id="c1-csi",
        ),
        pytest.param(
            args_of(pkg(question="abc\u202edcba?")),
            f"questions[0].question: {TEXT_ERROR} (found U+202E at index 3)",
            id="bidi-override",
        ),
        pytest.param(
            args_of(pkg(question="abc\u2066x\u2069?")),
            f"questions[0].question: {TEXT_ERROR} (found U+2066 at index 3)",
            id="bidi-isolate",
        ),
        pytest.param(
            args_of(pkg(question="one\u2028two?")),
            f"questions[0].question: {TEXT_ERROR} (found U+2028 at index 3)",
            id="line-separator",
        ),
        pytest.param(
            args_of(pkg(question="bad \ud800 text?")),
            "questions[0].question: must not contain unpaired surrogates"
            " (it is not valid Unicode text)",
            id="lone-surrogate",
        ),
        pytest.param(
            args_of(pkg(options={"label": "x"})),
            "questions[0].options: must be an array, not an object",
            id="options-not-array",
        ),
        pytest.param(
            args_of(pkg(options=[{"label": f"o{i}"} for i in range(11)])),
            "questions[0].options: must have at most 10 items (got 11)",
            id="too-many-options",
        ),
        pytest.param(
            args_of(pkg(options=["pnpm", NPM])),
            "questions[0].options[0]: must be an object, not a string",
            id="option-not-object",
        ),
        pytest.param(
            args_of(pkg(options=[{"description": "d"}, NPM])),
            "questions[0].options[0].label: is required",
            id="label-missing",
        ),
        pytest.param(
            args_of(pkg(options=[{"label": ""}, NPM])),
            "questions[0].options[0].label: must not be empty",
            id="label-empty",
        ),
        pytest.param(
            args_of(pkg(options=[{"label": LONG}, NPM])),
            "questions[0].options[0].label: must be at most 80 characters (got 1000)",
            id="label-too-long",
        ),
        pytest.param(
            args_of(pkg(options=[{"label": "a", "description": LONG}, NPM])),
            "questions[0].options[0].description: must be at most 300 characters (got 1000)",
            id="description-too-long",
        ),
        pytest.param(
            args_of(pkg(options=[{"label": "a", "value": 1}, NPM])),
            "questions[0].options[0].value: unknown property; allowed: label, description,"
            " preview, recommended",
            id="option-unknown-property",
        ),
        pytest.param(
            args_of(pkg(multi_select="yes")),
            "questions[0].multi_select: must be a boolean, not a string",
            id="multi-select-not-boolean",
        ),
        pytest.param(
            args_of(pkg(), pkg(question="Again?")),
            "questions[1].id: duplicates questions[0].id",
            id="duplicate-id",
        ),
        pytest.param(
            args_of(pkg(options=[{"label": "Yes"}, {"label": "no"}, {"label": "YES "}])),
            "questions[0].options[2].label: duplicates questions[0].options[0].label"
            " (labels must differ ignoring case and surrounding spaces)",
            id="duplicate-label",
        ),
    ],
)
def test_each_kind_of_invalid_argument(arguments: object, expected: str) -> None:
    """Each kind of invalid argument is INVALID_ARGS with its path and an exact message."""
    assert invalid_message(arguments) == f"invalid arguments: {expected}"


def test_every_violation_is_reported_at_once() -> None:
    """All violations, schema and uniqueness alike, come in one message in a stable order."""
    arguments = {
        "questions": [
            pkg(header="", options=[{"label": "A"}, {"label": "a"}, {"label": 3}]),
            pkg(question=None, multi_select=1),
        ],
        "extra": True,
    }
    assert invalid_message(arguments) == (
        "invalid arguments: extra: unknown property; allowed: questions;"
        " questions[0].header: must not be empty;"
        " questions[0].options[2].label: must be a string, not a number;"
        " questions[1].question: is required;"
        " questions[1].multi_select: must be a boolean, not a number;"
        " questions[0].options[1].label: duplicates questions[0].options[0].label"
        " (labels must differ ignoring case and surrounding spaces);"
        " questions[1].id: duplicates questions[0].id"
    )


def test_violations_beyond_the_cap_are_summarised() -> None:
    """At most MAX_REPORTED_VIOLATIONS are listed, then a note that more exist."""
    arguments = {"questions": [{"id": i} for i in range(30)]}
    message = invalid_message(arguments)
    parts = message.removeprefix("invalid arguments: ").split("; ")
    assert len(parts) == tool.MAX_REPORTED_VIOLATIONS + 1
    assert parts[0] == "questions: must have at most 6 items (got 30)"
    assert parts[-1] == "(more violations not shown)"
    with pytest.raises(UserQuestionError) as caught:
        tool.read_arguments(arguments)
    assert caught.value.problems == tuple(parts[:-1])


def test_made_up_property_names_are_quoted_and_cut() -> None:
    """An odd property name is shown JSON-quoted in ASCII and cut short, never raw."""
    name = "\x1b[2J" + "z" * 100
    message = invalid_message({"questions": [pkg()], name: 1})
    assert message == (
        'invalid arguments: ["\\u001b[2J' + "z" * 36 + '..."]: unknown property; allowed: questions'
    )
    assert "\x1b" not in message


def test_values_are_never_echoed() -> None:
    """A message names paths and rules, never the offending value itself."""
    secret = "\x1b]0;pwned\x07" + "s" * 600
    message = invalid_message(args_of(pkg(question=secret, header=secret)))
    assert "pwned" not in message
    assert "\x1b" not in message


def test_valid_arguments_become_payloads() -> None:
    """read_arguments turns valid arguments into AskUserQuestionItem payloads."""
    [item] = tool.read_arguments(args_of(pkg(multi_select=True)))
    assert (item.id, item.header, item.multi_select) == ("pkg", "Package manager", True)
    assert [(o.label, o.description, o.recommended) for o in item.options] == [
        ("pnpm", "Fast", True),
        ("npm", None, False),
    ]
    assert (item.detail, item.intent) == (None, None)


def test_limits_are_inclusive() -> None:
    """Values exactly at each limit are accepted."""
    arguments = args_of(
        *(
            pkg(
                id=f"{i}" + "i" * (_tool_schema.MAX_ID_LENGTH - 1),
                header="h" * _tool_schema.MAX_HEADER_LENGTH,
                question="q" * _tool_schema.MAX_QUESTION_LENGTH,
                options=[
                    {
                        "label": f"{n}" + "l" * (_tool_schema.MAX_LABEL_LENGTH - 1),
                        "description": "d" * _tool_schema.MAX_DESCRIPTION_LENGTH,
                    }
                    for n in range(_tool_schema.MAX_OPTIONS)
                ],
            )
            for i in range(_tool_schema.MAX_QUESTIONS)
        )
    )
    assert len(tool.read_arguments(arguments)) == _tool_schema.MAX_QUESTIONS


# Nothing the model sends makes run() raise -----------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
text_leaf = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["pnpm", "npm", "Yes", " yes", "a\x1bb", "\u202e", "\ud800", "", "a\n"]),
)
leaf = st.one_of(text_leaf, st.booleans(), st.none(), st.integers(), json_values)
option_like = (
    st.dictionaries(st.sampled_from(["label", "description", "extra"]), leaf, max_size=3) | leaf
)
question_like = (
    st.dictionaries(
        st.sampled_from(["id", "question", "header", "options", "multi_select", "detail"]),
        st.one_of(leaf, st.lists(option_like, max_size=4)),
        max_size=6,
    )
    | leaf
)
shaped = st.fixed_dictionaries(
    {"questions": st.lists(question_like, max_size=4) | leaf},
    optional={"extra": leaf},
)
model_output = st.one_of(
    json_values,
    shaped,
    shaped.map(lambda value: json.dumps(value, ensure_ascii=False)),
    st.text(),
    st.binary(max_size=20),
)


@pytest.mark.fuzz
@given(arguments=model_output)
def test_run_never_raises(arguments: object) -> None:
    """For any JSON value or text, run() returns an answer or an INVALID_ARGS result."""
    ctx = HarnessContext()
    ctx.register(plugin)
    ctx.user_questions.register_provider(ScriptedProvider({"answers": []}))
    loop = asyncio.new_event_loop()
    try:
        result = loop.run_until_complete(tool.run(ctx, arguments))
    finally:
        loop.close()
    if result.is_error:
        assert result.error == {"name": "InvalidRequestError", "code": "INVALID_ARGS"}
        assert result.content.startswith("Error: invalid arguments: ")
        assert "\x1b" not in result.content
        # the fallback for validators that disagree never shows
        assert "breaks the schema" not in result.content
    else:
        assert result.content == '{"answers":[]}'


@pytest.mark.fuzz
@given(arguments=st.one_of(shaped, json_values))
def test_the_fast_validator_is_never_more_lenient(arguments: object) -> None:
    """Whatever the reference validator rejects, read_arguments rejects too."""
    if jsonschema.Draft7Validator(tool.input_schema()).is_valid(arguments):
        return
    with pytest.raises(UserQuestionError) as caught:
        tool.read_arguments(arguments)
    assert caught.value.code == UserQuestionErrorCode.INVALID_ARGS


# Rules models trip on, checked after the schema -------------------------------------------------


@pytest.mark.parametrize("label", ["Other", "other", "OTHER  ", "Other\u00a0"])
def test_an_option_labelled_other_is_refused_with_a_hint(label: str) -> None:
    """An "Other" option (any case, trimmed) is refused: the UI always adds one."""
    arguments = args_of(pkg(options=[{"label": "npm"}, {"label": label}]))
    assert invalid_message(arguments) == (
        'invalid arguments: questions[0].options[1].label: must not be "Other": the UI always'
        ' adds an "Other" choice for the user\'s own words (and a way to skip); leave it out'
    )


def test_other_inside_a_longer_label_is_fine() -> None:
    """Only a label that is exactly "Other" is refused; "Other tools" is an ordinary choice."""
    arguments = args_of(pkg(options=[{"label": "Other tools"}, {"label": "npm"}]))
    assert [o.label for o in tool.read_arguments(arguments)[0].options] == ["Other tools", "npm"]


@pytest.mark.parametrize("options", [None, []])
def test_multi_select_needs_two_options(options: list[Any] | None) -> None:
    """multi_select true on a question without options is refused at multi_select."""
    arguments = args_of(pkg(multi_select=True, options=options))  # None leaves options out
    assert invalid_message(arguments) == (
        "invalid arguments: questions[0].multi_select: may be true only with at least 2 options"
        " (got 0)"
    )


def test_a_single_option_is_refused() -> None:
    """A question has no options (free text) or at least two; one alone is refused."""
    arguments = args_of(pkg(options=[{"label": "npm"}]))
    assert invalid_message(arguments) == (
        "invalid arguments: questions[0].options: must have no items (for a free-text answer)"
        " or at least 2 (got 1)"
    )


def test_a_single_option_on_a_multi_select_breaks_both_rules() -> None:
    """One option with multi_select true is refused for the options and for multi_select."""
    arguments = args_of(pkg(options=[{"label": "npm"}], multi_select=True))
    assert invalid_message(arguments) == (
        "invalid arguments: questions[0].options: must have no items (for a free-text answer)"
        " or at least 2 (got 1); questions[0].multi_select: may be true only with at least 2"
        " options (got 1)"
    )


def test_free_text_questions_have_no_options() -> None:
    """Options left out or empty both mean a free-text question."""
    arguments = args_of(pkg(id="a", options=[]), {"id": "b", "question": "Name?"})
    assert [q.options for q in tool.read_arguments(arguments)] == [(), ()]


@pytest.mark.parametrize("space", ["\u00a0", "\u3000", "\u2003"])
def test_unicode_white_space_may_not_lead(space: str) -> None:
    """Text may not start with any white space, not only the ASCII space the pattern names."""
    assert invalid_message(args_of(pkg(header=space + "Tag"))) == (
        "invalid arguments: questions[0].header: must not start with whitespace"
    )


def test_invalid_args_carry_their_problems_as_data() -> None:
    """INVALID_ARGS lists each problem in ``problems``, the same strings as the message."""
    with pytest.raises(UserQuestionError) as caught:
        tool.read_arguments(args_of(pkg(id=7, options=[{"label": "Other"}, NPM])))
    assert caught.value.code == UserQuestionErrorCode.INVALID_ARGS
    assert caught.value.problems == (
        "questions[0].id: must be a string, not a number",
        'questions[0].options[0].label: must not be "Other": the UI always adds an "Other"'
        " choice for the user's own words (and a way to skip); leave it out",
    )
    assert caught.value.message == "invalid arguments: " + "; ".join(caught.value.problems)


def test_nulls_for_optional_properties_mean_left_out() -> None:
    """A strict-mode call sends null for every optional property; it reads as left out."""
    arguments = {
        "questions": [
            {"id": "a", "question": "Name?", "header": None, "options": None, "multi_select": None},
            {
                "id": "b",
                "question": "Which?",
                "header": "Tag",
                "options": [{"label": "x", "description": None}, {"label": "y"}],
                "multi_select": None,
            },
        ]
    }
    first, second = tool.read_arguments(json.dumps(arguments))
    assert (first.header, first.options, first.multi_select) == (None, (), False)
    assert [(o.label, o.description) for o in second.options] == [("x", None), ("y", None)]
    assert arguments["questions"][0]["header"] is None  # the caller's value is unchanged


def test_null_for_a_required_property_is_still_an_error() -> None:
    """Only optional properties may be null: a null id or question is reported."""
    assert invalid_message(args_of(pkg(id=None) | {"id": None})) == (
        "invalid arguments: questions[0].id: must be a string, not null"
    )


async def test_result_content_never_holds_a_lone_surrogate(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """A provider error quoting a lone surrogate still gives content any API can encode."""
    scripted_provider.push(UserQuestionError("bad \ud800 text", "ASK_ABORTED"))
    result = await tool.run(dsh_context, args_of())
    assert result.content == "Error: bad \ufffd text"
    result.content.encode("utf-8")
    assert tool.ToolResult("\U0001f600 ok").content == "\U0001f600 ok"


async def test_custom_text_with_a_lone_surrogate_is_a_bad_answer(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """A provider's custom text holding a lone surrogate is refused (BAD_ANSWER), never passed
    on: the result names the item and stays valid Unicode."""
    arguments = args_of({"id": "name", "question": "Project name?"})
    scripted_provider.push({"answers": [{"id": "name", "selected": [], "custom": "demo\udc80"}]})
    result = await tool.run(dsh_context, arguments)
    assert result.error == {"name": "BadAnswerError", "code": "BAD_ANSWER"}
    assert "unpaired surrogate" in result.content
    assert "name" in result.content
    result.content.encode("utf-8")


def test_the_answer_rules_refuse_a_lone_surrogate_in_custom() -> None:
    """rules.check_answer refuses custom text holding a lone surrogate, naming the item."""
    from dsh_user_questions import AskUserQuestionItem, rules

    question = AskUserQuestionItem(id="name", question="Project name?")
    with pytest.raises(UserQuestionError) as caught:
        rules.check_answer([question], {"answers": [{"id": "name", "custom": "x\ud83d"}]})
    assert caught.value.code == UserQuestionErrorCode.BAD_ANSWER
    assert caught.value.problems == (
        'answers[0] (question "name") has custom text with an unpaired surrogate (not Unicode)',
    )
    paired = rules.check_answer(
        [question], {"answers": [{"id": "name", "custom": "ok \U0001f600"}]}
    )
    assert paired.answers[0].custom == "ok \U0001f600"


class TestOnePath:
    """Issue 26: `run` is the one path (with a key), `result_of` the one answer-to-text step."""

    async def test_the_error_name_is_the_exceptions_class_name(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """A cancelled ask's result names AskCancelledError, as the README says."""
        scripted_provider.push(UserQuestionError.cancelled())
        result = await tool.run(dsh_context, args_of())
        assert result.error == {"name": "AskCancelledError", "code": "ASK_CANCELLED"}

    async def test_the_key_reaches_the_request(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """run(key=...) asks with that key, for a durable provider's one record per call."""
        scripted_provider.push(answer(AskUserQuestionAnswerItem(id="pkg", selected=("npm",))))
        await tool.run(dsh_context, args_of(), key="fw:run-1:call-1")
        (request,) = scripted_provider.requests
        assert request.key == "fw:run-1:call-1"

    async def test_raise_for_raises_those_failures_and_no_other(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """The classes in raise_for propagate; every other failure is still the result."""
        scripted_provider.push(UserQuestionError.store_unusable("gone"))
        with pytest.raises(UserQuestionError) as caught:
            await tool.run(dsh_context, args_of(), raise_for=(StoreError,))
        assert caught.value.code == "STORE_UNUSABLE"
        scripted_provider.push(UserQuestionError.cancelled())
        result = await tool.run(dsh_context, args_of(), raise_for=(StoreError,))
        assert result.error == {"name": "AskCancelledError", "code": "ASK_CANCELLED"}

    def test_result_of_an_answer_hides_a_secret(self) -> None:
        """result_of gives the placeholder to the model and the clear text to the harness."""
        questions = tool.read_arguments(
            {"questions": [{"id": "token", "question": "Token?", "secret": True}]}
        )
        answered = AskUserQuestionAnswer.from_dict(
            {"answers": [{"id": "token", "selected": [], "custom": "s3cr3t"}]}
        )
        result = tool.result_of(questions, answered)
        assert "s3cr3t" not in result.content
        assert rules.SECRET_PLACEHOLDER in result.content
        assert result.secrets == {"token": "s3cr3t"}
        assert "s3cr3t" in tool.result_of(questions, answered, reveal_secrets=True).content


class TestAllowOther:
    """The model may ask for a choice among its options only: ``"allow_other": false``."""

    def test_it_reaches_the_question(self) -> None:
        """allow_other false becomes the payload's; left out or null, free text is allowed."""
        closed, plain, nulled = tool.read_arguments(
            args_of(pkg(allow_other=False), pkg(id="b"), pkg(id="c", allow_other=None))
        )
        assert (closed.allow_other, plain.allow_other, nulled.allow_other) == (False, True, True)

    def test_strict_mode_nulls_it(self) -> None:
        """The strict schema carries it as optional, like every other flag."""
        strict = tool.input_schema(strict=True)["properties"]["questions"]["items"]
        assert strict["properties"]["allow_other"]["type"] == ["boolean", "null"]
        assert "allow_other" in strict["required"]

    def test_without_options_it_is_refused_with_its_path(self) -> None:
        """allow_other false on a free-text question could never be answered: INVALID_ARGS
        naming the path, before anything is asked."""
        message = invalid_message(args_of(pkg(options=None, allow_other=False)))
        assert "questions[0].allow_other: may be false only with options" in message

    def test_it_must_be_a_boolean(self) -> None:
        """A string is refused by the schema, with its path."""
        message = invalid_message(args_of(pkg(allow_other="no")))
        assert "questions[0].allow_other" in message
