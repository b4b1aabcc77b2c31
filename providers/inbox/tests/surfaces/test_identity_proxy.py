"""Who a person on the page is, behind a real proxy that logs people in: Debian's nginx running
the block docs/team.md documents (TLS with a throwaway certificate, basic auth from a password
file made here, ``X-Forwarded-User`` set from ``$remote_user``) in front of ``dsh-inbox serve
--identity-header X-Forwarded-User --trusted-proxy 127.0.0.3/32``, driven by Chromium as two
people, on SQLite and PostgreSQL.

Every process of a test runs on this machine, so every connection would come from 127.0.0.1:
as the documented block does, the server listens on its own loopback address (127.0.0.2) and
nginx connects to it from its own source address (``proxy_bind 127.0.0.3``), the only one the
server trusts. Chromium and httpx reaching the server's port directly connect from 127.0.0.1,
an untrusted peer, and their forged header is ignored, logged and refused.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import attrs
import httpx
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
from dsh_user_questions import AskUserQuestionRequest
from dsh_user_questions.plan_review import plan_review_question
from playwright.async_api import Browser, BrowserContext, expect

from dsh_user_questions_inbox import Inbox, open_inbox
from dsh_user_questions_inbox._link_page import link_for
from dsh_user_questions_inbox._notices import Notices
from dsh_user_questions_inbox._record import State

pytestmark = pytest.mark.asyncio(loop_scope="module")

TOKEN = "identity-proxy-token-0123456789"
DOC = Path(__file__).resolve().parents[4] / "docs" / "team.md"
SERVER_HOST = "127.0.0.2"  # the server's own loopback address, as documented
PEOPLE = {"ana": "ana-secret-1", "bo": "bo-secret-2"}


def documented_block() -> str:
    """The nginx block of docs/team.md's "Who a person on the page is"."""
    return nginx_block(DOC, "Who a person on the page is")


def documented_server(where: Path, port: int, app: int) -> str:
    """The documented block on this machine's ports, certificate and password file."""
    return on_this_machine(
        documented_block(),
        [
            ("listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;"),
            ("/etc/ssl/certs/questions.example.com.pem", str(where / "cert.pem")),
            ("/etc/ssl/private/questions.example.com.key", str(where / "key.pem")),
            ("/etc/nginx/questions.htpasswd", str(where / "htpasswd")),
            (f"{SERVER_HOST}:8765", f"{SERVER_HOST}:{app}"),
        ],
    )


def documented_serve_options() -> list[str]:
    """The identity options the documented block's comment gives ``dsh-inbox serve``."""
    block = documented_block()
    header = re.search(r"--identity-header (\S+)", block)
    proxy = re.search(r"--trusted-proxy (\S+)", block)
    assert header is not None
    assert proxy is not None
    return ["--identity-header", header.group(1), "--trusted-proxy", proxy.group(1)]


@attrs.frozen
class Proxy:
    origin: str  # https://localhost:<port>
    app_port: int  # where dsh-inbox serve listens, on SERVER_HOST


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    """nginx with TLS and basic auth (ana, bo) in front of SERVER_HOST:<app_port>."""
    need_nginx_and_openssl()
    where = tmp_path_factory.mktemp("nginx-identity")
    throwaway_certificate(where)
    lines = []
    for person, password in PEOPLE.items():
        hashed = subprocess.run(
            ["openssl", "passwd", "-apr1", "-stdin"],
            input=password, check=True, capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip
        lines.append(f"{person}:{hashed}\n")
    (where / "htpasswd").write_text("".join(lines))
    port, app = free_port(), free_port(SERVER_HOST)
    with running_nginx(where, documented_server(where, port, app), port):
        yield Proxy(f"https://localhost:{port}", app)


@attrs.frozen
class Served:
    store: Inbox
    url: str
    log: Path  # the server's stderr


@pytest.fixture
def served(proxy: Proxy, inbox_url: str) -> Iterator[Served]:
    """``dsh-inbox serve`` on SERVER_HOST with the documented identity options."""
    with tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False) as err:
        log = Path(err.name)
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [DSH_INBOX, "--inbox", inbox_url, "serve", "--host", SERVER_HOST,
             "--port", str(proxy.app_port), "--token", TOKEN,
             "--public-url", f"{proxy.origin}/inbox", *documented_serve_options()],
            stdout=subprocess.PIPE, stderr=stderr, text=True,
        )  # fmt: skip
    store = open_inbox(inbox_url)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("dsh-inbox: serving"), line + log.read_text()
        yield Served(store, inbox_url, log)
    finally:
        store.close()
        process.terminate()
        process.communicate(timeout=60)
        log.unlink()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Browser]:
    async with chromium() as launched:
        yield launched


