"""The core's own human surfaces in Chinese: notifications and the one-question link page; the
UI's own choices reserved in every shipped language; a pseudo-locale finds no English left."""

# ruff: noqa: RUF001 (the Chinese texts use fullwidth punctuation, as Chinese does)
from __future__ import annotations

import gettext
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from catalogs import PSEUDO, english_outside, write_pseudo_locale

from dsh_user_questions import (
    AskUserQuestionInput,
    AskUserQuestionItem,
    AskUserQuestionOption,
    UserQuestionError,
)
from dsh_user_questions._i18n import CATALOG_DIR_ENV, LANG_ENV, OTHER, SKIP
from dsh_user_questions._identity import Caller
from dsh_user_questions._link_page import LinkedQuestion, link_routes, link_url, with_links
from dsh_user_questions._notify import notification_for
from dsh_user_questions.plan_review import plan_review_question
from dsh_user_questions.rules import check_request
from dsh_user_questions.testing import make_question, make_request

SECRET = b"k" * 32
JAPANESE = (AskUserQuestionOption("速い", "ディスク効率"), AskUserQuestionOption("標準", "既定"))
LOCALE = Path(__import__("dsh_user_questions").__file__).resolve().parent / "locale"


def shipped(message: str) -> set[str]:
    """Every shipped translation of ``message``, read from the .mo files themselves."""
    found = set()
    for path in LOCALE.glob("*/LC_MESSAGES/dsh_user_questions.mo"):
        with path.open("rb") as stream:
            found.add(gettext.GNUTranslations(stream).gettext(message))
    return found


