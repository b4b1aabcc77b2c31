"""The pydantic-ai adapter's deferred mode in one process: run, save, answer, run again.

A FunctionModel plays the model; a `ScriptedProvider` plays the human. The run across a kill -9
with the inbox is in test_adapters_durable.py.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="the pydantic-ai adapter tests need its extra")

from pydantic_ai import (
    Agent,
    DeferredToolRequests,
    DeferredToolResults,
    ModelMessagesTypeAdapter,
    ToolFailed,
)
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

from dsh_user_questions import UserQuestionError, tool
from dsh_user_questions.adapters.pydantic_ai import answer_deferred, ask_user_question_tool, key_of
from dsh_user_questions.harness import AbortController, HarnessContext
from dsh_user_questions.testing import WAIT_FOR_ABORT, ScriptedProvider

GOOD = {
    "questions": [
        {"id": "pkg", "question": "Which one?", "options": [{"label": "pnpm"}, {"label": "npm"}]}
    ]
}
OTHER = {"questions": [{"id": "name", "question": "Project name?"}]}
BAD = {"questions": [{"id": "pkg", "question": "Which one?", "multiSelect": True}]}
ANSWER = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}


class Model:
    """Sends each scripted turn of tool calls, then ends with the last tool result's text."""

    def __init__(self, *turns: list[dict[str, Any]]) -> None:
        self.turns = list(turns)
        self.seen: list[ToolReturnPart | RetryPromptPart] = []

    def __call__(self, messages: list[ModelMessage], _info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, ModelRequest):
            self.seen.extend(
                p for p in last.parts if isinstance(p, (ToolReturnPart, RetryPromptPart))
            )
        if self.turns:
            calls = self.turns.pop(0)
            n = len(self.seen)
            return ModelResponse(
                parts=[
                    ToolCallPart(tool.NAME, args, tool_call_id=f"call-{n}-{i}")
                    for i, args in enumerate(calls)
                ]
            )
        return ModelResponse(parts=[TextPart(str(self.seen[-1].content))])


def _agent(model: Model) -> Agent[None, str | DeferredToolRequests]:
    return Agent(
        FunctionModel(model),
        output_type=[str, DeferredToolRequests],
        tools=[ask_user_question_tool(deferred=True)],
    )


def _answer() -> Any:
    from dsh_user_questions import AskUserQuestionAnswer

    return AskUserQuestionAnswer.from_dict(ANSWER)


