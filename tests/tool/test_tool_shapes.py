"""Every shape of the tool is what its API's official SDK takes, strict mode included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, get_type_hints

import pydantic
import pytest

from dsh_user_questions import plugin, tool
from dsh_user_questions._tool_schema import MAX_SHAPE_CHARS
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import ScriptedProvider

SHAPES = {
    "openai_tool": tool.openai_tool,
    "openai_tool_strict": lambda: tool.openai_tool(strict=True),
    "openai_responses_tool": tool.openai_responses_tool,
    "openai_responses_tool_strict": lambda: tool.openai_responses_tool(strict=True),
    "anthropic_tool": tool.anthropic_tool,
    "gemini_tool": tool.gemini_tool,
    "mcp_tool": tool.mcp_tool,
}


def compact(value: object) -> str:
    """The compact JSON an API request carries (ASCII escapes, the longer of the two forms)."""
    return json.dumps(value, separators=(",", ":"))


def conforms(shape: dict[str, Any], sdk_type: Any) -> None:
    """``shape`` validates as ``sdk_type`` (a TypedDict) and uses none but its keys."""
    pydantic.TypeAdapter(sdk_type).validate_python(shape, strict=True)
    assert set(shape) <= set(get_type_hints(sdk_type)), "a key the SDK type does not have"
    assert sdk_type.__required_keys__ <= set(shape)


def openai_chat_tool_type() -> Any:
    """openai's Chat Completions function tool type, under its current or its older name."""
    from openai.types import chat

    return getattr(chat, "ChatCompletionFunctionToolParam", None) or chat.ChatCompletionToolParam


# Each shape against its SDK ---------------------------------------------------------------------


@pytest.mark.parametrize("strict", [False, True])
def test_openai_chat_shape_is_a_chat_completions_tool_param(strict: bool) -> None:
    """openai_tool() validates as openai's Chat Completions function tool, and its function as
    the SDK's FunctionDefinition; strict=True says so."""
    from openai.types.shared_params import FunctionDefinition

    shape = tool.openai_tool(strict=strict)
    conforms(dict(shape), openai_chat_tool_type())
    conforms(dict(shape["function"]), FunctionDefinition)
    assert shape["type"] == "function"
    assert shape["function"]["name"] == "ask_user_question"
    assert shape["function"]["description"] == tool.DESCRIPTION
    assert shape["function"]["parameters"] == tool.input_schema(strict=strict)
    assert shape["function"].get("strict", False) is strict


@pytest.mark.parametrize("strict", [False, True])
def test_responses_shape_is_a_function_tool_param(strict: bool) -> None:
    """openai_responses_tool() is the Responses API's flat FunctionToolParam, strict stated."""
    from openai.types.responses import FunctionToolParam

    shape = tool.openai_responses_tool(strict=strict)
    conforms(dict(shape), FunctionToolParam)
    assert shape == {
        "type": "function",
        "name": "ask_user_question",
        "description": tool.DESCRIPTION,
        "parameters": tool.input_schema(strict=strict),
        "strict": strict,
    }


def test_anthropic_shape_is_a_tool_param() -> None:
    """anthropic_tool() validates as anthropic's ToolParam with the plain schema."""
    from anthropic.types import ToolParam

    shape = tool.anthropic_tool()
    conforms(dict(shape), ToolParam)
    assert shape == {
        "name": "ask_user_question",
        "description": tool.DESCRIPTION,
        "input_schema": tool.input_schema(),
    }


def test_gemini_shape_builds_a_function_declaration() -> None:
    """types.FunctionDeclaration(**gemini_tool()) builds (the model forbids unknown fields) and
    keeps the schema as JSON Schema."""
    from google.genai import types

    declaration = types.FunctionDeclaration(**tool.gemini_tool())
    assert declaration.name == "ask_user_question"
    assert declaration.description == tool.DESCRIPTION
    assert declaration.parameters_json_schema == tool.input_schema()
    assert declaration.parameters is None
    types.Tool(function_declarations=[declaration])


def test_mcp_shape_is_an_mcp_tool() -> None:
    """mcp_tool() validates as mcp's types.Tool and is its wire form unchanged."""
    from mcp import types

    model = types.Tool.model_validate(tool.mcp_tool())
    assert model.name == "ask_user_question"
    assert model.model_dump(mode="json", by_alias=True, exclude_none=True) == tool.mcp_tool()


