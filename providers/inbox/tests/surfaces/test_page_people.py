"""The inbox page and its people (#37), in process: `InboxBoard` under the web provider's app
with a logging-in proxy's identity (trusted: 127.0.0.3), over httpx's ASGI transport, whose
``client`` is the TCP peer the app sees. On SQLite and PostgreSQL."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from _requests import PKG
from dsh_user_questions._identity import ProxyIdentity
from dsh_user_questions_web.app import create_app

from dsh_user_questions_inbox import Inbox, State
from dsh_user_questions_inbox._board import InboxBoard

TOKEN = "people-test-token-0123456789"
PROXY = "127.0.0.3"


@pytest.fixture
async def board(inbox: Inbox) -> AsyncIterator[InboxBoard]:
    made = InboxBoard(inbox)
    await made.start()
    yield made
    await made.close("the test ended")


def page(board: InboxBoard, peer: str = PROXY) -> httpx.AsyncClient:
    identity = ProxyIdentity.from_settings("X-Forwarded-User", [f"{PROXY}/32"])
    app = create_app(board, token=TOKEN, allowed_hosts=lambda: {"testserver"}, identity=identity)
    transport = httpx.ASGITransport(app=app, client=(peer, 40000))
    return httpx.AsyncClient(transport=transport, base_url=f"http://testserver/{TOKEN}/")


def as_person(name: str) -> dict[str, str]:
    return {"X-Forwarded-User": name}


def pkg(**fields: Any) -> dict[str, Any]:
    return {**PKG, **fields}


def answer(question_id: str, label: str = "npm") -> dict[str, Any]:
    return {"id": question_id, "answer": {"answers": [{"id": "pkg", "selected": [label]}]}}


def events_of(inbox: Inbox, question_id: str) -> list[tuple[str, str | None, str | None]]:
    return [(e.event, e.by, e.address) for e in inbox.events(question_id)]


async def test_an_answer_without_the_header_is_refused_401_nothing_recorded(
    inbox: Inbox, board: InboxBoard
) -> None:
    record = inbox.add(pkg(), harness="laptop")
    async with page(board) as http:
        posted = await http.post("answer", json=answer(record.id))
    assert posted.status_code == 401
    assert inbox.get(record.id).state is State.PENDING  # type: ignore[union-attr]
    assert events_of(inbox, record.id) == [("asked", None, None)]


async def test_the_header_from_an_untrusted_peer_is_refused_403_nothing_recorded(
    inbox: Inbox, board: InboxBoard, caplog: pytest.LogCaptureFixture
) -> None:
    record = inbox.add(pkg(), harness="laptop")
    with caplog.at_level(logging.WARNING, "dsh_user_questions.identity"):
        async with page(board, peer="10.9.8.7") as http:
            posted = await http.post("answer", json=answer(record.id), headers=as_person("ana"))
            closed = await http.post("cancel", json={"id": record.id}, headers=as_person("ana"))
    assert posted.status_code == closed.status_code == 403
    assert inbox.get(record.id).state is State.PENDING  # type: ignore[union-attr]
    assert events_of(inbox, record.id) == [("asked", None, None)]
    assert "ignored the identity header x-forwarded-user from 10.9.8.7" in caplog.text


async def test_a_person_answers_as_themselves_from_the_proxys_address(
    inbox: Inbox, board: InboxBoard
) -> None:
    record = inbox.add(pkg(), harness="laptop")
    async with page(board) as http:
        opened = await http.post("opened", json={"id": record.id}, headers=as_person("ana"))
        posted = await http.post("answer", json=answer(record.id), headers=as_person("ana"))
    assert opened.status_code == 200
    assert posted.json()["status"] in ("accepted", "kept")
    assert inbox.get(record.id).answered_by == "ana"  # type: ignore[union-attr]
    assert ("opened", "ana", PROXY) in events_of(inbox, record.id)
    assert ("answered", "ana", PROXY) in events_of(inbox, record.id)


async def test_an_outsider_is_refused_on_the_page_with_the_cores_message(
    inbox: Inbox, board: InboxBoard
) -> None:
    """bo sees neither the question for ana nor its history; his answer and his close are
    refused with the core's message, logged as refused, and nothing else is recorded (not
    even an ``opened`` he claims)."""
    for_ana = inbox.add(pkg(audience=["ana"]), harness="laptop")
    for_all = inbox.add(pkg(), harness="laptop")
    async with page(board) as http:
        bo_sees = (await http.get("state", headers=as_person("bo"))).json()["pending"]
        ana_sees = (await http.get("state", headers=as_person("ana"))).json()["pending"]
        posted = await http.post("answer", json=answer(for_ana.id), headers=as_person("bo"))
        closed = await http.post("cancel", json={"id": for_ana.id}, headers=as_person("bo"))
        history = await http.get(f"history?ask={for_ana.id}", headers=as_person("bo"))
        await http.post("opened", json={"id": for_ana.id}, headers=as_person("bo"))
    assert [ask["id"] for ask in bo_sees] == [for_all.id]
    assert [ask["id"] for ask in ana_sees] == [for_ana.id, for_all.id]
    assert posted.status_code == closed.status_code == 403
    message = "bo may not answer this question: it is for ana"
    assert posted.json() == {"status": "refused", "id": for_ana.id, "message": message}
    assert closed.json()["message"] == message
    assert history.status_code == 404
    stored = inbox.get(for_ana.id)
    assert stored is not None
    assert stored.state is State.PENDING
    assert stored.answer is None
    assert [step for step in events_of(inbox, for_ana.id) if step[0] != "asked"] == [
        ("refused", "bo", PROXY),
        ("refused", "bo", PROXY),
    ]


async def test_the_history_shows_events_never_an_answers_text(
    inbox: Inbox, board: InboxBoard
) -> None:
    """The history is the log's events: who, where, when; no answer's words (so a secret's
    never either: the log holds none)."""
    record = inbox.add(pkg(), harness="laptop")
    words = "hunter2-the-words"
    async with page(board) as http:
        posted = await http.post(
            "answer",
            json={"id": record.id, "answer": {"answers": [{"id": "pkg", "custom": words}]}},
            headers={"X-Forwarded-User": "ana\u202eevil".encode()},
        )
        assert posted.status_code == 401  # a bidi override is no person id
        posted = await http.post(
            "answer",
            json={"id": record.id, "answer": {"answers": [{"id": "pkg", "custom": words}]}},
            headers=as_person("ana"),
        )
        assert posted.json()["status"] in ("accepted", "kept"), posted.json()
        history = await http.get(f"history?ask={record.id}", headers=as_person("bo"))
    assert history.status_code == 200
    lines = [event["text"] for event in history.json()["events"]]
    assert lines[0] == "asked on harness"
    assert "answered by ana on web" in lines
    assert words not in history.text
