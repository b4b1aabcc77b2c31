"""The one-question link page over a provider of the test's own (httpx's ASGI transport)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from dsh_user_questions.link_page import LinkedQuestion, link_routes, link_url, with_links
from dsh_user_questions.links import make_link_token
from dsh_user_questions.rules import check_answer
from dsh_user_questions.testing import make_question, make_request

pytest.importorskip("starlette")  # a dependency of the mcp extra, and of both page providers

SECRET = b"s" * 32


class Questions:
    """Two pending questions; ``answers`` and ``cancelled`` record what the page did."""

    def __init__(self) -> None:
        self.linked = {
            "q-1": LinkedQuestion(
                request=make_request(make_question(question="Which <b>one</b>?\x1b[2J")),
                asker="laptop (agent planner)",
            ),
            "q-2": LinkedQuestion(
                request=make_request(make_question(question="Something else entirely?")),
                asker="laptop",
            ),
        }
        self.answers: list[tuple[str, dict[str, Any]]] = []

    async def get(self, question_id: str) -> LinkedQuestion | None:
        return self.linked.get(question_id)

    async def answer(self, question_id: str, wire: dict[str, Any]) -> str | None:
        linked = self.linked[question_id]
        assert linked.request is not None
        check_answer(linked.request, wire)  # BAD_ANSWER as the page must show it
        self.answers.append((question_id, wire))
        self.linked[question_id] = LinkedQuestion(None, linked.asker, "answered")
        return None

    async def cancel(self, question_id: str) -> object:
        self.linked[question_id] = LinkedQuestion(None, "laptop", "cancelled")
        return True


@pytest.fixture
def questions() -> Questions:
    return Questions()


@pytest.fixture
async def client(questions: Questions) -> AsyncIterator[httpx.AsyncClient]:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        from starlette.responses import PlainTextResponse

        await PlainTextResponse("the page behind its token")(scope, receive, send)

    routes = link_routes(
        secret=lambda: SECRET, get=questions.get, answer=questions.answer, cancel=questions.cancel
    )
    served = with_links(app, routes, lambda: {"answers.example"})
    transport = httpx.ASGITransport(app=served)
    async with httpx.AsyncClient(transport=transport, base_url="http://answers.example") as c:
        yield c


def path(question_id: str, expires_at: float | None = None) -> str:
    url = link_url("https://answers.example/", SECRET, question_id, expires_at=expires_at or 2e9)
    return url.removeprefix("https://answers.example")


async def test_a_link_shows_its_one_question_as_inert_escaped_text(
    client: httpx.AsyncClient,
) -> None:
    """The page names who asks and shows the question escaped, without control characters,
    and nothing of the other question; it loads no script."""
    page = await client.get(path("q-1"))
    assert page.status_code == 200
    assert "Which &lt;b&gt;one&lt;/b&gt;?" in page.text
    assert "\x1b" not in page.text
    assert "<script" not in page.text
    assert "laptop (agent planner)" in page.text
    assert "Something else" not in page.text
    assert "default-src 'none'" in page.headers["content-security-policy"]


async def test_an_answer_is_taken_once_and_then_the_outcome_is_shown(
    client: httpx.AsyncClient, questions: Questions
) -> None:
    """The form's pick becomes a wire answer; afterwards the link shows the outcome."""
    sent = await client.post(path("q-1"), data={"q0": "1", "action": "answer"})
    assert "Your answer was recorded." in sent.text
    assert questions.answers == [("q-1", {"answers": [{"id": "pkg", "selected": ["npm"]}]})]
    again = await client.get(path("q-1"))
    assert "This question has been answered." in again.text
    assert "<form" not in again.text


async def test_a_refused_answer_shows_the_problems_and_the_form_again(
    client: httpx.AsyncClient,
) -> None:
    """Text typed with a control character is refused with the rule's words (422)."""
    sent = await client.post(path("q-1"), data={"q0-custom": "bad\x07", "action": "answer"})
    assert sent.status_code == 422
    assert "control character U+0007" in sent.text
    assert "<form" in sent.text


async def test_close_without_answering(client: httpx.AsyncClient) -> None:
    closed = await client.post(path("q-2"), data={"action": "cancel"})
    assert "You closed the question." in closed.text
    assert "closed without an answer" in closed.text


@pytest.mark.parametrize(
    ("make", "status", "words"),
    [
        (lambda: path("q-1")[:-3] + "xyz", 403, "not valid"),
        (lambda: "/q/" + make_link_token(b"o" * 32, "q-1", expires_at=2e9), 403, "not valid"),
        (lambda: path("q-1", expires_at=time.time() - 1), 410, "expired"),
        (lambda: path("nobody"), 410, "gone"),
    ],
    ids=["tampered", "another-server", "expired", "unknown"],
)
async def test_a_bad_link_is_refused_with_a_clear_page(
    client: httpx.AsyncClient, make: Any, status: int, words: str
) -> None:
    page = await client.get(make())
    assert page.status_code == status
    assert words in page.text


async def test_only_links_pass_without_the_token_and_only_for_allowed_hosts(
    client: httpx.AsyncClient,
) -> None:
    """Anything but /q/ goes to the app; a link for a Host not allowed gets 421."""
    assert (await client.get("/anything")).text == "the page behind its token"
    refused = await client.get(path("q-1"), headers={"Host": "evil.example"})
    assert refused.status_code == 421
