"""Typed answers on the one-question link page in Chromium at 320 px (issue 36): native number,
date, time and datetime fields (the browser's UTC offset picked for a local time), a file list
narrowed by a filter, a file picker whose file streams into the uploads folder; axe clean."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest
from conftest import OpenPage, no_axe_violations, no_sideways_scroll, request, wait_until
from dsh_user_questions import AskUserQuestionInput, AskUserQuestionItem
from dsh_user_questions._notify import Notification, Notifier
from playwright.async_api import Page, expect

from dsh_user_questions_web import WebProvider

pytestmark = pytest.mark.browser

SMALL = {"width": 320, "height": 640}


class CollectingNotifier:
    """A notifier that keeps what it would send (no network, no Apprise)."""

    def __init__(self) -> None:
        self.sent: list[Notification] = []

    async def send(self, note: Notification) -> bool:
        self.sent.append(note)
        return True


@pytest.fixture
async def linked() -> AsyncIterator[tuple[WebProvider, CollectingNotifier]]:
    notifier = CollectingNotifier()
    provider = WebProvider(announce=False, notifier=cast(Notifier, notifier))
    await provider.start()
    yield provider, notifier
    await provider.stop()


async def open_link(
    linked: tuple[WebProvider, CollectingNotifier],
    open_page: OpenPage,
    question: AskUserQuestionItem,
    **context: Any,
) -> tuple[Page, asyncio.Future[Any], Notification]:
    provider, notifier = linked
    before = len(notifier.sent)
    asking = asyncio.ensure_future(provider.ask(request(question)))
    await wait_until(lambda: len(notifier.sent) > before, "the notification")
    note = notifier.sent[-1]
    assert note.link is not None
    page = await open_page(note.link, **SMALL, **context)
    return page, asking, note


async def checked(page: Page, state: str) -> None:
    await expect(page.locator("h1")).to_have_count(1)
    await no_sideways_scroll(page, state)
    await no_axe_violations(page, state)


def typed(kind: str, question: str = "How many?", **fields: Any) -> AskUserQuestionItem:
    return AskUserQuestionItem(
        id="q", question=question, input=AskUserQuestionInput(type=kind, **fields)
    )


async def test_a_number_on_the_link_page(linked, open_page) -> None:
    """The notification says what is asked; the link page's native field sends a number."""
    page, asking, note = await open_link(
        linked, open_page, typed("number", min=1, max=10, step=1, unit="workers")
    )
    assert "[a number between 1 and 10 in steps of 1 (workers)]" in note.body
    field = page.get_by_role("spinbutton", name="Your answer")
    await expect(field).to_have_attribute("max", "10")
    await checked(page, "number")
    await field.fill("4")
    await page.get_by_role("button", name="Send answer").click()
    await expect(page.get_by_text("Your answer was recorded.")).to_be_visible()
    assert (await asyncio.wait_for(asking, 10)).answers[0].value == 4


async def test_date_and_time_on_the_link_page(linked, open_page) -> None:
    page, asking, _ = await open_link(linked, open_page, typed("date", question="When?"))
    await checked(page, "date")
    await page.locator("input[type=date]").fill("2026-12-24")
    await page.get_by_role("button", name="Send answer").click()
    assert (await asyncio.wait_for(asking, 10)).answers[0].value == "2026-12-24"
    page, asking, _ = await open_link(linked, open_page, typed("time", question="At what time?"))
    await page.locator("input[type=time]").fill("07:45")
    await page.get_by_role("button", name="Send answer").click()
    assert (await asyncio.wait_for(asking, 10)).answers[0].value == "07:45"


async def test_a_local_datetime_goes_with_the_browsers_offset(linked, browser) -> None:
    """In a Tokyo browser the page's one script picks +09:00 for the time chosen."""
    provider, notifier = linked
    asking = asyncio.ensure_future(
        provider.ask(request(typed("datetime", question="When exactly?")))
    )
    await wait_until(lambda: bool(notifier.sent), "the notification")
    context = await browser.new_context(viewport=SMALL, timezone_id="Asia/Tokyo")
    try:
        page = await context.new_page()
        await page.goto(notifier.sent[-1].link)
        await checked(page, "datetime")
        await page.locator("input[type=datetime-local]").fill("2026-06-01T09:00")
        await expect(page.get_by_label("Time zone (UTC offset)")).to_have_value("+09:00")
        await page.get_by_role("button", name="Send answer").click()
        answer = await asyncio.wait_for(asking, 10)
        assert answer.answers[0].value == "2026-06-01T09:00:00+09:00"
    finally:
        await context.close()


