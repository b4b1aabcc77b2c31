"""The smolagents adapter in a ``ToolCallingAgent`` run by a scripted model of our own.

smolagents ships no fake model, so `ScriptedModel` (a minimal ``Model``) plays one: it calls
``ask_user_question``, then ``final_answer`` with the observation it was given. A
`ScriptedProvider` plays the human.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("smolagents", reason="the smolagents adapter tests need its extra")

from _frameworks import (
    ARGUMENTS,
    NPM_TEXT,
    PICK_NPM,
    PNPM,
    PNPM_TEXT,
    ask_in_terminal,
    closing,
    scripted,
)
from smolagents import ChatMessage, Model, Tool, ToolCallingAgent, UserInputTool
from smolagents.models import ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole

from dsh_user_questions import tool
from dsh_user_questions.adapters.smolagents import AskUserQuestionTool


def call(name: str, arguments: Any, n: int) -> ChatMessage:
    """An assistant message calling ``name`` with ``arguments``."""
    function = ChatMessageToolCallFunction(name=name, arguments=arguments)
    return ChatMessage(
        role=MessageRole.ASSISTANT,
        content="",
        tool_calls=[ChatMessageToolCall(function=function, id=f"call_{n}", type="function")],
    )


class ScriptedModel(Model):  # type: ignore[misc]
    """Calls ask_user_question with ``arguments``, then answers with the last observation."""

    def __init__(self, arguments: Any) -> None:
        super().__init__(model_id="scripted")
        self.arguments = arguments
        self.seen_tools: list[dict[str, Any]] = []
        self.observations: list[str] = []

    def generate(self, messages: list[Any], **kwargs: Any) -> ChatMessage:
        from smolagents.models import get_tool_json_schema

        self.seen_tools = [get_tool_json_schema(t) for t in kwargs.get("tools_to_call_from") or []]
        if not self.observations and len(messages) <= 2:
            self.observations.append("")
            return call(tool.NAME, self.arguments, 1)
        text = str(messages[-1].content)
        self.observations.append(text)
        return call("final_answer", {"answer": text}, 2)


def run_agent(ctx: Any, arguments: Any = ARGUMENTS) -> tuple[str, ScriptedModel]:
    model = ScriptedModel(arguments)
    agent = ToolCallingAgent(tools=[AskUserQuestionTool(ctx)], model=model, max_steps=3)
    return str(agent.run("Set up the project.")), model


class TestToolCallingAgent:
    def test_the_answer_reaches_the_model(self) -> None:
        """The agent's call is asked through ctx.user_questions; its observation is the answer."""
        ctx, provider = scripted(PNPM)
        try:
            final, _ = run_agent(ctx)
        finally:
            closing(ctx)
        assert PNPM_TEXT in final
        assert provider.requests[0].questions[0].id == "pkg"

    def test_the_model_sees_the_tools_own_schema(self) -> None:
        """The tool the model is offered has the tool's name, description and schema."""
        ctx, _ = scripted(PNPM)
        try:
            _, model = run_agent(ctx)
        finally:
            closing(ctx)
        (offered,) = [t for t in model.seen_tools if t["function"]["name"] == tool.NAME]
        assert offered["function"]["description"] == tool.DESCRIPTION
        schema = tool.input_schema()
        questions = offered["function"]["parameters"]["properties"]["questions"]
        assert questions["items"] == schema["properties"]["questions"]["items"]

    def test_invalid_arguments_come_back_as_the_tools_error(self) -> None:
        """Questions breaking the schema are the tool's ``Error: invalid arguments`` text,
        nobody asked (as docs/adapters.md says)."""
        ctx, provider = scripted()
        try:
            _, model = run_agent(ctx, {"questions": []})
        finally:
            closing(ctx)
        assert (
            "Error: invalid arguments: questions: must have at least 1 item"
            in (model.observations[-1])
        )
        assert provider.requests == []

    @pytest.mark.parametrize(
        ("arguments", "words"),
        [
            ({}, "Argument questions is required"),
            ({"questions": "x"}, "Argument questions has type 'string' but should be 'array'"),
        ],
    )
    def test_the_top_level_is_checked_by_smolagents_in_its_words(
        self, arguments: Any, words: str
    ) -> None:
        """smolagents checks the call's top level before any tool runs (docs/adapters.md says
        so): its own retry text, not the tool's, and nobody asked."""
        ctx, provider = scripted()
        try:
            _, model = run_agent(ctx, arguments)
        finally:
            closing(ctx)
        assert words in model.observations[-1]
        assert "invalid arguments" not in model.observations[-1]
        assert provider.requests == []

    def test_called_directly_it_asks_like_user_input_tool(self) -> None:
        """Like ``UserInputTool`` it is a smolagents ``Tool`` called with keyword arguments."""
        ctx, _ = scripted(PNPM)
        made = AskUserQuestionTool(ctx)
        try:
            assert isinstance(made, Tool)
            assert isinstance(UserInputTool(), Tool)
            assert made(**ARGUMENTS) == PNPM_TEXT
        finally:
            closing(ctx)


class TestInAPty:
    def test_the_terminal_answer_reaches_the_model(self, tmp_path: Path) -> None:
        """With the installed plugins, the terminal provider asks in a real pseudo-terminal;
        the key pressed there is the observation the model's next step is given."""
        child = """
from _frameworks import closing
from test_adapter_smolagents import run_agent
try:
    _, model = run_agent(ctx)
finally:
    closing(ctx)
answered(model.observations[-1])
"""
        assert NPM_TEXT in ask_in_terminal(child, tmp_path, PICK_NPM)
