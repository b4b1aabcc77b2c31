"""The page's language comes from Accept-Language (or DSH_USER_QUESTIONS_LANG), per request."""

from __future__ import annotations

import json
import re

import httpx
import pytest
from conftest import answer_of, request, start_ask

from dsh_user_questions_web import WebProvider


async def test_each_request_gets_its_own_language(client: httpx.AsyncClient) -> None:
    """One server, two readers: a Chinese browser and an English one each get their page, and
    caches are told the page varies with Accept-Language."""
    chinese = await client.get("", headers={"Accept-Language": "zh-CN,zh;q=0.9"})
    english = await client.get("", headers={"Accept-Language": "en-US,en;q=0.9"})
    assert '<html lang="zh-CN"' in chinese.text
    assert "<title>来自智能体的问题</title>" in chinese.text
    assert '<html lang="en"' in english.text
    assert "<title>Questions from your agent</title>" in english.text
    assert "Accept-Language" in chinese.headers["vary"]
    assert chinese.headers["content-language"] == "zh-CN"
    data = re.search(
        r'<script type="application/json" id="dsh-messages">(.*?)</script>', chinese.text
    )
    assert data is not None
    messages = json.loads(data.group(1))
    assert messages["Skip"] == "跳过"
    assert messages["Plan review"] == "计划审阅"
    assert "<" not in data.group(1)  # no text in the block can end the element
    assert re.search(r'id="dsh-messages">\{\}</script>', english.text)


async def test_the_setting_wins_over_the_browser(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DSH_USER_QUESTIONS_LANG=zh_CN serves Chinese to an English browser."""
    monkeypatch.setenv("DSH_USER_QUESTIONS_LANG", "zh_CN")
    page = await client.get("", headers={"Accept-Language": "en-US"})
    assert '<html lang="zh-CN"' in page.text


async def test_a_not_pending_message_is_in_the_readers_language(
    web: WebProvider, client: httpx.AsyncClient
) -> None:
    """The message the page shows for a second answer follows its Accept-Language; the status
    and the outcome (for programs) do not change."""
    asking = await start_ask(web, request())
    post = {"id": asking.id, "answer": answer_of({"id": "pkg", "selected": ["pnpm"]})}
    assert (await client.post("answer", json=post)).status_code == 200
    chinese = await client.post("answer", json=post, headers={"Accept-Language": "zh-CN"})
    english = await client.post("answer", json=post, headers={"Accept-Language": "en"})
    assert chinese.status_code == english.status_code == 409
    assert chinese.json()["message"] == "这个问题已不再等待回答：它已经回答过了。"  # noqa: RUF001
    assert english.json()["message"] == (
        "This question is no longer pending: it was already answered."
    )
    assert {**chinese.json(), "message": ""} == {**english.json(), "message": ""}
    await asking.result()


async def test_a_rejected_answers_problems_are_shown_in_the_readers_language(
    web: WebProvider, client: httpx.AsyncClient
) -> None:
    """A 422: "problems" are the rules' English words (for programs, the same in every
    language); "shown" is what the page shows its reader, in the reader's language."""
    asking = await start_ask(web, request())
    post = {"id": asking.id, "answer": answer_of({"id": "pkg", "selected": ["bun"]})}
    chinese = await client.post("answer", json=post, headers={"Accept-Language": "zh-CN"})
    english = await client.post("answer", json=post, headers={"Accept-Language": "en"})
    assert chinese.status_code == english.status_code == 422
    said = 'answer.answers[0] (question "pkg") selects "bun", which is not one of its options'
    assert chinese.json()["problems"] == english.json()["problems"] == [said]
    assert english.json()["shown"] == [said]
    assert chinese.json()["shown"] == [
        'answer.answers[0]（问题 "pkg"）：选了 "bun"，它不是这个问题的选项'  # noqa: RUF001
    ]
    assert not asking.task.done()
