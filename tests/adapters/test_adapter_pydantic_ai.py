"""The pydantic-ai adapter through a full agent run with pydantic-ai's own FunctionModel.

The FunctionModel plays the model: it calls ``ask_user_question``, reads what the tool sent
back (a retry prompt or the result), and ends the run with that text; a `ScriptedProvider`
plays the human.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="the pydantic-ai adapter tests need its extra")

from pydantic_ai import Agent, CancellationToken, RunCancelled, UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from dsh_user_questions import AskUserQuestionRequest, UserQuestionError, tool
from dsh_user_questions.adapters.pydantic_ai import ask_user_question_tool
from dsh_user_questions.harness import (
    AbortController,
    HarnessContext,
)
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


class ScriptedModel:
    """The model's side of the loop: sends each scripted call, then ends with the last result."""

    def __init__(self, *calls: dict[str, Any]) -> None:
        self.calls = list(calls)
        self.seen: list[ToolReturnPart | RetryPromptPart] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, ModelRequest):
            self.seen.extend(
                part for part in last.parts if isinstance(part, (ToolReturnPart, RetryPromptPart))
            )
        if self.calls:
            args = self.calls.pop(0)
            return ModelResponse(parts=[ToolCallPart(tool.NAME, args, tool_call_id="c1")])
        return ModelResponse(parts=[TextPart(str(self.seen[-1].content))])


def _agent(model: ScriptedModel, **kwargs: Any) -> Agent[Any, str]:
    return Agent(FunctionModel(model), **kwargs)


class TestTool:
    """The tool in an agent run: its schema, the answer, the run's deps."""

    async def test_the_tool_has_the_tool_schema_and_description(
        self, dsh_context: HarnessContext
    ) -> None:
        """The model sees ask_user_question with the tool module's schema and description."""
        made = ask_user_question_tool(dsh_context)
        definition = made.tool_def
        assert definition.name == tool.NAME
        assert definition.description == tool.DESCRIPTION
        assert definition.parameters_json_schema == tool.input_schema()

    async def test_an_answer_reaches_the_model(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """A valid call is asked through the provider and the answer JSON goes back to the model."""
        scripted_provider.push(ANSWER)
        model = ScriptedModel(GOOD)
        result = await _agent(model, tools=[ask_user_question_tool(dsh_context)]).run("go")
        assert json.loads(result.output) == ANSWER
        assert scripted_provider.requests[0].questions[0].id == "pkg"

    async def test_context_agent_and_signal_come_from_the_run_deps(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """Without a context in the closure, deps give the context, the agent and the signal."""

        @dataclass
        class Deps:
            harness: HarnessContext
            agent: HarnessAgent
            signal: Any

        caller = HarnessAgent("main")
        dsh_context.agents.enter(caller)
        controller = AbortController()
        scripted_provider.push(ANSWER)
        agent = _agent(ScriptedModel(GOOD), deps_type=Deps, tools=[ask_user_question_tool()])
        await agent.run("go", deps=Deps(dsh_context, caller, controller.signal))
        request: AskUserQuestionRequest = scripted_provider.requests[0]
        assert request.agent is caller
        assert request.signal is controller.signal

    async def test_deps_without_a_context_fail_loudly(
        self, scripted_provider: ScriptedProvider
    ) -> None:
        """A run whose deps hold no harness context raises a TypeError saying how to give one."""
        agent = _agent(ScriptedModel(GOOD), tools=[ask_user_question_tool()])
        with pytest.raises(TypeError, match="no harness context"):
            await agent.run("go", deps=object())


class TestBadCalls:
    """A bad call is retried once with every problem; a second ends the run."""

    async def test_a_bad_call_is_retried_once_with_every_problem(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """INVALID_ARGS becomes ModelRetry: the model sees the problems and its second call
        works."""
        scripted_provider.push(ANSWER)
        model = ScriptedModel(BAD, GOOD)
        result = await _agent(model, tools=[ask_user_question_tool(dsh_context)]).run("go")
        assert json.loads(result.output) == ANSWER
        retry = model.seen[0]
        # pydantic-ai 2.54 sends a RetryPromptPart; later versions a ToolReturnPart marked retried.
        assert isinstance(retry, RetryPromptPart) or getattr(retry, "outcome", None) == "retried"
        assert "invalid arguments:" in str(retry.content)
        assert "questions[0].multiSelect: unknown property (did you mean multi_select?)" in str(
            retry.content
        )
        assert len(scripted_provider.requests) == 1

    async def test_a_second_bad_call_ends_the_run(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """The retry budget is one: bad arguments twice end the run, and nobody is asked."""
        model = ScriptedModel(BAD, BAD)
        with pytest.raises(UnexpectedModelBehavior, match="retries"):
            await _agent(model, tools=[ask_user_question_tool(dsh_context)]).run("go")
        assert scripted_provider.requests == []


class TestCancel:
    """Cancelling or aborting the run withdraws the question."""

    async def test_cancelling_the_run_withdraws_the_question(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """pydantic-ai's run cancellation cancels the pending ask; the provider sees it
        withdrawn."""
        asked = asyncio.Event()
        withdrawn = asyncio.Event()

        async def never_answers(_request: AskUserQuestionRequest) -> Any:
            asked.set()
            try:
                await asyncio.Event().wait()
            finally:
                withdrawn.set()

        scripted_provider.push(never_answers)
        token = CancellationToken()
        agent = _agent(ScriptedModel(GOOD), tools=[ask_user_question_tool(dsh_context)])
        run = asyncio.ensure_future(agent.run("go", cancellation_token=token))
        await asyncio.wait_for(asked.wait(), 30)
        token.cancel()
        with pytest.raises(RunCancelled):
            await asyncio.wait_for(run, 30)
        assert withdrawn.is_set()

    async def test_an_aborted_signal_ends_the_ask_and_the_model_hears_why(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """The adapter's abort signal aborts the ask; the model gets ASK_ABORTED's text."""
        controller = AbortController()
        scripted_provider.push(WAIT_FOR_ABORT)
        tool_ = ask_user_question_tool(dsh_context, signal=controller.signal)
        run = asyncio.ensure_future(_agent(ScriptedModel(GOOD), tools=[tool_]).run("go"))
        while not scripted_provider.requests:  # noqa: ASYNC110  (the provider has no hook to wait on)
            await asyncio.sleep(0.01)
        controller.abort()
        result = await asyncio.wait_for(run, 30)
        assert result.output == f"Error: {UserQuestionError.aborted().message}"

    async def test_agent_run_cancel_withdraws_the_question(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """AgentRun.cancel() (an iterated run) cancels the pending ask; the provider sees it."""
        asked = asyncio.Event()
        withdrawn = asyncio.Event()

        async def never_answers(_request: AskUserQuestionRequest) -> Any:
            asked.set()
            try:
                await asyncio.Event().wait()
            finally:
                withdrawn.set()

        scripted_provider.push(never_answers)
        agent = _agent(ScriptedModel(GOOD), tools=[ask_user_question_tool(dsh_context)])

        async def drive() -> None:
            async with agent.iter("go") as run:

                async def cancel_when_asked() -> None:
                    await asked.wait()
                    run.cancel()

                canceller = asyncio.ensure_future(cancel_when_asked())
                try:
                    async for _node in run:
                        pass
                finally:
                    canceller.cancel()

        with pytest.raises(RunCancelled):
            await asyncio.wait_for(drive(), 30)
        assert withdrawn.is_set()