@pytest.mark.parametrize("choice", [OTHER, SKIP])
def test_a_label_equal_to_a_translation_of_other_or_skip_is_refused_in_every_locale(
    choice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model may not offer "其他" or "跳过" (the human would see two of them), whatever the
    human's language; the error the model reads is the same bytes in every language."""
    translations = shipped(choice)
    assert translations
    assert choice not in translations
    for label in translations:
        request = make_request(
            make_question(options=[AskUserQuestionOption(label), AskUserQuestionOption("B")])
        )
        said = set()
        for language in ("en", "zh_CN"):
            monkeypatch.setenv(LANG_ENV, language)
            with pytest.raises(UserQuestionError) as caught:
                check_request(request)
            assert caught.value.code == "BAD_QUESTION"
            said.add(str(caught.value))
        assert said == {
            f'question "pkg" option 0 "{label}" reads as the UI\'s own "{choice}" choice, which'
            " every UI adds itself; leave it out"
        }


def test_a_notification_speaks_the_chosen_language_around_the_models_words() -> None:
    """Title, lead and the link's word are Chinese; the question is the model's, as written."""
    request = make_request(make_question(header="Tooling", question="Which package manager?"))
    note = notification_for(request, asker="build-bot", link="https://x.test/q/1", language="zh_CN")
    assert note.title == "有一个问题在等你回答: Tooling"
    assert note.body == "build-bot 问：\n- Tooling: Which package manager?"
    reminder = notification_for(request, asker="b", reminder=True, language="zh_CN")
    assert reminder.title.startswith("提醒：仍在等你回答")


def test_a_plan_review_notification_names_the_card_in_the_chosen_language(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A plan review's header and question are the core's words: translated with the frame, by
    the environment's language when none is given."""
    monkeypatch.setenv(LANG_ENV, "zh_CN")
    request = make_request(plan_review_question("# Plan\n\n1. Do it\n"))
    note = notification_for(request, asker="bot")
    assert note.title == "有一个问题在等你回答: 计划审阅"
    assert "批准这个计划并退出计划模式吗？" in note.body
    monkeypatch.setenv(LANG_ENV, "en")
    assert notification_for(request, asker="bot").title == "A question is waiting: Plan review"


class Questions:
    def __init__(self) -> None:
        self.linked = {
            "q-1": LinkedQuestion(
                request=make_request(
                    make_question(header="ツール", question="どれ?", options=JAPANESE),
                    AskUserQuestionItem(id="free", question="名前は?"),
                ),
                asker="ラップトップ",
            ),
            "q-2": LinkedQuestion(
                request=make_request(plan_review_question("# 計画\n\n1. やる\n")), asker="機械"
            ),
            # Typed questions: a number (bounds, step, unit), a time with its zone, and files.
            "q-3": LinkedQuestion(
                request=make_request(
                    AskUserQuestionItem(
                        id="n",
                        question="何個?",
                        header="個数",
                        input=AskUserQuestionInput(type="number", min=1, max=9, step=2, unit="個"),
                    ),
                    AskUserQuestionItem(
                        id="t", question="いつ?", input=AskUserQuestionInput(type="datetime")
                    ),
                ),
                asker="機械",
            ),
            "q-4": LinkedQuestion(
                request=make_request(
                    AskUserQuestionItem(
                        id="f",
                        question="どのファイル?",
                        header="ファイル",
                        input=AskUserQuestionInput(
                            type="files",
                            root="/w",
                            pattern="*.md",
                            max_count=2,
                            candidates=["あ.md", "い.md"],
                        ),
                    ),
                    AskUserQuestionItem(
                        id="u",
                        question="どれ?",
                        input=AskUserQuestionInput(type="upload", max_count=1, max_bytes=512),
                    ),
                ),
                asker="機械",
            ),
        }

    async def get(self, question_id: str) -> LinkedQuestion | None:
        return self.linked.get(question_id)

    async def answer(self, question_id: str, wire: dict[str, Any], caller: Caller) -> str | None:
        return None

    async def cancel(self, question_id: str) -> object:
        return True


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("only links are asked for")

    questions = Questions()
    routes = link_routes(
        secret=lambda: SECRET, get=questions.get, answer=questions.answer, cancel=questions.cancel
    )
    served = with_links(app, routes, lambda: {"answers.example"})
    transport = httpx.ASGITransport(app=served)
    async with httpx.AsyncClient(transport=transport, base_url="http://answers.example") as c:
        yield c


def path(question_id: str) -> str:
    url = link_url("https://answers.example/", SECRET, question_id, expires_at=2e9)
    return url.removeprefix("https://answers.example")


async def test_the_link_page_follows_accept_language(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Chinese browser gets lang="zh-CN" and Chinese words; an English one the English page."""
    monkeypatch.delenv(LANG_ENV, raising=False)
    page = await client.get(path("q-1"), headers={"Accept-Language": "zh-CN,zh;q=0.9"})
    assert page.text.startswith("<!doctype html><html lang=zh-CN>")
    assert "发送回答" in page.text
    assert "不回答并关闭" in page.text
    assert "ラップトップ 提出的问题" in page.text
    english = await client.get(path("q-1"), headers={"Accept-Language": "en-US"})
    assert "<html lang=en>" in english.text
    assert "Send answer" in english.text
    typed = await client.get(path("q-3"), headers={"Accept-Language": "zh-CN"})
    assert "1 到 9 之间的数字，步长为 2 (個)" in typed.text
    assert "时区（UTC 偏移）" in typed.text
    files = await client.get(path("q-4"), headers={"Accept-Language": "zh-CN"})
    assert "筛选“ファイル”的文件" in files.text
    assert "已列出 2 个文件中的 2 个。" in files.text
    assert "上传一个文件 (每个不超过 512 字节)" in files.text
    review = await client.get(path("q-2"), headers={"Accept-Language": "zh-Hans"})
    assert "计划审阅" in review.text
    assert "批准" in review.text
    assert 'value="0"' in review.text  # the answer still names the option by position/label


async def test_nothing_on_the_link_page_is_left_hard_coded(
    client: httpx.AsyncClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a pseudo-locale (every message wrapped in ⟦ ⟧), the page's visible text has no English
    word outside the brackets: the model's text here is Japanese."""
    pytest.importorskip("babel")
    write_pseudo_locale(tmp_path)
    monkeypatch.setenv(CATALOG_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(LANG_ENV, PSEUDO)
    for question_id in ("q-1", "q-2", "q-3", "q-4"):
        page = await client.get(path(question_id))
        assert f"<html lang={PSEUDO}>" in page.text
        assert english_outside(visible_text(page.text)) == []


def visible_text(document: str) -> str:
    """The text a reader sees: tags, the style sheet and attribute values dropped."""
    import html
    import re

    document = re.sub(r"<(style|script)>.*?</\1>", " ", document, flags=re.S)
    return html.unescape(re.sub(r"<[^>]*>", " ", document))


def test_nothing_in_a_notification_is_left_hard_coded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pseudo-locale wraps every word of a notification but the model's and the link."""
    pytest.importorskip("babel")
    write_pseudo_locale(tmp_path)
    monkeypatch.setenv(CATALOG_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(LANG_ENV, PSEUDO)
    request = make_request(make_question(header="ツール", question="どれ?", options=JAPANESE))
    typed = make_request(
        AskUserQuestionItem(
            id="n", question="何個?", input=AskUserQuestionInput(type="number", min=1, step=2)
        ),
        AskUserQuestionItem(
            id="u", question="どれ?", input=AskUserQuestionInput(type="upload", max_bytes=9)
        ),
    )
    for asked in (request, typed):
        for reminder in (False, True):
            note = notification_for(
                asked, asker="機械", link="https://x.test/q/1", reminder=reminder
            )
            shown = note.title + "\n" + note.text().replace("https://x.test/q/1", "")
            assert english_outside(shown) == []
