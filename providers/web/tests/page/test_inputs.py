"""Typed answers on the page (issue 36): number, date, time, datetime, files and uploads, each
answered end to end in Chromium at 390 px, keyboard only, axe clean; uploads refused with
nothing kept."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import httpx
import pytest
from conftest import OpenPage, no_axe_violations, no_sideways_scroll, request, start_ask
from dsh_user_questions import AskCancelledError, AskUserQuestionInput, AskUserQuestionItem
from playwright.async_api import Page, expect

from dsh_user_questions_web import WebProvider

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 800}


def typed(kind: str, question: str = "How many?", qid: str = "q", **fields: object):
    return AskUserQuestionItem(
        id=qid, question=question, input=AskUserQuestionInput(type=kind, **fields)
    )


@pytest.fixture
def uploads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The uploads folder of the test (the harness's setting)."""
    folder = tmp_path / "uploads"
    monkeypatch.setenv("DSH_USER_QUESTIONS_UPLOADS", str(folder))
    return folder


def kept(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*") if path.is_file()) if folder.exists() else []


async def phone(open_page: OpenPage, web: WebProvider) -> Page:
    assert web.url is not None
    page = await open_page(web.url, **PHONE)
    await expect(page.locator("body")).to_have_attribute("data-state", "waiting")
    return page


async def submit(page: Page) -> None:
    await page.keyboard.press("Enter")


async def test_a_number_is_typed_and_stepped_with_the_keyboard(
    web: WebProvider, open_page: OpenPage
) -> None:
    """A native number field with its range and step: Up steps it, Enter sends a number."""
    page = await phone(open_page, web)
    asking = await start_ask(web, request(typed("number", min=1, max=10, step=0.5, unit="GB")))
    field = page.get_by_role("spinbutton", name="Your answer")
    await expect(field).to_be_focused()
    await expect(field).to_have_attribute("min", "1")
    await expect(field).to_have_attribute("max", "10")
    await expect(field).to_have_attribute("step", "0.5")
    await expect(
        page.get_by_text("A number between 1 and 10, in steps of 0.5 (GB)")
    ).to_be_visible()
    await no_axe_violations(page, "number field")
    await no_sideways_scroll(page, "number field")
    await field.fill("7")
    await page.keyboard.press("ArrowUp")
    await expect(field).to_have_value("7.5")
    await submit(page)
    answer = await asking.result()
    assert answer.answers[0].value == 7.5
    assert answer.answers[0].selected == ()


async def test_a_number_out_of_range_is_refused_naming_the_rule(
    web: WebProvider, open_page: OpenPage
) -> None:
    """The server's rules refuse a number above max; the page says why and keeps the ask."""
    page = await phone(open_page, web)
    asking = await start_ask(web, request(typed("number", min=1, max=10)))
    field = page.get_by_role("spinbutton", name="Your answer")
    await field.fill("11")
    await submit(page)
    alert = page.get_by_role("alert").filter(has_text="refused")
    await expect(alert).to_contain_text('"q"')
    await expect(alert).to_contain_text("10")
    assert not asking.task.done()
    await field.fill("10")
    await submit(page)
    assert (await asking.result()).answers[0].value == 10


@pytest.mark.parametrize(
    ("kind", "typed_in", "sent"),
    [
        ("date", "2026-12-24", "2026-12-24"),
        ("time", "09:30", "09:30"),
    ],
)
async def test_a_date_or_time_is_picked_natively(
    web: WebProvider, open_page: OpenPage, kind: str, typed_in: str, sent: str
) -> None:
    page = await phone(open_page, web)
    asking = await start_ask(web, request(typed(kind, question="When?")))
    field = page.locator(f"input[type={kind}]")
    await expect(field).to_be_focused()
    await no_axe_violations(page, f"{kind} field")
    await field.fill(typed_in)
    await submit(page)
    assert (await asking.result()).answers[0].value == sent


async def test_a_local_datetime_is_sent_with_the_browsers_offset(
    browser: object, web: WebProvider
) -> None:
    """datetime-local in a page whose zone is Berlin: winter time goes with +01:00."""
    assert web.url is not None
    context = await browser.new_context(  # type: ignore[attr-defined]
        viewport=PHONE, timezone_id="Europe/Berlin"
    )
    try:
        page = await context.new_page()
        await page.goto(web.url)
        asking = await start_ask(web, request(typed("datetime", question="When exactly?")))
        field = page.locator("input[type=datetime-local]")
        await expect(field).to_be_focused()
        await expect(page.get_by_text("UTC+01:00")).to_be_visible()
        await no_axe_violations(page, "datetime field")
        await field.fill("2026-12-24T18:30")
        await submit(page)
        assert (await asking.result()).answers[0].value == "2026-12-24T18:30:00+01:00"
    finally:
        await context.close()


async def test_files_are_filtered_and_ticked_by_keyboard(
    web: WebProvider, open_page: OpenPage, tmp_path: Path
) -> None:
    """The file list is fetched when the question opens, narrowed by the filter; Space ticks,
    max_count holds, Enter sends the paths."""
    root = tmp_path / "repo"
    for name in ("src/app.py", "src/util.py", "docs/guide.md", "README.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    question = AskUserQuestionItem(
        id="q",
        question="Which files should I read?",
        input=AskUserQuestionInput.files(root, max_count=2),
    )
    page = await phone(open_page, web)
    asking = await start_ask(web, request(question))
    filter_box = page.get_by_role("searchbox", name="Filter files")
    await expect(filter_box).to_be_focused()
    await expect(page.get_by_role("status").filter(has_text="4 of 4 files match")).to_be_visible()
    await no_axe_violations(page, "file list")
    await no_sideways_scroll(page, "file list")
    await page.keyboard.type("src/")
    await expect(page.get_by_role("status").filter(has_text="2 of 4 files match")).to_be_visible()
    await page.keyboard.press("Tab")
    await page.keyboard.press("Space")
    await page.keyboard.press("Tab")
    await page.keyboard.press("Space")
    await expect(page.locator(".files-chosen li")).to_have_count(2)
    await filter_box.fill("")
    await expect(page.get_by_role("status").filter(has_text="4 of 4")).to_be_visible()
    third = page.get_by_role("checkbox", name="README.md")
    await third.focus()
    await page.keyboard.press("Space")
    await expect(third).not_to_be_checked()  # max_count 2
    await page.get_by_role("button", name="Submit", exact=True).click()
    answer = await asking.result()
    assert answer.answers[0].value == ("src/app.py", "src/util.py")


async def test_a_file_is_uploaded_with_progress_and_answers_with_its_record(
    web: WebProvider, open_page: OpenPage, uploads: Path, tmp_path: Path
) -> None:
    """The chosen file streams to the uploads folder (private), the answer carries its record;
    the page never sends or sees a path."""
    source = tmp_path / "notes.txt"
    source.write_bytes(b"hello upload\n" * 1000)
    page = await phone(open_page, web)
    question = typed(
        "upload", question="Send me the log", accept=[".txt", "image/*"], max_bytes=100_000
    )
    asking = await start_ask(web, request(question))
    picker = page.get_by_label("Choose files to upload")
    await expect(picker).to_be_focused()
    await expect(picker).to_have_attribute("accept", ".txt,image/*")
    await no_axe_violations(page, "upload field")
    await picker.set_input_files(str(source))
    await expect(page.get_by_role("status").filter(has_text="notes.txt uploaded")).to_be_visible()
    await page.get_by_role("button", name="Submit", exact=True).click()
    (record,) = (await asking.result()).answers[0].value
    path = Path(record.path)
    assert path.read_bytes() == source.read_bytes()  # noqa: ASYNC240 (a test, small files)
    assert record.name == "notes.txt"
    assert record.size == source.stat().st_size
    assert record.sha256 == hashlib.sha256(source.read_bytes()).hexdigest()
    assert record.media_type == "text/plain"
    assert path.is_relative_to(uploads)
    assert os.stat(uploads).st_mode & 0o777 == 0o700
    assert os.stat(path).st_mode & 0o777 == 0o600


async def test_a_file_over_the_limit_is_refused_on_the_page_and_nothing_is_kept(
    web: WebProvider, open_page: OpenPage, uploads: Path, tmp_path: Path
) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 5000)
    page = await phone(open_page, web)
    asking = await start_ask(web, request(typed("upload", question="Send it", max_bytes=1000)))
    await page.get_by_label("Choose files to upload").set_input_files(str(big))
    await expect(page.get_by_role("status").filter(has_text="not sent")).to_be_visible()
    assert kept(uploads) == []
    assert not asking.task.done()


