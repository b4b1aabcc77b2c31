"""``ask_user_question`` for LangGraph: a durable pause, answered through the service.

Two parts:

- `ask_user_question_tool()`: a LangChain tool for a graph (``langchain.agents.create_agent``,
  ``langgraph.prebuilt.create_react_agent`` or your own ``ToolNode``). It asks nobody itself: a
  valid call pauses the graph with LangGraph's ``interrupt()``, whose value is the request's
  wire form (`AskUserQuestionRequest.to_dict`) with a ``key`` made of the thread id and the tool
  call's id (`key_of`). A call that breaks the tool's rules does not pause: the model gets the
  tool's ``Error: invalid arguments: ...`` as an error ``ToolMessage`` (``status="error"``) and
  calls again. When the graph is resumed, the resume value (an answer in wire form) is checked
  with `rules.check_answer` and the model gets exactly what `tool.run` would give it.
- `answer_interrupts(graph, input, config, ctx)`: runs or resumes the graph, asks every
  pending question through ``ctx.user_questions`` (its key kept), resumes with
  ``Command(resume=...)``, and repeats until the graph ends; it returns the final state's
  values. The graph needs a checkpointer. With a persistent one (``langgraph-checkpoint-sqlite``,
  ``langgraph-checkpoint-postgres``) and a durable provider (the inbox), a process that dies
  while waiting loses nothing: run `answer_interrupts` again with the same ``thread_id`` and it
  asks the same questions with the same keys, so the provider attaches to the same records (an
  answer given meanwhile comes back at once, nobody is asked twice), and the graph goes on.

A failed ask goes back to the model as the tool's error message when it is the question's own
outcome (``ASK_CANCELLED``, ``ASK_TIMED_OUT``, ``NOT_INTERACTIVE``, ``BAD_ANSWER``, a request
breaking the rules). The harness's own abort (``ASK_ABORTED``), an unusable store
(``STORE_UNUSABLE``), no provider and a refused caller raise from `answer_interrupts` instead
and leave the graph paused, to be resumed by a later call.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from .. import rules, tool
from ..errors import KEEPS_PENDING, HarnessError, UserQuestionError
from ..payloads import KEY_PATTERN, AskUserQuestionRequest, WireFormatError
from ._common import gather_all, missing_framework

try:
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import StructuredTool, ToolException
    from langgraph.types import Command, Interrupt, interrupt
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise missing_framework("langgraph", "langgraph", err) from err

from ._langchain_tool import WholeArgumentsTool

__all__ = ["answer_interrupts", "ask_user_question_tool", "key_of", "resume_value"]

# The failures that leave the graph paused rather than telling the model (see the module).
_KEEP_PENDING = KEEPS_PENDING


def key_of(thread_id: object, tool_call_id: str) -> str:
    """The ``key`` of a tool call's question: ``langgraph:<thread id>:<tool call id>``.

    A thread id or tool call id outside `KEY_PATTERN`'s characters, or a key longer than its
    limit, gives ``langgraph:sha256:<hex digest of both>`` instead: stable all the same.
    """
    key = f"langgraph:{thread_id}:{tool_call_id}"
    if KEY_PATTERN.fullmatch(key):
        return key
    both = f"{len(str(thread_id))}:{thread_id}:{tool_call_id}"
    return "langgraph:sha256:" + hashlib.sha256(both.encode("utf-8", "surrogatepass")).hexdigest()


def resume_value(outcome: object) -> dict[str, Any]:
    """What `answer_interrupts` resumes a question's interrupt with.

    An answer (`AskUserQuestionAnswer`) gives its wire form; a `UserQuestionError` gives
    ``{"error": {"code": ..., "message": ...}}``, which the tool hands to the model as its
    error message. Use it to resume a graph by hand with ``Command(resume=...)``.
    """
    if isinstance(outcome, UserQuestionError):
        return {"error": {"code": str(outcome.code), "message": outcome.message}}
    to_dict = getattr(outcome, "to_dict", None)
    if callable(to_dict):
        data: dict[str, Any] = to_dict()
        return data
    raise TypeError(
        f"a resume value is made of an answer or a UserQuestionError, not {type(outcome).__name__}"
    )


def _result(request: AskUserQuestionRequest, value: object) -> str:
    """The model's text for the resume ``value``, as `tool.run` would give it; raises on error."""
    try:
        if isinstance(value, Mapping) and set(value) == {"error"}:
            error = value["error"]
            if not isinstance(error, Mapping):
                raise UserQuestionError.bad_answer("error: must be an object")
            raise UserQuestionError.from_wire(
                str(error.get("message", "")), str(error.get("code", ""))
            )
        answer = rules.check_answer(request, value)
    except HarnessError as err:
        raise ToolException(tool.ToolResult.from_error(err).content) from None
    return tool.format_answer(answer)