# Results against their SDK types -----------------------------------------------------------


@pytest.mark.parametrize(
    "result",
    [
        tool.ToolResult('{"answers":[]}'),
        tool.ToolResult("Error: x", True, {"name": "E", "code": "C"}),
    ],
)
def test_results_are_the_sdks_tool_result_messages(result: tool.ToolResult) -> None:
    """to_anthropic, to_openai and to_responses validate as the SDKs' result types."""
    from anthropic.types import ToolResultBlockParam
    from openai.types.chat import ChatCompletionToolMessageParam
    from openai.types.responses.response_input_item_param import FunctionCallOutput

    block = result.to_anthropic("toolu_1")
    conforms(dict(block), ToolResultBlockParam)
    assert block == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": result.content,
        "is_error": result.is_error,
    }
    message = result.to_openai("call_1")
    conforms(dict(message), ChatCompletionToolMessageParam)
    assert message == {"role": "tool", "tool_call_id": "call_1", "content": result.content}
    item = result.to_responses("call_2")
    conforms(dict(item), FunctionCallOutput)
    assert item == {"type": "function_call_output", "call_id": "call_2", "output": result.content}


def test_mypy_strict_accepts_the_shapes_where_the_sdks_expect_their_types(
    pytestconfig: pytest.Config,
) -> None:
    """tests/sdk_typing.py passes the shapes and results to the SDKs' own types and methods;
    mypy --strict accepts it without a cast."""
    pytest.importorskip("mypy")
    root = Path(__file__).resolve().parents[2]
    cache_provider = getattr(pytestconfig, "cache", None)
    cache = cache_provider.mkdir("mypy") if cache_provider else None
    command = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent"]
    if cache is not None:
        command += ["--cache-dir", str(cache)]
    done = subprocess.run(
        [*command, str(root / "tests" / "sdk_typing.py")],
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "MYPYPATH": str(root)},
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# OpenAI strict mode ---------------------------------------------------------------------------


