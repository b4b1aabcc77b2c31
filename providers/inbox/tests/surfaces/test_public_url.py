"""The public URL in notifications matches how the store is served now: published while a
``dsh-inbox serve --public-url`` runs, withdrawn when it stops, stale once not renewed."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import time
from pathlib import Path
from typing import cast

import httpx
import pytest
from _processes import DSH_INBOX
from dsh_user_questions import (
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
)
from dsh_user_questions._notify import Notification, Notifier

from dsh_user_questions_inbox import open_inbox
from dsh_user_questions_inbox._notices import LINKS_FRESH_FOR, Notices, QuestionNotifier


class CollectingNotifier:
    """A notifier that keeps what it would send (no network, no Apprise)."""

    def __init__(self) -> None:
        self.sent: list[Notification] = []
        self.arrived = asyncio.Event()

    async def send(self, note: Notification) -> bool:
        self.sent.append(note)
        self.arrived.set()
        return True


def pkg_request() -> AskUserQuestionRequest:
    options = (AskUserQuestionOption("pnpm"), AskUserQuestionOption("npm"))
    question = AskUserQuestionItem(id="pkg", question="Which package manager?", options=options)
    return AskUserQuestionRequest(questions=[question])


def serve_once(url: str, public_url: str) -> None:
    """Run ``dsh-inbox serve --public-url`` until it serves, then stop it with SIGTERM."""
    process = subprocess.Popen(
        [DSH_INBOX, "--inbox", url, "serve", "--port", "0", "--token", "t" * 20,
         "--public-url", public_url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("dsh-inbox: serving"), line + process.communicate()[1]
    process.terminate()
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err


class TestTheLinkMatchesHowTheStoreIsServed:
    async def test_after_the_server_stops_notifications_say_how_to_answer_without_a_link(
        self, tmp_path: Path
    ) -> None:
        """Once ``serve --public-url`` stopped, a notification carries no link to it and says
        ``dsh-inbox answer ID`` instead."""
        url = f"sqlite:///{tmp_path / 'inbox.db'}"
        serve_once(url, "https://questions.example/inbox")
        inbox = open_inbox(url)
        try:
            fake = CollectingNotifier()
            notifier = QuestionNotifier(inbox, cast(Notifier, fake))
            record = inbox.add(pkg_request(), harness="laptop")
            notifier.question_waiting(record)
            await asyncio.wait_for(fake.arrived.wait(), 30)
            await notifier.aclose()
            assert [note.link for note in fake.sent] == [None]
            assert f"dsh-inbox answer {record.id}" in fake.sent[0].body
            assert "questions.example" not in fake.sent[0].text()
        finally:
            inbox.close()

    def test_a_published_url_counts_only_while_it_is_renewed(self, tmp_path: Path) -> None:
        """A published URL is used at once, no longer once not renewed for LINKS_FRESH_FOR
        seconds (a server killed without its clean stop); published again, it keeps the
        secret, so links sent earlier open again."""
        inbox = open_inbox(f"sqlite:///{tmp_path / 'inbox.db'}")
        try:
            notices = Notices(inbox)
            secret = notices.publish_links("https://questions.example")
            assert notices.link_settings() == ("https://questions.example", secret)
            later = time.time() + LINKS_FRESH_FOR + 1
            assert notices.link_settings(now=later) is None
            notices.withdraw_links("https://questions.example")
            assert notices.publish_links("https://questions.example") == secret
        finally:
            inbox.close()

    def test_a_stopping_server_withdraws_only_its_own_url(self, tmp_path: Path) -> None:
        """Withdrawing a URL another server has published since leaves that one in place."""
        inbox = open_inbox(f"sqlite:///{tmp_path / 'inbox.db'}")
        try:
            notices = Notices(inbox)
            notices.publish_links("https://old.example")
            secret = notices.publish_links("https://new.example")
            notices.withdraw_links("https://old.example")
            assert notices.link_settings() == ("https://new.example", secret)
            notices.withdraw_links("https://new.example")
            assert notices.link_settings() is None
        finally:
            inbox.close()


@pytest.mark.parametrize(
    ("given", "allowed", "refused"),
    [
        (["box.internal"], ["box.internal", "box.internal:443", "box.internal:8765"], ["evil"]),
        (["box.internal:9000"], ["box.internal:9000"], ["box.internal", "box.internal:8765"]),
    ],
)
def test_an_allowed_host_name_without_a_port_allows_any_port(
    given: list[str], allowed: list[str], refused: list[str]
) -> None:
    """``--allowed-host NAME`` allows NAME with any port or none; ``NAME:PORT`` that port."""
    from dsh_user_questions._links import host_allowed

    from dsh_user_questions_inbox._serve import _hosts

    hosts = _hosts("127.0.0.1", 8765, given, "https://questions.example/inbox")
    assert all(host_allowed(host, hosts) for host in [*allowed, "questions.example"])
    assert not any(host_allowed(host, hosts) for host in refused)


class TestAnHttpsPublicUrlAdmitsOnlyItsOrigin:
    def test_its_name_over_http_is_refused_loopback_and_allowed_hosts_are_not(
        self, tmp_path: Path
    ) -> None:
        """``serve --public-url https://questions.example/inbox --allowed-host box.lan``: a post
        on the public name from ``http://`` (or a plain-http proxy port of it) is 403, on the
        page and on the link page; the https origin, loopback and the allowed name pass."""
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        token = "t" * 20
        process = subprocess.Popen(
            [DSH_INBOX, "--inbox", f"sqlite:///{tmp_path / 'inbox.db'}", "serve",
             "--port", str(port), "--token", token,
             "--public-url", "https://questions.example/inbox", "--allowed-host", "box.lan"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert line.startswith("dsh-inbox: serving"), line + process.communicate()[1]
            base = f"http://127.0.0.1:{port}"
            with httpx.Client(base_url=base) as client:

                def post(where: str, host: str, origin: str) -> httpx.Response:
                    return client.post(
                        where, json={"id": "none"}, headers={"Host": host, "Origin": origin}
                    )

                page, link = f"/inbox/{token}/cancel", "/inbox/q/any-token"
                for origin in ("http://questions.example", "http://questions.example:8080"):
                    for where in (page, link):
                        refused = post(where, "questions.example", origin)
                        assert refused.status_code == 403, (where, origin)
                        assert refused.text == "forbidden: cross-origin request"
                for host, origin in [
                    ("questions.example", "https://questions.example"),
                    (f"127.0.0.1:{port}", base),
                    (f"localhost:{port}", f"http://localhost:{port}"),
                    ("box.lan", "http://box.lan"),
                ]:
                    taken = post(page, host, origin)
                    assert taken.text != "forbidden: cross-origin request", (host, origin)
                    assert taken.status_code != 403, (host, origin, taken.text)
        finally:
            process.terminate()
            process.communicate(timeout=60)
