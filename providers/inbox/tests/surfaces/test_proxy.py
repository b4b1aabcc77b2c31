"""Behind a real TLS reverse proxy (Debian's nginx running the block docs/reverse-proxy.md
documents, a throwaway self-signed certificate), in Chromium at 390 px: the web provider and
``dsh-inbox serve`` each under a path prefix, asked, streamed, answered on the page and through
the one-question link.

nginx passes ``Host: localhost`` (``$host``, no port) and the browser sends ``Origin:
https://localhost:<port>``; the inbox's prefix reaches it (``proxy_pass`` without a URI), the
web provider's is stripped by nginx (``proxy_pass`` with ``/``). One nginx and one browser
serve the whole module.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import cast

import attrs
import pytest
import pytest_asyncio
from _nginx import (
    answer_on_the_page,
    chromium,
    free_port,
    need_nginx_and_openssl,
    nginx_block,
    on_this_machine,
    pkg_request,
    running_nginx,
    throwaway_certificate,
)
from _processes import DSH_INBOX
from _requests import pick
from dsh_user_questions import (
    AskUserQuestionAnswer,
)
from dsh_user_questions._notify import Notification, Notifier
from playwright.async_api import Browser, BrowserContext, expect

from dsh_user_questions_inbox import Inbox, open_inbox
from dsh_user_questions_inbox._link_page import link_for
from dsh_user_questions_inbox._notices import Notices
from dsh_user_questions_inbox._record import State

pytestmark = pytest.mark.asyncio(loop_scope="module")

PHONE = {"width": 390, "height": 844}
TOKEN = "proxy-test-token-0123456789"

# The server block docs/reverse-proxy.md documents, run as written but for its ports and
# certificate: /inbox/ (prefix passed on) to dsh-inbox serve, /agent/ (prefix stripped) to a
# web provider.
DOC = Path(__file__).resolve().parents[4] / "docs" / "reverse-proxy.md"


def documented_server(where: Path, port: int, inbox: int, web: int) -> str:
    """The documented block on this machine's ports and throwaway certificate."""
    return on_this_machine(
        nginx_block(DOC),
        [
            ("listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;"),
            ("/etc/ssl/certs/questions.example.com.pem", str(where / "cert.pem")),
            ("/etc/ssl/private/questions.example.com.key", str(where / "key.pem")),
            ("127.0.0.1:8765", f"127.0.0.1:{inbox}"),
            ("127.0.0.1:8766", f"127.0.0.1:{web}"),
        ],
    )


@attrs.frozen
class Proxy:
    """nginx on 127.0.0.1 with TLS: ``origin`` is ``https://localhost:<port>``."""

    origin: str
    web_port: int
    inbox_port: int


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    """nginx in front of a web provider's port (``/agent/``) and an inbox server's
    (``/inbox/``)."""
    need_nginx_and_openssl()
    where = tmp_path_factory.mktemp("nginx")
    throwaway_certificate(where)
    port, web, inbox = free_port(), free_port(), free_port()
    with running_nginx(where, documented_server(where, port, inbox, web), port):
        yield Proxy(f"https://localhost:{port}", web, inbox)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Browser]:
    """One headless Debian Chromium for the module."""
    async with chromium() as launched:
        yield launched


@pytest_asyncio.fixture(loop_scope="module")
async def phone(browser: Browser) -> AsyncIterator[BrowserContext]:
    """A 390 px wide context that accepts the throwaway certificate; no page error allowed."""
    context = await browser.new_context(viewport=PHONE, ignore_https_errors=True)
    errors: list[object] = []
    context.on("weberror", lambda error: errors.append(error.error))
    yield context
    await context.close()
    assert errors == []


async def answer_through_the_link(context: BrowserContext, link: str, label: str) -> None:
    page = await context.new_page()
    await page.goto(link)
    await page.get_by_role("radio", name=label, exact=True).check()
    await page.get_by_role("button", name="Send answer").click()
    await expect(page.get_by_text("Your answer was recorded.")).to_be_visible()
    await page.close()


class CollectingNotifier:
    """A notifier that keeps what it would send (no network, no Apprise)."""

    def __init__(self) -> None:
        self.sent: list[Notification] = []
        self.arrived = asyncio.Event()

    async def send(self, note: Notification) -> bool:
        self.sent.append(note)
        self.arrived.set()
        return True