async def person(browser: Browser, name: str | None) -> BrowserContext:
    """A browser context logged in to nginx as ``name`` (``None``: not logged in)."""
    credentials = None if name is None else {"username": name, "password": PEOPLE[name]}
    return await browser.new_context(ignore_https_errors=True, http_credentials=credentials)


def log_lines(served: Served, question_id: str) -> str:
    """What ``dsh-inbox log ID`` prints."""
    shown = subprocess.run(
        [DSH_INBOX, "--inbox", served.url, "log", question_id],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return shown.stdout


async def test_two_people_answer_through_the_proxy_and_are_recorded(
    proxy: Proxy, served: Served, browser: Browser
) -> None:
    """ana and bo, logged in by nginx, each answer a question on the page; the records'
    ``answered_by`` and the log name them, with the proxy's address."""
    first = served.store.add(pkg_request(), harness="laptop")
    second = served.store.add(pkg_request(), harness="laptop")
    for name, record, label in (("ana", first, "npm"), ("bo", second, "pnpm")):
        context = await person(browser, name)
        try:
            page = await context.new_page()
            await page.goto(f"{proxy.origin}/inbox/{TOKEN}/")
            await expect(page.locator(f'article[data-ask-id="{record.id}"]')).to_be_visible()
            await answer_on_the_page(page, record.id, label)
        finally:
            await context.close()
        stored = served.store.get(record.id)
        assert stored is not None
        assert stored.state is State.ANSWERED
        assert stored.answered_by == name
        assert stored.answer == pick(label, by=name)
        answered = [event for event in served.store.events(record.id) if event.event == "answered"]
        assert [event.by for event in answered] == [name]
        assert f"answered by {name} on web" in log_lines(served, record.id)


async def test_the_link_needs_the_proxys_word_and_records_the_person(
    proxy: Proxy, served: Served, browser: Browser
) -> None:
    """A one-question link opened through the proxy by bo answers as bo."""
    record = served.store.add(pkg_request(), harness="laptop")
    settings = Notices(served.store).link_settings()
    assert settings is not None
    link = link_for(settings[0], settings[1], record)
    context = await person(browser, "bo")
    try:
        page = await context.new_page()
        await page.goto(link)
        await page.get_by_role("radio", name="pnpm", exact=True).check()
        await page.get_by_role("button", name="Send answer").click()
        await expect(page.get_by_text("Your answer was recorded.")).to_be_visible()
    finally:
        await context.close()
    stored = served.store.get(record.id)
    assert stored is not None
    assert stored.answered_by == "bo"


async def test_nobody_logged_in_gets_nginx_401(proxy: Proxy, served: Served) -> None:
    async with httpx.AsyncClient(verify=False, timeout=10) as http:
        shown = await http.get(f"{proxy.origin}/inbox/{TOKEN}/")
    assert shown.status_code == 401


async def test_a_forged_header_straight_to_the_port_is_refused_and_logged(
    proxy: Proxy, served: Served, browser: Browser
) -> None:
    """From 127.0.0.1 (not nginx's 127.0.0.3), the page refuses Chromium and a post that
    writes ``X-Forwarded-User: ana`` (403), records nothing, and logs the ignored header."""
    record = served.store.add(pkg_request(), harness="laptop")
    direct = f"http://{SERVER_HOST}:{proxy.app_port}/{TOKEN}/"
    context = await browser.new_context(extra_http_headers={"X-Forwarded-User": "ana"})
    try:
        page = await context.new_page()
        shown = await page.goto(direct)
        assert shown is not None
        assert shown.status == 403
        await expect(page.locator("body")).to_contain_text("only through its logging-in proxy")
    finally:
        await context.close()
    async with httpx.AsyncClient(timeout=10) as http:
        posted = await http.post(
            f"{direct}answer",
            json={"id": record.id, "answer": pick("npm")},
            headers={"X-Forwarded-User": "ana", "Origin": f"http://{SERVER_HOST}:{proxy.app_port}"},
        )
    assert posted.status_code == 403
    stored = served.store.get(record.id)
    assert stored is not None
    assert stored.state is State.PENDING
    assert stored.answer is None
    assert [event.event for event in served.store.events(record.id)] == ["asked"]
    logged = served.log.read_text()
    assert "ignored the identity header x-forwarded-user from 127.0.0.1" in logged
    assert ": ana" in logged


def two_approvals() -> AskUserQuestionRequest:
    """A plan review that ana and bo must both approve."""
    question = plan_review_question("# Deploy\n\nShip it to production.")
    assert question.intent is not None
    review = attrs.evolve(question, intent=attrs.evolve(question.intent, approvals=2))
    return AskUserQuestionRequest(questions=[review], audience=("ana", "bo"))


async def test_a_team_through_the_proxy_audience_approvals_history(
    proxy: Proxy, served: Served, browser: Browser
) -> None:
    """bo's page never shows the question for ana alone; ana's approval of a two-approval
    review is "approved by ana (1 of 2)", bo's settles it; the log names both, each page's
    opening, and the proxy's address; a card's history shows its events as text."""
    review = served.store.add(two_approvals(), harness="laptop")
    for_ana = served.store.add(attrs.evolve(pkg_request(), audience=("ana",)), harness="laptop")
    ana, bo = await person(browser, "ana"), await person(browser, "bo")
    try:
        bo_page = await bo.new_page()
        await bo_page.goto(f"{proxy.origin}/inbox/{TOKEN}/")
        await expect(bo_page.locator(f'article[data-ask-id="{review.id}"]')).to_be_visible()
        await expect(bo_page.locator(f'[data-ask-id="{for_ana.id}"]')).to_have_count(0)
        ana_page = await ana.new_page()
        await ana_page.goto(f"{proxy.origin}/inbox/{TOKEN}/")
        card = ana_page.locator(f'article[data-ask-id="{review.id}"]')
        await expect(card).to_be_visible()
        await card.get_by_role("button", name="Approve", exact=True).click()
        await expect(ana_page.locator("#notice")).to_have_text("approved by ana (1 of 2)")
        pending = served.store.get(review.id)
        assert pending is not None
        assert pending.state is State.PENDING
        bo_card = bo_page.locator(f'article[data-ask-id="{review.id}"]')
        await bo_card.get_by_role("button", name="Approve", exact=True).click()
        await expect(bo_card).to_have_count(0)
        # ana's own question: its history, as its card shows it.
        await ana_page.locator(f'#queue button[data-ask-id="{for_ana.id}"]').click()
        mine = ana_page.locator(f'article[data-ask-id="{for_ana.id}"]')
        await expect(mine).to_be_visible()
        await mine.locator("summary", has_text="History").click()
        await expect(mine.locator(".history-list")).to_contain_text("asked on harness")
        await expect(mine.locator(".history-list")).to_contain_text("opened by ana on web")
    finally:
        await ana.close()
        await bo.close()
    settled = served.store.get(review.id)
    assert settled is not None
    assert settled.state is State.ANSWERED
    assert settled.answered_by == "bo"
    steps = [(e.event, e.by, e.address) for e in served.store.events(review.id)]
    assert ("approved", "ana", "127.0.0.3") in steps
    assert ("answered", "bo", "127.0.0.3") in steps
    assert ("opened", "ana", "127.0.0.3") in steps
    assert ("opened", "bo", "127.0.0.3") in steps
    shown = log_lines(served, review.id)
    assert "approved by ana on web" in shown
    assert "answered by bo on web" in shown
