"""``dsh-ask mcp --http``: the two tools over MCP Streamable HTTP, answers also structured.

In process, `serve_http` runs on a free port and the official SDK's client talks to it over
HTTP; as a command, ``dsh-ask mcp --http 127.0.0.1:0`` is started once for the module with a
scripted provider (see ``mcp_helpers``). ``dsh-ask mcp`` without the provider it needs is
refused before it serves anything.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from importlib import metadata
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp", reason="the MCP tests need the mcp extra")

import httpx2
from mcp import Client
from mcp_helpers import (
    PKG_ARGS,
    PLAN,
    TIMEOUT,
    Page,
    Server,
    command_line,
    serving_http,
    serving_in_process,
    until,
)
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from tool_cli_env import _link_tops, build_site, cli_command, cli_env

from dsh_user_questions import UserQuestionError, plugin, tool
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.mcp import serve_http
from dsh_user_questions.mcp._server import ANSWER_SCHEMA, HTTP_PATH, VERDICT_SCHEMA
from dsh_user_questions.testing import ScriptedProvider

ANSWER = {"answers": [{"id": "pkg", "selected": [], "custom": "bun"}]}
MCP_EXTRA = ("mcp>=2.3", "email-validator", "jsonschema[format-nongpl]", "uvicorn")
"""The ``mcp`` extra's requirements (setup.cfg), for a site with the SDK and no provider."""


class TestServeHttp:
    """The server of `build_server` over Streamable HTTP, driven by the SDK's HTTP client."""

    async def test_both_tools_are_listed_with_their_output_schemas(self) -> None:
        """tools/list over HTTP: the tool's own input schema, and an output schema for each."""
        with anyio.fail_after(TIMEOUT):
            async with serving_in_process(ScriptedProvider()) as url, Client(url) as client:
                listed = {t.name: t for t in (await client.list_tools()).tools}
        assert url.startswith("http://127.0.0.1:")
        assert url.endswith(HTTP_PATH)
        asked = listed["ask_user_question"].model_dump(by_alias=True, exclude_none=True)
        assert asked == {**tool.mcp_tool(), "outputSchema": ANSWER_SCHEMA}
        assert listed["review_plan"].output_schema == VERDICT_SCHEMA

    async def test_an_answer_is_text_and_structured_content(self) -> None:
        """A call's answer is the tool's compact JSON and the same value as structuredContent."""
        provider = ScriptedProvider(ANSWER)
        with anyio.fail_after(TIMEOUT):
            async with serving_in_process(provider) as url, Client(url) as client:
                result = await client.call_tool("ask_user_question", PKG_ARGS)
        assert not result.is_error
        assert result.structured_content == ANSWER
        text = result.content[0].text  # type: ignore[union-attr]
        assert text == '{"answers":[{"id":"pkg","selected":[],"custom":"bun"}]}'
        assert provider.requests[0].questions[0].id == "pkg"

    async def test_a_plan_verdict_is_structured_too(self) -> None:
        """review_plan's verdict is its JSON text and the same value as structuredContent."""
        feedback = {"answers": [{"id": "plan-review", "selected": [], "custom": "add docs"}]}
        with anyio.fail_after(TIMEOUT):
            async with serving_in_process(ScriptedProvider(feedback)) as url, Client(url) as client:
                result = await client.call_tool("review_plan", {"plan": PLAN})
        verdict = {"decision": "keep-planning", "feedback": "add docs"}
        assert result.structured_content == verdict
        assert json.loads(result.content[0].text) == verdict  # type: ignore[union-attr]

    async def test_a_failed_call_is_an_error_text_without_structured_content(self) -> None:
        """A failure is the tool's Error text with isError, and no structured value."""
        provider = ScriptedProvider(UserQuestionError.cancelled())
        with anyio.fail_after(TIMEOUT):
            async with serving_in_process(provider) as url, Client(url) as client:
                result = await client.call_tool("ask_user_question", PKG_ARGS)
        assert result.is_error
        assert result.structured_content is None
        text = result.content[0].text  # type: ignore[union-attr]
        assert text == "Error: the user cancelled ask_user_question"

    async def test_a_foreign_origin_is_refused_on_loopback(self) -> None:
        """Bound to 127.0.0.1, a request from a web page of another origin is refused."""
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        headers = {"Origin": "http://evil.example", "Accept": "application/json"}
        with anyio.fail_after(TIMEOUT):
            async with serving_in_process(ScriptedProvider()) as url, httpx2.AsyncClient() as http:
                response = await http.post(url, json=body, headers=headers)
        assert response.status_code == 403

    async def test_a_port_in_use_is_an_os_error(self) -> None:
        """An address that cannot be bound raises OSError before anything is served."""
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            ctx = HarnessContext()
            ctx.register(plugin)
            with anyio.fail_after(TIMEOUT), pytest.raises(OSError, match="in use"):
                await serve_http(ctx, "127.0.0.1", port)


