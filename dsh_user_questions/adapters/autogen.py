"""``ask_user_question`` for AutoGen AgentChat: a tool for ``AssistantAgent`` and a user proxy.

- ``AssistantAgent(..., tools=[ask_user_question_tool(ctx)])``: the model asks structured
  questions; the tool's JSON Schema is offered as is, the model's arguments reach the tool
  whole (`tool.run`), and its result is the tool's own text (the answer JSON, or
  ``Error: <message>`` for the model to read).
- ``AskingUserProxyAgent("user", ctx)``: a ``UserProxyAgent`` whose human is asked through
  ``ctx.user_questions``, the question being the last message it was given (a plain
  ``UserProxyAgent`` hands its ``input_func`` only "Enter your response: "); its reply is the
  human's free text. `input_func(ctx)` is that asking function alone, for
  ``UserProxyAgent(input_func=...)``: its question is the prompt it is given.

AutoGen's cancellation token cancels the pending ask, and with it the provider's question.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, cast

from .. import tool
from .._payloads import AskUserQuestionItem, AskUserQuestionRequest
from ._common import missing_framework

try:
    from autogen_agentchat.agents import UserProxyAgent
    from autogen_agentchat.base import Response
    from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage
    from autogen_core import CancellationToken
    from autogen_core.tools import BaseTool, ParametersSchema, ToolSchema
    from pydantic import BaseModel, ConfigDict
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise missing_framework("autogen", "autogen", err) from err

__all__ = ["AskingUserProxyAgent", "ask_user_question_tool"]


async def _linked(token: CancellationToken | None, work: Awaitable[Any]) -> Any:
    task = asyncio.ensure_future(work)
    if token is not None:
        token.link_future(task)
    return await task


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="allow")


class AskUserQuestionTool(BaseTool[_Arguments, BaseModel]):
    """The ``ask_user_question`` tool; see `ask_user_question_tool`."""

    def __init__(
        self,
        ctx: Any,
        *,
        agent: object | None = None,
        signal: Any | None = None,
        workspace: Any = None,
        audience: Iterable[str] = (),
    ):
        super().__init__(_Arguments, str, tool.NAME, tool.DESCRIPTION)  # type: ignore[arg-type]
        self._ctx, self._agent, self._signal = ctx, agent, signal
        self._workspace, self._audience = workspace, tuple(audience)

    @property
    def schema(self) -> ToolSchema:
        parameters = cast(ParametersSchema, tool.input_schema())
        return ToolSchema(name=self.name, description=self.description, parameters=parameters)

    async def run(self, args: _Arguments, cancellation_token: CancellationToken) -> Any:
        return await self.run_json(args.model_dump(), cancellation_token)

    async def run_json(
        self,
        args: Mapping[str, Any],
        cancellation_token: CancellationToken,
        call_id: str | None = None,
    ) -> Any:
        run = tool.run(
            self._ctx,
            dict(args),
            agent=self._agent,
            signal=self._signal,
            workspace=self._workspace,
            audience=self._audience,
        )
        return (await _linked(cancellation_token, run)).content


def ask_user_question_tool(
    ctx: Any,
    *,
    agent: object | None = None,
    signal: Any | None = None,
    workspace: Any = None,
    audience: Iterable[str] = (),
) -> AskUserQuestionTool:
    """The tool for ``AssistantAgent(tools=[...])``; ``agent`` and ``signal`` go into every ask.

    ``workspace`` (a folder) is the root a model's files question picks from (`tool.run`'s).
    ``audience`` (person ids and ``group:NAME``) is who may answer (`tool.run`'s), set
    by the harness, never the model.
    """
    return AskUserQuestionTool(
        ctx, agent=agent, signal=signal, workspace=workspace, audience=audience
    )


def input_func(
    ctx: Any,
    *,
    agent: object | None = None,
    signal: Any | None = None,
    audience: Iterable[str] = (),
) -> Callable[[str, CancellationToken | None], Awaitable[str]]:
    """An ``input_func`` asking ``prompt`` as a free-text question; returns the human's text.

    ``audience`` (person ids and ``group:NAME``) is who may answer, set by the harness.
    """
    audience = tuple(audience)

    async def ask(prompt: str, cancellation_token: CancellationToken | None = None) -> str:
        question = AskUserQuestionItem(id="reply", question=prompt)
        request = AskUserQuestionRequest(
            questions=(question,), agent=agent, signal=signal, audience=audience
        )
        answer = await _linked(cancellation_token, ctx.user_questions.ask(request))
        return answer.answers[0].custom or ""

    return ask


class AskingUserProxyAgent(UserProxyAgent):
    """A ``UserProxyAgent`` asking its human the last message it was given, through ``ctx``."""

    def __init__(
        self,
        name: str,
        ctx: Any,
        *,
        description: str = "A human user",
        agent: object | None = None,
        signal: Any | None = None,
        audience: Iterable[str] = (),
    ) -> None:
        self._ask = input_func(ctx, agent=agent, signal=signal, audience=audience)
        self._last = ""
        super().__init__(name, description=description, input_func=self._ask_last)

    async def _ask_last(self, prompt: str, cancellation_token: CancellationToken | None) -> str:
        return await self._ask(self._last or prompt, cancellation_token)

    async def on_messages_stream(
        self, messages: Sequence[BaseChatMessage], cancellation_token: CancellationToken
    ) -> AsyncGenerator[BaseAgentEvent | BaseChatMessage | Response, None]:
        if messages:
            self._last = messages[-1].to_text()
        async for item in super().on_messages_stream(messages, cancellation_token):
            yield item
