"""``ask_user_question`` for LangGraph: a durable pause, answered through the service.

Two parts:

- `ask_user_question_tool()`: a LangChain tool for a graph (``langchain.agents.create_agent``,
  ``langgraph.prebuilt.create_react_agent`` or your own ``ToolNode``). It asks nobody itself: a
  valid call pauses the graph with LangGraph's ``interrupt()``, whose value is the request's
  wire form (`AskUserQuestionRequest.to_dict`) with a ``key`` made of the thread id and the tool
  call's id (`key_of`, i.e. `tool.durable_key`; a graph run without a ``thread_id`` is refused).
  A call that breaks the tool's rules does not pause: the model gets the tool's
  ``Error: invalid arguments: ...`` as an error ``ToolMessage`` (``status="error"``) and calls
  again. When the graph is resumed, the model gets the resume value's text (see
  `resume_value`).
- `answer_interrupts(graph, input, config, ctx)`: runs or resumes the graph, asks every
  pending question at once through `tool.run` (its key kept), resumes with
  ``Command(resume=...)`` carrying the tool's text for the model, and repeats until the graph
  ends; it returns the final state's values. The graph needs a checkpointer. With a persistent
  one (``langgraph-checkpoint-sqlite``, ``langgraph-checkpoint-postgres``) and a durable
  provider (the inbox), a process that dies while waiting loses nothing: run
  `answer_interrupts` again with the same ``thread_id`` and input, and it asks the same
  questions with the same keys, so the provider attaches to the same records (an answer given
  meanwhile comes back at once, nobody is asked twice), and the graph goes on. A thread that
  already ended on that input is not run again: its values come back as they are.

A failed ask goes back to the model as the tool's error message when it is the question's own
outcome (``ASK_CANCELLED``, ``ASK_TIMED_OUT``, ``NOT_INTERACTIVE``, ``BAD_ANSWER``, a request
breaking the rules). The harness's own abort (``ASK_ABORTED``), an unusable store
(``STORE_UNUSABLE``), no provider and a refused caller (another live harness asking the same
key is ``ASKED_ELSEWHERE``) raise from `answer_interrupts` instead and leave the graph paused,
to be resumed by a later call.

**Secrets.** The model, the resume value and so the checkpoint tables get
`rules.SECRET_PLACEHOLDER` for a secret answer; the clear text goes only to
``answer_interrupts(..., on_secrets=...)`` (``on_secrets(key, {question id: text})``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from .. import rules, tool
from .._payloads import AskUserQuestionAnswer, AskUserQuestionRequest, WireFormatError
from ..errors import HarnessError, UserQuestionError
from ._common import OnSecrets, gather_all, missing_framework, run_durable

try:
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import StructuredTool, ToolException
    from langgraph.types import Command, Interrupt, interrupt
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise missing_framework("langgraph", "langgraph", err) from err

from ._langchain_tool import whole_arguments_tool

__all__ = ["answer_interrupts", "ask_user_question_tool", "resume_value"]

FRAMEWORK = "langgraph"
"""The framework's name in this adapter's keys (`tool.durable_key`)."""

# The checkpoint metadata naming the input `answer_interrupts` ran the thread on.
_INPUT_MARK = "dsh_user_questions_input"


def key_of(thread_id: object, tool_call_id: str) -> str:
    """The ``key`` of a tool call's question: ``langgraph:<thread id>:<tool call id>``.

    `tool.durable_key` of the thread and the call (a hashed form when they do not fit a key);
    raises `ValueError` without a thread id.
    """
    return tool.durable_key(FRAMEWORK, None if thread_id is None else str(thread_id), tool_call_id)


def resume_value(outcome: object) -> dict[str, Any]:
    """What to resume a question's interrupt with (``Command(resume=...)``).

    A `tool.ToolResult` (what `tool.run` gives for the question, as `answer_interrupts` does)
    gives ``{"tool_result": {"content": ..., "is_error": ...}}``: the model gets exactly its
    text, and only that text reaches the checkpoint (a secret's placeholder, never its clear
    text). An answer (`AskUserQuestionAnswer`) gives its wire form, checked with
    `rules.check_answer` on resume and turned into the model's text by `tool.result_of` (the
    checkpoint then holds the answer as given: resume a secret with a tool result instead); a
    `UserQuestionError` gives ``{"error": {"code": ..., "message": ...}}``, the tool's error.
    """
    if isinstance(outcome, tool.ToolResult):
        return {"tool_result": {"content": outcome.content, "is_error": outcome.is_error}}
    if isinstance(outcome, UserQuestionError):
        return {"error": {"code": str(outcome.code), "message": outcome.message}}
    to_dict = getattr(outcome, "to_dict", None)  # an answer
    if callable(to_dict):
        data: dict[str, Any] = to_dict()
        return data
    raise TypeError(
        "a resume value is made of a ToolResult, an answer or a UserQuestionError, not"
        f" {type(outcome).__name__}"
    )


def _relayed(value: object) -> str | None:
    # A tool result's text, as answer_interrupts resumes with it (None: another form).
    if not (isinstance(value, Mapping) and set(value) == {"tool_result"}):
        return None
    relayed = value["tool_result"]
    content = relayed.get("content") if isinstance(relayed, Mapping) else None
    if not isinstance(content, str):
        bad = UserQuestionError.bad_answer("tool_result.content: must be a string")
        raise ToolException(tool.result_of((), bad).content)
    if relayed.get("is_error"):
        raise ToolException(content)
    return content


def _result(request: AskUserQuestionRequest, value: object) -> str:
    """The model's text for the resume ``value``; raises `ToolException` for an error."""
    relayed = _relayed(value)
    if relayed is not None:
        return relayed
    outcome: AskUserQuestionAnswer | HarnessError
    try:
        if isinstance(value, Mapping) and set(value) == {"error"}:
            error = value["error"]
            if not isinstance(error, Mapping):
                raise UserQuestionError.bad_answer("error: must be an object")
            outcome = UserQuestionError.from_wire(
                str(error.get("message", "")), str(error.get("code", ""))
            )
        else:
            outcome = rules.check_answer(request, value)
    except HarnessError as err:
        outcome = err
    result = tool.result_of(request.questions, outcome)
    if result.is_error:
        raise ToolException(result.content)
    return result.content


