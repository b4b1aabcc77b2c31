"""Notifications from the web provider (Apprise ``json://`` to a receiver on 127.0.0.1) and the
one-question links they carry, over real HTTP."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from conftest import item, request, wait_until
from dsh_user_questions import AskUserQuestionAnswer, UserQuestionError, plugin
from dsh_user_questions._notify import Notifier
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import json_receiver

from dsh_user_questions_web import WebProvider

LINK = re.compile(r"Answer: (\S+)")


@pytest.fixture
def receiver() -> Iterator[tuple[int, list[dict[str, Any]]]]:
    with json_receiver() as found:
        yield found


@pytest.fixture
async def notified(
    receiver: tuple[int, list[dict[str, Any]]],
) -> AsyncIterator[tuple[WebProvider, HarnessContext]]:
    """A web provider that notifies the receiver (a reminder after 0.5 s), in a harness."""
    port, _ = receiver
    provider = WebProvider(
        announce=False, notifier=Notifier([f"json://127.0.0.1:{port}/"]), remind=0.5
    )
    ctx = HarnessContext()
    ctx.register(plugin)
    ctx.user_questions.register_provider(provider)
    await provider.start()
    try:
        yield provider, ctx
    finally:
        await provider.stop()
        await ctx.aclose()


def link_of(message: dict[str, Any]) -> str:
    found = LINK.search(message["message"])
    assert found is not None, message
    return found.group(1)


async def test_one_notification_per_question_with_a_link_to_that_question_only(
    notified: tuple[WebProvider, HarnessContext], receiver: tuple[int, list[dict[str, Any]]]
) -> None:
    """Each ask sends one plain-text message whose link opens its question and nothing else,
    never the page's token; the link takes the answer, then shows the outcome."""
    provider, ctx = notified
    _, got = receiver
    first = asyncio.ensure_future(
        ctx.user_questions.ask(request(item(question="Which <b>package</b> manager?")))
    )
    await wait_until(lambda: len(got) == 1, "the first notification")
    second = asyncio.ensure_future(
        ctx.user_questions.ask(request(item("db", "Which database?", ("postgres", "sqlite"))))
    )
    await wait_until(lambda: len(got) == 2, "the second notification")
    link = link_of(got[0])
    assert provider.token not in got[0]["message"]
    assert provider.token not in link
    assert "Which <b>package</b> manager?" in got[0]["message"]  # plain text, as the model wrote it
    async with httpx.AsyncClient(timeout=10) as client:
        page = await client.get(link)
        assert page.status_code == 200
        assert "Which &lt;b&gt;package&lt;/b&gt; manager?" in page.text
        assert "database" not in page.text  # the other question is not reachable from here
        tampered = await client.get(link[:-2] + ("AA" if not link.endswith("AA") else "BB"))
        assert tampered.status_code == 403
        sent = await client.post(link, data={"q0": "1", "action": "answer"})
        assert "Your answer was recorded." in sent.text
        assert await asyncio.wait_for(first, 10) == AskUserQuestionAnswer.from_dict(
            {"answers": [{"id": "pkg", "selected": ["npm"]}], "answered_by": "token"}
        )
        again = await client.get(link)
        assert "This question has been answered." in again.text
        asked = await client.post(link_of(got[1]), data={"action": "cancel"})
        assert "Close without answering?" in asked.text
        closed = await client.post(link_of(got[1]), data={"action": "close"})
        assert "You closed the question." in closed.text
    with pytest.raises(UserQuestionError) as info:
        await asyncio.wait_for(second, 10)
    assert info.value.code == "ASK_CANCELLED"
    await asyncio.sleep(0.8)  # past the reminder delay: both were settled, so no reminder
    assert len(got) == 2


async def test_a_question_still_waiting_gets_one_reminder(
    notified: tuple[WebProvider, HarnessContext], receiver: tuple[int, list[dict[str, Any]]]
) -> None:
    """After the reminder delay, an unanswered question gets exactly one reminder."""
    _, ctx = notified
    _, got = receiver
    asking = asyncio.ensure_future(ctx.user_questions.ask(request()))
    await wait_until(lambda: len(got) == 2, "the notification and its reminder")
    assert got[0]["title"].startswith("A question is waiting")
    assert got[1]["title"].startswith("Reminder: still waiting")
    assert link_of(got[0]) == link_of(got[1])
    await asyncio.sleep(1.2)
    assert len(got) == 2
    asking.cancel()


async def test_a_public_url_starts_the_link_and_its_host_is_allowed(
    receiver: tuple[int, list[dict[str, Any]]],
) -> None:
    """With public_url, links start with it and a request for that host is served; any other
    Host header is refused (421)."""
    port, got = receiver
    provider = WebProvider(
        announce=False,
        notifier=Notifier([f"json://127.0.0.1:{port}/"]),
        public_url="https://answers.example/",
    )
    await provider.start()
    try:
        asking = asyncio.ensure_future(provider.ask(request()))
        await wait_until(lambda: len(got) == 1, "the notification")
        link = link_of(got[0])
        assert link.startswith("https://answers.example/q/")
        assert provider.url is not None
        local = provider.url.split("/" + provider.token, 1)[0] + link.removeprefix(
            "https://answers.example"
        )
        async with httpx.AsyncClient(timeout=10) as client:
            page = await client.get(local, headers={"Host": "answers.example"})
            assert page.status_code == 200
            assert "Which package manager?" in page.text
            elsewhere = await client.get(local, headers={"Host": "evil.example"})
            assert elsewhere.status_code == 421
        asking.cancel()
    finally:
        await provider.stop()


def test_from_env_reads_the_notify_variables_and_the_public_url() -> None:
    """from_env builds the notifier, the reminder and the public URL from the environment."""
    provider = WebProvider.from_env(
        {
            "DSH_USER_QUESTIONS_NOTIFY": "json://127.0.0.1:9/",
            "DSH_USER_QUESTIONS_NOTIFY_REMIND": "90",
            "DSH_USER_QUESTIONS_WEB_PUBLIC_URL": "https://answers.example",
        }
    )
    assert provider._notifier is not None
    assert provider._notifier.targets == ("json://127.0.0.1:9/",)
    assert provider._remind == 90.0
    assert provider._public_url == "https://answers.example"
    with pytest.raises(ValueError, match="public URL"):
        WebProvider(public_url="ftp://answers.example")