# A client that goes away: its question is withdrawn at once ------------------------------------

_KILLED_CLIENT = """\
import json, sys
import anyio
from mcp import Client

async def main():
    async with Client(sys.argv[1], mode=sys.argv[2]) as client:
        await client.call_tool("ask_user_question", json.loads(sys.argv[3]))

anyio.run(main)
"""
_HANDSHAKE = "2025-11-25"
_SSE = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@asynccontextmanager
async def _raw_session(url: str) -> AsyncIterator[tuple[httpx2.AsyncClient, dict[str, str]]]:
    """A handshake-era session opened by hand; yields the HTTP client and the session's headers."""
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": _HANDSHAKE,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
        opened = await http.post(url, json=hello, headers=_SSE)
        assert opened.status_code == 200, opened.text
        headers = {
            **_SSE,
            "Mcp-Session-Id": opened.headers["mcp-session-id"],
            "Mcp-Protocol-Version": _HANDSHAKE,
        }
        ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post(url, json=ready, headers=headers)).status_code == 202
        yield http, headers


def _call(request_id: int) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "ask_user_question", "arguments": PKG_ARGS},
    }


class TestAClientGone:
    """A call whose HTTP client is gone is withdrawn at once: the provider hears the abort,
    and the human's answer afterwards is refused, never "accepted" for nobody."""

    @pytest.mark.parametrize("mode", ["legacy", "auto"])
    async def test_a_client_killed_mid_call(self, mode: str) -> None:
        """The Python SDK's streamable HTTP client, killed -9 while the human has the question.

        Failed on main in legacy mode (the handshake era): the question stayed on the page
        until the SDK's 30-minute session idle timeout and the answer was "accepted".
        """
        page = Page()
        async with serving_in_process(page) as url:
            command = [sys.executable, "-c", _KILLED_CLIENT, url, mode, json.dumps(PKG_ARGS)]
            async with await anyio.open_process(command, stdout=None, stderr=None) as client:
                await until(lambda: page.asked, TIMEOUT)
                client.send_signal(signal.SIGKILL)
                assert await client.wait() == -signal.SIGKILL
            await until(lambda: page.withdrawn)
            assert await page.answer("pkg", ANSWER) == "gone"
        assert page.withdrawn == ["pkg"]

    async def test_a_request_stream_closed_by_its_client(self) -> None:
        """A client that closes the call's SSE stream (its session still open) withdraws it.

        Failed on main: nothing heard the stream close.
        """
        page = Page()
        async with serving_in_process(page) as url, _raw_session(url) as (http, headers):
            async with http.stream("POST", url, json=_call(2), headers=headers) as response:
                assert response.status_code == 200
                await until(lambda: page.asked, TIMEOUT)
            await until(lambda: page.withdrawn)
            assert await page.answer("pkg", ANSWER) == "gone"

    async def test_a_session_ended_with_delete(self) -> None:
        """DELETE ends the session while its call waits: the question is withdrawn too."""
        page = Page()
        async with serving_in_process(page) as url, _raw_session(url) as (http, headers):
            async with anyio.create_task_group() as group:

                async def call() -> None:
                    async with http.stream("POST", url, json=_call(2), headers=headers) as r:
                        async for _ in r.aiter_bytes():
                            pass

                group.start_soon(call)
                await until(lambda: page.asked, TIMEOUT)
                assert (await http.delete(url, headers=headers)).status_code == 200
                await until(lambda: page.withdrawn)
                group.cancel_scope.cancel()
            assert await page.answer("pkg", ANSWER) == "gone"

    async def test_an_answer_while_connected_is_accepted(self) -> None:
        """The other side: a client still waiting gets the answer, and the page says accepted."""
        page = Page()
        results: list[object] = []
        async with (
            serving_in_process(page) as url,
            Client(url, mode="legacy") as client,
            anyio.create_task_group() as group,
        ):

            async def call() -> None:
                results.append(await client.call_tool("ask_user_question", PKG_ARGS))

            group.start_soon(call)
            await until(lambda: page.asked, TIMEOUT)
            assert await page.answer("pkg", ANSWER) == "accepted"
        assert page.withdrawn == []
        assert results[0].structured_content == ANSWER  # type: ignore[attr-defined]


# dsh-ask mcp --http, as a command ------------------------------------------------------------


