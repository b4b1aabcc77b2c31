"""``dsh-ask mcp``: the stdio MCP server, run as a real subprocess and driven by the SDK's client.

The server asks through a scripted provider installed to a folder (see ``mcp_helpers``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the MCP tests need the mcp extra")

import mcp_types as types
from mcp import Client, ClientSession
from mcp.client.stdio import stdio_client
from mcp_helpers import (
    PKG_ARGS,
    PLAN,
    TIMEOUT,
    TTY_PROVIDER,
    Server,
    command_line,
)

import dsh_user_questions
from dsh_user_questions import UserQuestionError, tool
from dsh_user_questions.mcp import build_server
from dsh_user_questions.mcp._server import ANSWER_SCHEMA, PROGRESS_INTERVAL_ENV, VERDICT_SCHEMA


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
    assert asked == {**tool.mcp_tool(), "outputSchema": ANSWER_SCHEMA}
    assert listed["review_plan"].input_schema["required"] == ["plan"]
    assert listed["review_plan"].output_schema == VERDICT_SCHEMA


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
    assert first.structured_content == answer
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
    assert approved.structured_content == {"decision": "approved"}
    assert not_a_plan.is_error
    assert not_a_plan.structured_content is None
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
        "from dsh_user_questions._cli import main\n"
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
        [*command_line(), "--help"], capture_output=True, text=True, timeout=120, check=False
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


async def test_server_info_names_the_package_and_its_version(dsh_context: Any) -> None:
    """serverInfo says dsh-user-questions and this package's version (it was empty)."""
    with anyio.fail_after(TIMEOUT):
        async with Client(build_server(dsh_context), mode="legacy") as client:
            info = client.server_info
    assert info is not None
    assert info.name == "dsh-user-questions"
    assert info.version == dsh_user_questions.__version__


def test_a_progress_interval_must_be_a_positive_number(dsh_context: Any) -> None:
    """A zero, negative or endless progress interval is refused, naming the value."""
    for bad in (0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="progress_interval must be a positive number"):
            build_server(dsh_context, progress_interval=bad)


async def test_no_human_reachable_is_not_interactive_never_a_cancel(
    provider_dir: Path, tmp_path: Path
) -> None:
    """A provider's NOT_INTERACTIVE reaches a stdio_client (no tty) as that message, verbatim."""
    server = Server(provider_dir, tmp_path, [{"not_interactive": True}])
    with anyio.fail_after(TIMEOUT):
        async with (
            stdio_client(server.parameters) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.call_tool("ask_user_question", PKG_ARGS)
    assert result.is_error
    assert _text(result) == f"Error: {UserQuestionError.not_interactive().message}"
    assert "cancel" not in _text(result)


@pytest.mark.flaky(reruns=2)
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_long_wait_sends_progress_until_the_answer(
    provider_dir: Path, tmp_path: Path, mode: str
) -> None:
    """While the human has not answered, the call gets progress notifications, ever growing."""
    answer = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
    server = Server(
        provider_dir,
        tmp_path,
        [{"delay": 2.5, "answer": answer}],
        env={PROGRESS_INTERVAL_ENV: "0.3"},
    )
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with anyio.fail_after(TIMEOUT):
        async with server.client(mode) as client:
            result = await client.call_tool(
                "ask_user_question", PKG_ARGS, progress_callback=on_progress
            )
    assert _text(result) == '{"answers":[{"id":"pkg","selected":["pnpm"]}]}'
    assert len(seen) >= 3, seen
    progress = [entry[0] for entry in seen]
    assert progress == sorted(set(progress))  # strictly growing, as the protocol requires
    assert all(total is None for _, total, _ in seen)
    assert all("waiting for the user to answer" in (message or "") for *_, message in seen)


def test_a_bad_progress_interval_in_the_environment_is_refused(
    provider_dir: Path, tmp_path: Path
) -> None:
    """dsh-ask mcp with a progress interval that is no positive number says so and stops."""
    server = Server(provider_dir, tmp_path, [], env={PROGRESS_INTERVAL_ENV: "soon"})
    done = subprocess.run(
        [server.parameters.command, *server.parameters.args],
        env={**os.environ, **(server.parameters.env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert f"{PROGRESS_INTERVAL_ENV} must be a positive number of seconds, not 'soon'" in (
        done.stderr
    )


@pytest.mark.skipif(
    importlib.util.find_spec("dsh_user_questions_terminal") is None,
    reason="the terminal provider is not installed here",
)
async def test_the_terminal_provider_without_a_tty_is_not_interactive(
    provider_dir: Path, tmp_path: Path
) -> None:
    """The real terminal provider under a stdio_client (a new session, no tty): NOT_INTERACTIVE."""
    server = Server(provider_dir, tmp_path, [], provider="terminal")
    with anyio.fail_after(TIMEOUT):
        async with (
            stdio_client(server.parameters) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.call_tool("ask_user_question", PKG_ARGS)
    assert result.is_error
    assert _text(result).startswith(f"Error: {UserQuestionError.not_interactive().message}")
    assert "cancelled" not in _text(result)


async def test_a_secret_question_is_refused_since_a_tool_result_reaches_the_model(
    dsh_context: Any,
) -> None:
    """MCP has no channel that skips the model: a secret question is NOT_INTERACTIVE, unasked."""
    arguments = {"questions": [{"id": "token", "question": "Your API token?", "secret": True}]}
    with anyio.fail_after(TIMEOUT):
        async with Client(build_server(dsh_context), mode="legacy") as client:
            result = await client.call_tool("ask_user_question", arguments)
    assert result.is_error
    assert _text(result) == (
        f"Error: {UserQuestionError.not_interactive().message}: an MCP tool result goes into"
        " the model's context, so dsh-ask mcp cannot take the secret answer of question"
        ' "token"'
    )


class SlowProvider:
    """Answers after ``seconds``, as a human who takes a while."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    async def ask(self, request: Any) -> Any:
        await anyio.sleep(self.seconds)
        return {"answers": [{"id": request.questions[0].id, "selected": ["npm"]}]}


async def test_at_the_defaults_the_first_progress_comes_after_a_second(dsh_context: Any) -> None:
    """With the default interval, a wait of 1.6 s already shows one progress notification."""
    dsh_context.user_questions.register_provider(SlowProvider(1.6))
    seen: list[float] = []

    async def on_progress(progress: float, _total: float | None, _message: str | None) -> None:
        seen.append(progress)

    with anyio.fail_after(TIMEOUT):
        async with Client(build_server(dsh_context), mode="legacy") as client:
            answered = await client.call_tool(
                "ask_user_question", PKG_ARGS, progress_callback=on_progress
            )
    assert _text(answered) == '{"answers":[{"id":"pkg","selected":["npm"]}]}'
    assert seen == [1.0]
