"""Adapters never crash a run: any model argument is the framework's retry, with the tool's words.

Issue 19, point 5. For each framework, a fake model sends arguments no schema allows (an
array, a JSON string, a number, ``null``, reserved names such as ``run``, ``ctx``, ``self``,
``config``); the run goes on, the model reads exactly what `tool.read_arguments` says, and
nobody is asked. Failures of the ask itself use the framework's error channel; a missing harness
context names the framework's own way of passing it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from dsh_user_questions import UserQuestionError, tool
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import ScriptedProvider

GOOD = {
    "questions": [
        {"id": "pkg", "question": "Which one?", "options": [{"label": "pnpm"}, {"label": "npm"}]}
    ]
}
ANSWER = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}

# Arguments as the model's JSON text: each must be refused with the tool's own message.
BAD_TEXTS = [
    "[1, 2]",
    json.dumps(json.dumps({"questions": []})),  # a JSON string holding JSON
    "42",
    "null",
    "true",
    json.dumps({**GOOD, "run": 1}),
    json.dumps({**GOOD, "ctx": {}}),
    json.dumps({**GOOD, "self": None}),
    json.dumps({**GOOD, "config": {"configurable": {}}}),
    json.dumps({**GOOD, "run_manager": 1, "callbacks": []}),
    json.dumps({**GOOD, "dsh_run_config": 1}),
]
# What LangChain can carry: a tool call's arguments are always an object there.
BAD_OBJECTS = [json.loads(text) for text in BAD_TEXTS if text.startswith("{")]


def _expected(arguments: object) -> str:
    """What `tool.read_arguments` says of these arguments (without the ``Error: `` prefix)."""
    with pytest.raises(UserQuestionError) as caught:
        tool.read_arguments(arguments)
    return caught.value.message


def _problem(arguments: object) -> str | None:
    """The tool's message for these arguments, or None when they are valid."""
    try:
        tool.read_arguments(arguments)
    except UserQuestionError as err:
        return err.message
    return None


# pydantic-ai --------------------------------------------------------------------------------


# openai-agents ------------------------------------------------------------------------------


def _agents_run(text: str, made: Any) -> Any:
    from agents import Agent, RunConfig, Runner
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    def finish(call: Any) -> Any:
        items = call.input if isinstance(call.input, list) else []
        outputs = [
            str(i["output"])
            for i in items
            if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]
        return [assistant_message(json.dumps(outputs))]

    model = ScriptedModel(
        [[function_call(tool.NAME, text, call_id="c1")], ModelStep.respond(finish)]
    )
    agent = Agent(name="assistant", model=model, tools=[made])
    return Runner.run(agent, "go", run_config=RunConfig(tracing_disabled=True))


class TestOpenAIAgents:
    """The Agents SDK: any bad argument gets the tool's words."""

    @pytest.mark.parametrize("text", BAD_TEXTS)
    async def test_openai_agents_gives_any_bad_argument_the_tools_words(
        self, text: str, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """The SDK has no retry signal: the output is the tool's error, and the run goes on."""
        pytest.importorskip("agents")
        from dsh_user_questions.adapters.openai_agents import ask_user_question_tool

        result = await _agents_run(text, ask_user_question_tool(dsh_context, strict=False))
        assert json.loads(result.final_output) == [f"Error: {_expected(text)}"]
        assert scripted_provider.requests == []

    async def test_openai_agents_missing_context_names_runner_context(self) -> None:
        pytest.importorskip("agents")
        from agents.exceptions import UserError

        from dsh_user_questions.adapters.openai_agents import ask_user_question_tool

        with pytest.raises(
            UserError, match=r"no harness context.*Runner\.run\(agent, input, context=ctx\)"
        ):
            await _agents_run(json.dumps(GOOD), ask_user_question_tool())


# LangChain ----------------------------------------------------------------------------------


# Any JSON at all --------------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["questions", "run", "ctx", "self", "config", "id", "x"])
            | st.text(max_size=4),
            inner,
            max_size=3,
        )
    ),
    max_leaves=12,
)


