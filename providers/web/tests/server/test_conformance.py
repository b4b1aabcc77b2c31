"""The core's conformance suite, driven through the page's HTTP protocol.

The driver does what the page's script does: it reads the pending asks (``GET state``) and
posts the answer or the close (``POST answer`` / ``POST cancel``). Its screen is the text of
every pending ask (each question's view, as the page reads it). Only the checks that model
text is shown inert need the page itself: there the screen is what Chromium shows (the body's
``innerText``), what the page finally makes of it. The provider is installed as the
``web`` entry point's plugin module, so ``ctx.aclose()`` stops the page as in a real harness.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import pytest
from dsh_user_questions import AskUserQuestionRequest
from dsh_user_questions.conformance import (
    Approve,
    Choose,
    Enter,
    KeepPlanning,
    Other,
    ProviderConformance,
    Reply,
    TalkInstead,
)
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.view import question_view
from playwright.async_api import Page, async_playwright

import dsh_user_questions_web.plugin as web_plugin

CHROMIUM = os.environ.get("DSH_WEB_TEST_CHROMIUM", "/usr/bin/chromium")
HAVE_CHROMIUM = os.path.exists(CHROMIUM)


class PageDriver:
    """Plays the human through the page's protocol."""

    def __init__(self, client: httpx.AsyncClient, page: Page | None = None) -> None:
        self.client = client
        self.page = page
        # What the page was told about each answer it posted, by the questions asked:
        # True for "accepted" (200), False for "not pending" (409, e.g. the asker left).
        self.told: dict[tuple[str, ...], bool] = {}

    async def _pending(self) -> list[dict[str, Any]]:
        url = web_plugin.get_provider().url
        if url is None:  # the page is not served: nothing is shown
            return []
        response = await self.client.get(url + "state")
        response.raise_for_status()
        pending: list[dict[str, Any]] = response.json()["pending"]
        return pending

    async def screen(self) -> str:
        if self.page is not None:
            url = web_plugin.get_provider().url
            if url is None:
                return ""
            if self.page.url != url:
                await self.page.goto(url)
            return await self.page.locator("body").inner_text()
        lines = []
        for ask in await self._pending():
            for question in ask["questions"]:  # each the question's view (QuestionView)
                lines += [question["header"] or "", question["question"]]
                lines.append(question["detail_text"] or "")
                for option in question["options"]:
                    lines += [option["shown"], option["description"] or ""]
                field = question["input"]  # a typed question's field (InputView), else None
                if field is not None:
                    lines.append(field["unit"] or "")
                if field is not None and field["type"] == "files":  # fetched as the page does
                    params = {"ask": ask["id"], "question": question["id"]}
                    listed = await self.client.get(self._url() + "files", params=params)
                    listed.raise_for_status()
                    lines += listed.json()["shown"]
        return "\n".join(lines)

    def _url(self) -> str:
        url = web_plugin.get_provider().url
        assert url is not None, "the page is not served"
        return url

    async def _post(
        self, route: str, body: dict[str, Any], asked: tuple[str, ...] | None = None
    ) -> None:
        url = web_plugin.get_provider().url
        assert url is not None, "the page is not served"
        response = await self.client.post(url + route, json=body)
        if asked is not None and response.status_code in (200, 409):
            self.told[asked] = response.status_code == 200
            if response.status_code == 409:
                return  # the page shows "no longer pending": the receipt check reads it
        assert response.status_code == 200, f"POST {route}: {response.status_code} {response.text}"

    async def receipt(self, request: AskUserQuestionRequest) -> bool | None:
        """Whether the page was told its answer was accepted (None: nothing posted)."""
        return self.told.get(tuple(question.question for question in request.questions))

    async def _id(self, request: AskUserQuestionRequest) -> str:
        texts = [question_view(question).question for question in request.questions]
        pending = await self._pending()
        ids = [ask["id"] for ask in pending if [q["question"] for q in ask["questions"]] == texts]
        assert ids, f"no pending ask shows {texts}: {pending}"
        return str(ids[0])

    async def reply(self, request: AskUserQuestionRequest, replies: Sequence[Reply]) -> None:
        ask_id = await self._id(request)
        items = []
        for question, reply in zip(request.questions, replies, strict=True):
            if isinstance(reply, TalkInstead):
                await self._post("cancel", {"id": ask_id})
                return
            item: dict[str, Any] = {"id": question.id, "selected": []}
            if isinstance(reply, (Choose, Other)):
                item["selected"] = list(reply.labels)
            if isinstance(reply, Other):
                item["custom"] = reply.text
            if isinstance(reply, Enter):  # what the page's typed field posts
                value = reply.value
                item["value"] = list(value) if isinstance(value, tuple) else value
            if isinstance(reply, (Approve, KeepPlanning)) and question.intent is not None:
                approve = question.intent.approve
                keep = [o.label for o in question.options if o.label != approve][:1]
                item["selected"] = [approve] if isinstance(reply, Approve) else keep
                if isinstance(reply, KeepPlanning) and reply.feedback:
                    item = {"id": question.id, "selected": [], "custom": reply.feedback}
            items.append(item)
        asked = tuple(question.question for question in request.questions)
        await self._post("answer", {"id": ask_id, "answer": {"answers": items}}, asked)

    async def cancel(self, request: AskUserQuestionRequest) -> None:
        await self._post("cancel", {"id": await self._id(request)})


@contextlib.asynccontextmanager
async def _chromium_page() -> AsyncIterator[Page]:
    if not HAVE_CHROMIUM:
        message = f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            yield await browser.new_page()
        finally:
            await browser.close()


class TestWebConformance(ProviderConformance):
    """The web provider, through its entry point's plugin, passes the provider contract."""

    timeout = 10.0
    in_browser = False
    # The typed fields the driver posts as the page does (an upload is a multipart post of
    # its own: tests/page/test_inputs.py drives it).
    input_types = frozenset({"number", "date", "time", "datetime", "files"})

    @contextlib.asynccontextmanager
    async def connect(self, ctx: HarnessContext) -> AsyncIterator[PageDriver]:
        ctx.register(web_plugin.plugin, name="web")
        async with contextlib.AsyncExitStack() as stack:
            client = await stack.enter_async_context(httpx.AsyncClient(timeout=self.timeout))
            page = await stack.enter_async_context(_chromium_page()) if self.in_browser else None
            yield PageDriver(client, page)

    def test_escape_sequences_are_shown_inert(self) -> None:
        """Terminal escapes, BEL, backspace and CR in model text reach the page as text."""
        self.in_browser = True
        super().test_escape_sequences_are_shown_inert()

    def test_bidi_controls_are_shown_inert(self) -> None:
        """Bidirectional overrides and isolates in model text never reach the page live."""
        self.in_browser = True
        super().test_bidi_controls_are_shown_inert()

    def test_lookalikes_and_zero_width_are_shown_with_stand_ins(self) -> None:
        """Zero-width and look-alike characters reach the page as <U+XXXX> stand-ins."""
        self.in_browser = True
        super().test_lookalikes_and_zero_width_are_shown_with_stand_ins()

    def test_markup_is_shown_as_text(self) -> None:
        """HTML tags and script in model text are shown on the page as their characters."""
        self.in_browser = True
        super().test_markup_is_shown_as_text()
