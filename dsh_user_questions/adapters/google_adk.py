"""Google ADK: ``ask_user_question`` as an ADK tool, and ADK's tool confirmations answered
through ``ctx.user_questions``.

- ``LlmAgent(..., tools=[ask_user_question_tool(ctx)])``: the model's call reaches the tool
  whole (`tool.run`, the tool's own JSON Schema as its declaration); its result is the tool's
  own text (the answer JSON, or ``Error: <message>``), which ADK hands the model as
  ``{"result": ...}``. Cancelling the run cancels the pending ask.
- ``ask_user_question_tool(long_running=True)``: an ADK long-running tool. A valid call asks
  nobody and pauses the run (ADK's pending long-running call); `answer_long_running(ctx,
  events)` asks each pending call found in the run's events through `tool.run` and returns the
  user message carrying the results, for ``runner.run_async(..., new_message=...)``. Invalid
  arguments get the tool's ``Error:`` text at once, so the model can call again.
- A tool made with ``FunctionTool(func, require_confirmation=True)`` (or calling
  ``tool_context.request_confirmation``) pauses the run with an ``adk_request_confirmation``
  call. `answer_confirmations(ctx, events)` asks the human each one found in the run's events
  (in one request: "Allow <tool>?" with the hint and the arguments as detail, options
  Allow / Reject; a skip or their own words reject) and returns the user message answering
  them, for ``runner.run_async(..., new_message=...)``; ``None`` when there is none.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .. import tool
from .._payloads import AskUserQuestionItem, AskUserQuestionOption, AskUserQuestionRequest
from ..errors import HarnessError
from ._common import gather_all, missing_framework

try:
    from google.adk.events import Event
    from google.adk.tools.base_tool import BaseTool
    from google.adk.tools.tool_context import ToolContext
    from google.genai import types
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise missing_framework("google_adk", "google-adk", err) from err

__all__ = ["answer_confirmations", "answer_long_running", "ask_user_question_tool"]

ALLOW, REJECT = "Allow", "Reject"
CONFIRMATION = "adk_request_confirmation"
"""The name of ADK's confirmation request call."""


class AskUserQuestionTool(BaseTool):
    """The ``ask_user_question`` tool; see `ask_user_question_tool`."""

    def __init__(
        self,
        ctx: Any,
        *,
        agent: object | None = None,
        signal: Any | None = None,
        long_running: bool = False,
        workspace: Any = None,
        audience: Iterable[str] = (),
    ):
        if ctx is None and not long_running:
            raise TypeError("ask_user_question_tool needs a harness context unless long_running")
        super().__init__(name=tool.NAME, description=tool.DESCRIPTION, is_long_running=long_running)
        self._ctx, self._agent, self._signal = ctx, agent, signal
        self._workspace, self._audience = workspace, tuple(audience)

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema=tool.input_schema(),
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        if self.is_long_running:
            try:
                tool.read_arguments(args)
            except HarnessError as err:
                return tool.ToolResult.from_error(err).content
            return None  # pending: answered later by answer_long_running
        result = await tool.run(
            self._ctx,
            args,
            agent=self._agent,
            signal=self._signal,
            workspace=self._workspace,
            audience=self._audience,
        )
        return result.content


def ask_user_question_tool(
    ctx: Any = None,
    *,
    agent: object | None = None,
    signal: Any | None = None,
    long_running: bool = False,
    workspace: Any = None,
    audience: Iterable[str] = (),
) -> AskUserQuestionTool:
    """The tool for ``LlmAgent(tools=[...])``; ``agent`` and ``signal`` go into every ask.

    ``long_running=True`` makes it ADK's long-running tool, answered by `answer_long_running`
    (``ctx`` is then not needed, and `answer_long_running` takes the ``workspace`` and the
    ``audience``).
    ``workspace`` (a folder) is the root a model's files question picks from (`tool.run`'s).
    ``audience`` (person ids and ``group:NAME``) is who may answer (`tool.run`'s), set
    by the harness, never the model.
    """
    return AskUserQuestionTool(
        ctx,
        agent=agent,
        signal=signal,
        long_running=long_running,
        workspace=workspace,
        audience=audience,
    )


async def answer_long_running(
    ctx: Any,
    events: Iterable[Event],
    *,
    agent: object | None = None,
    signal: Any | None = None,
    workspace: Any = None,
    audience: Iterable[str] = (),
) -> types.Content | None:
    """Ask each pending long-running ``ask_user_question`` call in ``events`` (at once); the
    message carrying their results, or ``None`` when there is none (a call already answered,
    e.g. with the error of invalid arguments, is not pending).
    ``workspace`` (a folder) is the root a model's files question picks from
    (`tool.run`'s).
    ``audience`` (person ids and ``group:NAME``) is who may answer (`tool.run`'s), set
    by the harness, never the model.
    """
    events = list(events)
    answered = {done.id for event in events for done in event.get_function_responses()}
    calls = [
        call
        for event in events
        for call in event.get_function_calls()
        if call.name == tool.NAME
        and call.id in (event.long_running_tool_ids or ())
        and call.id not in answered
    ]
    if not calls:
        return None
    results = await gather_all(
        tool.run(
            ctx,
            call.args or {},
            agent=agent,
            signal=signal,
            workspace=workspace,
            audience=audience,
        )
        for call in calls
    )
    parts = [
        types.Part(
            function_response=types.FunctionResponse(
                id=call.id, name=tool.NAME, response={"result": result.content}
            )
        )
        for call, result in zip(calls, results, strict=True)
    ]
    return types.Content(role="user", parts=parts)


def _question(n: int, call: types.FunctionCall) -> AskUserQuestionItem:
    args = call.args or {}
    original = args.get("originalFunctionCall") or {}
    confirmation = args.get("toolConfirmation") or {}
    shown = {"arguments": original.get("args") or {}}
    if confirmation.get("payload") is not None:
        shown["payload"] = confirmation["payload"]
    hint = confirmation.get("hint") or ""
    return AskUserQuestionItem(
        id=str(n),
        question=f"Allow {original.get('name') or 'this tool'}?",
        detail=(hint + "\n\n" if hint else "")
        + "```json\n"
        + json.dumps(shown, indent=2, default=str)
        + "\n```",
        options=(
            AskUserQuestionOption(ALLOW, "Run it"),
            AskUserQuestionOption(REJECT, "Do not run it"),
        ),
    )


async def answer_confirmations(
    ctx: Any,
    events: Iterable[Event],
    *,
    agent: object | None = None,
    signal: Any | None = None,
    audience: Iterable[str] = (),
) -> types.Content | None:
    """Ask the human each ADK confirmation request in ``events``; the message answering them.

    ``audience`` (person ids and ``group:NAME``) is who may answer, set by the harness.
    """
    calls = [
        call for event in events for call in event.get_function_calls() if call.name == CONFIRMATION
    ]
    if not calls:
        return None
    questions = tuple(_question(n, call) for n, call in enumerate(calls))
    request = AskUserQuestionRequest(
        questions=questions, agent=agent, signal=signal, audience=audience
    )
    answer = await ctx.user_questions.ask(request)
    allowed = {item.id for item in answer.answers if tuple(item.selected) == (ALLOW,)}
    parts = [
        types.Part(
            function_response=types.FunctionResponse(
                id=call.id, name=CONFIRMATION, response={"confirmed": str(n) in allowed}
            )
        )
        for n, call in enumerate(calls)
    ]
    return types.Content(role="user", parts=parts)
