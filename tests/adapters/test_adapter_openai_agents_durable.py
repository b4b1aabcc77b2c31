"""The OpenAI Agents SDK adapter's durable mode: a tool approval, a saved RunState, a key.

The SDK's ScriptedModel plays the model; `KeyedProvider` stands in for a durable provider (one
record per key, an answered key answers again at once), as the inbox does.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("agents", reason="the openai-agents adapter tests need its extra")

from agents import Agent, RunConfig, Runner, RunState
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

from dsh_user_questions import AskUserQuestionRequest, UserQuestionError, tool
from dsh_user_questions.adapters.openai_agents import answer_interruptions, ask_user_question_tool
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import ScriptedProvider

GOOD = {
    "questions": [
        {"id": "pkg", "question": "Which one?", "options": [{"label": "pnpm"}, {"label": "npm"}]}
    ]
}
BAD = {"questions": [{"id": "pkg", "question": "Which one?", "multiSelect": True}]}
ANSWER = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
ANSWER_TEXT = '{"answers":[{"id":"pkg","selected":["pnpm"]}]}'
OFFLINE = RunConfig(tracing_disabled=True)


class KeyedProvider:
    """One record per key: the first ask of a key is answered by ``answer``, later ones again."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.asked: list[str | None] = []

    async def ask(self, request: AskUserQuestionRequest) -> Any:
        self.asked.append(request.key)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def _outputs(call: Any) -> list[str]:
    items = call.input if isinstance(call.input, list) else []
    return [
        str(i["output"])
        for i in items
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    ]


def _agent(*calls: Any) -> tuple[Agent[Any], list[list[str]]]:
    seen: list[list[str]] = []

    def finish(call: Any) -> Any:
        seen.append(_outputs(call))
        return [assistant_message(json.dumps(_outputs(call)))]

    steps: list[Any] = [
        [function_call(tool.NAME, json.dumps(a), call_id=f"call-{i}")] for i, a in enumerate(calls)
    ]
    model = ScriptedModel([*steps, ModelStep.respond(finish)])
    made = ask_user_question_tool(durable=True)
    return Agent(name="assistant", model=model, tools=[made]), seen


async def test_a_run_pauses_serialises_and_resumes_with_the_keyed_answer(
    dsh_context: HarnessContext,
) -> None:
    """Pause -> RunState.to_string -> (new process) from_string -> answer -> resume: once."""
    provider = KeyedProvider(ANSWER)
    dsh_context.user_questions.register_provider(provider)
    agent, seen = _agent(GOOD)
    first = await Runner.run(agent, "go", context=dsh_context, run_config=OFFLINE)
    (pending,) = first.interruptions
    assert pending.tool_name == tool.NAME
    assert provider.asked == []  # nobody asked during the run
    saved = first.to_state().to_string(context_serializer=lambda _ctx: {})

    state = await RunState.from_string(agent, saved, context_override=dsh_context)
    state = await answer_interruptions(state, dsh_context, run_id="run-1")
    assert provider.asked == ["openai-agents:run-1:call-0"]
    resumed = await Runner.run(agent, state, context=dsh_context, run_config=OFFLINE)
    assert json.loads(resumed.final_output) == [ANSWER_TEXT]
    assert provider.asked == ["openai-agents:run-1:call-0"]  # the tool did not run again
    assert seen == [[ANSWER_TEXT]]


async def test_a_bad_call_does_not_pause(dsh_context: HarnessContext) -> None:
    provider = KeyedProvider(ANSWER)
    dsh_context.user_questions.register_provider(provider)
    agent, _seen = _agent(BAD)
    result = await Runner.run(agent, "go", context=dsh_context, run_config=OFFLINE)
    assert result.interruptions == []
    (output,) = json.loads(result.final_output)
    assert output.startswith("Error: invalid arguments: questions[0].multiSelect: unknown property")
    assert provider.asked == []


async def test_a_cancelled_question_is_the_tools_error_text(dsh_context: HarnessContext) -> None:
    provider = KeyedProvider(UserQuestionError.cancelled())
    dsh_context.user_questions.register_provider(provider)
    agent, seen = _agent(GOOD)
    first = await Runner.run(agent, "go", context=dsh_context, run_config=OFFLINE)
    state = await answer_interruptions(first, dsh_context, run_id="run-1")
    await Runner.run(agent, state, context=dsh_context, run_config=OFFLINE)
    assert seen == [[f"Error: {UserQuestionError.cancelled().message}"]]
    assert provider.asked == ["openai-agents:run-1:call-0"]  # the tool did not run again


async def test_the_live_tool_is_unchanged(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """Without durable=True nothing pauses and the ask has no key."""
    scripted_provider.push(ANSWER)
    steps: list[Any] = [[function_call(tool.NAME, json.dumps(GOOD), call_id="c")]]
    model = ScriptedModel([*steps, ModelStep.respond(lambda c: [assistant_message("ok")])])
    agent = Agent(name="a", model=model, tools=[ask_user_question_tool(dsh_context)])
    result = await Runner.run(agent, "go", run_config=OFFLINE)
    assert result.interruptions == []
    assert scripted_provider.requests[0].key is None
