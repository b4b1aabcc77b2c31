"""``dsh-ask mcp`` and elicitation against the official TypeScript MCP SDK, installed from npm.

The tests' own setup installs ``tests/mcp/mcp_node/package.json`` (the SDK and
``@modelcontextprotocol/server-everything``, pinned) with npm into ``.cache/mcp-node/<hash>``
at the repository's root (or ``$DSH_MCP_NODE_CACHE``), once per manifest. Without node or
npm, or when npm cannot install, the tests are skipped saying so; under ``CI=true`` they fail.

- ``client.mjs`` drives ``dsh-ask mcp`` with the SDK's ``Client`` and ``StdioClientTransport``:
  list, call, an invalid call, cancel, and a wait longer than the client's request timeout,
  kept open by the server's progress notifications (``resetTimeoutOnProgress``).
- ``http_close.mjs`` calls `serve_http` over Streamable HTTP with the SDK's
  ``StreamableHTTPClientTransport`` and ends with a plain ``client.close()``, no
  ``terminateSession()``: the question is withdrawn at once.
- ``ajv_check.mjs`` checks values with the SDK's own ``AjvJsonSchemaValidator``: every value
  our checks accept for an MCP format (hypothesis draws them), ajv accepts too.
- ``validating_server.mjs`` elicits through the SDK's ``Server.elicitInput``, which validates
  the reply with ajv and ajv-formats; server-everything's ``trigger-elicitation-request`` asks
  every field kind. Both are driven by the Python SDK's client with `elicitation_callback`.
"""

from __future__ import annotations

import datetime
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.provisional import urls

pytest.importorskip("mcp", reason="the MCP tests need the mcp extra")

from mcp import Client, StdioServerParameters
from mcp_helpers import PKG_ARGS, TIMEOUT, Page, Server, serving_in_process, until

import dsh_user_questions
from dsh_user_questions import UserQuestionError, plugin, tool
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.mcp import elicitation_callback
from dsh_user_questions.mcp._checks import problem_with
from dsh_user_questions.mcp._server import PROGRESS_INTERVAL_ENV
from dsh_user_questions.testing import ScriptedProvider

NODE_SOURCES = Path(__file__).resolve().parent / "mcp_node"
CACHE_ENV = "DSH_MCP_NODE_CACHE"
ANSWER = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
ANSWER_TEXT = '{"answers":[{"id":"pkg","selected":["pnpm"]}]}'


