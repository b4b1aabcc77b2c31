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
(``result.to_state().to_string()``). `answer_interruptions(state, ctx, run_id=...)` asks every
pending question at once, each through `tool.run` with the key `tool.durable_key` makes of
``run_id`` and the tool call's id, and settles each call with the tool's text for the model as
its output (the SDK's ``reject(..., rejection_message=...)``, which sends that exact text):
the resumed run (``Runner.run(agent, state, ...)``) gives the model that text and never runs
the tool again. The SDK's `RunState` has no public run identity, so ``run_id`` is yours: one
per run, the same after a restart (e.g. the id you keep the saved state under);
`answer_interruptions` refuses to ask without one.

**Secrets.** The model, the `RunState` and what you save of it get
`rules.SECRET_PLACEHOLDER` for a secret answer; the clear text goes only to the
``on_secrets`` hook (``on_secrets(key or tool call id, {question id: text})``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import tool
from ..errors import UserQuestionError
from ._common import Live, OnSecrets, gather_all, missing_framework, run_durable

try:
    from agents import FunctionTool, RunContextWrapper, RunResult, RunState
    from agents.tool_context import ToolContext
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise missing_framework("openai_agents", "openai-agents", err) from err

__all__ = ["answer_interruptions", "ask_user_question_tool"]

FRAMEWORK = "openai-agents"
"""The framework's name in this adapter's keys (`tool.durable_key`)."""

_HOW = "run with Runner.run(agent, input, context=ctx) (or a context that has it as .harness)"


def key_of(run_id: str | None, call_id: str) -> str:
    """The ``key`` of a durable call's question: `tool.durable_key` of the run and the call."""
    return tool.durable_key(FRAMEWORK, run_id, call_id)


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
    on_secrets: OnSecrets | None = None,
    workspace: Any = None,
    audience: Iterable[str] = (),
) -> FunctionTool:
    """The ``ask_user_question`` tool for an Agents SDK ``Agent``.

    ``ctx`` is the harness context; ``None`` takes it from the run context. ``agent`` and
    ``signal`` go into every ask (``None`` takes ``.agent`` / ``.signal`` of the run context
    when it has them). ``strict`` chooses OpenAI's strict mode and its schema variant.
    ``durable=True`` pauses the run on every valid call (a tool approval) for
    `answer_interruptions` to ask (see the module). ``on_secrets`` gets the clear text of each
    secret answer the tool itself receives (the model gets the placeholder).
    ``workspace`` (a folder) is the root a model's files question picks from (`tool.run`'s).
    ``audience`` (person ids and ``group:NAME``) is who may answer (`tool.run`'s), set
    by the harness, never the model.
    """

    live = Live(ctx, agent, signal, on_secrets, _HOW, workspace, audience)

    # Annotated ToolContext, the SDK passes the tool call's context (with its id).
    async def invoke(run: ToolContext[Any], arguments: str) -> str:
        result = await live.run(arguments, run.tool_call_id, run.context)
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
    run_id: str | None = None,
    agent: object | None = None,
    signal: Any | None = None,
    on_secrets: OnSecrets | None = None,
    workspace: Any = None,
    audience: Iterable[str] = (),
) -> RunState[Any, Any]:
    """Ask the questions a durable tool paused the run on; the state to resume with.

    ``run`` is the interrupted run's result or its (deserialised) `RunState`; ``run_id`` names
    the run (required: the SDK's state has no public identity of its own; keep it with the
    saved state). Every pending ``ask_user_question`` approval is asked at once through
    `tool.run`, its key `key_of(run_id, call id)`: after a crash, asking again attaches to the
    same record, and another run reusing a call id gets a record of its own. Each call is then
    settled with the tool's text for the model as its output (the answer JSON, a secret's text
    replaced by `rules.SECRET_PLACEHOLDER` and handed to ``on_secrets(key, {question id:
    text})`` only; or a question's own failure, ``Error: ...``), so the resumed run never runs
    the tool again. The harness's abort, an unusable store, no provider and a refused caller
    (``ASKED_ELSEWHERE``: another live harness asks the key) raise and leave the calls
    pending. Other tools' approvals are left to you. Resume with ``Runner.run(agent, state,
    context=...)``.
    ``workspace`` (a folder) is the root a model's files question picks from
    (`tool.run`'s).
    ``audience`` (person ids and ``group:NAME``) is who may answer (`tool.run`'s), set
    by the harness, never the model.
    """
    if not run_id:
        raise ValueError(
            "answer_interruptions needs run_id=: the Agents SDK's RunState has no public run"
            " identity, and a key of the tool call id alone could hand one run's answer to"
            " another (give each run an id of its own, the same after a restart)"
        )
    state: RunState[Any, Any] = run.to_state() if isinstance(run, RunResult) else run
    service = ctx.get("user_questions")
    if service is None:
        raise UserQuestionError.no_provider()
    pending = [item for item in state.get_interruptions() if item.tool_name == tool.NAME]

    async def one(item: Any) -> str:
        raw: Any = item.raw_item
        arguments = raw.get("arguments") if isinstance(raw, dict) else raw.arguments
        call_id = raw.get("call_id") if isinstance(raw, dict) else raw.call_id
        key = key_of(run_id, str(call_id))
        result = await run_durable(
            ctx,
            arguments,
            key,
            agent=agent,
            signal=signal,
            on_secrets=on_secrets,
            workspace=workspace,
            audience=audience,
        )
        return result.content

    outputs = await gather_all(one(item) for item in pending)
    for item, output in zip(pending, outputs, strict=True):
        state.reject(item, rejection_message=output)
    return state
