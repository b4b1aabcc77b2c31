"""The one-question link page in Chromium at 320 px: what it refuses, what it asks, where the
answer went, and axe at 0 violations in every state."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import cast

import pytest
from conftest import OpenPage, no_axe_violations, no_sideways_scroll, request, wait_until
from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionOption,
)
from dsh_user_questions._notify import Notification, Notifier
from playwright.async_api import Page, expect

from dsh_user_questions_web import WebProvider

pytestmark = pytest.mark.browser

LONG_WORD = "Infrastructureprovisioningconfigurationmanagementreview" * 2


class CollectingNotifier:
    """A notifier that keeps what it would send (no network, no Apprise)."""

    def __init__(self) -> None:
        self.sent: list[Notification] = []

    async def send(self, note: Notification) -> bool:
        self.sent.append(note)
        return True


@pytest.fixture
async def linked() -> AsyncIterator[tuple[WebProvider, CollectingNotifier]]:
    """A started provider whose notifications (and links) the test reads."""
    notifier = CollectingNotifier()
    provider = WebProvider(announce=False, notifier=cast(Notifier, notifier))
    await provider.start()
    yield provider, notifier
    await provider.stop()


async def checked(page: Page, state: str) -> None:
    """One h1, no sideways scroll, no axe violation."""
    await expect(page.locator("h1")).to_have_count(1)
    await no_sideways_scroll(page, state)
    await no_axe_violations(page, state)


class TestTheLinkPageInABrowser:
    async def test_every_state_is_true_fits_320_px_and_passes_axe(
        self, linked: tuple[WebProvider, CollectingNotifier], open_page: OpenPage
    ) -> None:
        """Through the link at 320 px with a header of one long word: an empty send and a pick
        beside typed words are refused with the reason, Close asks first, Other sends the
        words; the open page then says the answer came through the link."""
        provider, notifier = linked
        assert provider.url is not None
        main = await open_page(provider.url)
        question = AskUserQuestionItem(
            id="pkg",
            header=LONG_WORD[:60],
            question=f"Which package manager for {LONG_WORD}?",
            options=(AskUserQuestionOption("pnpm"), AskUserQuestionOption("npm")),
        )
        asking = asyncio.ensure_future(provider.ask(request(question)))
        await wait_until(lambda: bool(notifier.sent), "the notification")
        link = notifier.sent[0].link
        assert link is not None
        await expect(main.locator("article[data-ask-id]")).to_have_count(1)

        page = await open_page(link, width=320, height=640)
        await checked(page, "the form")
        await page.get_by_role("button", name="Send answer").click()
        await expect(page.get_by_role("alert")).to_contain_text("Nothing to send")
        await checked(page, "an empty send refused")

        await page.get_by_role("radio", name="npm", exact=True).check()
        await page.get_by_label("Your own words").fill("yarn, please")
        await page.get_by_role("button", name="Send answer").click()
        await expect(page.get_by_role("alert")).to_contain_text(
            "you chose \u201cnpm\u201d and typed your own words"
        )
        await checked(page, "a pick beside words refused")
        assert not asking.done()

        await page.get_by_role("button", name="Close without answering").click()
        await expect(page.get_by_role("heading", level=1)).to_have_text("Close without answering?")
        await checked(page, "the close confirmation")
        await page.get_by_role("link", name="No, back to the question").click()
        await expect(page.get_by_role("button", name="Send answer")).to_be_visible()
        assert not asking.done()

        await page.get_by_role("radio", name="Other: my own words below").check()
        await page.get_by_label("Your own words").fill("yarn, please")
        await page.get_by_role("button", name="Send answer").click()
        await expect(page.get_by_text("Your answer was recorded.")).to_be_visible()
        await checked(page, "answered")
        assert await asyncio.wait_for(asking, 10) == AskUserQuestionAnswer.from_dict(
            {
                "answers": [{"id": "pkg", "selected": [], "custom": "yarn, please"}],
                "answered_by": "token",
            }
        )
        await expect(main.locator("#notice")).to_have_text(
            "This question was answered through its link from a notification."
        )

        await page.goto(link[:-3] + ("xyz" if not link.endswith("xyz") else "abc"))
        await expect(page.get_by_role("heading", level=1)).to_have_text("Link not valid")
        await checked(page, "a tampered link")