async def test_files_are_filtered_and_picked_on_the_link_page(linked, open_page, tmp_path):
    root = tmp_path / "repo"
    for name in ("src/app.py", "src/util.py", "README.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    question = AskUserQuestionItem(
        id="q", question="Which files?", input=AskUserQuestionInput.files(root)
    )
    page, asking, note = await open_link(linked, open_page, question)
    assert "[pick files]" in note.body
    await expect(page.get_by_text("3 of 3 files listed.")).to_be_visible()
    await checked(page, "files")
    await page.get_by_role("searchbox").fill("util")
    await page.get_by_role("button", name="Filter").click()
    await expect(page.get_by_text("1 of 3 files listed.")).to_be_visible()
    await page.get_by_role("checkbox", name="src/util.py").check()
    await page.get_by_role("button", name="Send answer").click()
    await expect(page.get_by_text("Your answer was recorded.")).to_be_visible()
    assert (await asyncio.wait_for(asking, 10)).answers[0].value == ("src/util.py",)


async def test_a_file_is_uploaded_through_the_link_page(
    linked, open_page, tmp_path, monkeypatch
) -> None:
    folder = tmp_path / "uploads"
    monkeypatch.setenv("DSH_USER_QUESTIONS_UPLOADS", str(folder))
    source = tmp_path / "photo.png"
    source.write_bytes(b"\x89PNG" + b"\0" * 3000)
    question = typed("upload", question="Send a photo", accept=["image/*"], max_bytes=10_000)
    page, asking, _ = await open_link(linked, open_page, question)
    await checked(page, "upload")
    picker = page.get_by_label("Choose files")
    await expect(picker).to_have_attribute("accept", "image/*")
    await picker.set_input_files(str(source))
    await page.get_by_role("button", name="Send answer").click()
    await expect(page.get_by_text("Your answer was recorded.")).to_be_visible()
    (record,) = (await asyncio.wait_for(asking, 10)).answers[0].value
    assert record.name == "photo.png"
    assert record.media_type == "image/png"
    assert record.sha256 == hashlib.sha256(source.read_bytes()).hexdigest()
    assert Path(record.path).is_relative_to(folder)


async def test_a_file_over_the_limit_is_refused_with_413_and_nothing_kept(
    linked, open_page, tmp_path, monkeypatch
) -> None:
    folder = tmp_path / "uploads"
    monkeypatch.setenv("DSH_USER_QUESTIONS_UPLOADS", str(folder))
    big = tmp_path / "big.png"
    big.write_bytes(b"\0" * 50_000)
    question = typed("upload", question="Send a photo", accept=["image/*"], max_bytes=10_000)
    page, asking, _ = await open_link(linked, open_page, question)
    await page.get_by_label("Choose files").set_input_files(str(big))
    async with page.expect_response(lambda response: response.request.method == "POST") as got:
        await page.get_by_role("button", name="Send answer").click()
    assert (await got.value).status == 413
    await expect(page.get_by_role("alert")).to_contain_text("Nothing of it was kept")
    await checked(page, "a file refused")
    assert not [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else True
    assert not asking.done()


@pytest.mark.parametrize(
    ("name", "kind", "status"),
    [("../../escape.png", "image/png", 400), ("notes.txt", "text/plain", 415)],
)
async def test_a_hostile_name_or_a_refused_type_keeps_nothing_on_the_link_page(
    linked, tmp_path, monkeypatch, name: str, kind: str, status: int
) -> None:
    """A form whose file is named to escape the folder (a browser never sends one, a script
    can), or of a type the question does not take: refused, nothing kept."""
    import httpx

    folder = tmp_path / "uploads"
    monkeypatch.setenv("DSH_USER_QUESTIONS_UPLOADS", str(folder))
    provider, notifier = linked
    question = typed("upload", question="Send a photo", accept=["image/*"])
    asking = asyncio.ensure_future(provider.ask(request(question)))
    await wait_until(lambda: bool(notifier.sent), "the notification")
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(
            notifier.sent[-1].link,
            data={"action": "answer"},
            files={"q0-upload": (name, b"\x89PNG" + b"\0" * 100, kind)},
        )
    assert response.status_code == status, response.text
    assert "Nothing of it was kept" in response.text
    assert not [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else True
    assert not (tmp_path / "escape.png").exists()
    assert not asking.done()


async def test_a_refused_file_is_explained_in_the_readers_language(
    linked, tmp_path, monkeypatch
) -> None:
    """The link page's refusal of a file names the rule in a Chinese reader's language."""
    import httpx

    monkeypatch.setenv("DSH_USER_QUESTIONS_UPLOADS", str(tmp_path / "uploads"))
    provider, notifier = linked
    question = typed("upload", question="Send a photo", accept=["image/*"])
    asking = asyncio.ensure_future(provider.ask(request(question)))
    await wait_until(lambda: bool(notifier.sent), "the notification")
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(
            notifier.sent[-1].link,
            data={"action": "answer"},
            files={"q0-upload": ("notes.txt", b"hello", "text/plain")},
            headers={"Accept-Language": "zh-CN"},
        )
    assert response.status_code == 415, response.text
    said = "&#x27;notes.txt&#x27;（text/plain）不是这个问题接受的类型：image/*。"  # noqa: RUF001
    assert said in response.text
    assert "not a type" not in response.text
    assert not asking.done()
    asking.cancel()