class TestTheWebProviderBehindNginx:
    async def test_ask_stream_answer_and_link_through_https_and_a_prefix(
        self, proxy: Proxy, phone: BrowserContext
    ) -> None:
        """Opened as https://localhost:<port>/agent/<token> (nginx strips the prefix; the
        redirect to <token>/ keeps it), the
        page streams a new question, its answer posts through the proxy (https Origin, Host
        without a port), and the notification's link answers the next one."""
        from dsh_user_questions_web import WebProvider

        notifier = CollectingNotifier()
        provider = WebProvider(
            port=proxy.web_port,
            public_url=f"{proxy.origin}/agent",
            announce=False,
            notifier=cast(Notifier, notifier),
        )
        await provider.start()
        try:
            page = await phone.new_page()
            await page.goto(f"{proxy.origin}/agent/{provider.token}")
            assert page.url == f"{proxy.origin}/agent/{provider.token}/"
            await expect(page.locator("body")).to_have_attribute("data-state", "waiting")
            asking = asyncio.ensure_future(provider.ask(pkg_request()))
            card = page.locator("article[data-ask-id]")
            await expect(card).to_contain_text("Which package manager?")
            ask_id = await card.get_attribute("data-ask-id")
            assert ask_id is not None
            await answer_on_the_page(page, ask_id, "npm")
            assert await asyncio.wait_for(asking, 10) == AskUserQuestionAnswer.from_dict(
                pick("npm", by="token")
            )
            notifier.arrived.clear()
            linked = asyncio.ensure_future(provider.ask(pkg_request()))
            await asyncio.wait_for(notifier.arrived.wait(), 10)
            link = notifier.sent[-1].link
            assert link is not None
            assert link.startswith(f"{proxy.origin}/agent/q/")
            await answer_through_the_link(phone, link, "pnpm")
            assert await asyncio.wait_for(linked, 10) == AskUserQuestionAnswer.from_dict(
                pick("pnpm", by="token")
            )
            await expect(page.locator("#notice")).to_contain_text("through its link")
        finally:
            await provider.stop()


@pytest.fixture(scope="module")
def served(proxy: Proxy, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Inbox]:
    """``dsh-inbox serve --public-url https://localhost:<port>/inbox`` behind the proxy."""
    url = f"sqlite:///{tmp_path_factory.mktemp('inbox') / 'inbox.db'}"
    process = subprocess.Popen(
        [DSH_INBOX, "--inbox", url, "serve", "--port", str(proxy.inbox_port),
         "--token", TOKEN, "--public-url", f"{proxy.origin}/inbox/"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    store = open_inbox(url)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("dsh-inbox: serving"), line + process.communicate()[1]
        yield store
    finally:
        store.close()
        process.terminate()
        process.communicate(timeout=60)


class TestTheInboxServerBehindNginx:
    async def test_ask_stream_answer_and_link_through_https_and_a_prefix(
        self, proxy: Proxy, served: Inbox, phone: BrowserContext
    ) -> None:
        """The inbox page under /inbox/ (nginx passes the prefix on) streams a question added to
        the store, answers it through the proxy, and the link built from the published public
        URL answers the next one."""
        page = await phone.new_page()
        await page.goto(f"{proxy.origin}/inbox/{TOKEN}")
        await expect(page.locator("body")).to_have_attribute("data-state", "waiting")
        first = served.add(pkg_request(), harness="laptop")
        await expect(page.locator(f'article[data-ask-id="{first.id}"]')).to_be_visible()
        await answer_on_the_page(page, first.id, "npm")
        assert served.get(first.id).answer == pick("npm", by="token")  # type: ignore[union-attr]
        settings = Notices(served).link_settings()
        assert settings is not None
        assert settings[0] == f"{proxy.origin}/inbox"
        second = served.add(pkg_request(), harness="laptop")
        await expect(page.locator(f'article[data-ask-id="{second.id}"]')).to_be_visible()
        link = link_for(settings[0], settings[1], second)
        assert re.match(rf"{re.escape(proxy.origin)}/inbox/q/\S+$", link)
        await answer_through_the_link(phone, link, "pnpm")
        record = served.get(second.id)
        assert record is not None
        assert record.state is State.ANSWERED
        assert record.answer == pick("pnpm", by="token")
        await expect(page.locator("#notice")).to_contain_text("through its link")
