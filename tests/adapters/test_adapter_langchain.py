"""The LangChain adapter through a tool-call loop with langchain-core's own fake chat model.

``GenericFakeChatModel`` plays the model (its scripted ``AIMessage`` tool calls); the loop is
LangChain's basic one: invoke the model, run each tool call with ``tool.ainvoke(call)``, append
the ``ToolMessage``, repeat until the model stops calling tools. A `ScriptedProvider` plays the
human.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("langchain_core", reason="the LangChain adapter tests need its extra")

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from dsh_user_questions import AskUserQuestionRequest, UserQuestionError, tool
from dsh_user_questions.adapters.langchain import ask_user_question_tool
from dsh_user_questions.harness import AbortController, HarnessContext
from dsh_user_questions.harness import Agent as HarnessAgent
from dsh_user_questions.testing import WAIT_FOR_ABORT, ScriptedProvider

GOOD = {
    "questions": [
        {
            "id": "pkg",
            "question": "Which package manager?",
            "options": [{"label": "pnpm"}, {"label": "npm"}],
        }
    ]
}
BAD = {"questions": [{"id": "pkg", "question": "Which package manager?", "multiSelect": True}]}
ANSWER = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}


def _model(*calls: dict[str, Any]) -> GenericFakeChatModel:
    turns: list[AIMessage | str] = [
        AIMessage(
            content="",
            tool_calls=[{"name": tool.NAME, "args": args, "id": f"call-{i}", "type": "tool_call"}],
        )
        for i, args in enumerate(calls)
    ]
    return GenericFakeChatModel(messages=iter([*turns, "done"]))


async def _loop(
    model: GenericFakeChatModel, made: BaseTool, config: RunnableConfig | None = None
) -> list[BaseMessage]:
    """Run the model and its tool calls until it answers without one; the whole history."""
    history: list[BaseMessage] = [HumanMessage("Set up the project")]
    while True:
        reply = await model.ainvoke(history, config)
        history.append(reply)
        if not isinstance(reply, AIMessage) or not reply.tool_calls:
            return history
        for call in reply.tool_calls:
            history.append(await made.ainvoke(call, config))


def _tool_messages(history: list[BaseMessage]) -> list[ToolMessage]:
    return [message for message in history if isinstance(message, ToolMessage)]


def test_the_tool_carries_the_tool_schema(dsh_context: HarnessContext) -> None:
    """The StructuredTool has the tool's name, description and JSON Schema, also as sent."""
    made = ask_user_question_tool(dsh_context)
    assert made.name == tool.NAME
    assert made.description == tool.DESCRIPTION
    assert made.args_schema == tool.input_schema()
    sent = convert_to_openai_tool(made)["function"]
    assert sent["description"] == tool.DESCRIPTION
    # LangChain puts the tool's description at the top of the parameters too; the rest is ours.
    assert {**sent["parameters"], "description": None} == {
        **tool.input_schema(),
        "description": None,
    }


