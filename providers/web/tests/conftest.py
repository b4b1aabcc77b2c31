"""Fixtures: a started `WebProvider` per test, an HTTP client for it, and request builders."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, Literal

import httpx
import pytest
from axe_playwright_python.async_playwright import Axe
from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
)
from dsh_user_questions.testing import make_question, make_request
from playwright.async_api import Browser, Locator, Page, async_playwright, expect

from dsh_user_questions_web import WebProvider

WAIT_SECONDS = 10.0
CHROMIUM = os.environ.get("DSH_WEB_TEST_CHROMIUM", "/usr/bin/chromium")
HAVE_CHROMIUM = os.path.exists(CHROMIUM)


def item(
    question_id: str = "pkg",
    question: str = "Which package manager?",
    options: Iterable[str] = ("pnpm", "npm", "yarn"),
    **fields: Any,
) -> AskUserQuestionItem:
    """A question with plain options and no header (the core's `make_question`, changed)."""
    changes: dict[str, Any] = {
        "id": question_id,
        "question": question,
        "header": None,
        "options": tuple(AskUserQuestionOption(label) for label in options),
    }
    return make_question(**{**changes, **fields})


def request(*items: AskUserQuestionItem, **fields: Any) -> AskUserQuestionRequest:
    """A request of the given questions (one default `item` when none)."""
    return make_request(*(items or (item(),)), **fields)


async def wait_until(predicate: Callable[[], bool], what: str) -> None:
    """Yield to the loop until ``predicate()`` holds (fails after WAIT_SECONDS)."""
    deadline = asyncio.get_running_loop().time() + WAIT_SECONDS
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


class Asking:
    """An ``ask()`` running as a task, and the id its question got on the board."""

    def __init__(self, task: asyncio.Task[AskUserQuestionAnswer], ask_id: str) -> None:
        self.task = task
        self.id = ask_id

    async def result(self) -> AskUserQuestionAnswer:
        """The answer ``ask()`` returned (or its exception)."""
        return await asyncio.wait_for(self.task, WAIT_SECONDS)


async def start_ask(provider: WebProvider, req: AskUserQuestionRequest) -> Asking:
    """Start ``provider.ask(req)`` and wait until the question is on the board."""
    before = provider.pending_count
    task = asyncio.ensure_future(provider.ask(req))
    STARTED_ASKS.append(task)
    await wait_until(
        lambda: (provider.pending_count > before and provider.url is not None) or task.done(),
        "the question to be pending on a serving page",
    )
    if task.done():
        task.result()
    async with httpx.AsyncClient(base_url=provider.url or "", timeout=WAIT_SECONDS) as client:
        pending = (await client.get("state")).json()["pending"]
    return Asking(task, pending[-1]["id"])


# Every ask a test started; the `web` fixture reads their outcomes after stopping the provider,
# so a question a test left pending does not log "exception was never retrieved".
STARTED_ASKS: list[asyncio.Task[AskUserQuestionAnswer]] = []


class EventStream:
    """A page's server-sent-event stream, read event by event."""

    def __init__(self, response: httpx.Response) -> None:
        self._lines = response.aiter_lines()

    async def next(self) -> tuple[str, dict[str, Any]]:
        """The next event's name and data."""
        return await asyncio.wait_for(self._next(), WAIT_SECONDS)

    async def _next(self) -> tuple[str, dict[str, Any]]:
        event, data = "message", ""
        async for line in self._lines:
            if line == "":
                if data:
                    return event, json.loads(data)
                event = "message"
            elif line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data += line[5:].strip()
        raise AssertionError("the event stream ended")


@pytest.fixture
async def web() -> AsyncIterator[WebProvider]:
    """A started provider on 127.0.0.1 and a free port, stopped after the test."""
    provider = WebProvider(announce=False)
    await provider.start()
    yield provider
    await provider.stop()
    for task in STARTED_ASKS:
        if task.done() and not task.cancelled():
            task.exception()
    STARTED_ASKS.clear()


@pytest.fixture
async def client(web: WebProvider) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client whose base URL is the provider's tokenised page URL."""
    async with httpx.AsyncClient(base_url=web.url or "", timeout=WAIT_SECONDS) as http:
        yield http


def answer_of(*items: dict[str, Any]) -> dict[str, Any]:
    """An answer in wire form."""
    return {"answers": list(items)}


def payload(data: dict[str, Any]) -> AskUserQuestionAnswer:
    """The payload of an answer in wire form."""
    return AskUserQuestionAnswer.from_dict(data)


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    """One headless Chromium for the whole session (skipped without it, unless in CI)."""
    if not HAVE_CHROMIUM:
        message = f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield launched
        await launched.close()


OpenPage = Callable[..., Awaitable[Page]]


@pytest.fixture
async def open_page(browser: Browser) -> AsyncIterator[OpenPage]:
    """Open a URL in a fresh browser context of the given size and colour scheme.

    Page errors and dialogs fail the test at teardown.
    """
    contexts: list[Any] = []
    errors: list[object] = []

    async def open_(
        url: str,
        *,
        width: int = 1100,
        height: int = 760,
        color_scheme: Literal["light", "dark"] = "light",
    ) -> Page:
        context = await browser.new_context(
            viewport={"width": width, "height": height}, color_scheme=color_scheme
        )
        contexts.append(context)
        opened = await context.new_page()
        opened.on("pageerror", lambda error: errors.append(error))
        opened.on("dialog", lambda dialog: errors.append(f"dialog: {dialog.message}"))
        await opened.goto(url)
        return opened

    yield open_
    for context in contexts:
        await context.close()
    assert errors == []


@pytest.fixture
async def page(open_page: OpenPage, web: WebProvider) -> Page:
    """A desktop-sized page of the provider in its waiting state."""
    assert web.url is not None
    opened = await open_page(web.url)
    await expect(opened.locator("body")).to_have_attribute("data-state", "waiting")
    return opened


def card(page: Page, ask_id: str) -> Locator:
    """The card of one ask."""
    return page.locator(f'article[data-ask-id="{ask_id}"]')


async def no_sideways_scroll(page: Page, state: str) -> None:
    """The document is never wider than the window."""
    widths = await page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1], f"{state}: the page scrolls sideways ({widths})"


async def no_axe_violations(page: Page, state: str) -> None:
    """axe-core (bundled by the axe-playwright-python package) finds nothing in this state."""
    results = await Axe().run(page)
    violations = [
        (v["id"], [node["target"] for node in v["nodes"]][:3])
        for v in results.response["violations"]
    ]
    assert violations == [], f"{state}: {violations}"