def _unavailable(reason: str) -> None:
    """Skip saying why, locally; fail under CI, where the node tests must run."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: the TypeScript SDK tests must run)")
    pytest.skip(f"NOT RUN: {reason}")


@pytest.fixture(scope="session")
def node_dir() -> Path:
    """A folder with the pinned npm packages installed and the test scripts beside them."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        _unavailable("node and npm are needed for the TypeScript MCP SDK tests")
    assert node is not None
    assert npm is not None
    version = subprocess.run(
        [node, "--version"], capture_output=True, text=True, timeout=60, check=False
    ).stdout.strip()
    major = re.match(r"v(\d+)", version)
    if major is None or int(major.group(1)) < 18:
        _unavailable(f"the TypeScript MCP SDK needs node 18 or later, found {version!r}")
    manifest = (NODE_SOURCES / "package.json").read_bytes()
    base = os.environ.get(CACHE_ENV) or str(NODE_SOURCES.parents[2] / ".cache" / "mcp-node")
    target = Path(base) / hashlib.sha256(manifest).hexdigest()[:16]
    target.mkdir(parents=True, exist_ok=True)
    # Test sessions of several tox environments at once share the folder: one installs, the
    # others wait for it (the lock is released when the file closes).
    with (target.parent / f"{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _install_once(target, manifest, npm, version)
    return target


def _install_once(target: Path, manifest: bytes, npm: str, version: str) -> None:
    installed = target / "node_modules" / ".installed"
    if not installed.exists():
        target.mkdir(parents=True, exist_ok=True)
        (target / "package.json").write_bytes(manifest)
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=target,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            _unavailable(f"npm install failed in {target}: {done.stderr.strip()[-800:]}")
        installed.write_text(version, encoding="utf-8")
    for script in NODE_SOURCES.glob("*.mjs"):  # beside node_modules, so imports resolve
        if not (target / script.name).exists() or (
            (target / script.name).read_bytes() != script.read_bytes()
        ):
            shutil.copyfile(script, target / script.name)


def _drive(node_dir: Path, server: Server, scenario: str, **extra: Any) -> list[dict[str, Any]]:
    """Run ``client.mjs`` against ``server``; its JSON lines, the last one ``{"done": true}``."""
    parameters = server.parameters
    config = {
        "command": parameters.command,
        "args": parameters.args,
        "env": parameters.env,
        "cwd": str(parameters.cwd),
        "log": str(server.log),
        "scenario": scenario,
        **extra,
    }
    done = subprocess.run(
        ["node", str(node_dir / "client.mjs"), json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT * 2,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # One entry a line; not splitlines(): JSON text may hold a raw U+2028.
    lines = [json.loads(line) for line in done.stdout.split("\n") if line.strip()]
    assert lines[-1] == {"done": True}, lines
    return lines


def _entry(lines: list[dict[str, Any]], key: str) -> Any:
    return next(line[key] for line in lines if key in line)


def _text(result: dict[str, Any]) -> str:
    text: str = result["content"][0]["text"]
    return text


# dsh-ask mcp driven by the TypeScript SDK client ----------------------------------------------


async def test_node_client_closed_over_http_withdraws_its_question(node_dir: Path) -> None:
    """The TypeScript SDK's plain close() over Streamable HTTP withdraws the pending question.

    The session is not ended (no terminateSession()) and the node process stays alive: only
    the call's stream closes. Failed on main: the question stayed until the SDK's 30-minute
    session idle timeout, and the human's answer was "accepted" with no asker to take it.
    """
    page = Page()
    async with serving_in_process(page) as url:
        config = json.dumps({"url": url, "arguments": PKG_ARGS})
        command = ["node", str(node_dir / "http_close.mjs"), config]
        async with await anyio.open_process(command, stderr=None) as client:
            assert client.stdin is not None
            assert client.stdout is not None
            said = BufferedByteReceiveStream(client.stdout)

            async def line() -> dict[str, Any]:
                with anyio.fail_after(TIMEOUT):
                    text = await said.receive_until(b"\n", 1 << 20)
                entry: dict[str, Any] = json.loads(text)
                return entry

            assert (await line())["calling"] is True
            await until(lambda: page.asked, TIMEOUT)
            await client.stdin.send(b"close\n")
            closed = await line()
            assert closed["closed"] is True
            assert "error" in closed["call"]  # the SDK ends the call it closed
            await until(lambda: page.withdrawn)  # node still runs: only the close() did it
            assert await page.answer("pkg", ANSWER) == "gone"
            await client.stdin.aclose()
            assert await line() == {"done": True}
            assert await client.wait() == 0
        assert page.withdrawn == ["pkg"]


@pytest.mark.flaky(reruns=2)
def test_node_client_lists_the_tools_of_a_versioned_server(
    node_dir: Path, provider_dir: Path, tmp_path: Path
) -> None:
    """tools/list gives both tools, the tool's own schema; serverInfo carries the version."""
    lines = _drive(node_dir, Server(provider_dir, tmp_path, []), "list")
    assert _entry(lines, "server") == {
        "name": "dsh-user-questions",
        "version": dsh_user_questions.__version__,
    }
    tools = {entry["name"]: entry for entry in _entry(lines, "tools")}
    assert sorted(tools) == ["ask_user_question", "review_plan"]
    assert tools["ask_user_question"]["inputSchema"] == tool.mcp_tool()["inputSchema"]


@pytest.mark.flaky(reruns=2)
def test_node_client_calls_and_gets_the_answer(
    node_dir: Path, provider_dir: Path, tmp_path: Path
) -> None:
    """A call reaches the provider and the TypeScript client reads the compact answer."""
    server = Server(provider_dir, tmp_path, [{"answer": ANSWER}])
    result = _entry(_drive(node_dir, server, "call"), "result")
    assert not result.get("isError")
    assert _text(result) == ANSWER_TEXT


@pytest.mark.flaky(reruns=2)
def test_node_client_hears_not_interactive_never_a_cancel(
    node_dir: Path, provider_dir: Path, tmp_path: Path
) -> None:
    """A provider that cannot reach a person is a tool error with the NOT_INTERACTIVE text."""
    server = Server(provider_dir, tmp_path, [{"not_interactive": True}])
    result = _entry(_drive(node_dir, server, "call"), "result")
    assert result["isError"] is True
    assert _text(result) == f"Error: {UserQuestionError.not_interactive().message}"


@pytest.mark.flaky(reruns=2)
def test_node_client_invalid_call_and_unknown_tool(
    node_dir: Path, provider_dir: Path, tmp_path: Path
) -> None:
    """Bad arguments are a tool error naming the problem; an unknown tool is -32602."""
    server = Server(provider_dir, tmp_path, [])
    lines = _drive(node_dir, server, "invalid")
    result = _entry(lines, "result")
    assert result["isError"] is True
    assert _text(result) == "Error: invalid arguments: questions: must have at least 1 item"
    unknown = _entry(lines, "unknown")["error"]
    assert unknown["code"] == -32602
    assert "unknown tool 'no_such_tool'" in unknown["message"]
    assert server.events() == []


@pytest.mark.flaky(reruns=2)
def test_node_client_cancel_withdraws_the_question(
    node_dir: Path, provider_dir: Path, tmp_path: Path
) -> None:
    """Aborting the call withdraws the pending ask; the server then answers the next call."""
    server = Server(provider_dir, tmp_path, [{"hang": True}, {"answer": ANSWER}])
    lines = _drive(node_dir, server, "cancel")
    cancelled = _entry(lines, "cancelled")
    assert "error" in cancelled, cancelled
    assert _entry(lines, "withdrawn") is True
    assert _text(_entry(lines, "after")) == ANSWER_TEXT


@pytest.mark.flaky(reruns=2)
@pytest.mark.parametrize("reset", [True, False], ids=["reset-on-progress", "no-reset"])
def test_node_client_wait_past_its_timeout_is_kept_open_by_progress(
    node_dir: Path, provider_dir: Path, tmp_path: Path, reset: bool
) -> None:
    """A 3 s request timeout, a human answering after 8 s, progress every second.

    With ``resetTimeoutOnProgress`` the call stays open and gets the answer; without it the
    same client gives up at its timeout (so it is the progress that kept the call open). The
    same mechanism, at the defaults (10 s progress, the SDK's 60 s timeout), keeps a 70 s wait
    open: ``DSH_MCP_SLOW_TESTS=1`` runs that too.
    """
    server = Server(
        provider_dir,
        tmp_path,
        [{"delay": 8, "answer": ANSWER}],
        env={PROGRESS_INTERVAL_ENV: "1"},
    )
    lines = _drive(node_dir, server, "wait", timeoutMs=3000, reset=reset)
    waited = next(line for line in lines if "progress" in line)
    if reset:
        assert _text(waited["result"]) == ANSWER_TEXT
        assert waited["seconds"] >= 8
        assert len(waited["progress"]) >= 5
        values = [update["progress"] for update in waited["progress"]]
        assert values == sorted(set(values))
    else:
        assert waited["error"]["code"] == -32001  # the SDK's RequestTimeout
        assert waited["seconds"] < 8


@pytest.mark.skipif(
    os.environ.get("DSH_MCP_SLOW_TESTS") != "1", reason="a 70 s wait: set DSH_MCP_SLOW_TESTS=1"
)
def test_node_client_seventy_second_wait_at_the_defaults(
    node_dir: Path, provider_dir: Path, tmp_path: Path
) -> None:
    """The SDK's default 60 s timeout, reset by progress at the default 10 s interval: 70 s."""
    server = Server(provider_dir, tmp_path, [{"delay": 70, "answer": ANSWER}])
    lines = _drive(node_dir, server, "wait", timeoutMs=60_000, reset=True)
    waited = next(line for line in lines if "progress" in line)
    assert _text(waited["result"]) == ANSWER_TEXT
    assert waited["seconds"] >= 70
    assert len(waited["progress"]) >= 7


# Elicitation: TypeScript SDK servers, asked through elicitation_callback ----------------------


def _node_server(node_dir: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(command="node", args=[str(node_dir / args[0]), *args[1:]])


async def _call(
    parameters: StdioServerParameters, callback: Any, name: str, arguments: dict[str, Any]
) -> tuple[bool, str]:
    with anyio.fail_after(TIMEOUT):
        async with Client(parameters, mode="legacy", elicitation_callback=callback) as client:
            result = await client.call_tool(name, arguments)
    texts = [getattr(block, "text", "") for block in result.content]
    return bool(result.is_error), "\n".join(texts)


def _harness(provider: Any) -> HarnessContext:
    ctx = HarnessContext()
    ctx.register(plugin)
    ctx.user_questions.register_provider(provider)
    return ctx


FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email", "title": "Email"},
        "homepage": {"type": "string", "format": "uri", "title": "Homepage"},
        "birthday": {"type": "string", "format": "date", "title": "Birthday"},
        "meeting": {"type": "string", "format": "date-time", "title": "Meeting"},
        "workers": {"type": "integer", "minimum": 1, "maximum": 8, "title": "Workers"},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1, "title": "Ratio"},
        "nick": {"type": "string", "minLength": 2, "maxLength": 10, "title": "Nick"},
        "plan": {"type": "string", "enum": ["free", "pro"], "title": "Plan"},
    },
    "required": ["email", "homepage", "birthday", "meeting", "workers", "ratio", "nick", "plan"],
}
WRONG = {
    "email": "me@example",
    "homepage": "example.com",
    "birthday": "2025-02-29",
    "meeting": "2025-03-31T14:30:00",
    "workers": "9",
    "ratio": "1.5",
    "nick": "x",
}
RIGHT = {
    "email": "me@example.com",
    "homepage": "https://example.com/me",
    "birthday": "2024-02-29",
    "meeting": "2025-03-31T14:30:00Z",
    "workers": "8",
    "ratio": "0.5",
    "nick": "mo",
}


def _answers(texts: dict[str, str], **selected: str) -> dict[str, Any]:
    items: list[dict[str, Any]] = [
        {"id": key, "selected": [], "custom": text} for key, text in texts.items()
    ]
    items += [{"id": key, "selected": [label]} for key, label in selected.items()]
    return {"answers": items}


@pytest.mark.flaky(reruns=2)
async def test_an_ajv_validating_server_accepts_what_the_human_finishes(node_dir: Path) -> None:
    """The TypeScript SDK's elicitInput (ajv, ajv-formats) accepts the answers; bad ones never
    reach it, and the same bad ones sent directly are refused with -32602 (so it checks)."""
    parameters = _node_server(node_dir, "validating_server.mjs")
    provider = ScriptedProvider(_answers(WRONG, plan="pro"), _answers(RIGHT))
    refused, text = await _call(
        parameters,
        elicitation_callback(_harness(provider)),
        "elicit",
        {"message": "Sign up", "schema": FORM},
    )
    assert not refused, text
    assert json.loads(text) == {
        "action": "accept",
        "content": {**RIGHT, "workers": 8, "ratio": 0.5, "plan": "pro"},
    }
    assert sorted(q.id for q in provider.requests[1].questions) == sorted(WRONG)

    async def unchecked(_context: Any, _params: Any) -> Any:
        from mcp_types import ElicitResult

        return ElicitResult(action="accept", content={**WRONG, "workers": 9, "ratio": 1.5})

    refused, text = await _call(parameters, unchecked, "elicit", {"message": "m", "schema": FORM})
    assert refused
    assert text.startswith("refused: -32602"), text


@pytest.mark.flaky(reruns=2)
async def test_server_everything_elicitation_is_accepted(node_dir: Path) -> None:
    """server-everything's form (every field kind) is answered and accepted, bad values retried."""
    dist = node_dir / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist"
    parameters = StdioServerParameters(command="node", args=[str(dist / "index.js"), "stdio"])
    first = _answers(
        {
            "name": "Ada Lovelace",
            "email": "ada@",
            "homepage": "ada.example.com",
            "birthdate": "1815-12-10",
            "integer": "101",
            "number": "3.5",
        },
        check="Yes",
        untitledSingleSelectEnum="Joey",
        titledSingleSelectEnum="Wonder Woman",
        legacyTitledEnum="Birds",
    )
    first["answers"] += [
        {"id": "untitledMultipleSelectEnum", "selected": ["Piano", "Drums"]},
        {"id": "titledMultipleSelectEnum", "selected": ["Tuna", "Salmon", "Trout"]},
    ]
    second = _answers(
        {"email": "ada@example.org", "homepage": "https://ada.example.org", "integer": "100"}
    )
    provider = ScriptedProvider(first, second)
    refused, text = await _call(
        parameters, elicitation_callback(_harness(provider)), "trigger-elicitation-request", {}
    )
    assert not refused, text
    assert "User provided the requested information" in text
    raw = json.loads(text.split("Raw result:", 1)[1])
    assert raw["action"] == "accept"
    assert raw["content"] == {
        "name": "Ada Lovelace",
        "check": True,
        "email": "ada@example.org",
        "homepage": "https://ada.example.org",
        "birthdate": "1815-12-10",
        "integer": 100,
        "number": 3.5,
        "untitledSingleSelectEnum": "Joey",
        "untitledMultipleSelectEnum": ["Piano", "Drums"],
        "titledSingleSelectEnum": "hero-3",
        "titledMultipleSelectEnum": ["fish-1", "fish-2", "fish-3"],
        "legacyTitledEnum": "pet-3",
        "firstLine": "It was a dark and stormy night.",  # skipped: its default (SEP-1034)
    }
    asked = {q.id: q for q in provider.requests[0].questions}
    assert "Default: Superman (skip to keep it)." in (asked["titledSingleSelectEnum"].detail or "")
    assert "Default: Cats (skip to keep it)." in (asked["legacyTitledEnum"].detail or "")
    assert sorted(q.id for q in provider.requests[1].questions) == ["email", "homepage", "integer"]


_OFFSETS = st.sampled_from(
    [
        datetime.timezone.utc,
        datetime.timezone(datetime.timedelta(hours=5, minutes=30)),
        datetime.timezone(-datetime.timedelta(hours=7)),
    ]
)
_CANDIDATES = {
    "email": st.emails()
    | st.builds("{}@{}".format, st.text("ab.-_+é1 ", max_size=6), st.text("ab.-1é", max_size=8)),
    "uri": urls()
    | st.from_regex(r"\A[a-zA-Z][a-zA-Z0-9+.-]{0,5}:[ -~]{0,15}\Z")
    | st.text(max_size=12),
    "date": st.dates().map(datetime.date.isoformat)
    | st.from_regex(r"\A\d{4}-\d\d-\d\d\Z")
    | st.text(max_size=10),
    "date-time": st.datetimes(timezones=_OFFSETS).map(datetime.datetime.isoformat)
    | st.from_regex(r"\A\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d{1,9})?([Zz]|[+-]\d\d:\d\d)?\Z"),
}


# No shrinking: each example runs node; the failing batch's refused values are the report.
@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
)
@given(
    batch=st.lists(
        st.sampled_from(sorted(_CANDIDATES)).flatmap(
            lambda name: st.tuples(st.just(name), _CANDIDATES[name])
        ),
        min_size=100,
        max_size=300,
    )
)
def test_every_value_we_accept_passes_the_typescript_sdks_validator(
    node_dir: Path, batch: list[tuple[str, str]]
) -> None:
    """Whatever our checks let through for an MCP format, ajv-formats (the TS SDK's) accepts."""
    accepted = [
        ({"type": "string", "format": name}, value)
        for name, value in batch
        if problem_with({"type": "string", "format": name}, value) is None
    ]
    done = subprocess.run(
        ["node", str(node_dir / "ajv_check.mjs")],
        input=json.dumps(accepted),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    refused = [
        pair for pair, valid in zip(accepted, json.loads(done.stdout), strict=True) if not valid
    ]
    assert refused == []