class TestOutcomes:
    """Bad calls, cancels and aborts in deferred mode."""

    async def test_a_bad_call_is_retried_not_deferred(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """Invalid arguments never end the run: ModelRetry with the tool's words, then deferred."""
        model = Model([BAD], [GOOD])
        result = await _agent(model).run("go")
        assert isinstance(result.output, DeferredToolRequests)
        (retry,) = model.seen
        assert "questions[0].multiSelect: unknown property" in str(retry.content)
        assert [c.tool_call_id for c in result.output.calls] == ["call-1-0"]

    async def test_a_cancelled_question_is_a_failed_result_for_the_model(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        model = Model([GOOD])
        first = await _agent(model).run("go")
        assert isinstance(first.output, DeferredToolRequests)
        scripted_provider.push(UserQuestionError.cancelled())
        results = await answer_deferred(first.output, dsh_context)
        message = f"Error: {UserQuestionError.cancelled().message}"
        assert results.calls == {"call-0-0": ToolFailed(message)}
        await _agent(model).run(message_history=first.all_messages(), deferred_tool_results=results)
        (part,) = model.seen
        assert isinstance(part, ToolReturnPart)
        assert part.outcome == "failed"
        assert part.content == message

    async def test_the_harness_abort_raises_and_keeps_the_call_pending(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        model = Model([GOOD])
        first = await _agent(model).run("go")
        assert isinstance(first.output, DeferredToolRequests)
        controller = AbortController()
        scripted_provider.push(WAIT_FOR_ABORT)
        asking = asyncio.ensure_future(
            answer_deferred(first.output, dsh_context, signal=controller.signal)
        )
        while not scripted_provider.requests:  # noqa: ASYNC110 (the provider has no hook to wait on)
            await asyncio.sleep(0.01)
        controller.abort()
        with pytest.raises(UserQuestionError) as caught:
            await asyncio.wait_for(asking, 30)
        assert caught.value.code == "ASK_ABORTED"


class TestCycle:
    """Run, save, answer, run again: the whole cycle and what it keeps."""

    async def test_the_whole_cycle_with_saved_history(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """Deferred -> saved with ModelMessagesTypeAdapter -> answer_deferred -> the model's
        answer."""
        model = Model([GOOD])
        first = await _agent(model).run("go")
        requests = first.output
        assert isinstance(requests, DeferredToolRequests)
        assert [c.tool_call_id for c in requests.calls] == ["call-0-0"]
        saved = ModelMessagesTypeAdapter.dump_json(first.all_messages())
        assert scripted_provider.requests == []  # nobody was asked during the run

        scripted_provider.push(ANSWER)
        results = await answer_deferred(requests, dsh_context)
        (request,) = scripted_provider.requests
        assert request.key == f"pydantic-ai:{first.run_id}:call-0-0"  # the run and the call
        assert results.calls == {"call-0-0": tool.format_answer(request_answer := _answer())}
        assert request_answer.to_dict() == ANSWER

        history = ModelMessagesTypeAdapter.validate_json(saved)
        again = await _agent(model).run(message_history=history, deferred_tool_results=results)
        assert again.output == '{"answers":[{"id":"pkg","selected":["pnpm"]}]}'
        returns = [p for p in model.seen if isinstance(p, ToolReturnPart)]
        assert [p.content for p in returns] == [again.output]  # given once

    async def test_parallel_calls_are_asked_concurrently_each_with_its_key(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        model = Model([GOOD, OTHER])
        result = await _agent(model).run("go")
        assert isinstance(result.output, DeferredToolRequests)
        started: list[str | None] = []
        both = asyncio.Event()

        async def answer(request: Any) -> Any:
            started.append(request.key)
            if len(started) == 2:
                both.set()
            await asyncio.wait_for(both.wait(), 30)  # neither is answered before both are asked
            if request.questions[0].id == "pkg":
                return ANSWER
            return {"answers": [{"id": "name", "selected": [], "custom": "demo"}]}

        scripted_provider.push(answer, answer)
        results = await answer_deferred(result.output, dsh_context)
        assert sorted(started) == [f"pydantic-ai:{result.run_id}:call-0-{i}" for i in (0, 1)]
        assert set(results.calls) == {"call-0-0", "call-0-1"}

    async def test_other_tools_calls_are_left_out(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        requests = DeferredToolRequests(
            calls=[
                ToolCallPart("deploy", {}, tool_call_id="d1"),
                ToolCallPart(tool.NAME, GOOD, tool_call_id="q1"),
            ]
        )
        scripted_provider.push(ANSWER)
        results = await answer_deferred(requests, dsh_context, run_id="run-1")
        assert isinstance(results, DeferredToolResults)
        assert list(results.calls) == ["q1"]

    def test_keys_are_the_run_and_the_tool_call(self) -> None:
        """key_of is tool.durable_key of the run and the call: never the call id alone."""
        assert key_of("run-1", "call_abc-123") == "pydantic-ai:run-1:call_abc-123"
        odd = key_of("run-1", "id with spaces")
        assert odd.startswith("pydantic-ai:sha256:")
        assert odd == tool.durable_key("pydantic-ai", "run-1", "id with spaces")
        with pytest.raises(ValueError, match="run's identity"):
            key_of(None, "call_abc-123")

    def test_a_deferred_tool_takes_no_context(self) -> None:
        with pytest.raises(TypeError, match="answer_deferred"):
            ask_user_question_tool(object(), deferred=True)

    def test_results_serialise_with_the_history(self) -> None:
        """What answer_deferred returns survives pydantic's JSON (e.g. kept between processes)."""
        from pydantic import TypeAdapter

        adapter = TypeAdapter(DeferredToolResults)
        results = DeferredToolResults(calls={"c": '{"answers":[]}', "d": ToolFailed("Error: x")})
        back = adapter.validate_json(adapter.dump_json(results))
        assert back.calls["c"] == '{"answers":[]}'
        assert json.loads(adapter.dump_json(back))["calls"]["d"]["message"] == "Error: x"
