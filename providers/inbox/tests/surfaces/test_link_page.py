"""One-question answer links: the page a notification's link opens, over a real store."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from dsh_user_questions import AskUserQuestionItem, AskUserQuestionOption, AskUserQuestionRequest
from dsh_user_questions._links import make_link_token
from starlette.applications import Starlette

from dsh_user_questions_inbox import Inbox, State, open_inbox
from dsh_user_questions_inbox._link_page import link_for, link_routes

SECRET = b"k" * 32


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Inbox]:
    inbox = open_inbox(f"sqlite:///{tmp_path / 'inbox.db'}")
    yield inbox
    inbox.close()


@pytest.fixture
async def client(store: Inbox) -> AsyncIterator[httpx.AsyncClient]:
    """The link routes over the store, served in process (httpx's ASGI transport)."""

    async def to_thread(function: Any, *args: Any) -> Any:
        return await asyncio.to_thread(function, *args)

    routes = link_routes(
        secret=lambda: SECRET,
        get=store.get,
        answer=lambda qid, answer, caller: store.answer(
            qid, answer, surface="link", by=caller.person
        ),
        cancel=lambda qid: store.settle(qid, State.CANCELLED, surface="link"),
        to_thread=to_thread,
    )
    transport = httpx.ASGITransport(app=Starlette(routes=routes))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as test_client:
        yield test_client


def pkg_request(**changes: Any) -> AskUserQuestionRequest:
    question = AskUserQuestionItem(
        id="pkg",
        header="Tooling",
        question="Which <b>package</b> manager?\x1b[2J",
        options=(
            AskUserQuestionOption("pnpm", "Fast", recommended=True),
            AskUserQuestionOption("npm"),
        ),
        **changes,
    )
    return AskUserQuestionRequest(questions=[question])


def path_of(link: str) -> str:
    return link.removeprefix("https://inbox.example")


async def test_a_link_opens_its_question_as_inert_escaped_text(
    store: Inbox, client: httpx.AsyncClient
) -> None:
    """The page shows the question with markup escaped and escapes as stand-ins, no script."""
    record = store.add(pkg_request(), harness="build-bot", agent="main")
    page = await client.get(path_of(link_for("https://inbox.example", SECRET, record)))
    assert page.status_code == 200
    text = page.text
    assert "Which &lt;b&gt;package&lt;/b&gt; manager?&lt;U+001B&gt;[2J" in text
    assert "\x1b" not in text
    assert "<script" not in text
    assert "build-bot (agent main)" in text
    assert "pnpm (recommended)" in text
    assert "script-src" not in page.headers["content-security-policy"]


async def test_answering_through_the_link_settles_that_question_once(
    store: Inbox, client: httpx.AsyncClient
) -> None:
    """A post records the answer; the link then shows the outcome and takes no second answer."""
    record = store.add(pkg_request(), harness="h")
    path = path_of(link_for("https://inbox.example", SECRET, record))
    done = await client.post(path, data={"q0": "1", "action": "answer"})
    assert "Your answer was recorded." in done.text
    settled = store.get(record.id)
    assert settled is not None
    assert settled.state is State.ANSWERED
    assert settled.answer == {
        "answers": [{"id": "pkg", "selected": ["npm"]}],
        "answered_by": "token",
    }
    again = await client.post(path, data={"q0": "0", "action": "answer"})
    assert "This question has been answered." in again.text
    assert store.get(record.id).answer == settled.answer  # type: ignore[union-attr]


async def test_a_link_sent_to_a_person_records_that_person(
    store: Inbox, client: httpx.AsyncClient
) -> None:
    """A link made for ana (one link per person notified) answers as ana; the recipient is
    signed with the link, so a changed one is refused."""
    record = store.add(pkg_request(), harness="h")
    path = path_of(link_for("https://inbox.example", SECRET, record, recipient="ana"))
    done = await client.post(path, data={"q0": "0", "action": "answer"})
    assert "Your answer was recorded." in done.text
    settled = store.get(record.id)
    assert settled is not None
    assert settled.answered_by == "ana"
    assert [(e.event, e.by) for e in store.events(record.id)][-1] == ("answered", "ana")
    other = store.add(pkg_request(), harness="h")
    token = path_of(link_for("https://inbox.example", SECRET, other, recipient="ana"))[3:]
    body, _, signature = token.partition(".")
    forged = base64.urlsafe_b64encode(
        json.dumps([*json.loads(base64.urlsafe_b64decode(body + "=="))[:2], "bo"]).encode()
    )
    refused = await client.post(
        f"/q/{forged.decode().rstrip('=')}.{signature}", data={"q0": "0", "action": "answer"}
    )
    assert refused.status_code == 403
    assert store.get(other.id).state is State.PENDING  # type: ignore[union-attr]


async def test_a_bad_answer_is_refused_with_the_core_rules(
    store: Inbox, client: httpx.AsyncClient
) -> None:
    """Typed text with a terminal escape is refused (rules.check_answer), nothing stored."""
    record = store.add(pkg_request(), harness="h")
    path = path_of(link_for("https://inbox.example", SECRET, record))
    refused = await client.post(path, data={"q0-custom": "hi\x1b[2J", "action": "answer"})
    assert refused.status_code == 422
    assert "control character U+001B" in refused.text
    assert store.get(record.id).state is State.PENDING  # type: ignore[union-attr]


async def test_a_link_opens_nothing_but_its_question(
    store: Inbox, client: httpx.AsyncClient
) -> None:
    """A link for one question never shows another, and the page lists nothing."""
    first = store.add(pkg_request(), harness="h")
    other = store.add(
        AskUserQuestionRequest(questions=[AskUserQuestionItem(id="x", question="Secret plan?")]),
        harness="h",
    )
    page = await client.get(path_of(link_for("https://inbox.example", SECRET, first)))
    assert "Secret plan?" not in page.text
    assert other.id not in page.text
    assert len(re.findall(r"<form", page.text)) == 1


@pytest.mark.parametrize(
    ("token", "status", "says"),
    [
        (make_link_token(SECRET, "nope", expires_at=1), 410, "this link has expired"),
        (make_link_token(b"z" * 32, "nope", expires_at=10**10), 403, "not valid"),
        ("garbage", 403, "not valid"),
    ],
)
async def test_tampered_or_expired_links_get_a_clear_page(
    client: httpx.AsyncClient, token: str, status: int, says: str
) -> None:
    """An expired link is 410, a tampered or foreign one 403, each saying so."""
    page = await client.get(f"/q/{token}")
    assert page.status_code == status
    assert says in page.text


async def test_a_secret_question_is_typed_masked(store: Inbox, client: httpx.AsyncClient) -> None:
    """A secret question's field is a password input with autocomplete off."""
    secret = AskUserQuestionRequest(
        questions=[AskUserQuestionItem(id="token", question="API token?", secret=True)]
    )
    record = store.add(secret, harness="h")
    page = await client.get(path_of(link_for("https://inbox.example", SECRET, record)))
    assert 'type=password id="q0-custom" name="q0-custom" autocomplete=off' in page.text


async def test_closing_through_the_link_cancels(store: Inbox, client: httpx.AsyncClient) -> None:
    """The close button asks once more; the confirmation cancels the question."""
    record = store.add(pkg_request(), harness="h")
    path = path_of(link_for("https://inbox.example", SECRET, record))
    asked = await client.post(path, data={"action": "cancel"})
    assert "Yes, close it" in asked.text
    assert store.get(record.id).state is State.PENDING  # type: ignore[union-attr]
    page = await client.post(path, data={"action": "close"})
    assert "closed without an answer" in page.text
    assert store.get(record.id).state is State.CANCELLED  # type: ignore[union-attr]
