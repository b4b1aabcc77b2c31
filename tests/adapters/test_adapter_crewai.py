"""The CrewAI adapter: a task's human input and a flow's ``ask()``, through ctx.user_questions.

CrewAI ships no fake model, so `ScriptedLLM` (a minimal ``BaseLLM``) plays one, answering each
call with the next of its scripted final answers and keeping the messages it was sent. A
`ScriptedProvider` plays the human.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("crewai", reason="the CrewAI adapter tests need its extra")

from _frameworks import ask_in_terminal, closing, scripted
from crewai import Agent, Crew, Task
from crewai.core.providers.human_input import reset_provider, set_provider
from crewai.flow.flow import Flow, start
from crewai.llms.base_llm import BaseLLM

from dsh_user_questions.adapters.crewai import FEEDBACK, human_input_provider, input_provider

# CrewAI's own code reads its own deprecated fields on every run.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:crewai")

ACCEPT = {"answers": [{"id": "feedback", "selected": []}]}


def says(text: str) -> dict[str, Any]:
    """The human's answer in their own words."""
    return {"answers": [{"id": "feedback", "selected": [], "custom": text}]}


class ScriptedLLM(BaseLLM):
    """Answers each call with the next scripted final answer; keeps what it was sent."""

    replies: list[str]
    sent: list[Any]

    def call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        self.sent.append(messages)
        return f"Thought: I know it.\nFinal Answer: {self.replies.pop(0)}"

    def supports_function_calling(self) -> bool:
        return False


@pytest.fixture(autouse=True)
def quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    """No telemetry from CrewAI during the tests."""
    monkeypatch.setenv("CREWAI_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")


@contextlib.contextmanager
def feedback_through(ctx: Any) -> Iterator[None]:
    """CrewAI's human input provider is ours for ``ctx`` within the block."""
    token = set_provider(human_input_provider(ctx))
    try:
        yield
    finally:
        reset_provider(token)


def crew(llm: ScriptedLLM) -> Crew:
    agent = Agent(role="Planner", goal="Pick tools", backstory="Careful.", llm=llm)
    task = Task(
        description="Pick a package manager.",
        expected_output="One name.",
        agent=agent,
        human_input=True,
    )
    return Crew(agents=[agent], tasks=[task])


class TestHumanInput:
    def test_feedback_goes_back_to_the_agent(self) -> None:
        """The human is asked about the result; their words reach the model, which answers
        again; a skip accepts the new result."""
        ctx, provider = scripted(says("Use npm instead."), ACCEPT)
        llm = ScriptedLLM(model="scripted", replies=["pnpm", "npm"], sent=[])
        try:
            with feedback_through(ctx):
                result = crew(llm).kickoff()
        finally:
            closing(ctx)
        assert result.raw == "npm"
        first, second = provider.requests
        assert first.questions[0].question == FEEDBACK
        assert first.questions[0].detail == "pnpm"
        assert second.questions[0].detail == "npm"
        assert "Use npm instead." in str(llm.sent[-1])

    async def test_an_async_kickoff_asks_on_its_loop(self) -> None:
        """``kickoff_async`` asks through the same provider; a skip accepts the result."""
        ctx, provider = scripted(ACCEPT)
        llm = ScriptedLLM(model="scripted", replies=["pnpm"], sent=[])
        async with ctx:
            with feedback_through(ctx):
                result = await crew(llm).kickoff_async()
        assert result.raw == "pnpm"
        assert provider.requests[0].questions[0].detail == "pnpm"


class TestFlowAsk:
    def test_flow_ask_gets_the_humans_words(self) -> None:
        """``Flow.ask(message)`` asks ``message``; the flow gets the human's text."""
        ctx, provider = scripted(says("Databases"))

        class Research(Flow):  # type: ignore[misc,type-arg]
            input_provider = input_provider(ctx)

            @start()  # type: ignore[untyped-decorator]
            def topic(self) -> Any:
                return self.ask("What topic should I research?")

        try:
            assert Research().kickoff() == "Databases"
        finally:
            closing(ctx)
        assert provider.requests[0].questions[0].question == "What topic should I research?"


class TestInAPty:
    def test_feedback_typed_in_the_terminal_reaches_the_model(self, tmp_path: Path) -> None:
        """With the installed plugins, the terminal provider asks for feedback in a real
        pseudo-terminal; the words typed there reach the model, and Enter accepts its next
        result."""
        child = """
import os
os.environ.update(
    CREWAI_DISABLE_TELEMETRY="true", CREWAI_TRACING_ENABLED="false", OTEL_SDK_DISABLED="true"
)
from _frameworks import closing
from crewai.core.providers.human_input import set_provider
from dsh_user_questions.adapters.crewai import human_input_provider
from test_adapter_crewai import ScriptedLLM, crew

llm = ScriptedLLM(model="scripted", replies=["pnpm", "yarn"], sent=[])
set_provider(human_input_provider(ctx))
try:
    result = crew(llm).kickoff()
finally:
    closing(ctx)
answered(repr([result.raw, str(llm.sent[-1])]))
"""
        steps = [(("Enter send", "pnpm"), "Try another one.\r"), (("Enter send", "yarn"), "\r")]
        out = ask_in_terminal(child, tmp_path, *steps)
        assert out.startswith("['yarn', ")
        assert "Try another one." in out