def _ask(arguments: object, tool_call_id: str | None, config: RunnableConfig) -> str:
    try:
        questions = tool.read_arguments(arguments)
        configurable = config.get("configurable") or {}
        thread_id = configurable.get("thread_id")
        key = None if tool_call_id is None else key_of(thread_id, tool_call_id)
        request = AskUserQuestionRequest(questions=questions, key=key)
        rules.check_request(request)
    except HarnessError as err:
        raise ToolException(tool.result_of((), err).content) from None
    return _result(request, interrupt(request.to_dict()))


def ask_user_question_tool() -> StructuredTool:
    """The ``ask_user_question`` tool for a LangGraph graph: it pauses the graph to ask.

    Run the graph with `answer_interrupts` (or resume it yourself with
    ``Command(resume={interrupt.id: resume_value(tool_result)})``, see `resume_value`). The
    graph needs a checkpointer and a ``thread_id`` in ``config["configurable"]``, as every
    LangGraph ``interrupt()`` does; the thread id is the run identity in the question's key.
    """

    def ask_user_question(
        arguments: object, tool_call_id: str | None, *, dsh_run_config: RunnableConfig
    ) -> str:
        return _ask(arguments, tool_call_id, dsh_run_config)

    async def ask_user_question_async(
        arguments: object, tool_call_id: str | None, *, dsh_run_config: RunnableConfig
    ) -> str:
        return _ask(arguments, tool_call_id, dsh_run_config)

    return whole_arguments_tool(coroutine=ask_user_question_async, func=ask_user_question)


