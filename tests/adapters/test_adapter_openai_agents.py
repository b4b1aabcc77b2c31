"""The OpenAI Agents SDK adapter through a full run with the SDK's own ScriptedModel, offline.

The SDK's ``agents.testing.ScriptedModel`` plays the model (each step sees the tool outputs so
far); a `ScriptedProvider` plays the human. Tracing is off: nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("agents", reason="the openai-agents adapter tests need its extra")

from agents import Agent, FunctionTool, RunConfig, Runner
from agents.strict_schema import ensure_strict_json_schema
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

from dsh_user_questions import AskUserQuestionRequest, UserQuestionError, tool
from dsh_user_questions.adapters.openai_agents import ask_user_question_tool
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
OFFLINE = RunConfig(tracing_disabled=True)


def _outputs(call: ModelCall) -> list[str]:
    """The function-call outputs the model has seen so far, in order."""
    items = call.input if isinstance(call.input, list) else []
    return [
        str(item["output"])
        for item in items
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]


def _finish(call: ModelCall) -> Any:
    """The model's last turn: repeat the last tool output as its final answer."""
    return [assistant_message(_outputs(call)[-1])]


def _model(*calls: dict[str, Any]) -> ScriptedModel:
    steps: list[Any] = [
        [function_call(tool.NAME, args, call_id=f"call-{index}")]
        for index, args in enumerate(calls)
    ]
    return ScriptedModel([*steps, ModelStep.respond(_finish)])


def _agent(model: ScriptedModel, made: FunctionTool) -> Agent[Any]:
    return Agent(name="assistant", model=model, tools=[made])