async def test_an_answer_reaches_the_model(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """A valid call is asked through the provider; the ToolMessage carries the answer JSON."""
    scripted_provider.push(ANSWER)
    history = await _loop(_model(GOOD), ask_user_question_tool(dsh_context))
    (message,) = _tool_messages(history)
    assert message.status == "success"
    assert message.tool_call_id == "call-0"
    assert json.loads(str(message.content)) == ANSWER


async def test_a_bad_call_is_an_error_result_and_the_retry_is_answered(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """INVALID_ARGS is a ToolException result listing the problems; the second call works."""
    scripted_provider.push(ANSWER)
    history = await _loop(_model(BAD, GOOD), ask_user_question_tool(dsh_context))
    first, second = _tool_messages(history)
    assert first.status == "error"
    assert str(first.content).startswith("Error: invalid arguments: ")
    assert "questions[0].multiSelect: unknown property (did you mean multi_select?)" in str(
        first.content
    )
    assert second.status == "success"
    assert json.loads(str(second.content)) == ANSWER
    assert len(scripted_provider.requests) == 1


async def test_a_cancelled_question_is_an_error_result(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """The provider's ASK_CANCELLED comes back as an error ToolMessage with its exact text."""
    scripted_provider.push(UserQuestionError.cancelled())
    history = await _loop(_model(GOOD), ask_user_question_tool(dsh_context))
    (message,) = _tool_messages(history)
    assert message.status == "error"
    assert message.content == "Error: the user cancelled ask_user_question"


async def test_context_agent_and_signal_come_from_the_run_config(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """Without a context in the closure, the run's configurable gives context, agent, signal."""
    caller = HarnessAgent("main")
    dsh_context.agents.enter(caller)
    controller = AbortController()
    scripted_provider.push(ANSWER)
    config: RunnableConfig = {
        "configurable": {"harness": dsh_context, "agent": caller, "signal": controller.signal}
    }
    await _loop(_model(GOOD), ask_user_question_tool(), config)
    request: AskUserQuestionRequest = scripted_provider.requests[0]
    assert request.agent is caller
    assert request.signal is controller.signal


async def test_cancelling_the_run_withdraws_the_question(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """Cancelling the task running the loop cancels the pending ask; the provider sees it."""
    asked = asyncio.Event()
    withdrawn = asyncio.Event()

    async def never_answers(_request: AskUserQuestionRequest) -> Any:
        asked.set()
        try:
            await asyncio.Event().wait()
        finally:
            withdrawn.set()

    scripted_provider.push(never_answers)
    run = asyncio.ensure_future(_loop(_model(GOOD), ask_user_question_tool(dsh_context)))
    await asyncio.wait_for(asked.wait(), 30)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(run, 30)
    assert withdrawn.is_set()


async def test_an_aborted_signal_is_an_error_result(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """The adapter's abort signal aborts the ask; the ToolMessage says ASK_ABORTED's text."""
    controller = AbortController()
    scripted_provider.push(WAIT_FOR_ABORT)
    made = ask_user_question_tool(dsh_context, signal=controller.signal)
    run = asyncio.ensure_future(_loop(_model(GOOD), made))
    while not scripted_provider.requests:  # noqa: ASYNC110  (the provider has no hook to wait on)
        await asyncio.sleep(0.01)
    controller.abort()
    (message,) = _tool_messages(await asyncio.wait_for(run, 30))
    assert message.status == "error"
    assert message.content == f"Error: {UserQuestionError.aborted().message}"


# From invoke: a synchronous chain or graph ------------------------------------------------------


class _AgentModel(GenericFakeChatModel):
    """LangChain's fake chat model, taking the tools an agent binds (it calls from its script)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def _agent_model(*calls: dict[str, Any]) -> _AgentModel:
    return _AgentModel(messages=_model(*calls).messages)


def _sync_loop(
    model: GenericFakeChatModel, made: BaseTool, config: RunnableConfig | None = None
) -> list[BaseMessage]:
    """`_loop` with ``invoke``: what a synchronous chain does."""
    history: list[BaseMessage] = [HumanMessage("Set up the project")]
    while True:
        reply = model.invoke(history, config)
        history.append(reply)
        if not isinstance(reply, AIMessage) or not reply.tool_calls:
            return history
        for call in reply.tool_calls:
            history.append(made.invoke(call, config))


class TestInvoke:
    """The tool works from ``invoke`` as from ``ainvoke``: the ask runs on the service's
    question loop (the core's sync path), the calling thread waiting.

    Each failed on main: LangChain's bare NotImplementedError ("StructuredTool does not
    support sync invocation"), the human never asked.
    """

    def test_an_answer_reaches_the_model(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """A sync tool-call loop: asked through the provider, the answer JSON in the message."""
        scripted_provider.push(ANSWER)
        history = _sync_loop(_model(GOOD), ask_user_question_tool(dsh_context))
        (message,) = _tool_messages(history)
        assert message.status == "success"
        assert json.loads(str(message.content)) == ANSWER
        assert scripted_provider.requests[0].questions[0].id == "pkg"

    def test_a_bad_call_and_a_cancel_are_error_results(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """INVALID_ARGS and ASK_CANCELLED come back as error ToolMessages, as from ainvoke."""
        scripted_provider.push(UserQuestionError.cancelled())
        history = _sync_loop(_model(BAD, GOOD), ask_user_question_tool(dsh_context))
        first, second = _tool_messages(history)
        assert first.status == "error"
        assert str(first.content).startswith("Error: invalid arguments: ")
        assert second.status == "error"
        assert second.content == "Error: the user cancelled ask_user_question"

    def test_create_agent_invoke_with_the_context_from_the_run_config(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """langchain's create_agent run with graph.invoke; the harness comes from the config."""
        from langchain.agents import create_agent

        scripted_provider.push(ANSWER)
        agent = create_agent(_agent_model(GOOD), [ask_user_question_tool()])
        config: RunnableConfig = {"configurable": {"harness": dsh_context}}
        final = agent.invoke({"messages": [HumanMessage("Set up the project")]}, config)
        (message,) = _tool_messages(final["messages"])
        assert message.status == "success"
        assert json.loads(str(message.content)) == ANSWER
        assert final["messages"][-1].content == "done"

    async def test_invoke_from_a_thread_while_a_loop_runs(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """invoke in a worker thread of an async app: the same ask, the app's loop free."""
        scripted_provider.push(ANSWER)
        made = ask_user_question_tool(dsh_context)
        history = await asyncio.to_thread(_sync_loop, _model(GOOD), made)
        (message,) = _tool_messages(history)
        assert json.loads(str(message.content)) == ANSWER
