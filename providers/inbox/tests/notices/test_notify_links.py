"""Notifications from a harness and their one-question links, served by ``dsh-inbox serve``."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _processes import DSH_INBOX
from dsh_user_questions import AskUserQuestionItem, AskUserQuestionOption, AskUserQuestionRequest
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import json_receiver

from dsh_user_questions_inbox.provider import InboxProvider

CHROMIUM = os.environ.get("DSH_WEB_TEST_CHROMIUM", "/usr/bin/chromium")
HAVE_CHROMIUM = os.path.exists(CHROMIUM)


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """An Apprise json:// receiver on 127.0.0.1: its URL and the messages it got."""
    with json_receiver() as (port, got):
        yield f"json://127.0.0.1:{port}/", got


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """``dsh-inbox serve --public-url`` on a SQLite store: the store URL and the public URL."""
    url = f"sqlite:///{tmp_path / 'inbox.db'}"
    port = free_port()
    public = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [
            DSH_INBOX,
            "--inbox",
            url,
            "serve",
            "--port",
            str(port),
            "--token",
            "page-token",
            "--public-url",
            public,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    assert first.startswith("dsh-inbox: serving"), first + process.communicate(timeout=30)[1]
    assert "answer links" in process.stdout.readline()
    try:
        yield url, public
    finally:
        process.terminate()
        process.communicate(timeout=60)


def two_questions() -> tuple[AskUserQuestionRequest, AskUserQuestionRequest]:
    first = AskUserQuestionRequest(
        questions=[
            AskUserQuestionItem(
                id="pkg",
                header="Tooling",
                question="Which package manager?",
                options=(AskUserQuestionOption("pnpm"), AskUserQuestionOption("npm")),
            )
        ]
    )
    other = AskUserQuestionRequest(
        questions=[AskUserQuestionItem(id="other", question="The other harness question?")]
    )
    return first, other


async def wait_for(got: list[dict[str, Any]], count: int) -> None:
    for _ in range(600):
        if len(got) >= count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"expected {count} notifications, got {got}")


@pytest.fixture
async def asking(
    served: tuple[str, str],
    receiver: tuple[str, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[tuple[HarnessContext, str, list[dict[str, Any]]]]:
    url, public = served
    monkeypatch.setenv("DSH_USER_QUESTIONS_NOTIFY", receiver[0])
    async with HarnessContext() as ctx:
        from dsh_user_questions import plugin

        ctx.register(plugin)
        provider = InboxProvider(url, harness="build-bot")
        ctx.user_questions.register_provider(provider)
        try:
            yield ctx, public, receiver[1]
        finally:
            provider.close()


async def test_a_waiting_question_notifies_once_with_a_link_that_answers_it(
    asking: tuple[HarnessContext, str, list[dict[str, Any]]], caplog: pytest.LogCaptureFixture
) -> None:
    """One notification, whose link (no page token) opens that question and answers the ask."""
    caplog.set_level(logging.INFO, logger="dsh_user_questions_inbox.provider")
    ctx, public, got = asking
    first, other = two_questions()
    task = asyncio.ensure_future(ctx.user_questions.ask(first))
    side = asyncio.ensure_future(ctx.user_questions.ask(other))
    await wait_for(got, 2)
    [message] = [m for m in got if m["title"] == "A question is waiting: Tooling"]
    link = message["message"].rsplit("Answer: ", 1)[1]
    assert link.startswith(f"{public}/q/")
    async with httpx.AsyncClient() as client:
        page = await client.get(link)
        assert "Which package manager?" in page.text
        assert "The other harness question?" not in page.text
        assert (await client.get(f"{public}/q/{link.rsplit('/', 1)[1]}x")).status_code == 403
        done = await client.post(link, data={"q0": "1", "action": "answer"})
        assert "Your answer was recorded." in done.text
    answer = await asyncio.wait_for(task, 60)
    assert answer.to_dict() == {
        "answers": [{"id": "pkg", "selected": ["npm"]}],
        "answered_by": "token",  # a link knows no people: whoever held it
    }
    assert "dsh-inbox answer" in caplog.text
    side.cancel()
    with pytest.raises(asyncio.CancelledError):
        await side
    await asyncio.sleep(0.2)
    assert len(got) == 2


async def test_the_link_works_in_chromium(
    asking: tuple[HarnessContext, str, list[dict[str, Any]]],
) -> None:
    """Chromium at phone width opens the link, picks an option and sends it."""
    if not HAVE_CHROMIUM:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Chromium is not installed at {CHROMIUM}")
        pytest.skip("Chromium is not installed")
    from playwright.async_api import async_playwright

    ctx, _public, got = asking
    first, _other = two_questions()
    task = asyncio.ensure_future(ctx.user_questions.ask(first))
    await wait_for(got, 1)
    link = got[0]["message"].rsplit("Answer: ", 1)[1]
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = await browser.new_page(viewport={"width": 320, "height": 640})
            await page.goto(link)
            await page.get_by_label("pnpm").check()
            await page.get_by_role("button", name="Send answer").click()
            await page.get_by_text("Your answer was recorded.").wait_for()
            width = await page.evaluate("document.documentElement.scrollWidth")
            assert width <= 320
        finally:
            await browser.close()
    answer = await asyncio.wait_for(task, 60)
    assert answer.to_dict() == {
        "answers": [{"id": "pkg", "selected": ["pnpm"]}],
        "answered_by": "token",  # a link knows no people: whoever held it
    }
