"""``ask_user_question`` as a LangChain tool (a `StructuredTool`).

One line: ``ask_user_question_tool(ctx)`` in the tools you bind to a chat model or give to an
agent; or leave ``ctx`` out and pass the harness context per run as
``config={"configurable": {"harness": ctx}}`` (with optional ``"agent"`` and ``"signal"``).

The tool's JSON Schema is its ``args_schema``; LangChain passes the model's arguments through
unvalidated, and the tool takes them whole (so an argument named ``config``, ``run_manager``
or ``callbacks`` is the model's, not LangChain's) and checks them itself. Every failure raises
`ToolException`, which the tool handles (``handle_tool_error=True``): the run goes on with a
``ToolMessage`` of ``status="error"`` whose content is ``Error: <message>``; for
``INVALID_ARGS`` it lists every problem so the model can call again. The tool is asynchronous
(``ainvoke``): asking a human means awaiting. Cancelling the task running the chain or graph
cancels the pending ask.

For a LangGraph graph that must survive a restart, use `dsh_user_questions.adapters.langgraph`.
"""

from __future__ import annotations

from typing import Any

from ._common import Live, OnSecrets, missing_framework
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
) -> StructuredTool:
    """The ``ask_user_question`` tool for LangChain chat models and agents.

    ``ctx`` is the harness context; ``None`` takes it from the run's
    ``config["configurable"]["harness"]``. ``agent`` and ``signal`` go into every ask (``None``
    takes ``"agent"`` / ``"signal"`` from the run's ``configurable`` when given).
    ``on_secrets`` gets the clear text of each secret answer (the model gets the placeholder):
    ``on_secrets(tool_call_id, {question id: text})``.
    ``workspace`` (a folder) is the root a model's files question picks from
    (`tool.run`'s).
    """
    live = Live(ctx, agent, signal, on_secrets, _HOW, workspace)

    async def ask_user_question(
        arguments: object, tool_call_id: str | None, *, dsh_run_config: RunnableConfig
    ) -> str:
        configurable = dsh_run_config.get("configurable") or {}
        harness = configurable.get("harness")
        result = await live.run(arguments, tool_call_id, harness, configurable.get)
        if result.is_error:
            raise ToolException(result.content)
        return result.content

    return whole_arguments_tool(coroutine=ask_user_question)
