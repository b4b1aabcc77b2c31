# ruff: noqa: RUF001 (the Chinese texts use fullwidth punctuation, as Chinese does)
"""The page in Chinese: Chromium with a Chinese Accept-Language gets lang="zh-CN", the page's
words from the catalog (HTML and app.js), axe 0 at 320 px; the answer keeps the labels; a
pseudo-locale finds no English word left hard-coded."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType

import pytest
from conftest import no_axe_violations, no_sideways_scroll, start_ask
from dsh_user_questions import AskUserQuestionInput, AskUserQuestionItem, AskUserQuestionOption
from dsh_user_questions.plan_review import plan_review_question
from dsh_user_questions.testing import make_request
from playwright.async_api import Browser, Page, expect

from dsh_user_questions_web import WebProvider

pytestmark = pytest.mark.browser

CHINESE_QUESTION = AskUserQuestionItem(
    id="pkg",
    header="包管理器",
    question="这个项目应该用哪个包管理器？",
    options=(
        AskUserQuestionOption("pnpm", "快速，节省磁盘空间"),
        AskUserQuestionOption("npm", "随 node 一起安装"),
    ),
)


@pytest.fixture
async def chinese(browser: Browser, web: WebProvider) -> AsyncIterator[Page]:
    """The provider's page in a 320 px Chromium whose language is Simplified Chinese."""
    assert web.url is not None
    context = await browser.new_context(viewport={"width": 320, "height": 640}, locale="zh-CN")
    errors: list[object] = []
    opened = await context.new_page()
    opened.on("pageerror", lambda error: errors.append(error))
    await opened.goto(web.url)
    await expect(opened.locator("body")).to_have_attribute("data-state", "waiting")
    yield opened
    await context.close()
    assert errors == []


async def test_a_chinese_browser_gets_the_chinese_page(web: WebProvider, chinese: Page) -> None:
    """lang="zh-CN", the waiting words and the card's words are Chinese, axe finds nothing at
    320 px, and the answer names the model's label."""
    assert await chinese.evaluate("document.documentElement.lang") == "zh-CN"
    await expect(chinese.locator("#waiting-title")).to_have_text("目前没有问题")
    assert await chinese.title() == "来自智能体的问题"
    await no_sideways_scroll(chinese, "zh waiting")
    await no_axe_violations(chinese, "zh waiting")
    asking = await start_ask(web, make_request(CHINESE_QUESTION))
    await expect(
        chinese.get_by_role("heading", name="这个项目应该用哪个包管理器？")
    ).to_be_visible()
    await expect(chinese.get_by_role("button", name="跳过", exact=True)).to_be_visible()
    await expect(chinese.get_by_text("其他", exact=True)).to_be_visible()
    await no_sideways_scroll(chinese, "zh question")
    await no_axe_violations(chinese, "zh question")
    await chinese.get_by_role("radio", name=re.compile(r"^npm\b")).check()
    await chinese.get_by_role("button", name="提交", exact=True).click()
    answer = await asking.result()
    assert answer.to_dict() == {
        "answers": [{"id": "pkg", "selected": ["npm"]}],
        "answered_by": "token",  # the page knows no people: whoever held its token
    }
    await expect(chinese.locator("#notice")).to_have_text("回答已发送，谢谢。")


async def test_a_plan_review_card_speaks_chinese_and_answers_approve(
    web: WebProvider, chinese: Page
) -> None:
    """The card's header, question and buttons are the catalog's; Approve answers "Approve"."""
    asking = await start_ask(web, make_request(plan_review_question("# 计划\n\n1. 做这件事\n")))
    await expect(
        chinese.get_by_role("heading", name="批准这个计划并退出计划模式吗？")
    ).to_be_visible()
    await expect(chinese.get_by_text("计划审阅", exact=True)).to_be_visible()
    await no_axe_violations(chinese, "zh plan review")
    await chinese.get_by_role("button", name="批准", exact=True).click()
    answer = await asking.result()
    assert answer.to_dict()["answers"][0]["selected"] == ["Approve"]


