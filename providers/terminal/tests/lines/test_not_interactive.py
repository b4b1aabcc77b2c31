"""No person can be reached: the honest outcome is NOT_INTERACTIVE, never ASK_CANCELLED.

Run as a client without a terminal would run ``dsh-ask``: in a new session (``setsid``, so no
controlling terminal and no ``/dev/tty``) with stdin from the null device, or from a pipe that
has already ended, and as ``dsh-ask mcp`` under the official MCP SDK's stdio client.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TIMEOUT, question

DSH_ASK = Path(sys.executable).with_name("dsh-ask")
MESSAGE = "the user cannot be reached from here"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_USER_QUESTIONS_")}
    env.update(LC_ALL="C.UTF-8", DSH_USER_QUESTIONS_PROVIDER="terminal")
    return env


def _run(shell: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    (tmp_path / "request.json").write_text(
        json.dumps({"questions": [question()]}), encoding="utf-8"
    )
    return subprocess.run(
        ["setsid", "sh", "-c", shell],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=TIMEOUT,
        check=False,
    )


@pytest.mark.parametrize(
    "shell",
    [
        "{ask} request.json < /dev/null",
        "{ask} request.json <&-",
        "cat request.json | {ask} -",
    ],
    ids=["stdin-null", "stdin-closed", "questions-on-stdin"],
)
def test_dsh_ask_without_a_terminal_says_nobody_can_answer(tmp_path, shell):
    """Without a controlling terminal and with nothing a person types into on stdin, dsh-ask
    reports NOT_INTERACTIVE's message (what to do instead included), not a cancel."""
    done = _run(shell.format(ask=shlex.quote(str(DSH_ASK))), tmp_path)
    assert f"Error: {MESSAGE}" in done.stderr, done.stderr
    assert "proceed on an assumption you state" in done.stderr
    assert "cancelled" not in done.stderr
    assert done.returncode not in (0, 130), done.returncode
    assert done.stdout == ""
    assert "Traceback" not in done.stderr


def test_no_prompt_is_written_when_nobody_can_read_it(tmp_path):
    """With stdin the null device and no terminal, the question is not even printed."""
    done = _run(f"{shlex.quote(str(DSH_ASK))} request.json < /dev/null", tmp_path)
    assert "Which package manager" not in done.stderr


@pytest.mark.flaky(reruns=2)
async def test_dsh_ask_mcp_under_the_sdk_client_without_a_terminal(tmp_path):
    """``dsh-ask mcp`` started by the official Python SDK's stdio client in a session without
    a terminal: the call is a tool error with NOT_INTERACTIVE's message, never "cancelled"."""
    pytest.importorskip("mcp", reason="the MCP client test needs the core's mcp extra")
    import anyio
    from mcp import Client, StdioServerParameters

    parameters = StdioServerParameters(
        command="setsid",
        args=[str(DSH_ASK), "mcp", "--provider", "terminal"],
        env=_env(),
        cwd=str(tmp_path),
    )
    arguments = {"questions": [{k: v for k, v in question().items() if k != "detail"}]}
    with anyio.fail_after(TIMEOUT * 2):
        async with Client(parameters) as client:
            result = await client.call_tool("ask_user_question", arguments)
    text = result.content[0].text
    assert result.is_error
    assert MESSAGE in text
    assert "cancelled" not in text


def test_stdin_from_the_null_device_asks_on_the_controlling_terminal(tmp_path):
    """In a terminal, ``dsh-ask q.json < /dev/null`` (stdin nothing a person types into, as
    under ``dsh-ask mcp``) draws the form on /dev/tty and reads its keys there too."""
    from test_dsh_ask import run_in_terminal, write_request

    write_request(tmp_path)
    out = run_in_terminal(
        f"{shlex.quote(str(DSH_ASK))} request.json < /dev/null", tmp_path, ["2"], "Esc cancel"
    )
    assert '{"answers":[{"id":"pkg","selected":["npm"]}]}' in out


def test_line_mode_with_stdin_from_the_null_device_reads_the_terminal(tmp_path):
    """With DSH_USER_QUESTIONS_PLAIN=1 and stdin from /dev/null in a terminal, line mode asks
    on /dev/tty."""
    from test_dsh_ask import run_in_terminal, write_request

    write_request(tmp_path)
    command = f"DSH_USER_QUESTIONS_PLAIN=1 {shlex.quote(str(DSH_ASK))} request.json < /dev/null"
    out = run_in_terminal(command, tmp_path, ["3\r"], "Answer: a number 1-3")
    assert '{"answers":[{"id":"pkg","selected":["yarn"]}]}' in out