async def upload(
    web: WebProvider, ask_id: str, name: str, body: bytes, kind: str = "text/plain"
) -> httpx.Response:
    async with httpx.AsyncClient(base_url=web.url or "", timeout=10) as http:
        return await http.post(
            "upload",
            params={"ask": ask_id, "question": "q", "name": name},
            content=body,
            headers={"Content-Type": kind},
        )


@pytest.mark.parametrize(
    ("name", "body", "kind", "status"),
    [
        ("big.txt", b"x" * 2048, "text/plain", 413),
        ("tool.exe", b"MZ", "application/octet-stream", 415),
        ("../../escape.txt", b"hi", "text/plain", 400),
        ("a/b.txt", b"hi", "text/plain", 400),
        ("..", b"hi", "text/plain", 400),
        ("bell\x07.txt", b"hi", "text/plain", 400),
    ],
)
async def test_refused_uploads_keep_nothing(
    web: WebProvider, uploads: Path, name: str, body: bytes, kind: str, status: int
) -> None:
    """Over max_bytes (413, streamed, not read whole), a type the question does not take
    (415), a name that could escape the folder or hides characters (400): nothing kept."""
    question = typed("upload", question="Send it", accept=[".txt"], max_bytes=1024)
    asking = await start_ask(web, request(question))
    response = await upload(web, asking.id, name, body, kind)
    assert response.status_code == status, response.text
    assert kept(uploads) == []
    assert not (uploads.parent / "escape.txt").exists()


async def test_an_answer_naming_an_upload_it_did_not_make_is_refused(
    web: WebProvider, uploads: Path
) -> None:
    """A page names a file by the token it got; any other token (or a path) is refused."""
    asking = await start_ask(web, request(typed("upload", question="Send it")))
    async with httpx.AsyncClient(base_url=web.url or "", timeout=10) as http:
        posted = await http.post(
            "answer",
            json={
                "id": asking.id,
                "answer": {"answers": [{"id": "q", "selected": [], "value": [{"upload": "x"}]}]},
            },
        )
    assert posted.status_code == 422
    assert "names no file uploaded for this question" in posted.text
    assert not asking.task.done()


async def test_uploads_not_used_by_the_answer_are_deleted(web: WebProvider, uploads: Path) -> None:
    """A question closed after a file came: the file is deleted with it."""
    asking = await start_ask(web, request(typed("upload", question="Send it")))
    response = await upload(web, asking.id, "a.txt", b"one")
    assert response.status_code == 200
    assert len(kept(uploads)) == 1
    async with httpx.AsyncClient(base_url=web.url or "", timeout=10) as http:
        await http.post("cancel", json={"id": asking.id})
    with pytest.raises(AskCancelledError):
        await asking.result()
    assert kept(uploads) == []
