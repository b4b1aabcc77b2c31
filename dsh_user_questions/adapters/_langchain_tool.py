"""The LangChain tool type both LangChain adapters build on: the model's arguments, whole.

LangChain spreads a tool call's arguments as keyword arguments and injects its own
(``config``, ``run_manager``, ``callbacks``) by name beside them, so a model's argument of such
a name would be lost or clash. This tool hands the function the arguments as one value and the
tool call's id, so every model input reaches the tool's own check (`tool.read_arguments`), and
its problems reach the model.
"""

from __future__ import annotations

from typing import Any

from ._common import missing_framework

try:
    from langchain_core.tools import StructuredTool
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise missing_framework("langchain", "langchain", err) from err

__all__ = ["WholeArgumentsTool"]


class WholeArgumentsTool(StructuredTool):
    """A `StructuredTool` whose function takes ``(arguments, tool_call_id)`` positionally.

    ``arguments`` is what the model sent (a mapping, or a JSON text), never validated by
    LangChain; ``tool_call_id`` is ``None`` when the tool is invoked without a tool call.
    """

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (tool_input, tool_call_id), {}
