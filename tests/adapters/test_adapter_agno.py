"""The agno adapter: paused runs (user feedback, user input, confirmation) answered through
ctx.user_questions.

agno ships no fake model, so `ScriptedModel` (a minimal agno ``Model``) plays one: it makes
the scripted tool call, then, once given the tool's result, answers with that result. A
`ScriptedProvider` plays the human.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agno", reason="the agno adapter tests need its extra")

from _frameworks import PICK_NPM, ask_in_terminal, scripted
from agno.agent import Agent
from agno.models.base import Model
from agno.models.response import ModelResponse
from agno.tools import tool as agno_tool
from agno.tools.user_feedback import UserFeedbackTools

from dsh_user_questions.adapters.agno import answer_requirements_sync, run_answering


@dataclass
class ScriptedModel(Model):
    """Calls ``call`` (a tool name and its arguments) first, then repeats the tool's result."""

    id: str = "scripted"
    call: tuple[str, dict[str, Any]] = ("", {})
    seen: list[Any] = field(default_factory=list)

    def invoke(self, messages: list[Any], **kwargs: Any) -> ModelResponse:
        self.seen.append([m.content for m in messages])
        results = [m for m in messages if m.role == "tool"]
        if results:
            return ModelResponse(role="assistant", content=f"Done: {results[-1].content}")
        name, arguments = self.call
        function = {"name": name, "arguments": json.dumps(arguments)}
        return ModelResponse(
            role="assistant",
            tool_calls=[{"id": "call_1", "type": "function", "function": function}],
        )

    async def ainvoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return self.invoke(*args, **kwargs)

    def invoke_stream(self, *args: Any, **kwargs: Any) -> Any:
        yield self.invoke(*args, **kwargs)

    async def ainvoke_stream(self, *args: Any, **kwargs: Any) -> Any:
        yield self.invoke(*args, **kwargs)

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]


FEEDBACK_CALL = (
    "ask_user",
    {
        "questions": [
            {
                "question": "Which package manager?",
                "header": "Tooling",
                "options": [{"label": "pnpm"}, {"label": "npm", "description": "The default"}],
                "multi_select": False,
            }
        ]
    },
)


@agno_tool(requires_confirmation=True)
def delete_branch(name: str) -> str:
    """Delete a git branch."""
    return f"deleted {name}"


@agno_tool(requires_user_input=True, user_input_fields=["city"])
def book_trip(city: str) -> str:
    """Book a trip to a city."""
    return f"booked {city}"


def answer(qid: str, *selected: str, custom: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"id": qid, "selected": list(selected)}
    if custom is not None:
        item["custom"] = custom
    return {"answers": [item]}


class TestPausedRuns:
    async def test_user_feedback_is_asked_as_agnos_own_question(self) -> None:
        """A ``UserFeedbackTools`` pause is asked with its options; the pick reaches the model."""
        ctx, provider = scripted(answer("0.0", "npm"))
        model = ScriptedModel(call=FEEDBACK_CALL)
        async with ctx:
            agent = Agent(model=model, tools=[UserFeedbackTools()])
            run = await run_answering(agent, ctx, "Set up the project.")
        question = provider.requests[0].questions[0]
        assert (question.question, question.header) == ("Which package manager?", "Tooling")
        assert [o.label for o in question.options] == ["pnpm", "npm"]
        assert not run.is_paused
        assert '"selected": ["npm"]' in str(run.content)

    async def test_a_confirmation_is_allowed(self) -> None:
        """A ``requires_confirmation`` tool is asked "Allow …?"; Allow runs it."""
        ctx, provider = scripted(answer("0.0", "Allow"))
        model = ScriptedModel(call=("delete_branch", {"name": "old"}))
        async with ctx:
            agent = Agent(model=model, tools=[delete_branch])
            run = await run_answering(agent, ctx, "Clean up.")
        question = provider.requests[0].questions[0]
        assert question.question == "Allow delete_branch?"
        assert '"name": "old"' in (question.detail or "")
        assert run.content == "Done: deleted old"

    async def test_a_confirmation_rejected_in_own_words_does_not_run(self) -> None:
        """The human's own words reject the call; the tool does not run."""
        ctx, _ = scripted(answer("0.0", custom="Keep it, it has my notes."))
        model = ScriptedModel(call=("delete_branch", {"name": "old"}))
        async with ctx:
            agent = Agent(model=model, tools=[delete_branch])
            run = await run_answering(agent, ctx, "Clean up.")
        assert "deleted old" not in str(run.content)
        assert "Keep it, it has my notes." in str(model.seen[-1])

    def test_user_input_in_a_sync_run(self) -> None:
        """A ``requires_user_input`` field is a free-text question; the value reaches the tool."""
        ctx, provider = scripted(answer("0.0", custom="Lisbon"))
        model = ScriptedModel(call=("book_trip", {}))
        agent = Agent(model=model, tools=[book_trip])
        run = agent.run("Book my trip.")
        assert run.is_paused
        answer_requirements_sync(ctx, run)
        run = agent.continue_run(run_response=run, requirements=run.requirements)
        assert provider.requests[0].questions[0].question == "city"
        assert run.content == "Done: booked Lisbon"


class TestInAPty:
    def test_the_terminal_answer_reaches_the_model(self, tmp_path: Path) -> None:
        """With the installed plugins, the terminal provider asks agno's paused question in a
        real pseudo-terminal; the option picked there reaches the model's next turn."""
        child = """
import asyncio
from agno.agent import Agent
from agno.tools.user_feedback import UserFeedbackTools
from dsh_user_questions.adapters.agno import run_answering
from test_adapter_agno import FEEDBACK_CALL, ScriptedModel


async def main():
    model = ScriptedModel(call=FEEDBACK_CALL)
    async with ctx:
        agent = Agent(model=model, tools=[UserFeedbackTools()])
        await run_answering(agent, ctx, "Set up the project.")
    answered(model.seen[-1])


asyncio.run(main())
"""
        assert '"selected": ["npm"]' in ask_in_terminal(child, tmp_path, PICK_NPM)