def _ask(arguments: object, tool_call_id: str | None, config: RunnableConfig) -> str:
    try:
        questions = tool.read_arguments(arguments)
        configurable = config.get("configurable") or {}
        thread_id = configurable.get("thread_id")
        key = None if tool_call_id is None else key_of(thread_id, tool_call_id)
        request = AskUserQuestionRequest(questions=questions, key=key)
        rules.check_request(request)
    except HarnessError as err:
        raise ToolException(tool.ToolResult.from_error(err).content) from None
    return _result(request, interrupt(request.to_dict()))


def ask_user_question_tool() -> StructuredTool:
    """The ``ask_user_question`` tool for a LangGraph graph: it pauses the graph to ask.

    Run the graph with `answer_interrupts` (or resume it yourself with
    ``Command(resume=resume_value(answer))``). The graph needs a checkpointer and a
    ``thread_id`` in ``config["configurable"]``, as every LangGraph ``interrupt()`` does.
    """

    def ask_user_question(
        arguments: object, tool_call_id: str | None, *, dsh_run_config: RunnableConfig
    ) -> str:
        return _ask(arguments, tool_call_id, dsh_run_config)

    async def ask_user_question_async(
        arguments: object, tool_call_id: str | None, *, dsh_run_config: RunnableConfig
    ) -> str:
        return _ask(arguments, tool_call_id, dsh_run_config)

    return WholeArgumentsTool(
        name=tool.NAME,
        description=tool.DESCRIPTION,
        args_schema=tool.input_schema(),
        func=ask_user_question,
        coroutine=ask_user_question_async,
        handle_tool_error=True,
    )


def _request_of(pending: Interrupt) -> AskUserQuestionRequest:
    try:
        return AskUserQuestionRequest.from_dict(pending.value)
    except (WireFormatError, TypeError, ValueError):
        raise ValueError(
            "answer_interrupts answers only ask_user_question's interrupts; the graph is paused"
            f" on another one (interrupt id {pending.id!r}): resume it with"
            " Command(resume=...) yourself"
        ) from None


async def answer_interrupts(
    graph: Any,
    input: Any,
    config: RunnableConfig,
    ctx: Any,
    *,
    agent: object | None = None,
    signal: Any | None = None,
) -> Any:
    """Run the graph (or resume its thread) until it ends, answering every question it asks.

    ``graph`` is a compiled LangGraph graph with a checkpointer; ``config`` names the thread
    (``{"configurable": {"thread_id": ...}}``); ``ctx`` is the harness context whose
    ``user_questions`` asks (``agent`` and ``signal`` go into every ask). When the thread is
    paused on questions (a previous run died waiting), they are asked again with their keys and
    ``input`` is not sent; when it stopped inside a step, it is resumed; otherwise ``input``
    starts a run. Returns the values of the graph's final state. Exceptions of the graph
    propagate; so do the ask failures that leave it paused (see the module).
    """
    service = ctx.get("user_questions")
    if service is None:
        raise UserQuestionError.no_provider()

    async def one(pending: Interrupt) -> dict[str, Any]:
        request = _request_of(pending)
        try:
            answer = await service.ask(
                AskUserQuestionRequest(
                    questions=request.questions,
                    agent=agent,
                    signal=signal,
                    timeout=request.timeout,
                    key=request.key,
                )
            )
        except _KEEP_PENDING:
            raise
        except UserQuestionError as err:
            return resume_value(err)
        return resume_value(answer)

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
    else:
        step = input
    while True:
        await graph.ainvoke(step, config)
        snapshot = await graph.aget_state(config)
        if not snapshot.interrupts:
            return snapshot.values
        step = await answers(snapshot.interrupts)
