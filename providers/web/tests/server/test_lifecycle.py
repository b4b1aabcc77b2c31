"""The server's life: loops that end, child processes, stop during start, restarts, imports."""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from conftest import WAIT_SECONDS, OpenPage, card, request, start_ask
from playwright.async_api import expect

from dsh_user_questions_web import Limits, WebProvider

CHILD = Path(__file__).resolve().parents[1] / "harness_child.py"


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def accepts(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:port."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        return False
    return True


def test_the_socket_closes_when_its_loop_ends_without_stop() -> None:
    """A provider left serving when asyncio.run returns frees its port; a second run reuses it."""
    port = free_port()
    provider = WebProvider(port=port, announce=False)

    async def serve_and_leave() -> str:
        return await provider.start()

    first = asyncio.run(serve_and_leave())
    assert f":{port}/" in first
    assert not accepts(port)
    assert not provider.running

    async def serve_again() -> bool:
        url = await provider.start()
        assert url == first  # same port and token: open tabs find it again
        await provider.stop()
        return True

    assert asyncio.run(serve_again())
    assert not accepts(port)


def test_stop_in_a_later_loop_after_the_first_ended() -> None:
    """stop() from a new loop, after the serving loop ended without it, just returns."""
    provider = WebProvider(announce=False)
    asyncio.run(provider.start())
    asyncio.run(provider.stop("later"))
    assert not provider.running
    assert provider.url is None


def test_a_pending_ask_fails_when_its_loop_ends() -> None:
    """An ask still pending when its loop ends fails with ASK_ABORTED, not silence."""
    provider = WebProvider(announce=False)
    seen: list[BaseException] = []

    async def ask_and_leave() -> None:
        asked = provider.ask(request())
        asked.add_done_callback(lambda future: seen.append(future.exception()))  # type: ignore[arg-type]
        await provider.start()

    asyncio.run(ask_and_leave())
    assert [getattr(error, "code", None) for error in seen] == ["ASK_ABORTED"]


async def test_a_child_process_does_not_keep_the_port() -> None:
    """A child started while serving does not inherit the listening socket."""
    port = free_port()
    provider = WebProvider(port=port, announce=False)
    await provider.start()
    child = subprocess.Popen(  # noqa: ASYNC220 - started and killed at once
        [sys.executable, "-c", "import time; time.sleep(60)"], close_fds=False
    )
    try:
        await provider.stop()
        assert not await asyncio.to_thread(accepts, port)
    finally:
        child.kill()
        child.wait()


async def test_stop_during_start_leaves_nothing_serving() -> None:
    """stop() while start() is binding wins: start() raises, no server is left behind."""
    port = free_port()
    provider = WebProvider(port=port, announce=False)
    starting = asyncio.ensure_future(provider.start())
    await asyncio.sleep(0)
    await provider.stop()
    with pytest.raises(RuntimeError, match="stopped while starting"):
        await starting
    assert not provider.running
    assert not await asyncio.to_thread(accepts, port)


async def test_the_url_is_printed_each_time_the_server_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A restarted server prints its URL again (the same one with a fixed port and token)."""
    provider = WebProvider(port=free_port(), token=secrets.token_urlsafe(16))
    url = await provider.start()
    await provider.stop()
    assert await provider.start() == url
    await provider.stop()
    assert capsys.readouterr().err.count(url) == 2


def test_the_token_must_be_long_and_url_safe() -> None:
    """A short or odd token is refused before anything is served."""
    with pytest.raises(ValueError, match="16 to 128"):
        WebProvider(token="short")
    with pytest.raises(ValueError, match="16 to 128"):
        WebProvider(token="x" * 20 + "/..")


def test_importing_the_plugin_loads_no_server() -> None:
    """Loading the entry point's module leaves uvicorn, Starlette and markdown-it unloaded."""
    code = (
        "import sys, dsh_user_questions_web.plugin;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('uvicorn', 'starlette', 'markdown_it', 'h11', 'anyio')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---- a harness that dies and comes back, seen from the browser ----


class Harness:
    """A harness process asking one question on a fixed port and token."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, port: int, token: str, question: str) -> Harness:
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(CHILD), str(port), token, question, stdout=subprocess.PIPE
        )
        harness = cls(process)
        assert await harness.line() == "ready"
        return harness

    async def line(self) -> str:
        assert self.process.stdout is not None
        raw = await asyncio.wait_for(self.process.stdout.readline(), WAIT_SECONDS * 2)
        return raw.decode().strip()

    async def kill(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
        await self.process.wait()


@pytest.fixture
async def harnesses() -> AsyncIterator[list[Harness]]:
    """Harness processes started by a test, killed after it."""
    started: list[Harness] = []
    yield started
    for harness in started:
        await harness.kill()


@pytest.mark.browser
async def test_a_dead_harness_goes_stale_and_a_restarted_one_is_found(
    open_page: OpenPage, harnesses: list[Harness]
) -> None:
    """Killing the harness marks the card stale and says so; restarting it on the same port and
    token brings its question to the open tab, which answers it."""
    port, token = free_port(), secrets.token_urlsafe(16)
    harnesses.append(await Harness.start(port, token, "First life?"))
    page = await open_page(f"http://127.0.0.1:{port}/{token}/", width=390, height=844)
    await expect(page.get_by_role("heading", name="First life?")).to_be_visible()
    await harnesses[0].kill()
    await expect(page.locator("#offline")).to_contain_text("unreachable", timeout=30_000)
    await expect(page.locator("#connection")).to_have_attribute("data-state", "unreachable")
    await expect(page.locator("article.card")).to_have_attribute("data-stale", "")
    await expect(page.get_by_role("radio", name="npm", exact=True)).to_be_disabled()
    await expect(page.get_by_role("button", name="Submit", exact=True)).to_be_disabled()
    harnesses.append(await Harness.start(port, token, "Second life?"))
    await expect(page.get_by_role("heading", name="Second life?")).to_be_visible(timeout=30_000)
    await expect(page.locator("#offline")).to_be_hidden()
    await expect(page.get_by_role("heading", name="First life?")).to_have_count(0)
    await page.get_by_role("radio", name="npm", exact=True).check()
    await page.get_by_role("button", name="Submit", exact=True).click()
    assert json.loads(await harnesses[1].line()) == {
        "answers": [{"id": "pkg", "selected": ["npm"]}],
        "answered_by": "token",  # the page knows no people: whoever held its token
    }


@pytest.mark.browser
async def test_a_failed_post_says_nothing_was_sent(web: WebProvider, open_page: OpenPage) -> None:
    """A Submit that cannot reach the harness says so plainly, and the card keeps the answer."""
    assert web.url is not None
    page = await open_page(web.url)
    asking = await start_ask(web, request())
    await page.get_by_role("radio", name="npm", exact=True).check()
    await page.route("**/answer", lambda route: route.abort())
    await page.get_by_role("button", name="Submit", exact=True).click()
    await expect(card(page, asking.id).get_by_role("alert")).to_contain_text("nothing was sent")
    await expect(page.get_by_role("radio", name="npm", exact=True)).to_be_checked()
    assert not asking.task.done()


async def test_an_ask_fails_when_the_port_is_taken() -> None:
    """A fixed port someone else holds fails the waiting ask, saying why (no hang)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        provider = WebProvider(port=taken.getsockname()[1], announce=False)
        with pytest.raises(RuntimeError, match="could not start its server") as caught:
            await asyncio.wait_for(provider.ask(request()), WAIT_SECONDS)
        assert isinstance(caught.value.__cause__, OSError)
        assert provider.pending_count == 0
        assert not provider.running


@pytest.mark.browser
async def test_a_tab_refused_a_stream_says_busy_not_unreachable(open_page: OpenPage) -> None:
    """When the stream cap refuses a tab, the tab finds the harness answering and says it is
    busy: it neither claims the harness is gone nor disables anything."""
    provider = WebProvider(announce=False, limits=Limits(max_streams=1, max_connections=8))
    url = await provider.start()
    try:
        first = await open_page(url)
        await expect(first.locator("#connection")).to_have_attribute("data-state", "open")
        second = await open_page(url)
        await expect(second.locator("#connection")).to_contain_text("busy", timeout=30_000)
        await expect(second.locator("#offline")).to_be_hidden()
        await first.close()
        await expect(second.locator("#connection")).to_have_attribute(
            "data-state", "open", timeout=30_000
        )
    finally:
        await provider.stop()
