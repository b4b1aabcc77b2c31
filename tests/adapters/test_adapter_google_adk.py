"""The Google ADK adapter: the tool in an ``LlmAgent`` and tool confirmations, through
ctx.user_questions.

ADK ships no fake model, so `ScriptedLlm` (a minimal ``BaseLlm``) plays one: it makes the
scripted call first, then answers with the last function response it was given. ADK's own
``InMemoryRunner`` runs the agent; a `ScriptedProvider` plays the human.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk", reason="the Google ADK adapter tests need its extra")

from _frameworks import ARGUMENTS, NPM_TEXT, PICK_NPM, PNPM, PNPM_TEXT, ask_in_terminal, scripted
from google.adk.agents import LlmAgent
from google.adk.events import Event
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.runners import InMemoryRunner
from google.adk.tools.function_tool import FunctionTool
from google.genai import types

from dsh_user_questions import tool
from dsh_user_questions.adapters.google_adk import (
    answer_confirmations,
    answer_long_running,
    ask_user_question_tool,
)


class ScriptedLlm(BaseLlm):
    """Calls ``call_name`` with ``call_args``; given a function response, repeats it."""

    call_name: str
    call_args: dict[str, Any]
    requests: list[LlmRequest]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        last = llm_request.contents[-1].parts or []
        responses = [p.function_response for p in last if p.function_response]
        if responses:
            text = str(responses[-1].response)
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))
            return
        call = types.FunctionCall(name=self.call_name, args=self.call_args)
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(function_call=call)])
        )


async def run(runner: InMemoryRunner, session: Any, message: types.Content) -> list[Event]:
    return [
        event
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message)
    ]


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def start(agent: LlmAgent) -> tuple[InMemoryRunner, Any]:
    runner = InMemoryRunner(agent=agent, app_name="test")
    session = await runner.session_service.create_session(app_name="test", user_id="u")
    return runner, session


def final_text(events: list[Event]) -> str:
    parts = events[-1].content.parts if events[-1].content else None
    return "".join(part.text or "" for part in parts or ())


def delete_branch(name: str) -> str:
    """Delete a git branch."""
    return f"deleted {name}"


class TestTheTool:
    async def test_the_answer_reaches_the_models_next_turn(self) -> None:
        """The model's call is asked through ctx.user_questions; its result is the answer."""
        ctx, provider = scripted(PNPM)
        llm = ScriptedLlm(model="scripted", call_name=tool.NAME, call_args=ARGUMENTS, requests=[])
        agent = LlmAgent(name="planner", model=llm, tools=[ask_user_question_tool(ctx)])
        async with ctx:
            runner, session = await start(agent)
            events = await run(runner, session, said("Set up the project."))
        assert PNPM_TEXT in final_text(events)
        assert provider.requests[0].questions[0].id == "pkg"
        declared = llm.requests[0].config.tools[0].function_declarations[0]  # type: ignore[index,union-attr]
        assert declared.parameters_json_schema == tool.input_schema()


class TestLongRunning:
    async def test_a_paused_call_is_answered_and_the_run_goes_on(self) -> None:
        """A long-running call pauses the run unasked; answer_long_running asks it and the
        answer reaches the model's next turn."""
        ctx, provider = scripted(PNPM)
        llm = ScriptedLlm(model="scripted", call_name=tool.NAME, call_args=ARGUMENTS, requests=[])
        agent = LlmAgent(
            name="planner", model=llm, tools=[ask_user_question_tool(long_running=True)]
        )
        async with ctx:
            runner, session = await start(agent)
            events = await run(runner, session, said("Set up the project."))
            assert provider.requests == []
            reply = await answer_long_running(ctx, events)
            assert reply is not None
            events = await run(runner, session, reply)
        assert PNPM_TEXT in final_text(events)
        assert provider.requests[0].questions[0].id == "pkg"

    async def test_invalid_arguments_get_the_tools_error_at_once(self) -> None:
        """Invalid arguments are answered at once with the tool's error; nothing is pending."""
        ctx, provider = scripted()
        llm = ScriptedLlm(model="scripted", call_name=tool.NAME, call_args={}, requests=[])
        agent = LlmAgent(
            name="planner", model=llm, tools=[ask_user_question_tool(long_running=True)]
        )
        async with ctx:
            runner, session = await start(agent)
            events = await run(runner, session, said("Set up the project."))
            assert await answer_long_running(ctx, events) is None
        assert "Error: " in final_text(events)
        assert provider.requests == []


class TestConfirmations:
    async def test_an_allowed_call_runs(self) -> None:
        """A ``require_confirmation`` call is asked "Allow …?"; Allow lets ADK run it."""
        ctx, provider = scripted({"answers": [{"id": "0", "selected": ["Allow"]}]})
        llm = ScriptedLlm(
            model="scripted", call_name="delete_branch", call_args={"name": "old"}, requests=[]
        )
        confirmed = FunctionTool(delete_branch, require_confirmation=True)
        agent = LlmAgent(name="cleaner", model=llm, tools=[confirmed])
        async with ctx:
            runner, session = await start(agent)
            events = await run(runner, session, said("Clean up."))
            reply = await answer_confirmations(ctx, events)
            assert reply is not None
            events = await run(runner, session, reply)
        question = provider.requests[0].questions[0]
        assert question.question == "Allow delete_branch?"
        assert '"name": "old"' in (question.detail or "")
        assert "deleted old" in final_text(events)

    async def test_a_rejected_call_does_not_run(self) -> None:
        """Reject (or the human's own words) tells ADK not to run the tool."""
        ctx, _ = scripted({"answers": [{"id": "0", "selected": [], "custom": "Not that one"}]})
        llm = ScriptedLlm(
            model="scripted", call_name="delete_branch", call_args={"name": "old"}, requests=[]
        )
        confirmed = FunctionTool(delete_branch, require_confirmation=True)
        agent = LlmAgent(name="cleaner", model=llm, tools=[confirmed])
        async with ctx:
            runner, session = await start(agent)
            events = await run(runner, session, said("Clean up."))
            reply = await answer_confirmations(ctx, events)
            assert reply is not None
            events = await run(runner, session, reply)
        assert "deleted old" not in final_text(events)

    async def test_no_confirmation_asks_nothing(self) -> None:
        """Events without a confirmation request ask nothing and give ``None``."""
        ctx, provider = scripted()
        async with ctx:
            assert await answer_confirmations(ctx, []) is None
        assert provider.requests == []


class TestInAPty:
    def test_the_terminal_answer_reaches_the_models_next_turn(self, tmp_path: Path) -> None:
        """With the installed plugins, the terminal provider asks in a real pseudo-terminal;
        the key pressed there is the function response of the model's next turn."""
        child = """
import asyncio
from _frameworks import ARGUMENTS
from dsh_user_questions import tool
from dsh_user_questions.adapters.google_adk import ask_user_question_tool
from google.adk.agents import LlmAgent
from test_adapter_google_adk import ScriptedLlm, final_text, run, said, start


async def main():
    llm = ScriptedLlm(model="scripted", call_name=tool.NAME, call_args=ARGUMENTS, requests=[])
    agent = LlmAgent(name="planner", model=llm, tools=[ask_user_question_tool(ctx)])
    async with ctx:
        runner, session = await start(agent)
        events = await run(runner, session, said("Set up the project."))
    answered(final_text(events))


asyncio.run(main())
"""
        assert NPM_TEXT in ask_in_terminal(child, tmp_path, PICK_NPM)