class TestPydanticAI:
    """pydantic-ai: any bad argument is a retry with the tool's words."""

    @pytest.mark.parametrize("text", BAD_TEXTS)
    async def test_pydantic_ai_retries_any_bad_argument_with_the_tools_words(
        self, text: str, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        pytest.importorskip("pydantic_ai")
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart
        from pydantic_ai.models.function import FunctionModel

        from dsh_user_questions.adapters.pydantic_ai import ask_user_question_tool

        seen: list[Any] = []

        def model(messages: list[Any], _info: Any) -> ModelResponse:
            last = messages[-1]
            if isinstance(last, ModelRequest):
                seen.extend(p for p in last.parts if p.part_kind in ("retry-prompt", "tool-return"))
            if len(seen) == 0:
                return ModelResponse(parts=[ToolCallPart(tool.NAME, text, tool_call_id="c1")])
            if len(seen) == 1:
                return ModelResponse(parts=[ToolCallPart(tool.NAME, GOOD, tool_call_id="c2")])
            return ModelResponse(parts=[TextPart(str(seen[-1].content))])

        scripted_provider.push(ANSWER)
        agent = Agent(FunctionModel(model), tools=[ask_user_question_tool(dsh_context)])
        result = await agent.run("go")
        assert json.loads(result.output) == ANSWER
        retry = seen[0]
        assert retry.part_kind == "retry-prompt" or getattr(retry, "outcome", None) == "retried"
        assert _expected(text) in str(retry.content)
        assert len(scripted_provider.requests) == 1

    async def test_pydantic_ai_a_cancelled_ask_is_a_failed_tool_result(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """ASK_CANCELLED is pydantic-ai's failed tool result (not a success), with the tool's
        text."""
        pytest.importorskip("pydantic_ai")
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart
        from pydantic_ai.models.function import FunctionModel

        from dsh_user_questions.adapters.pydantic_ai import ask_user_question_tool

        seen: list[Any] = []

        def model(messages: list[Any], _info: Any) -> ModelResponse:
            last = messages[-1]
            if isinstance(last, ModelRequest):
                seen.extend(p for p in last.parts if p.part_kind in ("retry-prompt", "tool-return"))
            if not seen:
                return ModelResponse(parts=[ToolCallPart(tool.NAME, GOOD, tool_call_id="c1")])
            return ModelResponse(parts=[TextPart("ok")])

        scripted_provider.push(UserQuestionError.cancelled())
        agent = Agent(FunctionModel(model), tools=[ask_user_question_tool(dsh_context)])
        await agent.run("go")
        (part,) = seen
        assert part.part_kind == "tool-return"
        assert part.outcome == "failed"
        assert part.content == f"Error: {UserQuestionError.cancelled().message}"

    async def test_pydantic_ai_missing_context_names_deps(self) -> None:
        pytest.importorskip("pydantic_ai")
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelResponse, ToolCallPart
        from pydantic_ai.models.function import FunctionModel

        from dsh_user_questions.adapters.pydantic_ai import ask_user_question_tool

        def model(_messages: list[Any], _info: Any) -> ModelResponse:
            return ModelResponse(parts=[ToolCallPart(tool.NAME, GOOD, tool_call_id="c1")])

        agent = Agent(FunctionModel(model), tools=[ask_user_question_tool()])
        with pytest.raises(TypeError, match=r"no harness context.*deps=ctx"):
            await agent.run("go", deps=object())

    @settings(max_examples=100)
    @given(value=_JSON)
    def test_pydantic_ai_any_json_is_a_retry_or_valid(self, value: object) -> None:
        """pydantic-ai's validation step of the tool: any JSON is ModelRetry with the tool's words,
        or passes as exactly the arguments tool.read_arguments accepts."""
        pytest.importorskip("pydantic_ai")
        from pydantic_ai import ModelRetry

        from dsh_user_questions.adapters.pydantic_ai import ask_user_question_tool

        validator = ask_user_question_tool().function_schema.validator
        text = json.dumps(value)
        problem = _problem(text)
        if problem is None:
            assert validator.validate_json(text) == value
        else:
            with pytest.raises(ModelRetry) as retry:
                validator.validate_json(text)
            assert str(retry.value) == problem


class TestLangChain:
    """LangChain and LangGraph: any bad argument is an error message (or a pause), never a crash."""

    @pytest.mark.parametrize("arguments", BAD_OBJECTS)
    async def test_langchain_gives_any_bad_argument_an_error_tool_message(
        self,
        arguments: dict[str, Any],
        dsh_context: HarnessContext,
        scripted_provider: ScriptedProvider,
    ) -> None:
        """Names LangChain injects (config, run_manager, callbacks) are the model's own, refused."""
        pytest.importorskip("langchain_core")
        from dsh_user_questions.adapters.langchain import ask_user_question_tool

        made = ask_user_question_tool(dsh_context)
        message = await made.ainvoke(
            {"name": tool.NAME, "args": arguments, "id": "c1", "type": "tool_call"}
        )
        assert message.status == "error"
        assert message.content == f"Error: {_expected(arguments)}"
        assert scripted_provider.requests == []

    async def test_langchain_a_json_text_input_is_checked_not_crashed(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """``ainvoke("[1, 2]")`` (a text, which LangChain refuses for a JSON-Schema tool) is
        checked."""
        pytest.importorskip("langchain_core")
        from langchain_core.tools import ToolException

        from dsh_user_questions.adapters.langchain import ask_user_question_tool

        made = ask_user_question_tool(dsh_context)
        made.handle_tool_error = False
        with pytest.raises(ToolException, match="must be an object, not an array"):
            await made.ainvoke("[1, 2]")

    async def test_langchain_missing_context_names_configurable(self) -> None:
        pytest.importorskip("langchain_core")
        from dsh_user_questions.adapters.langchain import ask_user_question_tool

        with pytest.raises(
            TypeError, match=r'no harness context.*config=\{"configurable": \{"harness": ctx\}\}'
        ):
            await ask_user_question_tool().ainvoke(
                {"name": tool.NAME, "args": GOOD, "id": "c1", "type": "tool_call"}
            )

    @settings(max_examples=100)
    @given(value=_JSON.filter(lambda v: isinstance(v, dict)))
    def test_langgraph_any_object_is_an_error_message_or_a_pause(
        self, value: dict[str, Any]
    ) -> None:
        """The LangGraph tool outside a graph: bad arguments are its error message, never a
        crash."""
        pytest.importorskip("langgraph")
        from dsh_user_questions.adapters.langgraph import ask_user_question_tool

        problem = _problem(value)
        if problem is not None:
            message = ask_user_question_tool().invoke(
                {"name": tool.NAME, "args": value, "id": "c1", "type": "tool_call"}
            )
            assert message.status == "error"
            assert message.content == f"Error: {problem}"