def walk_objects(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every schema node of type object, with its path."""
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(node, dict):
        types = node.get("type")
        if types == "object" or (isinstance(types, list) and "object" in types):
            found.append((path or "<root>", node))
        for key, value in node.items():
            found += walk_objects(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += walk_objects(value, f"{path}/{index}")
    return found


def walk_schemas(node: Any) -> list[dict[str, Any]]:
    """Every schema node (not the property-name maps between them)."""
    if not isinstance(node, dict):
        return []
    found = [node]
    for name, value in node.items():
        if name == "properties":
            for child in value.values():
                found += walk_schemas(child)
        elif name == "items":
            found += walk_schemas(value)
    return found


# https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
STRICT_SUPPORTED = {
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
}


def test_strict_schema_follows_every_strict_mode_rule() -> None:
    """The root is an object (no anyOf); every object has additionalProperties false and lists
    every property in required; only supported keywords appear; the properties the plain
    schema leaves optional are typed [T, "null"]; nesting stays within 10 levels."""
    strict = tool.input_schema(strict=True)
    plain = tool.input_schema()
    assert strict["type"] == "object"
    assert "anyOf" not in strict
    objects = walk_objects(strict)
    assert len(objects) == 4  # the arguments, a question, an option, an input
    for path, node in objects:
        assert node["additionalProperties"] is False, path
        assert node["required"] == list(node["properties"]), path
    for node in walk_schemas(strict):
        assert set(node) <= STRICT_SUPPORTED, set(node) - STRICT_SUPPORTED
    plain_objects = dict(walk_objects(plain))
    for path, node in objects:
        required = set(plain_objects[path]["required"])
        for name, child in node["properties"].items():
            plain_type = plain_objects[path]["properties"][name]["type"]
            expected = plain_type if name in required else [plain_type, "null"]
            assert child["type"] == expected, f"{path}/{name}"
    assert max(path.count("/properties/") for path, _ in objects) <= 10


def test_the_openai_sdks_strict_normaliser_changes_nothing() -> None:
    """openai's own strict-mode normaliser (what its pydantic helpers send) leaves the strict
    schema as it is: nothing is missing that the SDK would add."""
    strictify = getattr(
        pytest.importorskip("openai.lib._pydantic"), "_ensure_strict_json_schema", None
    )
    if strictify is None:
        pytest.skip("this openai version has no strict normaliser to compare with")
    schema = tool.input_schema(strict=True)
    assert strictify(tool.input_schema(strict=True), path=(), root=schema) == schema


def test_the_plain_and_strict_schemas_differ_only_where_strict_mode_needs() -> None:
    """Dropping what strict mode adds (nullable types, all required) and the lengths it cannot
    carry gives the same schema: one source, two forms."""

    def plain_of(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        out = {k: plain_of(v) for k, v in node.items() if k not in {"maxLength", "required"}}
        if isinstance(out.get("type"), list):
            out["type"] = out["type"][0]
        return out

    assert plain_of(tool.input_schema(strict=True)) == plain_of(tool.input_schema())


async def test_a_strict_call_full_of_nulls_runs() -> None:
    """A call shaped by strict mode (every optional property null) asks and answers."""
    ctx = HarnessContext()
    ctx.register(plugin)
    provider = ScriptedProvider({"answers": [{"id": "pkg", "selected": ["pnpm"]}]})
    ctx.user_questions.register_provider(provider)
    arguments = {
        "questions": [
            {
                "id": "pkg",
                "question": "Which package manager?",
                "header": None,
                "options": [
                    {"label": "pnpm", "description": None},
                    {"label": "npm", "description": None},
                ],
                "multi_select": None,
            },
            {
                "id": "name",
                "question": "Project name?",
                "header": None,
                "options": None,
                "multi_select": None,
            },
        ]
    }
    result = await tool.run(ctx, json.dumps(arguments))
    assert result == tool.ToolResult('{"answers":[{"id":"pkg","selected":["pnpm"]}]}')
    [request] = provider.requests
    assert [q.to_dict() for q in request.questions] == [
        {
            "id": "pkg",
            "question": "Which package manager?",
            "options": [{"label": "pnpm"}, {"label": "npm"}],
            "multi_select": False,
        },
        {"id": "name", "question": "Project name?", "options": [], "multi_select": False},
    ]


# Sizes and stability ---------------------------------------------------------------------------


def test_description_fits_openais_limit() -> None:
    """The description is at most 1,024 characters, OpenAI's limit for a function."""
    assert len(tool.DESCRIPTION) <= 1024


def test_description_says_when_to_ask_and_what_comes_back() -> None:
    """The description says when (not) to ask, that the UI adds "Other" and a skip, and the
    result's shape and errors."""
    for phrase in (
        "Ask only when",
        "Don't ask",
        'The UI adds "Other"',
        "a skip",
        'never add "Other"',
        '"recommended": true (not "(Recommended)" in a label)',
        '"secret": true',
        '{"answers":[{"id":"<id>","selected":["<label>"],"custom":"<own words>"}]}',
        '"Error: invalid arguments: ..."',
    ):
        assert phrase in tool.DESCRIPTION


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_shape_fits_the_size_budget(name: str) -> None:
    """Every shape's compact JSON is at most MAX_SHAPE_CHARS (3,600) characters; the message
    says the headroom left."""
    size = len(compact(SHAPES[name]()))
    headroom = MAX_SHAPE_CHARS - size
    assert headroom >= 0, f"{name}: {size} characters, {-headroom} over {MAX_SHAPE_CHARS}"
    print(f"{name}: {size} of {MAX_SHAPE_CHARS} characters, {headroom} left")


STABILITY_SCRIPT = """
import json
from dsh_user_questions import tool
shapes = [tool.openai_tool(), tool.openai_tool(strict=True), tool.openai_responses_tool(),
          tool.openai_responses_tool(strict=True), tool.anthropic_tool(), tool.gemini_tool(),
          tool.mcp_tool(), tool.input_schema(), tool.input_schema(strict=True)]
print(json.dumps(shapes, separators=(",", ":")))
"""


def test_shapes_are_byte_stable_across_processes() -> None:
    """Every shape serialises to the same bytes whatever PYTHONHASHSEED a process has."""
    outputs = set()
    for seed in ("0", "1", "4242", "random"):
        done = subprocess.run(
            [sys.executable, "-c", STABILITY_SCRIPT],
            capture_output=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            timeout=120,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    [output] = outputs
    assert json.loads(output)[0] == tool.openai_tool()
