"""``ask_user_question`` as a LangChain `StructuredTool`.

One line: ``ask_user_question_tool(ctx)`` in the tools you bind to a chat model or give to an
agent; or leave ``ctx`` out and pass the harness context per run as
``config={"configurable": {"harness": ctx}}`` (with optional ``"agent"`` and ``"signal"``).

The tool's JSON Schema is its ``args_schema`` (LangChain passes a JSON-Schema ``args_schema``
through unvalidated, so the tool checks it itself). Every failure raises `ToolException`, which
the tool handles (``handle_tool_error=True``): the run goes on with a ``ToolMessage`` of
``status="error"`` whose content is ``Error: <message>``; for ``INVALID_ARGS`` it lists every
problem so the model can call again. The tool is asynchronous (``ainvoke``): asking a human
means awaiting. Cancelling the task running the chain or graph cancels the pending ask.
"""

from __future__ import annotations

from typing import Any

from .. import tool
from ._common import context_of, missing_framework

try:
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import StructuredTool, ToolException
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise missing_framework("langchain", "langchain", err) from err

__all__ = ["ask_user_question_tool"]


def ask_user_question_tool(
    ctx: Any | None = None,
    *,
    agent: object | None = None,
    signal: Any | None = None,
) -> StructuredTool:
    """The ``ask_user_question`` tool for LangChain chat models and agents.

    ``ctx`` is the harness context; ``None`` takes it from the run's
    ``config["configurable"]["harness"]``. ``agent`` and ``signal`` go into every ask (``None``
    takes ``"agent"`` / ``"signal"`` from the run's ``configurable`` when given).
    """

    # The parameter's name cannot clash with a model's argument: LangChain finds it by its
    # RunnableConfig annotation, and the schema allows only "questions".
    async def ask_user_question(dsh_run_config: RunnableConfig, **arguments: Any) -> str:
        configurable = dsh_run_config.get("configurable") or {}
        harness = ctx if ctx is not None else context_of(configurable.get("harness"))
        result = await tool.run(
            harness,
            arguments,
            agent=agent if agent is not None else configurable.get("agent"),
            signal=signal if signal is not None else configurable.get("signal"),
        )
        if result.is_error:
            raise ToolException(result.content)
        return result.content

    return StructuredTool(
        name=tool.NAME,
        description=tool.DESCRIPTION,
        args_schema=tool.input_schema(),
        coroutine=ask_user_question,
        handle_tool_error=True,
    )
