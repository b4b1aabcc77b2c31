"""The README's harness-side example runs and prints what the README says it prints; the examples
that moved from the README into the documentation pages run from there."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def test_readme_example_prints_its_documented_output(tmp_path: Path) -> None:
    """The python block under 'A harness-side example' prints the text block after it."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## A harness-side example", 1)[1]
    match = re.search(r"```python\n(.*?)```\s*\nprints\s*\n\s*```text\n(.*?)```", section, re.S)
    assert match is not None, "README example or its output block is missing"
    code, expected = match.groups()
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert done.stdout == expected


def test_readme_gives_the_two_commands() -> None:
    """The README names the command that asks in the terminal and the one that runs the tests."""
    text = README.read_text(encoding="utf-8")
    assert "dsh-ask examples/" in text
    assert "\nscripts/test\n" in text


def test_readme_tool_example_prints_its_documented_output(tmp_path: Path) -> None:
    """The python block of docs/tool.md that claims output prints the text block after it."""
    section = (DOCS / "tool.md").read_text(encoding="utf-8").split("# The model-facing tool", 1)[1]
    match = re.search(
        r"```python\n((?:(?!```).)*?)```\s*\nprints\s*\n\s*```text\n(.*?)```", section, re.S
    )
    assert match is not None, "the tool example or its output block is missing"
    code, expected = match.groups()
    script = tmp_path / "tool_example.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert done.stdout == expected


class Recorder:
    """A stand-in for an SDK client: records each method call's path and keyword arguments."""

    def __init__(self, calls: list[tuple[str, dict[str, Any]]], path: str = "") -> None:
        self.calls = calls
        self.path = path

    def __getattr__(self, name: str) -> Recorder:
        return Recorder(self.calls, f"{self.path}.{name}".lstrip("."))

    def __call__(self, **kwargs: Any) -> None:
        self.calls.append((self.path, kwargs))


def test_readme_tool_one_liners_hand_each_sdk_its_shape() -> None:
    """docs/tool.md's one line per SDK runs (real google-genai and mcp types, recording stand-ins
    for the API clients) and passes each API the tool's shape for it."""
    from dsh_user_questions import tool

    section = (DOCS / "tool.md").read_text(encoding="utf-8").split("# The model-facing tool", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    calls: list[tuple[str, dict[str, Any]]] = []
    namespace: dict[str, Any] = {
        "openai_client": Recorder(calls),
        "anthropic_client": Recorder(calls),
        "MODEL": "model",
        "messages": [{"role": "user", "content": "Set up the project"}],
    }
    exec(compile(code.group(1), "tool.md", "exec"), namespace)
    assert [(path, kwargs["tools"]) for path, kwargs in calls] == [
        ("chat.completions.create", [tool.openai_tool()]),
        ("responses.create", [tool.openai_responses_tool()]),
        ("messages.create", [tool.anthropic_tool()]),
    ]
    [gemini] = namespace["gemini_config"].tools
    [declaration] = gemini.function_declarations
    assert declaration.parameters_json_schema == tool.input_schema()
    [mcp_tool] = namespace["mcp_tools"]
    assert mcp_tool.model_dump(by_alias=True, exclude_none=True) == tool.mcp_tool()


def test_readme_mcp_client_line_elicits_through_the_harness() -> None:
    """docs/mcp.md's MCP client line runs as written with the SDK (2.3: ``mode="legacy"``): a
    server's elicitation is answered through ``ctx.user_questions``. Only its ``...`` body is
    filled in, with a call of a tool that elicits."""
    pytest.importorskip("mcp")
    import anyio
    from mcp import types
    from mcp.server.lowlevel import Server

    from dsh_user_questions import plugin
    from dsh_user_questions.harness import HarnessContext
    from dsh_user_questions.testing import ScriptedProvider

    mcp_page = (DOCS / "mcp.md").read_text(encoding="utf-8")
    section = mcp_page.split("## A harness that is an MCP client", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    code = block.group(1)
    assert code.rstrip().endswith(": ...")
    body = code.rstrip()[: -len("...")] + 'result = await client.call_tool("setup", {})\n'
    source = (
        "import mcp\n\nasync def main():\n" + textwrap.indent(body, "    ") + "    return result\n"
    )

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name="setup", input_schema={"type": "object"})]
        )

    async def call_tool(ctx: Any, _params: Any) -> types.CallToolResult:
        schema = {
            "type": "object",
            "properties": {"pkg": {"type": "string", "enum": ["pnpm", "npm"]}},
        }
        reply = await ctx.session.elicit_form("Set up", schema, related_request_id=ctx.request_id)
        text = f"{reply.action} {reply.content}"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    ctx = HarnessContext()
    ctx.register(plugin)
    provider = ScriptedProvider({"answers": [{"id": "pkg", "selected": ["npm"]}]})
    ctx.user_questions.register_provider(provider)
    namespace: dict[str, Any] = {
        "server": Server("setup", on_list_tools=list_tools, on_call_tool=call_tool),
        "ctx": ctx,
    }
    exec(compile(source, "mcp.md", "exec"), namespace)

    async def run() -> Any:
        with anyio.fail_after(60):
            return await namespace["main"]()

    result = anyio.run(run)
    assert result.content[0].text == "accept {'pkg': 'npm'}"
    assert [q.id for q in provider.requests[0].questions] == ["pkg"]


def test_readme_pytest_example_runs_without_async_configuration(tmp_path: Path) -> None:
    """docs/testing.md's async pytest example passes as written in a project of its own, with no
    async plugin and no async setting: the package's pytest plugin runs it."""
    section = (
        (DOCS / "testing.md").read_text(encoding="utf-8").split("# Testing your harness", 1)[1]
    )
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "test_readme_example.py").write_text(block.group(1), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:asyncio", "-p", "no:randomly", "-p",
         "no:cacheprovider", "-q"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "1 passed" in done.stdout, done.stdout + done.stderr