@pytest.fixture(scope="module")
def http_command(provider_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One ``dsh-ask mcp --http`` for the module, every ask answered with `ANSWER`."""
    folder = tmp_path_factory.mktemp("mcp-http")
    with serving_http(provider_dir, folder, [{"answer": ANSWER}] * 20) as url:
        yield url


class TestDshAskMcpHttp:
    """The installed command serving Streamable HTTP."""

    async def test_the_command_answers_through_the_installed_provider(
        self, http_command: str
    ) -> None:
        """A call over HTTP is asked through the provider chosen with --provider."""
        with anyio.fail_after(TIMEOUT):
            async with Client(http_command) as client:
                result = await client.call_tool("ask_user_question", PKG_ARGS)
        assert result.structured_content == ANSWER
        assert http_command.startswith("http://127.0.0.1:")

    def test_a_port_in_use_exits_1_saying_so(self, provider_dir: Path, tmp_path: Path) -> None:
        """An address already taken ends the command at once: exit 1, the reason on stderr."""
        parameters = Server(provider_dir, tmp_path, []).parameters
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            done = subprocess.run(
                [parameters.command, *parameters.args, "--http", str(port)],
                env={**os.environ, **(parameters.env or {})},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                check=False,
            )
        assert done.returncode == 1
        assert done.stderr.startswith(f"Error: cannot serve MCP on 127.0.0.1:{port}: [Errno")
        assert "in use" in done.stderr

    @pytest.mark.parametrize("given", ["host:port", "127.0.0.1:70000", "127.0.0.1:"])
    def test_a_bad_address_is_a_usage_error(self, given: str) -> None:
        """--http takes [HOST:]PORT with a port from 0 to 65535; anything else exits 2."""
        done = subprocess.run(
            [*command_line(), "--http", given],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        assert done.returncode == 2
        assert f"not [HOST:]PORT with PORT 0 to 65535: {given!r}" in done.stderr


# dsh-ask mcp without the provider it needs ---------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This package, its dependencies and the MCP SDK's, without any provider."""
    site = build_site(tmp_path_factory.mktemp("mcp-site"))
    pending = [Requirement(text) for text in MCP_EXTRA]
    seen: set[tuple[str, frozenset[str]]] = set()
    while pending:  # the requirements' closure, extras included (jsonschema[format-nongpl])
        wanted = pending.pop()
        key = (canonicalize_name(wanted.name), frozenset(wanted.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = metadata.distribution(wanted.name)
        except metadata.PackageNotFoundError:
            continue  # e.g. a backport this Python does not need
        _link_tops(site, dist, only_metadata=False)
        for text in dist.requires or ():
            needed = Requirement(text)
            extras = wanted.extras or {""}
            if needed.marker is None or any(needed.marker.evaluate({"extra": e}) for e in extras):
                pending.append(needed)
    return site


def _refused(site: Path, providers: list[Path], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_command(["mcp", *args]),
        input="",
        capture_output=True,
        text=True,
        env=cli_env(site, providers, None),
        timeout=TIMEOUT,
        check=False,
    )


class TestRefusedWithoutItsProvider:
    """``dsh-ask mcp`` never serves questions nobody can answer."""

    def test_no_provider_installed_refuses_to_start_saying_what_to_install(
        self, site: Path
    ) -> None:
        """With no provider, the command exits 1 at once with the install hint on stderr."""
        done = _refused(site, [])
        assert done.returncode == 1
        assert done.stderr.startswith("Error: no user-questions provider is registered; install")
        assert "pip install" in done.stderr
        assert done.stdout == ""

    @pytest.mark.parametrize("with_another", [False, True])
    def test_the_provider_asked_for_is_the_one_to_install(
        self, site: Path, provider_dir: Path, with_another: bool
    ) -> None:
        """--provider web without the web provider names the web provider, never the terminal."""
        done = _refused(site, [provider_dir] if with_another else [], "--provider", "web")
        assert done.returncode == 1
        assert done.stderr.startswith(
            "Error: no user-questions provider named 'web' is installed; install one, e.g."
        )
        said = done.stderr.rstrip("\n")
        assert said.endswith(
            ("pip install dsh-user-questions-web", os.path.join("providers", "web"))
        )
        assert "terminal" not in said

    def test_an_unknown_provider_points_at_the_list(self, site: Path) -> None:
        """A provider name nobody ships is refused, pointing at dsh-ask --list-providers."""
        done = _refused(site, [], "--provider", "nosuch")
        assert done.returncode == 1
        assert done.stderr == (
            "Error: no user-questions provider named 'nosuch' is installed;"
            " see the installed ones with dsh-ask --list-providers\n"
        )
