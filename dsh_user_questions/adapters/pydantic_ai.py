"""``ask_user_question`` as a pydantic-ai `Tool`, live or deferred.

One line: ``Agent(model, tools=[ask_user_question_tool(ctx)])``, or leave ``ctx`` out and run
the agent with the harness context as its deps (``deps=ctx``, or deps holding it as
``deps.harness``, with optional ``deps.agent`` and ``deps.signal``).

The tool's own JSON Schema is given to the model and checked by the tool before pydantic-ai
calls it: whatever the model sends (an object, an array, a JSON string, a number, ``null``, a
property named ``run`` or ``ctx``), arguments that break the schema raise `ModelRetry` with
every problem, so the model corrects itself within the tool's retry budget (pydantic-ai's
``max_retries``, 1 by default). A failed ask (``ASK_CANCELLED``, ``ASK_TIMED_OUT``,
``NOT_INTERACTIVE``...) is pydantic-ai's failed tool result, `ToolFailed`, with the tool's
``Error: <message>`` text, which the tool's description tells the model how to read.
Cancelling the run (``CancellationToken``, ``AgentRun.cancel()``, or cancelling the task)
cancels the pending ask.

**Deferred (durable).** ``ask_user_question_tool(deferred=True)`` asks nobody: a valid call
ends the run with pydantic-ai's `DeferredToolRequests` (``CallDeferred``, kind
``"question"``). Save the run's messages (``ModelMessagesTypeAdapter``), get the answers with
`answer_deferred` (each asked through the service with the tool call's id as its ``key``, so
a durable provider such as the inbox keeps one record per call across crashes), and run the
agent again with ``message_history=`` and ``deferred_tool_results=``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .. import _json, tool
from ..errors import KEEPS_PENDING, HarnessError, UserQuestionError
from ..payloads import KEY_PATTERN, AskUserQuestionRequest
from ._common import context_of, gather_all, missing_framework

try:
    from pydantic_ai import (
        CallDeferred,
        DeferredToolRequests,
        DeferredToolResults,
        ModelRetry,
        RunContext,
        Tool,
        ToolFailed,
    )
    from pydantic_core import SchemaValidator, core_schema
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise missing_framework("pydantic_ai", "pydantic-ai", err) from err

__all__ = ["answer_deferred", "ask_user_question_tool", "key_of"]

_HOW = "run the agent with deps=ctx (or deps that have it as .harness)"

# The failures that leave a deferred call pending (the harness's own abort, no usable provider
# or store, a caller that may not ask): `answer_deferred` raises them, and a later call asks
# again with the same keys. Every other failure is the call's result, for the model.
_KEEP_PENDING = KEEPS_PENDING


def _checked(arguments: Any) -> dict[str, Any]:
    # pydantic-ai's validation step: any value the model sent, checked by the tool's own rules.
    # A string here is a JSON string the model sent, not JSON text to parse once more.
    try:
        if isinstance(arguments, (str, bytes, bytearray)):
            raise UserQuestionError.invalid_args(_json.must_be("object", ""))
        tool.read_arguments(arguments)
    except UserQuestionError as err:
        raise ModelRetry(err.message) from None
    checked: dict[str, Any] = arguments
    return checked


_VALIDATOR = SchemaValidator(core_schema.no_info_plain_validator_function(_checked))


def _question() -> CallDeferred:
    try:
        return CallDeferred(kind="question")
    except TypeError:  # pydantic-ai before CallDeferred's kind: an external call
        return CallDeferred()


def ask_user_question_tool(
    ctx: Any | None = None,
    *,
    agent: object | None = None,
    signal: Any | None = None,
    max_retries: int | None = None,
    deferred: bool = False,
) -> Tool[Any]:
    """The ``ask_user_question`` tool for a pydantic-ai ``Agent``.

    ``ctx`` is the harness context; ``None`` takes it from the run's deps. ``agent`` and
    ``signal`` go into every ask (``None`` takes ``deps.agent`` / ``deps.signal`` when the deps
    have them). ``max_retries`` overrides the agent's retry budget for invalid arguments.
    ``deferred=True`` makes every valid call end the run with `DeferredToolRequests` instead of
    asking (``ctx``, ``agent`` and ``signal`` then belong to `answer_deferred`).
    """
    if deferred and (ctx is not None or agent is not None or signal is not None):
        raise TypeError(
            "a deferred ask_user_question_tool asks nobody: give ctx, agent and signal to"
            " answer_deferred instead"
        )

    async def ask_user_question(run: RunContext[Any], **arguments: Any) -> str:
        if deferred:
            raise _question()
        deps = run.deps
        harness = ctx if ctx is not None else context_of(deps, _HOW)
        result = await tool.run(
            harness,
            arguments,
            agent=agent if agent is not None else getattr(deps, "agent", None),
            signal=signal if signal is not None else getattr(deps, "signal", None),
        )
        if result.is_error:
            raise ToolFailed(result.content)
        return result.content

    made: Tool[Any] = Tool.from_schema(
        ask_user_question,
        name=tool.NAME,
        description=tool.DESCRIPTION,
        json_schema=tool.input_schema(),
        takes_ctx=True,
    )
    made.function_schema.validator = _VALIDATOR
    if max_retries is not None:
        made.max_retries = max_retries
    return made


def key_of(tool_call_id: str) -> str:
    """The ``key`` of the ask for a deferred call: its tool call's id (hashed if no key form)."""
    if KEY_PATTERN.fullmatch(tool_call_id):
        return tool_call_id
    return "sha256:" + hashlib.sha256(tool_call_id.encode("utf-8", "surrogatepass")).hexdigest()


async def answer_deferred(
    requests: DeferredToolRequests,
    ctx: Any,
    *,
    agent: object | None = None,
    signal: Any | None = None,
) -> DeferredToolResults:
    """Ask every deferred ``ask_user_question`` call of ``requests``; their results.

    Each call is asked through ``ctx.user_questions`` (concurrently), its ``key`` the tool
    call's id (`key_of`): asked again after a crash, a durable provider attaches to the same
    record and an answer given meanwhile comes back at once. An answer is the call's result as
    the live tool would return it; ``ASK_CANCELLED``, ``ASK_TIMED_OUT``, ``NOT_INTERACTIVE``,
    ``BAD_ANSWER`` and the request's own errors are its `ToolFailed`. The harness's own abort
    (``ASK_ABORTED``), an unusable store (``STORE_UNUSABLE``), no provider and a refused
    caller raise instead, and leave the calls pending for a later call. Calls of other tools
    and approvals are left out: add their results yourself (``results.update(...)``).
    """
    service = ctx.get("user_questions")
    if service is None:
        raise UserQuestionError.no_provider()
    calls = [call for call in requests.calls if call.tool_name == tool.NAME]

    async def one(args: Any, tool_call_id: str) -> Any:
        try:
            questions = tool.read_arguments(args)
            answer = await service.ask(
                AskUserQuestionRequest(
                    questions=questions, agent=agent, signal=signal, key=key_of(tool_call_id)
                )
            )
        except _KEEP_PENDING:
            raise
        except HarnessError as err:
            return ToolFailed(tool.ToolResult.from_error(err).content)
        return tool.format_answer(answer)

    outcomes = await gather_all(one(call.args, call.tool_call_id) for call in calls)
    return DeferredToolResults(
        calls={call.tool_call_id: outcome for call, outcome in zip(calls, outcomes, strict=True)}
    )
