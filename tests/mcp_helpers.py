"""Shared by the ``dsh-ask mcp`` tests: a scripted provider installed to a folder, the command.

The server asks through an installed provider: a tiny scripted provider distribution built and
pip-installed to a folder here, chosen with ``--provider``. It logs each ask, and whether the
ask was withdrawn, to a file the test reads; it also prints to stdout, which must never reach
the protocol. Its script is a JSON list of steps, one per ask: ``{"answer": <wire form>}``
(after ``"delay"`` seconds, if given), ``{"hang": true}``, ``{"not_interactive": true}`` or
``{"cancel": true}`` (also what an ask past the script's end gets).
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import shutil
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from tool_cli_env import pip_install_to

from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest, plugin
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.mcp import serve_http
from dsh_user_questions.providing import receipt

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
    if step.get("delay"):
        try:
            await asyncio.sleep(step["delay"])
        except asyncio.CancelledError:
            _log("withdrawn")
            raise
    if step.get("not_interactive"):
        raise UserQuestionError.not_interactive()
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

PKG_ARGS: dict[str, Any] = {
    "questions": [
        {
            "id": "pkg",
            "question": "Which package manager?",
            "options": [{"label": "pnpm"}, {"label": "npm"}],
        }
    ]
}
PLAN = "# Ship it\n\n1. Build\n2. Release"


def install_provider(root: Path) -> Path:
    """The scripted provider distribution, pip-installed to a folder under ``root``."""
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


def command_line() -> list[str]:
    """``dsh-ask mcp`` as installed next to this Python, or through ``-m`` in a source tree."""
    script = shutil.which("dsh-ask", path=str(Path(sys.executable).parent))
    if script is not None:
        return [script, "mcp"]
    return [sys.executable, "-m", "dsh_user_questions._cli", "mcp"]


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
        env: dict[str, str] | None = None,
    ) -> None:
        self.log = tmp_path / "asked.jsonl"
        command = command_line()
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
                **(env or {}),
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


@contextmanager
def serving_http(provider_dir: Path, folder: Path, steps: list[dict[str, Any]]) -> Iterator[str]:
    """``dsh-ask mcp --http 127.0.0.1:0`` with the scripted provider, running; yields its URL."""
    parameters = Server(provider_dir, folder, steps).parameters
    process = subprocess.Popen(
        [parameters.command, *parameters.args, "--http", "127.0.0.1:0"],
        env={**os.environ, **(parameters.env or {})},
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    try:
        ready, _, _ = select.select([process.stderr], [], [], TIMEOUT)
        line = process.stderr.readline() if ready else ""
        prefix = "dsh-ask mcp: serving MCP (Streamable HTTP) at "
        if not line.startswith(prefix):
            raise AssertionError(f"dsh-ask mcp --http did not start: {line!r}")
        yield line[len(prefix) :].strip()
    finally:
        process.terminate()
        try:
            process.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(TIMEOUT)
        process.stderr.close()


class Page:
    """A provider that shows each question until it is answered or withdrawn, as a page does.

    `answer` is the human's answer on the page: ``"gone"`` when the question is no longer
    shown (withdrawn), ``"accepted"`` only when its asker took the answer (the ask's receipt),
    else ``"not taken"``. ``asked`` and ``withdrawn`` list the question ids as it goes.
    """

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.withdrawn: list[str] = []
        self._shown: dict[str, tuple[asyncio.Future[Any], Any]] = {}

    async def ask(self, request: AskUserQuestionRequest) -> Any:
        question_id = request.questions[0].id
        taken = receipt(request)
        answered: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._shown[question_id] = (answered, taken)
        self.asked.append(question_id)
        try:
            return await answered
        except asyncio.CancelledError:
            self.withdrawn.append(question_id)
            raise
        finally:
            del self._shown[question_id]

    async def answer(self, question_id: str, answer: dict[str, Any]) -> str:
        shown = self._shown.get(question_id)
        if shown is None:
            return "gone"
        answered, taken = shown
        answered.set_result(AskUserQuestionAnswer.from_dict(answer))
        with anyio.fail_after(TIMEOUT):
            return "accepted" if await taken else "not taken"


async def until(check: Callable[[], object], seconds: float = 10) -> None:
    """Poll ``check()`` until it is true, for at most ``seconds`` (then `TimeoutError`)."""
    with anyio.fail_after(seconds):
        while not check():  # noqa: ASYNC110 (another process acts: polling is how we hear)
            await anyio.sleep(0.05)


@asynccontextmanager
async def serving_in_process(provider: object) -> AsyncIterator[str]:
    """`serve_http` on a free loopback port, asking through ``provider``; yields its URL."""
    ctx = HarnessContext()
    ctx.register(plugin)
    ctx.user_questions.register_provider(provider)
    async with anyio.create_task_group() as group:
        url: str = await group.start(serve_http, ctx, "127.0.0.1", 0)
        try:
            yield url
        finally:
            group.cancel_scope.cancel()
