"""Typed inputs over MCP form elicitation (`ElicitationProvider`), through the official SDK's
client and a low-level server in memory: number, date, time, date-time and a short file list
are form fields; uploads and long file lists are NOT_INTERACTIVE."""

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the MCP tests need the mcp extra")

import mcp_types as types
from mcp import Client
from mcp.server.lowlevel import Server

from dsh_user_questions import (
    AskUserQuestionInput,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    UserQuestionError,
    plugin,
)
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.mcp import ElicitationProvider
from dsh_user_questions.mcp._provider import MAX_ENUM_FILES, TIME_PATTERN

TIMEOUT = 30


def _server(request: AskUserQuestionRequest) -> Server[Any]:
    """A server whose ``ask`` tool asks ``request`` through an ElicitationProvider."""

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name="ask", input_schema={"type": "object"})]
        )

    async def call_tool(ctx: Any, _params: types.CallToolRequestParams) -> types.CallToolResult:
        harness = HarnessContext()
        harness.register(plugin)
        harness.user_questions.register_provider(ElicitationProvider(ctx))
        try:
            answer = await harness.user_questions.ask(request)
        except UserQuestionError as err:
            text = f"error {err.code}: {err.message}"
        else:
            text = json.dumps(answer.to_dict())
        return types.CallToolResult(content=[types.TextContent(text=text)])

    return Server("asking", on_list_tools=list_tools, on_call_tool=call_tool)


class Recording:
    """A client's elicitation callback: records each form, replies as scripted."""

    def __init__(self, *replies: types.ElicitResult) -> None:
        self.replies = list(replies)
        self.forms: list[Any] = []

    async def __call__(self, _context: Any, params: Any) -> types.ElicitResult:
        self.forms.append(params)
        return self.replies.pop(0)


async def _ask(request: AskUserQuestionRequest, client: Recording) -> str:
    with anyio.fail_after(TIMEOUT):
        async with Client(_server(request), mode="legacy", elicitation_callback=client) as mcp:
            result = await mcp.call_tool("ask", {})
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text


def _item(id_: str, given: AskUserQuestionInput) -> AskUserQuestionItem:
    return AskUserQuestionItem(id=id_, question=f"{id_}?", input=given)


def _typed(root: str = "/w") -> AskUserQuestionRequest:
    return AskUserQuestionRequest(
        questions=[
            _item("size", AskUserQuestionInput(type="number", min=1, max=64, step=1, unit="GB")),
            _item("ratio", AskUserQuestionInput(type="number", min=0, max=1, step=0.1)),
            _item("day", AskUserQuestionInput(type="date")),
            _item("at", AskUserQuestionInput(type="time")),
            _item("when", AskUserQuestionInput(type="datetime")),
            _item(
                "docs",
                AskUserQuestionInput(
                    type="files", root=root, max_count=2, candidates=["a.md", "b/c.md", "d.md"]
                ),
            ),
        ]
    )


TYPED = _typed()


async def test_each_typed_input_is_a_form_field_and_reads_back(tmp_path: Path) -> None:
    """Numbers with minimum/maximum (integer for whole steps), date and date-time formats, a
    time pattern, files as a choice; the accepted values become the answer's values."""
    content = {
        "size": 8,
        "ratio": 0.3,
        "day": "2026-12-24",
        "at": "09:30",
        "when": "2026-12-24T09:30:00+01:00",
        "docs": ["a.md", "b/c.md"],
    }
    (tmp_path / "b").mkdir()
    (tmp_path / "a.md").write_text("a")
    (tmp_path / "b" / "c.md").write_text("c")
    client = Recording(types.ElicitResult(action="accept", content=content))
    text = await _ask(_typed(str(tmp_path)), client)
    props = client.forms[0].requested_schema["properties"]
    assert props["size"] == {"type": "integer", "title": "size? (GB)", "minimum": 1, "maximum": 64}
    assert props["ratio"]["type"] == "number"
    assert (props["ratio"]["minimum"], props["ratio"]["maximum"]) == (0, 1)
    assert props["day"]["format"] == "date"
    assert props["when"]["format"] == "date-time"
    assert props["at"]["pattern"] == TIME_PATTERN
    assert props["docs"]["items"]["anyOf"][1] == {"const": "b/c.md", "title": "b/c.md"}
    assert props["docs"]["maxItems"] == 2
    assert json.loads(text) == {
        "answers": [
            {"id": "size", "selected": [], "value": 8},
            {"id": "ratio", "selected": [], "value": 0.3},
            {"id": "day", "selected": [], "value": "2026-12-24"},
            {"id": "at", "selected": [], "value": "09:30"},
            {"id": "when", "selected": [], "value": "2026-12-24T09:30:00+01:00"},
            {"id": "docs", "selected": [], "value": ["a.md", "b/c.md"]},
        ]
    }


async def test_a_value_out_of_range_is_a_bad_answer() -> None:
    """The service's rules check what the client sent: 65 GB is above the maximum."""
    client = Recording(types.ElicitResult(action="accept", content={"size": 65}))
    text = await _ask(TYPED, client)
    assert text.startswith("error BAD_ANSWER:")
    assert "has value 65 above the maximum 64" in text


async def test_a_number_field_given_text_is_a_bad_answer() -> None:
    """A string for a number field is refused naming the field."""
    client = Recording(types.ElicitResult(action="accept", content={"size": "8"}))
    text = await _ask(TYPED, client)
    assert 'the MCP client\'s "size" is not a number' in text


@pytest.mark.parametrize(
    "given",
    [
        AskUserQuestionInput(type="upload"),
        AskUserQuestionInput(
            type="files", root="/w", candidates=[f"f{n}.txt" for n in range(MAX_ENUM_FILES + 1)]
        ),
    ],
    ids=["upload", "many-files"],
)
async def test_uploads_and_long_file_lists_are_not_interactive(
    given: AskUserQuestionInput,
) -> None:
    """Nothing is elicited: NOT_INTERACTIVE says why."""
    client = Recording()
    text = await _ask(AskUserQuestionRequest(questions=[_item("f", given)]), client)
    assert text.startswith("error NOT_INTERACTIVE:")
    assert client.forms == []
