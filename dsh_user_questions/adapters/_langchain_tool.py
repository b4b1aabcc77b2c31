"""The LangChain tool type both LangChain adapters build on: the model's arguments, whole.

LangChain spreads a tool call's arguments as keyword arguments and injects its own
(``config``, ``run_manager``, ``callbacks``) by name beside them, so a model's argument of such
a name would be lost or clash. This tool hands the function the arguments as one value and the
tool call's id, so every model input reaches the tool's own check (`tool.read_arguments`), and
its problems reach the model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .. import tool
from ._common import missing_framework

try:
    from langchain_core.tools import StructuredTool
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise missing_framework("langchain", "langchain", err) from err

__all__ = ["WholeArgumentsTool", "whole_arguments_tool"]


class WholeArgumentsTool(StructuredTool):
    """A `StructuredTool` whose function takes ``(arguments, tool_call_id)`` positionally.

    ``arguments`` is what the model sent (a mapping, or a JSON text), never validated by
    LangChain; ``tool_call_id`` is ``None`` when the tool is invoked without a tool call.
    """

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (tool_input, tool_call_id), {}


def whole_arguments_tool(
    *,
    coroutine: Callable[..., Awaitable[str]],
    func: Callable[..., str] | None = None,
) -> StructuredTool:
    """The ``ask_user_question`` tool of ``coroutine`` (and ``func``, to be invoked sync).

    The tool's name, description and JSON Schema; every failure the function raises as
    `ToolException` is handled (an error ``ToolMessage`` for the model).
    """
    return WholeArgumentsTool(
        name=tool.NAME,
        description=tool.DESCRIPTION,
        args_schema=tool.input_schema(),
        func=func,
        coroutine=coroutine,
        handle_tool_error=True,
    )
