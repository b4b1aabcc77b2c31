"""The AutoGen AgentChat adapter with autogen-ext's own replay model client.

``ReplayChatCompletionClient`` plays the model (scripted completions, tool calls included);
a `ScriptedProvider` plays the human, in an ``AssistantAgent`` with the tool and in a team with
`AskingUserProxyAgent`.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("autogen_agentchat", reason="the AutoGen adapter tests need its extra")
pytest.importorskip("autogen_ext.models.replay", reason="the AutoGen tests need autogen-ext")

from _frameworks import ARGUMENTS, NPM_TEXT, PICK_NPM, PNPM, PNPM_TEXT, ask_in_terminal, scripted
from autogen_agentchat.agents import AssistantAgent, UserProxyAgent
from autogen_agentchat.conditions import MaxMessageTermination
from autogen_agentchat.messages import TextMessage, ToolCallSummaryMessage
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_core import CancellationToken, FunctionCall
from autogen_core.models import CreateResult, ModelFamily, RequestUsage
from autogen_ext.models.replay import ReplayChatCompletionClient

from dsh_user_questions import AskUserQuestionRequest, tool
from dsh_user_questions.adapters.autogen import (
    AskingUserProxyAgent,
    ask_user_question_tool,
    input_func,
)

ASKED = "Which database should I use: Postgres or SQLite?"
SQLITE = {"answers": [{"id": "reply", "selected": [], "custom": "SQLite"}]}


def model(*completions: str | CreateResult) -> ReplayChatCompletionClient:
    """The replay client, able to call tools."""
    info = {
        "vision": False,
        "function_calling": True,
        "json_output": False,
        "family": ModelFamily.UNKNOWN,
        "structured_output": False,
    }
    return ReplayChatCompletionClient(list(completions), model_info=info)  # type: ignore[arg-type]


def calls(arguments: Any = ARGUMENTS) -> CreateResult:
    """A completion calling ask_user_question with ``arguments``."""
    call = FunctionCall(id="call_1", arguments=json.dumps(arguments), name=tool.NAME)
    return CreateResult(
        finish_reason="function_calls",
        content=[call],
        usage=RequestUsage(prompt_tokens=0, completion_tokens=0),
        cached=False,
    )


class TestAssistantAgentTool:
    async def test_the_answer_is_the_tool_result(self) -> None:
        """The model's call is asked through ctx.user_questions; the answer is its result."""
        ctx, provider = scripted(PNPM)
        async with ctx:
            agent = AssistantAgent("assistant", model(calls()), tools=[ask_user_question_tool(ctx)])
            result = await agent.run(task="Set up the project.")
        summary = result.messages[-1]
        assert isinstance(summary, ToolCallSummaryMessage)
        assert summary.content == PNPM_TEXT
        assert provider.requests[0].questions[0].question == "Which package manager?"

    def test_the_model_is_offered_the_tools_own_schema(self) -> None:
        """The tool's schema is the tool's name, description and JSON Schema, unchanged."""
        ctx, _ = scripted()
        schema = ask_user_question_tool(ctx).schema
        assert schema["name"] == tool.NAME
        assert schema.get("description") == tool.DESCRIPTION
        assert schema.get("parameters") == tool.input_schema()

    async def test_invalid_arguments_come_back_as_the_tools_error(self) -> None:
        """Arguments breaking the schema are the tool's ``Error:`` text; nobody is asked."""
        ctx, provider = scripted()
        async with ctx:
            agent = AssistantAgent(
                "assistant", model(calls({})), tools=[ask_user_question_tool(ctx)]
            )
            result = await agent.run(task="Set up the project.")
        assert str(result.messages[-1].to_text()).startswith("Error: ")
        assert provider.requests == []

    async def test_autogens_cancellation_cancels_the_ask(self) -> None:
        """Cancelling AutoGen's token cancels the pending ask."""
        asked = asyncio.Event()

        async def pending(_request: AskUserQuestionRequest) -> Any:
            asked.set()
            await asyncio.Event().wait()

        ctx, _ = scripted(pending)
        async with ctx:
            token = CancellationToken()
            run = asyncio.ensure_future(ask_user_question_tool(ctx).run_json(ARGUMENTS, token))
            await asked.wait()
            token.cancel()
            with pytest.raises(asyncio.CancelledError):
                await run


class TestUserProxy:
    async def test_the_human_is_asked_the_agents_last_message(self) -> None:
        """In a team, the proxy asks the assistant's last message; the reply is the human's."""
        ctx, provider = scripted(SQLITE)
        async with ctx:
            assistant = AssistantAgent("assistant", model(ASKED))
            user = AskingUserProxyAgent("user", ctx)
            team = RoundRobinGroupChat(
                [assistant, user], termination_condition=MaxMessageTermination(3)
            )
            result = await team.run(task="Start the project.")
        assert provider.requests[0].questions[0].question == ASKED
        reply = result.messages[-1]
        assert isinstance(reply, TextMessage)
        assert (reply.source, reply.content) == ("user", "SQLite")

    async def test_input_func_asks_the_prompt(self) -> None:
        """``input_func(ctx)`` in a plain ``UserProxyAgent`` asks the prompt it is given."""
        ctx, provider = scripted(SQLITE)
        async with ctx:
            user = UserProxyAgent("user", input_func=input_func(ctx))
            result = await user.run(task=ASKED)
        assert provider.requests[0].questions[0].question == "Enter your response: "
        assert result.messages[-1].to_text() == "SQLite"


class TestInAPty:
    def test_the_terminal_answer_is_the_tool_result(self, tmp_path: Path) -> None:
        """With the installed plugins, the terminal provider asks in a real pseudo-terminal;
        the key pressed there is the result of the replayed model's tool call."""
        child = """
import asyncio
from autogen_agentchat.agents import AssistantAgent
from dsh_user_questions.adapters.autogen import ask_user_question_tool
from test_adapter_autogen import calls, model


async def main():
    async with ctx:
        tools = [ask_user_question_tool(ctx)]
        result = await AssistantAgent("assistant", model(calls()), tools=tools).run(task="Go.")
    answered(result.messages[-1].to_text())


asyncio.run(main())
"""
        assert ask_in_terminal(child, tmp_path, PICK_NPM) == NPM_TEXT
