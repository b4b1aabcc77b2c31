"""Option previews on the page: the focused (else the checked) option's markdown, inert."""

from __future__ import annotations

import pytest
from conftest import OpenPage, card, no_axe_violations, no_sideways_scroll, request, start_ask
from dsh_user_questions import AskUserQuestionItem, AskUserQuestionOption
from playwright.async_api import expect

from dsh_user_questions_web import WebProvider

pytestmark = pytest.mark.browser

GRID = "**Grid**: cards in rows\n\n```\n+---+---+\n| a | b |\x1b[2J\n+---+---+\n```\n"
LIST = "[https://github.com/org/repo](https://evil.example/list) one item a line"


class TestOptionPreviews:
    async def test_the_focused_or_checked_options_preview_is_shown_inert(
        self, web: WebProvider, open_page: OpenPage
    ) -> None:
        """At 390 px no preview shows until an option has the focus; then its markdown shows
        (control characters as stand-ins, a link's real target beside it); checking another
        option shows that one's; an option without a preview hides the box."""
        assert web.url is not None
        page = await open_page(web.url, width=390, height=844)
        question = AskUserQuestionItem(
            id="layout",
            question="Which layout?",
            options=(
                AskUserQuestionOption("grid", preview=GRID),
                AskUserQuestionOption("list", preview=LIST),
                AskUserQuestionOption("plain"),
            ),
        )
        asking = await start_ask(web, request(question))
        shown = card(page, asking.id)
        preview = shown.get_by_role("region", name="Preview of the option")
        await expect(shown.get_by_role("radio", name="grid")).to_be_visible()
        await expect(preview).to_be_hidden()

        await shown.get_by_role("radio", name="grid").focus()
        await expect(preview).to_contain_text("Preview: grid")
        await expect(preview.locator("strong")).to_have_text("Grid")
        await expect(preview.locator("pre")).to_contain_text("| a | b |")
        assert "\x1b" not in await preview.inner_text()
        await no_sideways_scroll(page, "a preview shown")
        await no_axe_violations(page, "a preview shown")

        await shown.get_by_role("radio", name="list").check()
        await expect(preview).to_contain_text("Preview: list")
        await expect(preview).to_contain_text("(https://evil.example/list)")
        await shown.get_by_role("radio", name="plain").check()
        await expect(preview).to_be_hidden()
