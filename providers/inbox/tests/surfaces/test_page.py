"""``dsh-inbox serve`` in a real browser: one page for the questions of several harnesses."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest
from _processes import Harness, Server, pending
from _requests import pick
from playwright.async_api import Browser, async_playwright, expect

from dsh_user_questions_inbox import Inbox

CHROMIUM = os.environ.get("DSH_WEB_TEST_CHROMIUM", "/usr/bin/chromium")
HAVE_CHROMIUM = os.path.exists(CHROMIUM)


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """Headless Debian Chromium (skipped without it, except under CI=true)."""
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


async def test_one_page_answers_two_harnesses(
    inbox: Inbox, inbox_url: str, harnesses: list[Harness], browser: Browser
) -> None:
    """Two harness processes ask; the inbox page shows their questions one after the other, each
    labelled with its harness; clicking npm and Submit answers the first harness, and the next
    question, answered from a shell meanwhile, leaves the page."""
    server = Server(inbox_url)
    try:
        harnesses += [Harness(inbox_url, label, "ask", "1") for label in ("laptop", "ci-box")]
        pending(inbox, "laptop", 1)
        pending(inbox, "ci-box", 1)
        # The page shows the oldest first (both were asked before it opened).
        first, second = inbox.records(state="pending")
        by_label = dict(zip(("laptop", "ci-box"), harnesses, strict=True))
        context = await browser.new_context(viewport={"width": 1100, "height": 760})
        page = await context.new_page()
        errors: list[object] = []
        page.on("pageerror", lambda error: errors.append(error))
        await page.goto(server.base)
        first_card = page.locator(f'article[data-ask-id="{first.id}"]')
        second_card = page.locator(f'article[data-ask-id="{second.id}"]')
        await expect(first_card).to_contain_text(f"From harness {first.harness}")
        await expect(first_card).not_to_contain_text("From agent")
        await first_card.get_by_role("radio", name="npm", exact=True).check()
        await first_card.get_by_role("button", name="Submit", exact=True).click()
        assert by_label[first.harness].next("answer")["answer"] == pick("npm", by="token")
        await expect(first_card).to_have_count(0)
        await expect(second_card).to_contain_text(f"From harness {second.harness}")
        assert inbox.answer(second.id, pick("pnpm"), surface="cli").applied
        await expect(second_card).to_have_count(0)
        assert by_label[second.harness].next("answer")["answer"] == pick("pnpm")
        assert inbox.get(first.id).surface == "web"
        assert errors == []
        await context.close()
        for harness in harnesses:
            harness.finish()
    finally:
        server.stop_and_read()
