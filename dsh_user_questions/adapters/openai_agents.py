"""``ask_user_question`` as an OpenAI Agents SDK `FunctionTool`, live or durable.

One line: ``Agent(name=..., tools=[ask_user_question_tool(ctx)])``, or leave ``ctx`` out and
run with the harness context as the run context (``Runner.run(agent, input, context=ctx)``, or
a context holding it as ``.harness``, with optional ``.agent`` and ``.signal``).

Strictness: by default the tool is strict (``strict_json_schema=True``, as the SDK
recommends) with the tool's strict-mode schema, ``tool.input_schema(strict=True)``: every
property required, optional ones nullable, and only the keywords strict mode supports; the
nulls the model then sends for optional properties mean "left out". ``strict=False`` gives the
published schema (with its length limits) undeclared-strict instead, for models without strict
mode. Either way the tool validates the arguments itself, with the full rules: a call that
breaks them gets ``Error: invalid arguments: ...`` with every problem back as its output, and
the model calls again (the SDK has no retry signal of its own, nor an error flag on a tool's
output; the tool's description tells the model to fix the problems and call again, and how to
read the other errors). Cancelling the run's task (or a streamed run's ``cancel()``) cancels
the pending ask.

**Durable.** ``ask_user_question_tool(durable=True)`` makes a valid call a tool approval:
the run ends with ``result.interruptions`` and its `RunState` serialises
(``result.to_state().to_string()``). `answer_interruptions` asks each pending question
through the service with the tool call's id as its ``key`` and approves the call (or, for a
question's own failure such as ``ASK_CANCELLED``, rejects it with the tool's error text as the
output); the resumed run (``Runner.run(agent, state, ...)``) then calls the tool, which asks
with the same key, and a durable provider (the inbox) hands back the stored answer at once.
Live providers ignore keys: with them the resumed run asks again, so durable mode is for a
durable provider.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .. import tool
from ..errors import KEEPS_PENDING, HarnessError, UserQuestionError
from ..payloads import KEY_PATTERN, AskUserQuestionRequest
from ._common import context_of, missing_framework

try:
    from agents import FunctionTool, RunContextWrapper, RunResult, RunState
    from agents.tool_context import ToolContext
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise missing_framework("openai_agents", "openai-agents", err) from err

__all__ = ["answer_interruptions", "ask_user_question_tool", "key_of"]

_HOW = "run with Runner.run(agent, input, context=ctx) (or a context that has it as .harness)"
_KEEP_PENDING = KEEPS_PENDING


def key_of(call_id: str) -> str:
    """The ``key`` of a durable call's question: its tool call's id (hashed if no key form)."""
    if KEY_PATTERN.fullmatch(call_id):
        return call_id
    return "sha256:" + hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()


async def _run(
    harness: Any, arguments: object, *, key: str | None, agent: object, signal: Any
) -> tool.ToolResult:
    if key is None:
        return await tool.run(harness, arguments, agent=agent, signal=signal)
    # tool.run with the request's key: the same checks, ask and result text.
    try:
        questions = tool.read_arguments(arguments)
        service = harness.get("user_questions")
        if service is None:
            raise UserQuestionError.no_provider()
        answer = await service.ask(
            AskUserQuestionRequest(questions=questions, agent=agent, signal=signal, key=key)
        )
    except HarnessError as err:
        return tool.ToolResult.from_error(err)
    return tool.ToolResult(tool.format_answer(answer))


def _valid(arguments: object) -> bool:
    try:
        tool.read_arguments(arguments)
    except UserQuestionError:
        return False
    return True


def ask_user_question_tool(
    ctx: Any | None = None,
    *,
    agent: object | None = None,
    signal: Any | None = None,
    strict: bool = True,
    durable: bool = False,
) -> FunctionTool:
    """The ``ask_user_question`` tool for an Agents SDK ``Agent``.

    ``ctx`` is the harness context; ``None`` takes it from the run context. ``agent`` and
    ``signal`` go into every ask (``None`` takes ``.agent`` / ``.signal`` of the run context
    when it has them). ``strict`` chooses OpenAI's strict mode and its schema variant.
    ``durable=True`` pauses the run on every valid call (a tool approval; see the module) and
    asks with the tool call's id as the key.
    """

    # Annotated ToolContext, the SDK passes the tool call's context (with its id).
    async def invoke(run: ToolContext[Any], arguments: str) -> str:
        given = run.context
        harness = ctx if ctx is not None else context_of(given, _HOW)
        call_id = run.tool_call_id
        result = await _run(
            harness,
            arguments,
            key=key_of(call_id) if durable else None,
            agent=agent if agent is not None else getattr(given, "agent", None),
            signal=signal if signal is not None else getattr(given, "signal", None),
        )
        return result.content

    async def needs_approval(_run: RunContextWrapper[Any], arguments: Any, _call_id: str) -> bool:
        return _valid(arguments)  # an invalid call runs at once: its error goes to the model

    return FunctionTool(
        name=tool.NAME,
        description=tool.DESCRIPTION,
        params_json_schema=tool.input_schema(strict=strict),
        on_invoke_tool=invoke,
        strict_json_schema=strict,
        needs_approval=needs_approval if durable else False,
    )


async def answer_interruptions(
    run: RunResult | RunState[Any, Any],
    ctx: Any,
    *,
    agent: object | None = None,
    signal: Any | None = None,
) -> RunState[Any, Any]:
    """Ask the questions a durable tool paused the run on; the state to resume with.

    ``run`` is the interrupted run's result or its (deserialised) `RunState`. Each pending
    ``ask_user_question`` approval is asked through ``ctx.user_questions`` with its key
    (`key_of` the call id): after a crash, asking again attaches to the same record. An answer
    approves the call (the resumed run's tool gets the stored answer by its key); a question's
    own failure (``ASK_CANCELLED``, ``ASK_TIMED_OUT``, ``NOT_INTERACTIVE``...) rejects it with
    the tool's ``Error: ...`` text as its output. The harness's abort, an unusable store, no
    provider and a refused caller raise and leave the calls pending. Other tools' approvals are
    left to you. Resume with ``Runner.run(agent, state, context=...)``.
    """
    state: RunState[Any, Any] = run.to_state() if isinstance(run, RunResult) else run
    service = ctx.get("user_questions")
    if service is None:
        raise UserQuestionError.no_provider()
    for item in state.get_interruptions():
        if item.tool_name != tool.NAME:
            continue
        raw: Any = item.raw_item
        arguments = raw.get("arguments") if isinstance(raw, dict) else raw.arguments
        call_id = raw.get("call_id") if isinstance(raw, dict) else raw.call_id
        try:
            questions = tool.read_arguments(arguments)
            await service.ask(
                AskUserQuestionRequest(
                    questions=questions, agent=agent, signal=signal, key=key_of(str(call_id))
                )
            )
        except _KEEP_PENDING:
            raise
        except HarnessError as err:
            if getattr(err, "code", None) == "INVALID_ARGS":
                state.approve(item)  # the tool reports it to the model
            else:
                state.reject(item, rejection_message=tool.ToolResult.from_error(err).content)
            continue
        state.approve(item)
    return state