def catalogs() -> ModuleType:
    """The repository's pseudo-locale helper (tests/i18n/catalogs.py), or skip in an sdist."""
    pytest.importorskip("babel")
    helper = Path(__file__).resolve().parents[4] / "tests" / "i18n" / "catalogs.py"
    if not helper.is_file():
        pytest.skip("the repository's catalog tool is not in this tree (an sdist)")
    spec = importlib.util.spec_from_file_location("dsh_i18n_catalogs", helper)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_nothing_on_the_page_is_left_hard_coded(
    web: WebProvider, browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the pseudo-locale the page's visible text (waiting, a question, a plan review) has no
    English word outside ⟦ ⟧; the model's text here is Chinese."""
    helper = catalogs()
    helper.write_pseudo_locale(tmp_path)
    monkeypatch.setenv("DSH_USER_QUESTIONS_LOCALEDIR", str(tmp_path))
    monkeypatch.setenv("DSH_USER_QUESTIONS_LANG", helper.PSEUDO)
    assert web.url is not None
    context = await browser.new_context(viewport={"width": 390, "height": 800})
    page = await context.new_page()
    await page.goto(web.url)
    await expect(page.locator("body")).to_have_attribute("data-state", "waiting")
    seen = [await page.locator("body").inner_text(), await page.title()]
    only_chinese = AskUserQuestionItem(
        id="pick",
        question="哪一个？",
        options=(AskUserQuestionOption("甲", "第一"), AskUserQuestionOption("乙")),
    )
    await start_ask(web, make_request(only_chinese, AskUserQuestionItem(id="n", question="名字？")))
    await expect(page.locator("body")).to_have_attribute("data-state", "asking")
    seen.append(await page.locator("body").inner_text())
    await start_ask(web, make_request(plan_review_question("# 计划\n\n1. 做这件事\n")))
    await page.locator("#queue li").last.click()
    await expect(page.get_by_text("\u27e6Approve", exact=False).first).to_be_visible()
    seen.append(await page.locator("body").inner_text())
    # Typed answers: a number (bounds, step, unit), files of the workspace, an upload.
    typed = (
        AskUserQuestionInput(type="number", min=1, max=9, step=2, unit="个"),
        AskUserQuestionInput(type="files", root="/w", max_count=2, candidates=["甲.md", "乙.md"]),
        AskUserQuestionInput(type="upload", max_count=3, max_bytes=512, accept=("image/*",)),
    )
    for field in typed:
        await start_ask(
            web, make_request(AskUserQuestionItem(id="v", question="哪个？", input=field))
        )
        await page.locator("#queue li").last.click()
        await expect(page.locator(".hint").first).to_be_visible()
        if field.type == "files":
            await expect(page.locator(".file-choice")).to_have_count(2)
        seen.append(await page.locator("body").inner_text())
    await context.close()
    for text in seen:
        assert helper.english_outside(text) == [], text


async def test_the_servers_refusal_of_a_value_is_shown_in_chinese(
    web: WebProvider, chinese: Page
) -> None:
    """A number above the maximum reaches the rules on the server: the page shows their
    refusal in Chinese (the response's "shown"), and the question stays open for a good value."""
    number = AskUserQuestionItem(
        id="n", question="几个？", input=AskUserQuestionInput(type="number", min=1, max=9)
    )
    asking = await start_ask(web, make_request(number))
    box = chinese.get_by_role("spinbutton")
    await box.fill("12")
    await chinese.get_by_role("button", name="提交", exact=True).click()
    refusal = chinese.get_by_text(re.compile("服务器拒绝了这个回答：.*值 12 大于最大值 9"))
    await expect(refusal).to_be_visible()
    assert "maximum" not in await chinese.locator("body").inner_text()
    assert not asking.task.done()
    await box.fill("3")
    await chinese.get_by_role("button", name="提交", exact=True).click()
    answer = await asking.result()
    assert answer.answers[0].value == 3


async def test_a_refused_upload_is_explained_in_the_readers_language(
    web: WebProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The upload route's refusal: "message" the rule's English, "shown" the reader's words."""
    import httpx

    monkeypatch.setenv("DSH_USER_QUESTIONS_UPLOADS", str(tmp_path / "uploads"))
    question = AskUserQuestionItem(
        id="q", question="发过来", input=AskUserQuestionInput(type="upload", accept=(".txt",))
    )
    asking = await start_ask(web, make_request(question))
    said = {}
    for language in ("zh-CN", "en"):
        async with httpx.AsyncClient(base_url=web.url or "", timeout=10) as http:
            said[language] = await http.post(
                "upload",
                params={"ask": asking.id, "question": "q", "name": "tool.exe"},
                content=b"MZ",
                headers={"Content-Type": "application/octet-stream", "Accept-Language": language},
            )
    assert said["zh-CN"].status_code == said["en"].status_code == 415
    assert (
        said["zh-CN"].json()["message"]
        == said["en"].json()["message"]
        == ("'tool.exe' (application/octet-stream) is not a type this question takes: .txt")
    )
    assert said["zh-CN"].json()["shown"] == (
        "'tool.exe'（application/octet-stream）不是这个问题接受的类型：.txt"
    )
