"""Typed shapes of the tool and its results, as each model API's SDK expects them.

A TypedDict is accepted where another is expected only if it names every key of that type,
with an equivalent value type and the same required-ness. So each shape below names every key
of its SDK counterpart (``openai``'s ``ChatCompletionFunctionToolParam`` and Responses
``FunctionToolParam``, ``anthropic``'s ``ToolParam`` and ``ToolResultBlockParam``, ...), even the
keys this package never sets; those, and keys whose SDK type is a union of the SDK's own
classes, are typed ``Any``. ``tests/sdk_typing.py`` checks this with ``mypy --strict`` against
the SDKs themselves; neither SDK is needed at run time.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, TypedDict

__all__ = [
    "AnthropicTool",
    "AnthropicToolResult",
    "GeminiTool",
    "MCPTool",
    "OpenAIFunction",
    "OpenAITool",
    "OpenAIToolMessage",
    "ResponsesFunctionCallOutput",
    "ResponsesTool",
]


# Required keys come from a total base class, optional ones from a total=False subclass:
# typing.Required and NotRequired are newer than Python 3.10.


class _OpenAIFunctionBase(TypedDict):
    name: str


class OpenAIFunction(_OpenAIFunctionBase, total=False):
    """The ``function`` of a Chat Completions tool (the SDK's ``FunctionDefinition``)."""

    description: str
    parameters: dict[str, object]
    strict: bool | None


class OpenAITool(TypedDict):
    """A Chat Completions function tool (``ChatCompletionFunctionToolParam``)."""

    type: Literal["function"]
    function: OpenAIFunction


class _ResponsesToolBase(TypedDict):
    type: Literal["function"]
    name: str
    parameters: dict[str, object] | None
    strict: bool | None


# The functional form because "async" is a keyword.
_ResponsesToolAsync = TypedDict("_ResponsesToolAsync", {"async": Any}, total=False)


class ResponsesTool(_ResponsesToolBase, _ResponsesToolAsync, total=False):
    """A Responses API function tool (``responses.FunctionToolParam``): flat, ``strict`` stated."""

    description: str | None
    allowed_callers: Any
    defer_loading: Any
    output_schema: Any


class _AnthropicToolBase(TypedDict):
    name: str
    input_schema: Any  # the SDK's union of its InputSchemaTyped and a plain dict


class AnthropicTool(_AnthropicToolBase, total=False):
    """An Anthropic Messages tool (``ToolParam``)."""

    description: str
    allowed_callers: Any
    cache_control: Any
    defer_loading: Any
    eager_input_streaming: Any
    input_examples: Any
    strict: Any
    type: Any


class GeminiTool(TypedDict):
    """A google-genai ``FunctionDeclaration``, as keyword arguments."""

    name: str
    description: str
    parameters_json_schema: dict[str, object]


class MCPTool(TypedDict):
    """An MCP ``Tool`` in its wire form (``inputSchema``)."""

    name: str
    description: str
    inputSchema: dict[str, object]


class _AnthropicToolResultBase(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str


class AnthropicToolResult(_AnthropicToolResultBase, total=False):
    """A ``tool_result`` content block (``ToolResultBlockParam``)."""

    content: str | Iterable[Any]
    is_error: bool
    cache_control: Any
    toolset_name: Any


class OpenAIToolMessage(TypedDict):
    """A Chat Completions ``role: "tool"`` message (``ChatCompletionToolMessageParam``)."""

    role: Literal["tool"]
    tool_call_id: str
    content: str | Iterable[Any]


class _ResponsesOutputBase(TypedDict):
    type: Literal["function_call_output"]
    output: str | list[Any]


class ResponsesFunctionCallOutput(_ResponsesOutputBase, total=False):
    """A Responses ``function_call_output`` input item (``ResponseInputItemParam``)."""

    call_id: str | None
    id: Any
    caller: Any
    name: Any
    namespace: Any
    status: Any