def _request_of(pending: Interrupt) -> AskUserQuestionRequest:
    try:
        return AskUserQuestionRequest.from_dict(pending.value)
    except (WireFormatError, TypeError, ValueError):
        raise ValueError(
            "answer_interrupts answers only ask_user_question's interrupts; the graph is paused"
            f" on another one (interrupt id {pending.id!r}): resume it with"
            " Command(resume=...) yourself"
        ) from None


def _input_mark(input: Any, input_id: str | None) -> str:
    if input_id is not None:
        return input_id
    text = json.dumps(input, sort_keys=True, default=repr, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


async def answer_interrupts(
    graph: Any,
    input: Any,
    config: RunnableConfig,
    ctx: Any,
    *,
    agent: object | None = None,
    signal: Any | None = None,
    input_id: str | None = None,
    on_secrets: OnSecrets | None = None,
    workspace: Any = None,
    audience: Iterable[str] = (),
) -> Any:
    """Run the graph (or resume its thread) until it ends, answering every question it asks.

    ``graph`` is a compiled LangGraph graph with a checkpointer; ``config`` names the thread
    (``{"configurable": {"thread_id": ...}}``); ``ctx`` is the harness context whose
    ``user_questions`` asks (``agent`` and ``signal`` go into every ask). Pending questions are
    asked at once, each through `tool.run` with its key, and the graph is resumed with the
    tool's text for the model (`resume_value` of the `tool.ToolResult`); a secret's clear text
    goes only to ``on_secrets(key, {question id: text})``.

    ``input`` is sent at most once: when the thread is paused on questions (a previous run died
    waiting) they are asked again with their keys; when it stopped inside a step, it is resumed;
    when it already ended on this input (a run died after its last checkpoint), its values are
    returned as they are; otherwise ``input`` starts a run (a new thread, or a new turn of an
    ended one). The input is told apart by ``input_id`` (default: a digest of its JSON form, so
    give an id when two turns may send the same input, or when it holds objects without a
    stable ``repr``), kept in the checkpoints' metadata. Returns the values of the graph's
    final state. Exceptions of the graph propagate; so do the ask failures that leave it paused
    (see the module).
    ``workspace`` (a folder) is the root a model's files question picks from
    (`tool.run`'s).
    ``audience`` (person ids and ``group:NAME``) is who may answer (`tool.run`'s), set
    by the harness, never the model.
    """
    service = ctx.get("user_questions")
    if service is None:
        raise UserQuestionError.no_provider()
    mark = _input_mark(input, input_id)
    run_config: Any = {**config, "metadata": {**(config.get("metadata") or {}), _INPUT_MARK: mark}}

    async def one(pending: Interrupt) -> dict[str, Any]:
        request = _request_of(pending)
        result = await run_durable(
            ctx,
            {"questions": pending.value["questions"]},
            request.key,
            agent=agent,
            signal=signal,
            on_secrets=on_secrets,
            timeout=request.timeout,
            workspace=workspace,
            audience=audience,
        )
        return resume_value(result)

    async def answers(pending: tuple[Interrupt, ...]) -> Command[Any]:
        for each in pending:
            _request_of(each)  # every interrupt is a question before any is asked
        values = await gather_all(one(each) for each in pending)
        return Command(resume={each.id: value for each, value in zip(pending, values, strict=True)})

    snapshot = await graph.aget_state(config)
    if snapshot.interrupts:
        step: Any = await answers(snapshot.interrupts)
    elif snapshot.next:
        step = None  # stopped inside a step: go on from the last checkpoint
    elif (snapshot.metadata or {}).get(_INPUT_MARK) == mark:
        return snapshot.values  # it already ended on this input: never send it twice
    else:
        step = input
    while True:
        await graph.ainvoke(step, run_config)
        snapshot = await graph.aget_state(config)
        if not snapshot.interrupts:
            return snapshot.values
        step = await answers(snapshot.interrupts)
