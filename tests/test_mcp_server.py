"""``dsh-ask mcp``: the stdio MCP server, run as a real subprocess and driven by the SDK's client.

The server asks through an installed provider: a tiny scripted provider distribution built and
pip-installed to a folder here, chosen with ``--provider``. It logs each ask, and whether the
ask was withdrawn, to a file the test reads; it also prints to stdout, which must never reach
the protocol.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the MCP tests need the mcp extra")

import mcp_types as types
from mcp import Client, StdioServerParameters
from tool_cli_env import pip_install_to

from dsh_user_questions import tool

TIMEOUT = 60
PROVIDER = "mcpscripted"
TTY_PROVIDER = "mcptty"
SCRIPT_ENV = "DSH_MCP_TEST_SCRIPT"
LOG_ENV = "DSH_MCP_TEST_LOG"

_PROVIDER_MODULE = f'''\
"""A scripted provider for the dsh-ask mcp tests."""

import asyncio
import json
import os

from dsh_user_questions import UserQuestionError, hookimpl

_steps = json.loads(os.environ.get("{SCRIPT_ENV}", "[]"))


def _log(event, **data):
    with open(os.environ["{LOG_ENV}"], "a", encoding="utf-8") as file:
        file.write(json.dumps({{"event": event, **data}}) + "\\n")


@hookimpl
async def dsh_user_questions_ask(request):
    _log("asked", request=request.to_dict())
    print("a provider writing to stdout must not break the protocol", flush=True)
    step = _steps.pop(0) if _steps else {{"cancel": True}}
    if step.get("hang"):
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            _log("withdrawn")
            raise
    if "answer" in step:
        return step["answer"]
    raise UserQuestionError.cancelled()
'''

_TTY_PROVIDER_MODULE = """\
\"\"\"A provider that asks on standard input and output, as a terminal provider does.\"\"\"

import asyncio
import os

from dsh_user_questions import hookimpl


@hookimpl
async def dsh_user_questions_ask(request):
    question = request.questions[0]
    print(f"{question.question} ", end="", flush=True)
    line = await asyncio.get_running_loop().run_in_executor(None, os.read, 0, 1024)
    words = f"{line.decode().strip()} (stdin is a tty: {os.isatty(0)})"
    return {"answers": [{"id": question.id, "selected": [], "custom": words}]}
"""

_SETUP_CFG = f"""\
[metadata]
name = dsh-mcp-test-provider
version = 1.0

[options]
py_modules =
    dsh_mcp_test_provider
    dsh_mcp_test_tty_provider

[options.entry_points]
dsh =
    {PROVIDER} = dsh_mcp_test_provider
    {TTY_PROVIDER} = dsh_mcp_test_tty_provider
"""

PKG_ARGS = {
    "questions": [
        {
            "id": "pkg",
            "question": "Which package manager?",
            "options": [{"label": "pnpm"}, {"label": "npm"}],
        }
    ]
}
PLAN = "# Ship it\n\n1. Build\n2. Release"


@pytest.fixture(scope="module")
def provider_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scripted provider distribution, pip-installed to its own folder."""
    root = tmp_path_factory.mktemp("mcp-provider")
    project = root / "project"
    project.mkdir()
    (project / "dsh_mcp_test_provider.py").write_text(_PROVIDER_MODULE, encoding="utf-8")
    (project / "dsh_mcp_test_tty_provider.py").write_text(_TTY_PROVIDER_MODULE, encoding="utf-8")
    (project / "setup.cfg").write_text(_SETUP_CFG, encoding="utf-8")
    (project / "pyproject.toml").write_text(
        textwrap.dedent(
            """\
            [build-system]
            requires = ["setuptools", "wheel"]
            build-backend = "setuptools.build_meta"
            """
        ),
        encoding="utf-8",
    )
    target = root / "site"
    pip_install_to(project, target)
    return target


_WITH_TERMINAL = """\
import os, sys
if os.getsid(0) != os.getpid():  # the SDK may have started a new session already
    os.setsid()
os.close(os.open(sys.argv[1], os.O_RDWR))  # the first terminal a session opens is its own
os.execv(sys.argv[2], sys.argv[2:])
"""


def _command() -> list[str]:
    """``dsh-ask mcp`` as installed next to this Python, or through ``-m`` in a source tree."""
    script = shutil.which("dsh-ask", path=str(Path(sys.executable).parent))
    if script is not None:
        return [script, "mcp"]
    return [sys.executable, "-m", "dsh_user_questions.cli", "mcp"]


