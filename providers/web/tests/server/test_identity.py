"""Who a person on the page is (#37): the web provider behind a logging-in proxy.

The provider trusts 127.0.0.2 as its proxy; a client standing in for the proxy connects from
127.0.0.2 (httpx's ``local_address``), anyone else from 127.0.0.1 (any loopback address
reaches a server on 127.0.0.1 on Linux).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest
from conftest import WAIT_SECONDS, EventStream, item, request, wait_until
from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionInput,
    AskUserQuestionItem,
    AskUserQuestionRequest,
)
from dsh_user_questions.plan_review import plan_review_question

from dsh_user_questions_web import WebProvider

PROXY = "127.0.0.2"
HEADER = "X-Forwarded-User"


@pytest.fixture
async def web() -> AsyncIterator[WebProvider]:
    provider = WebProvider(announce=False, identity_header=HEADER, trusted_proxies=[f"{PROXY}/32"])
    await provider.start()
    yield provider
    await provider.stop()


def client(web: WebProvider, *, through_proxy: bool = True) -> httpx.AsyncClient:
    transport = httpx.AsyncHTTPTransport(local_address=PROXY if through_proxy else "127.0.0.1")
    return httpx.AsyncClient(base_url=web.url or "", transport=transport, timeout=WAIT_SECONDS)


def as_person(name: str) -> dict[str, str]:
    return {HEADER: name}


async def pending_ids(web: WebProvider, person: str) -> list[str]:
    async with client(web) as http:
        shown = await http.get("state", headers=as_person(person))
    assert shown.status_code == 200
    return [ask["id"] for ask in shown.json()["pending"]]


async def ask_and_find(
    web: WebProvider, req: AskUserQuestionRequest
) -> tuple[asyncio.Task[Any], str]:
    """Start ``web.ask(req)``; its task and its id (read from the page as a person it admits)."""
    before = web.pending_count
    task = asyncio.ensure_future(web.ask(req))
    await wait_until(lambda: web.pending_count > before, "the ask to be on the board")
    return task, (await pending_ids(web, req.audience[0] if req.audience else "ana"))[-1]


def pkg_answer(ask_id: str, label: str = "npm") -> dict[str, Any]:
    return {"id": ask_id, "answer": {"answers": [{"id": "pkg", "selected": [label]}]}}


async def test_a_person_named_by_the_trusted_proxy_answers_as_themselves(web: WebProvider) -> None:
    task, ask_id = await ask_and_find(web, request())
    async with client(web) as http:
        posted = await http.post("answer", json=pkg_answer(ask_id), headers=as_person("ana"))
    assert posted.json()["status"] == "accepted"
    answer: AskUserQuestionAnswer = await asyncio.wait_for(task, WAIT_SECONDS)
    assert answer.answered_by == "ana"


async def test_without_the_header_the_answer_is_refused_401_and_nothing_taken(
    web: WebProvider,
) -> None:
    task, ask_id = await ask_and_find(web, request())
    async with client(web) as http:
        posted = await http.post("answer", json=pkg_answer(ask_id))
        page = await http.get("")
    assert posted.status_code == 401
    assert page.status_code == 401
    assert "sign in" in posted.text
    assert web.pending_count == 1
    assert not task.done()
    task.cancel()


async def test_the_header_from_another_address_is_ignored_logged_and_refused_403(
    web: WebProvider, caplog: pytest.LogCaptureFixture
) -> None:
    task, ask_id = await ask_and_find(web, request())
    with caplog.at_level(logging.WARNING, "dsh_user_questions.identity"):
        async with client(web, through_proxy=False) as http:
            posted = await http.post(
                "answer", json=pkg_answer(ask_id), headers=as_person("ana\x1b[2J")
            )
            events = await http.get("events", headers=as_person("ana"))
    assert posted.status_code == 403
    assert events.status_code == 403
    assert "only through its logging-in proxy" in posted.text
    assert web.pending_count == 1
    assert not task.done()
    assert "ignored the identity header x-forwarded-user from 127.0.0.1" in caplog.text
    assert "ana<U+001B>[2J" in caplog.text
    assert "\x1b" not in caplog.text
    task.cancel()


async def test_the_page_shows_a_person_only_the_questions_for_them(web: WebProvider) -> None:
    """ana sees the question for her and the open one; bo only the open one, on the snapshot
    and in the stream; bo's answer to ana's question is refused with the core's message."""
    for_ana, ana_id = await ask_and_find(web, request(audience=("ana",)))
    async with client(web) as http, http.stream("GET", "events", headers=as_person("bo")) as got:
        stream = EventStream(got)
        name, snapshot = await stream.next()
        assert name == "snapshot"
        assert snapshot["pending"] == []
        open_task, open_id = await ask_and_find(web, request(item("pkg")))
        for_ana_too, ana_too = await ask_and_find(web, request(audience=("ana",)))
        name, added = await stream.next()
        assert (name, added["id"]) == ("added", open_id)  # the one for ana never came
        refused = await http.post("answer", json=pkg_answer(ana_id), headers=as_person("bo"))
    assert refused.status_code == 403
    assert refused.json() == {
        "status": "refused",
        "id": ana_id,
        "message": "bo may not answer this question: it is for ana",
    }
    assert not for_ana.done()
    assert await pending_ids(web, "ana") == [ana_id, open_id, ana_too]
    assert await pending_ids(web, "bo") == [open_id]
    for task in (for_ana, open_task, for_ana_too):
        task.cancel()