class TestSchema:
    """The tool's schema: strict by default, the published one without."""

    def test_the_tool_is_strict_with_the_strict_schema(self, dsh_context: HarnessContext) -> None:
        """By default the FunctionTool is strict, with the tool's strict-mode schema."""
        made = ask_user_question_tool(dsh_context)
        assert made.name == tool.NAME
        assert made.description == tool.DESCRIPTION
        assert made.params_json_schema == tool.input_schema(strict=True)
        assert made.strict_json_schema is True
        # The SDK's own strict check leaves the schema as it is: nothing to fix.
        assert ensure_strict_json_schema(tool.input_schema(strict=True)) == tool.input_schema(
            strict=True
        )

    def test_strict_false_gives_the_published_schema(self, dsh_context: HarnessContext) -> None:
        """strict=False declares the tool non-strict with the published schema and its limits."""
        made = ask_user_question_tool(dsh_context, strict=False)
        assert made.params_json_schema == tool.input_schema()
        assert made.strict_json_schema is False

    async def test_strict_mode_nulls_mean_left_out(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """A strict-mode call, with null for each optional property, is asked as if they were
        absent."""
        strict_call = {
            "questions": [
                {
                    "id": "name",
                    "question": "Project name?",
                    "header": None,
                    "options": None,
                    "multi_select": None,
                }
            ]
        }
        scripted_provider.push({"answers": [{"id": "name", "selected": [], "custom": "demo"}]})
        model = _model(strict_call)
        result = await Runner.run(
            _agent(model, ask_user_question_tool(dsh_context)), "go", run_config=OFFLINE
        )
        assert json.loads(result.final_output)["answers"][0]["custom"] == "demo"
        (question,) = scripted_provider.requests[0].questions
        assert question.header is None
        assert question.options == ()
        assert question.multi_select is False


class TestRun:
    """A full run: the answer, bad calls retried, the run context."""

    async def test_an_answer_reaches_the_model(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """A valid call is asked through the provider and the answer JSON is the tool output."""
        scripted_provider.push(ANSWER)
        model = _model(GOOD)
        result = await Runner.run(
            _agent(model, ask_user_question_tool(dsh_context)), "go", run_config=OFFLINE
        )
        assert json.loads(result.final_output) == ANSWER
        model.assert_complete()

    async def test_a_bad_call_is_answered_with_every_problem_and_retried(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """INVALID_ARGS is the tool output the model reads; its second call is asked and
        answered."""
        scripted_provider.push(ANSWER)
        model = _model(BAD, GOOD)
        result = await Runner.run(
            _agent(model, ask_user_question_tool(dsh_context)), "go", run_config=OFFLINE
        )
        assert json.loads(result.final_output) == ANSWER
        first = _outputs(model.calls[-1])[0]
        assert first.startswith("Error: invalid arguments: ")
        assert "questions[0].multiSelect: unknown property (did you mean multi_select?)" in first
        assert len(scripted_provider.requests) == 1

    async def test_context_agent_and_signal_come_from_the_run_context(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """Without a context in the closure, the run context gives the context, agent and signal."""

        @dataclass
        class RunState:
            harness: HarnessContext
            agent: HarnessAgent
            signal: Any

        caller = HarnessAgent("main")
        dsh_context.agents.enter(caller)
        controller = AbortController()
        scripted_provider.push(ANSWER)
        state = RunState(dsh_context, caller, controller.signal)
        await Runner.run(
            _agent(_model(GOOD), ask_user_question_tool()), "go", context=state, run_config=OFFLINE
        )
        request: AskUserQuestionRequest = scripted_provider.requests[0]
        assert request.agent is caller
        assert request.signal is controller.signal


class TestCancel:
    """Cancelling or aborting a run, streamed or not, withdraws the question."""

    async def test_cancelling_the_run_withdraws_the_question(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """Cancelling the run's task cancels the pending ask; the provider sees it withdrawn."""
        asked = asyncio.Event()
        withdrawn = asyncio.Event()

        async def never_answers(_request: AskUserQuestionRequest) -> Any:
            asked.set()
            try:
                await asyncio.Event().wait()
            finally:
                withdrawn.set()

        scripted_provider.push(never_answers)
        agent = _agent(_model(GOOD), ask_user_question_tool(dsh_context))
        run = asyncio.ensure_future(Runner.run(agent, "go", run_config=OFFLINE))
        await asyncio.wait_for(asked.wait(), 30)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(run, 30)
        assert withdrawn.is_set()

    async def test_an_aborted_signal_ends_the_ask_and_the_model_hears_why(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """The adapter's abort signal aborts the ask; the model gets ASK_ABORTED's text."""
        controller = AbortController()
        scripted_provider.push(WAIT_FOR_ABORT)
        made = ask_user_question_tool(dsh_context, signal=controller.signal)
        run = asyncio.ensure_future(
            Runner.run(_agent(_model(GOOD), made), "go", run_config=OFFLINE)
        )
        while not scripted_provider.requests:  # noqa: ASYNC110  (the provider has no hook to wait on)
            await asyncio.sleep(0.01)
        controller.abort()
        result = await asyncio.wait_for(run, 30)
        assert result.final_output == f"Error: {UserQuestionError.aborted().message}"

    async def test_cancelling_a_streamed_run_withdraws_the_question(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """A streamed run's cancel() cancels the pending ask; the provider sees it withdrawn."""
        asked = asyncio.Event()
        withdrawn = asyncio.Event()

        async def never_answers(_request: AskUserQuestionRequest) -> Any:
            asked.set()
            try:
                await asyncio.Event().wait()
            finally:
                withdrawn.set()

        scripted_provider.push(never_answers)
        agent = _agent(_model(GOOD), ask_user_question_tool(dsh_context))
        streamed = Runner.run_streamed(agent, "go", run_config=OFFLINE)

        async def consume() -> None:
            async for _event in streamed.stream_events():
                pass

        consumer = asyncio.ensure_future(consume())
        await asyncio.wait_for(asked.wait(), 30)
        streamed.cancel()
        await asyncio.wait_for(consumer, 30)
        assert withdrawn.is_set()
        assert streamed.is_complete