class Server:
    """One ``dsh-ask mcp`` process's script and log."""

    def __init__(
        self,
        provider_dir: Path,
        tmp_path: Path,
        steps: list[dict[str, Any]],
        *,
        provider: str = PROVIDER,
        terminal: str | None = None,
    ) -> None:
        self.log = tmp_path / "asked.jsonl"
        command = _command()
        if terminal is not None:
            # A new session whose controlling terminal is ``terminal``, as a shell gives.
            command = [sys.executable, "-c", _WITH_TERMINAL, terminal, *command]
        python_path = os.pathsep.join(
            [str(provider_dir), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
        self.parameters = StdioServerParameters(
            command=command[0],
            args=[*command[1:], "--provider", provider],
            env={
                "PYTHONPATH": python_path,
                SCRIPT_ENV: json.dumps(steps),
                LOG_ENV: str(self.log),
                "PATH": os.environ.get("PATH", ""),
            },
            cwd=str(tmp_path),
        )

    def events(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        lines = self.log.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines]

    async def until(self, check: Callable[[list[dict[str, Any]]], bool]) -> None:
        # Another process writes the log: polling it is the only way to hear of it.
        while not check(self.events()):  # noqa: ASYNC110
            await anyio.sleep(0.05)

    @asynccontextmanager
    async def client(self, mode: str = "auto") -> AsyncIterator[Client]:
        async with Client(self.parameters, mode=mode) as client:
            yield client


def _text(result: Any) -> str:
    text: str = result.content[0].text
    return text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_lists_both_tools_with_the_tool_schema(
    provider_dir: Path, tmp_path: Path, mode: str
) -> None:
    """The server lists ask_user_question (the tool's own schema) and review_plan."""
    server = Server(provider_dir, tmp_path, [])
    with anyio.fail_after(TIMEOUT):
        async with server.client(mode) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
    assert sorted(listed) == ["ask_user_question", "review_plan"]
    asked = listed["ask_user_question"].model_dump(by_alias=True, exclude_none=True)
    assert asked == tool.mcp_tool()
    assert listed["review_plan"].input_schema["required"] == ["plan"]


async def test_a_call_is_asked_through_the_installed_provider(
    provider_dir: Path, tmp_path: Path
) -> None:
    """A call reaches the provider and returns the compact answer JSON; stdout noise is harmless."""
    answer = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
    server = Server(provider_dir, tmp_path, [{"answer": answer}, {"answer": answer}])
    with anyio.fail_after(TIMEOUT):
        async with server.client() as client:
            first = await client.call_tool("ask_user_question", PKG_ARGS)
            second = await client.call_tool("ask_user_question", PKG_ARGS)
    assert not first.is_error
    assert not second.is_error
    assert _text(first) == '{"answers":[{"id":"pkg","selected":["pnpm"]}]}'
    asked = [e for e in server.events() if e["event"] == "asked"]
    assert asked[0]["request"]["questions"][0]["id"] == "pkg"
    assert len(asked) == 2


async def test_invalid_arguments_come_back_as_a_tool_error(
    provider_dir: Path, tmp_path: Path
) -> None:
    """Arguments that break the schema are a tool error listing the problem; nobody is asked."""
    server = Server(provider_dir, tmp_path, [])
    with anyio.fail_after(TIMEOUT):
        async with server.client() as client:
            result = await client.call_tool("ask_user_question", {"questions": []})
    assert result.is_error
    assert _text(result) == "Error: invalid arguments: questions: must have at least 1 item"
    assert server.events() == []


async def test_cancelled_request_withdraws_the_ask(provider_dir: Path, tmp_path: Path) -> None:
    """Cancelling the MCP request cancels the provider's pending ask; the server keeps serving."""
    answer = {"answers": [{"id": "pkg", "selected": ["npm"]}]}
    server = Server(provider_dir, tmp_path, [{"hang": True}, {"answer": answer}])
    with anyio.fail_after(TIMEOUT):
        async with server.client("legacy") as client:
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await client.call_tool("ask_user_question", PKG_ARGS)
                    raise AssertionError("the cancelled call returned")

                tg.start_soon(call)
                await server.until(lambda events: any(e["event"] == "asked" for e in events))
                tg.cancel_scope.cancel()
            await server.until(lambda events: any(e["event"] == "withdrawn" for e in events))
            after = await client.call_tool("ask_user_question", PKG_ARGS)
    assert _text(after) == '{"answers":[{"id":"pkg","selected":["npm"]}]}'


async def test_closing_the_question_is_the_cancelled_error(
    provider_dir: Path, tmp_path: Path
) -> None:
    """The provider's ASK_CANCELLED reaches the client as the tool's error text."""
    server = Server(provider_dir, tmp_path, [{"cancel": True}])
    with anyio.fail_after(TIMEOUT):
        async with server.client() as client:
            result = await client.call_tool("ask_user_question", PKG_ARGS)
    assert result.is_error
    assert _text(result) == "Error: the user cancelled ask_user_question"


async def test_review_plan_returns_the_decision(provider_dir: Path, tmp_path: Path) -> None:
    """review_plan asks the plan-review question and returns the decision and feedback."""
    keep = {"answers": [{"id": "plan-review", "selected": [], "custom": "Add tests"}]}
    approve = {"answers": [{"id": "plan-review", "selected": ["Approve"]}]}
    server = Server(provider_dir, tmp_path, [{"answer": keep}, {"answer": approve}])
    with anyio.fail_after(TIMEOUT):
        async with server.client() as client:
            kept = await client.call_tool("review_plan", {"plan": PLAN})
            approved = await client.call_tool("review_plan", {"plan": PLAN})
            not_a_plan = await client.call_tool("review_plan", {"plan": "no heading"})
    assert json.loads(_text(kept)) == {"decision": "keep-planning", "feedback": "Add tests"}
    assert json.loads(_text(approved)) == {"decision": "approved"}
    assert not_a_plan.is_error
    assert "level-1 ATX heading" in _text(not_a_plan)
    asked = [e["request"] for e in server.events() if e["event"] == "asked"]
    assert asked[0]["questions"][0]["detail"] == PLAN
    assert len(asked) == 2


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
async def test_prompts_go_to_the_terminal_while_stdio_carries_the_protocol(
    provider_dir: Path, tmp_path: Path
) -> None:
    """A provider using stdin and stdout talks to the controlling terminal, not the protocol."""
    master, slave = os.openpty()
    screen = bytearray()

    async def read_until(text: bytes) -> None:
        while text not in screen:
            screen.extend(await anyio.to_thread.run_sync(os.read, master, 1024))

    try:
        server = Server(
            provider_dir, tmp_path, [], provider=TTY_PROVIDER, terminal=os.ttyname(slave)
        )
        with anyio.fail_after(TIMEOUT):
            async with server.client() as client, anyio.create_task_group() as tg:

                async def answer() -> None:
                    await read_until(b"Which package manager?")
                    os.write(master, b"bun\n")

                tg.start_soon(answer)
                result = await client.call_tool("ask_user_question", PKG_ARGS)
    finally:
        os.close(master)
        os.close(slave)
    assert not result.is_error
    assert json.loads(_text(result)) == {
        "answers": [{"id": "pkg", "selected": [], "custom": "bun (stdin is a tty: True)"}]
    }


def test_without_the_mcp_extra_the_command_says_what_to_install() -> None:
    """``dsh-ask mcp`` without the MCP SDK exits 1 naming the extra to install."""
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "from dsh_user_questions.cli import main\n"
        "sys.exit(main(['mcp']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1
    assert "pip install 'dsh-user-questions[mcp]'" in done.stderr
    assert done.stdout == ""


def test_mcp_help_names_both_tools() -> None:
    """``dsh-ask mcp --help`` says what the server serves and how to choose the provider."""
    done = subprocess.run(
        [*_command(), "--help"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0
    assert "ask_user_question and review_plan" in done.stdout
    assert "--provider NAME" in done.stdout


async def test_in_process_unknown_tool_and_bad_plan_arguments(dsh_context: Any) -> None:
    """In process: an unknown tool is a protocol error, bad review_plan arguments a tool error."""
    from mcp.shared.exceptions import MCPError

    from dsh_user_questions.mcp import build_server

    with anyio.fail_after(TIMEOUT):
        async with Client(build_server(dsh_context), mode="legacy") as client:
            with pytest.raises(MCPError, match="unknown tool 'ask_the_user'") as caught:
                await client.call_tool("ask_the_user", {})
            extra = await client.call_tool("review_plan", {"plan": PLAN, "agent": "x"})
            missing = await client.call_tool("review_plan", {})
    assert caught.value.code == types.INVALID_PARAMS
    assert extra.is_error
    assert _text(extra) == "Error: invalid arguments: agent: unknown property; allowed: plan"
    assert missing.is_error
    assert _text(missing) == "Error: invalid arguments: plan: is required"