def two_approvals() -> AskUserQuestionRequest:
    question = plan_review_question("# Deploy\n\nShip it to production.")
    assert question.intent is not None
    review = attrs.evolve(question, intent=attrs.evolve(question.intent, approvals=2))
    return AskUserQuestionRequest(questions=[review], audience=("ana", "bo", "cy"))


async def test_two_approvals_one_person_counts_once(web: WebProvider) -> None:
    """ana approves twice (two tabs): counted once, "approved by ana (1 of 2)"; bo's approval
    settles it, answered by bo."""
    task, ask_id = await ask_and_find(web, two_approvals())
    question = two_approvals().questions[0]
    approve = {"id": ask_id, "answer": {"answers": [{"id": question.id, "selected": ["Approve"]}]}}
    async with client(web) as http:
        first = await http.post("answer", json=approve, headers=as_person("ana"))
        again = await http.post("answer", json=approve, headers=as_person("ana"))
        assert (
            first.json()
            == again.json()
            == {
                "status": "counted",
                "id": ask_id,
                "approvedBy": ["ana"],
                "needed": 2,
                "message": "approved by ana (1 of 2)",
            }
        )
        assert not task.done()
        last = await http.post("answer", json=approve, headers=as_person("bo"))
    assert last.json()["status"] == "accepted"
    answer: AskUserQuestionAnswer = await asyncio.wait_for(task, WAIT_SECONDS)
    assert answer.answered_by == "bo"


async def test_a_rejection_settles_a_two_approval_review_at_once(web: WebProvider) -> None:
    task, ask_id = await ask_and_find(web, two_approvals())
    question = two_approvals().questions[0]
    keep = {
        "id": ask_id,
        "answer": {"answers": [{"id": question.id, "selected": [], "custom": "Not on Friday."}]},
    }
    async with client(web) as http:
        posted = await http.post("answer", json=keep, headers=as_person("cy"))
    assert posted.json()["status"] == "accepted"
    answer: AskUserQuestionAnswer = await asyncio.wait_for(task, WAIT_SECONDS)
    assert answer.answered_by == "cy"


def test_bad_settings_name_the_setting() -> None:
    with pytest.raises(ValueError, match="trusted_proxies: 'ten' is not an IP address"):
        WebProvider(identity_header=HEADER, trusted_proxies=["ten"])
    with pytest.raises(ValueError, match="DSH_USER_QUESTIONS_WEB_IDENTITY_HEADER: 'X User'"):
        WebProvider.from_env(
            {
                "DSH_USER_QUESTIONS_WEB_IDENTITY_HEADER": "X User",
                "DSH_USER_QUESTIONS_WEB_TRUSTED_PROXIES": "127.0.0.1",
            }
        )
    with pytest.raises(ValueError, match="DSH_USER_QUESTIONS_WEB_IDENTITY_HEADER needs"):
        WebProvider.from_env({"DSH_USER_QUESTIONS_WEB_IDENTITY_HEADER": HEADER})


async def test_an_outsider_can_neither_upload_to_nor_list_the_files_of_a_question_not_for_them(
    web: WebProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bo's upload to ana's upload question is refused 403 before a byte is kept, and bo may not
    list the candidates of ana's file question; ana's own upload is taken."""
    uploads = tmp_path / "uploads"
    monkeypatch.setenv("DSH_USER_QUESTIONS_UPLOADS", str(uploads))
    root = tmp_path / "work"
    root.mkdir()
    (root / "notes.txt").write_text("hi")
    send = AskUserQuestionItem(
        id="q", question="Send it", input=AskUserQuestionInput(type="upload", max_bytes=1000)
    )
    pick = AskUserQuestionItem(
        id="f", question="Which file?", input=AskUserQuestionInput(type="files", root=str(root))
    )
    task, ask_id = await ask_and_find(web, request(send, pick, audience=("ana",)))
    params = {"ask": ask_id, "question": "q", "name": "notes.txt"}
    body, kind = b"hello", {"Content-Type": "text/plain"}
    async with client(web) as http:
        by_bo = await http.post(
            "upload", params=params, content=body, headers={**kind, **as_person("bo")}
        )
        listed = await http.get(
            "files", params={"ask": ask_id, "question": "f"}, headers=as_person("bo")
        )
        assert not uploads.exists() or not any(path.is_file() for path in uploads.rglob("*"))
        by_ana = await http.post(
            "upload", params=params, content=body, headers={**kind, **as_person("ana")}
        )
    assert by_bo.status_code == 403
    assert by_bo.json() == {
        "status": "refused",
        "message": "bo may not answer this question: it is for ana",
    }
    assert listed.status_code == 403
    assert by_ana.status_code == 200, by_ana.text
    assert any(path.is_file() for path in uploads.rglob("*"))
    task.cancel()
