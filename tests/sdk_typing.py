"""Checked by ``mypy --strict`` (tests/tool/test_tool_shapes.py): each shape and result goes where
the official SDKs expect their own parameter types, with no cast. Never imported by a test."""

from __future__ import annotations

import anthropic
import openai
from anthropic.types import MessageParam, ToolParam, ToolResultBlockParam, ToolUnionParam
from openai.types.chat import (
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageParam,
    ChatCompletionToolMessageParam,
)
from openai.types.responses import FunctionToolParam, ResponseInputItemParam

from dsh_user_questions import tool


def shapes() -> None:
    chat: ChatCompletionFunctionToolParam = tool.openai_tool()
    chat_strict: ChatCompletionFunctionToolParam = tool.openai_tool(strict=True)
    responses: FunctionToolParam = tool.openai_responses_tool()
    responses_strict: FunctionToolParam = tool.openai_responses_tool(strict=True)
    claude: ToolParam = tool.anthropic_tool()
    claude_union: list[ToolUnionParam] = [tool.anthropic_tool()]
    del chat, chat_strict, responses, responses_strict, claude, claude_union


def results(result: tool.ToolResult) -> None:
    block: ToolResultBlockParam = result.to_anthropic("toolu_1")
    turn: MessageParam = {"role": "user", "content": [result.to_anthropic("toolu_1")]}
    message: ChatCompletionToolMessageParam = result.to_openai("call_1")
    messages: list[ChatCompletionMessageParam] = [result.to_openai("call_1")]
    item: ResponseInputItemParam = result.to_responses("call_1")
    del block, turn, message, messages, item


async def calls(oai: openai.AsyncOpenAI, claude: anthropic.AsyncAnthropic) -> None:
    await oai.chat.completions.create(model="m", messages=[], tools=[tool.openai_tool()])
    await oai.responses.create(model="m", input="hi", tools=[tool.openai_responses_tool()])
    await claude.messages.create(
        model="m", max_tokens=1, messages=[], tools=[tool.anthropic_tool()]
    )
