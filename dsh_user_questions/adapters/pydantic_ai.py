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
``"question"``, its metadata the run's ``run_id``). Save the run's messages
(``ModelMessagesTypeAdapter``), get the answers with `answer_deferred` and run the agent again
with ``message_history=`` and ``deferred_tool_results=``. Each call is asked through
`tool.run` with the key `tool.durable_key` makes of the run's ``run_id`` and the tool call's id,
so a durable provider such as the inbox keeps one record per call across crashes, and two runs
that reuse a tool call id (pydantic-ai's ``TestModel`` always does) never share one.

**Secrets.** The model gets `rules.SECRET_PLACEHOLDER` for a secret answer, and so do the
results and the history you save; the clear text goes only to the ``on_secrets`` hook of
`ask_user_question_tool` (live) or `answer_deferred` (deferred), with the call's name and the
texts by question id: keep it where the harness's own tools read it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .. import _json, tool
from ..errors import UserQuestionError
from ._common import Live, OnSecrets, gather_all, missing_framework, run_durable

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

__all__ = ["answer_deferred", "ask_user_question_tool"]

FRAMEWORK = "pydantic-ai"
"""The framework's name in this adapter's keys (`tool.durable_key`)."""

_HOW = "run the agent with deps=ctx (or deps that have it as .harness)"


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


def _question(run: RunContext[Any]) -> CallDeferred:
    # The run's identity travels with the call, for its key (`answer_deferred`).
    run_id = getattr(run, "run_id", None)
    metadata = {"run_id": run_id} if isinstance(run_id, str) and run_id else None
    try:
        return CallDeferred(metadata, kind="question")
    except TypeError:  # pragma: no cover - pydantic-ai before CallDeferred's kind
        return CallDeferred(metadata)


def ask_user_question_tool(
    ctx: Any | None = None,
    *,
    agent: object | None = None,
    signal: Any | None = None,
    max_retries: int | None = None,
    deferred: bool = False,
    on_secrets: OnSecrets | None = None,
    workspace: Any = None,
    audience: Iterable[str] = (),
) -> Tool[Any]:
    """The ``ask_user_question`` tool for a pydantic-ai ``Agent``.

    ``ctx`` is the harness context; ``None`` takes it from the run's deps. ``agent`` and
    ``signal`` go into every ask (``None`` takes ``deps.agent`` / ``deps.signal`` when the deps
    have them). ``max_retries`` overrides the agent's retry budget for invalid arguments.
    ``deferred=True`` makes every valid call end the run with `DeferredToolRequests` instead of
    asking (``ctx``, ``agent``, ``signal`` and ``on_secrets`` then belong to
    `answer_deferred`). ``on_secrets`` gets the clear text of each secret answer (the model
    gets the placeholder): ``on_secrets(tool_call_id, {question id: text})``.
    ``workspace`` (a folder) is the root a model's files question picks from
    (`tool.run`'s).
    ``audience`` (person ids and ``group:NAME``) is who may answer (`tool.run`'s), set
    by the harness, never the model.
    """
    if deferred and (
        ctx is not None or agent is not None or signal is not None or on_secrets is not None
    ):
        raise TypeError(
            "a deferred ask_user_question_tool asks nobody: give ctx, agent, signal and"
            " on_secrets to answer_deferred instead"
        )

    live = Live(ctx, agent, signal, on_secrets, _HOW, workspace, audience)

    async def ask_user_question(run: RunContext[Any], **arguments: Any) -> str:
        if deferred:
            raise _question(run)
        result = await live.run(arguments, run.tool_call_id, run.deps)
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


def key_of(run_id: str | None, tool_call_id: str) -> str:
    """The ``key`` of a deferred call's ask: `tool.durable_key` of the run and the call."""
    return tool.durable_key(FRAMEWORK, run_id, tool_call_id)


def _run_ids(messages: Sequence[Any]) -> dict[str, str]:
    # The run that made each tool call: the run_id of the model response holding it.
    found: dict[str, str] = {}
    for message in messages:
        run_id = getattr(message, "run_id", None)
        if getattr(message, "kind", None) != "response" or not run_id:
            continue
        for part in message.parts:
            if getattr(part, "part_kind", None) == "tool-call":
                found[part.tool_call_id] = run_id
    return found


def _run_id_of(
    requests: DeferredToolRequests, tool_call_id: str, given: str | None, found: dict[str, str]
) -> str:
    if given:
        return given
    metadata = requests.metadata.get(tool_call_id) or {}
    stamped = metadata.get("run_id")
    if isinstance(stamped, str) and stamped:
        return stamped
    if tool_call_id in found:
        return found[tool_call_id]
    raise ValueError(
        f"answer_deferred cannot tell which run made the tool call {tool_call_id!r}, so it has"
        " no durable key for it: pass the requests the run returned (their metadata names the"
        " run), messages= (the run's messages or the saved history), or run_id="
    )


async def answer_deferred(
    requests: DeferredToolRequests,
    ctx: Any,
    *,
    messages: Sequence[Any] | None = None,
    run_id: str | None = None,
    agent: object | None = None,
    signal: Any | None = None,
    on_secrets: OnSecrets | None = None,
    workspace: Any = None,
    audience: Iterable[str] = (),
) -> DeferredToolResults:
    """Ask every deferred ``ask_user_question`` call of ``requests``; their results.

    Each call goes through `tool.run` (concurrently) with its key, `key_of` the run that made it
    and its tool call id: asked again after a crash, a durable provider attaches to the same
    record and an answer given meanwhile comes back at once; another run's call of the same id
    is another record. The run is ``run_id`` when given, else the one the tool stamped in the
    requests' metadata, else the ``run_id`` of the model response holding the call in
    ``messages`` (the saved history, for requests rebuilt from it); with none of them it raises
    `ValueError` and asks nobody.

    An answer is the call's result as the live tool would return it (a secret's text replaced
    by `rules.SECRET_PLACEHOLDER`; the clear text goes to ``on_secrets(key, {question id:
    text})`` only); ``ASK_CANCELLED``, ``ASK_TIMED_OUT``, ``NOT_INTERACTIVE``, ``BAD_ANSWER``
    and the request's own errors are its `ToolFailed`. The harness's own abort
    (``ASK_ABORTED``), an unusable store (``STORE_UNUSABLE``), no provider and a refused caller
    (``ASKED_ELSEWHERE``: another live harness asks the key) raise instead, and leave the
    calls pending for a later call. Calls of other tools and approvals are left out: add their
    results yourself (``results.update(...)``).
    ``workspace`` (a folder) is the root a model's files question picks from (`tool.run`'s).
    ``audience`` (person ids and ``group:NAME``) is who may answer (`tool.run`'s), set
    by the harness, never the model.
    """
    service = ctx.get("user_questions")
    if service is None:
        raise UserQuestionError.no_provider()
    calls = [call for call in requests.calls if call.tool_name == tool.NAME]
    found = _run_ids(messages or ())
    keys = [
        key_of(_run_id_of(requests, call.tool_call_id, run_id, found), call.tool_call_id)
        for call in calls
    ]

    async def one(args: Any, key: str) -> Any:
        result = await run_durable(
            ctx,
            args,
            key,
            agent=agent,
            signal=signal,
            on_secrets=on_secrets,
            workspace=workspace,
            audience=audience,
        )
        return ToolFailed(result.content) if result.is_error else result.content

    outcomes = await gather_all(one(call.args, key) for call, key in zip(calls, keys, strict=True))
    return DeferredToolResults(
        calls={call.tool_call_id: outcome for call, outcome in zip(calls, outcomes, strict=True)}
    )
