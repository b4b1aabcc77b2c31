"""``ask_user_question`` as a LangChain tool (a `StructuredTool`).

One line: ``ask_user_question_tool(ctx)`` in the tools you bind to a chat model or give to an
agent; or leave ``ctx`` out and pass the harness context per run as
``config={"configurable": {"harness": ctx}}`` (with optional ``"agent"`` and ``"signal"``).

The tool's JSON Schema is its ``args_schema``; LangChain passes the model's arguments through
unvalidated, and the tool takes them whole (so an argument named ``config``, ``run_manager``
or ``callbacks`` is the model's, not LangChain's) and checks them itself. Every failure raises
`ToolException`, which the tool handles (``handle_tool_error=True``): the run goes on with a
``ToolMessage`` of ``status="error"`` whose content is ``Error: <message>``; for
``INVALID_ARGS`` it lists every problem so the model can call again. The tool runs from
``ainvoke`` (the ask awaited on the run's loop) and from ``invoke`` (a synchronous chain or
``graph.invoke``: the same ask runs on the service's question loop, the calling thread
waiting, as `UserQuestionService.ask_sync` does). Cancelling the task running the chain or
graph (or interrupting the thread waiting in ``invoke``) cancels the pending ask.

For a LangGraph graph that must survive a restart, use `dsh_user_questions.adapters.langgraph`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import tool
from .._sync import owner_of, run_sync
from ._common import Live, OnSecrets, context_of, missing_framework
from ._langchain_tool import whole_arguments_tool

try:
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import StructuredTool, ToolException
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise missing_framework("langchain", "langchain", err) from err

__all__ = ["ask_user_question_tool"]

_HOW = 'invoke it with config={"configurable": {"harness": ctx}}'


def ask_user_question_tool(
    ctx: Any | None = None,
    *,
    agent: object | None = None,
    signal: Any | None = None,
    on_secrets: OnSecrets | None = None,
    workspace: Any = None,
    audience: Iterable[str] = (),
) -> StructuredTool:
    """The ``ask_user_question`` tool for LangChain chat models and agents.

    ``ctx`` is the harness context; ``None`` takes it from the run's
    ``config["configurable"]["harness"]``. ``agent`` and ``signal`` go into every ask (``None``
    takes ``"agent"`` / ``"signal"`` from the run's ``configurable`` when given).
    ``on_secrets`` gets the clear text of each secret answer (the model gets the placeholder):
    ``on_secrets(tool_call_id, {question id: text})``.
    ``workspace`` (a folder) is the root a model's files question picks from
    (`tool.run`'s).
    ``audience`` (person ids and ``group:NAME``) is who may answer (`tool.run`'s), set
    by the harness, never the model.
    """
    live = Live(ctx, agent, signal, on_secrets, _HOW, workspace, audience)

    async def ask_user_question(
        arguments: object, tool_call_id: str | None, *, dsh_run_config: RunnableConfig
    ) -> str:
        configurable = dsh_run_config.get("configurable") or {}
        harness = configurable.get("harness")
        return _content(await live.run(arguments, tool_call_id, harness, configurable.get))

    def ask_user_question_sync(
        arguments: object, tool_call_id: str | None, *, dsh_run_config: RunnableConfig
    ) -> str:
        configurable = dsh_run_config.get("configurable") or {}
        harness = configurable.get("harness")
        ctx_of_run = live.ctx if live.ctx is not None else context_of(harness, _HOW)
        result = run_sync(
            owner_of(ctx_of_run),
            lambda: live.run(arguments, tool_call_id, harness, configurable.get),
        )
        return _content(result)

    return whole_arguments_tool(coroutine=ask_user_question, func=ask_user_question_sync)


def _content(result: tool.ToolResult) -> str:
    """The model's text of a call's result; an error raises `ToolException` (handled)."""
    if result.is_error:
        raise ToolException(result.content)
    return result.content
