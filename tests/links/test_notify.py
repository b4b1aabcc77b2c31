"""Notifications through Apprise to receivers of the test's own on 127.0.0.1."""

from __future__ import annotations

import asyncio
import http.server
import json
import logging
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dsh_user_questions import AskUserQuestionItem, AskUserQuestionRequest
from dsh_user_questions._notify import (
    NOTIFY_ENV,
    REMIND_ENV,
    Notification,
    Notifier,
    notification_for,
    redact_url,
    remind_after,
)
from dsh_user_questions.testing import make_question, make_request

pytest.importorskip("apprise")


class Receiver:
    """An HTTP receiver: records posts; ``mode`` "ok", "fail" (500) or "hang" (never answers)."""

    def __init__(self, mode: str = "ok") -> None:
        self.posts: list[tuple[str, str, bytes]] = []
        self.mode = mode
        self.release = threading.Event()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                receiver.posts.append(
                    (self.path, self.headers.get("Content-Type", ""), self.rfile.read(length))
                )
                if receiver.mode == "hang":
                    receiver.release.wait(30)
                self.send_response(500 if receiver.mode == "fail" else 200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


def waiting() -> AskUserQuestionRequest:
    return make_request(
        make_question(header="Tooling\x1b[31m", question="Which <b>package</b> manager?\u202e"),
        AskUserQuestionItem(id="name", question="Project name?"),
    )


def test_the_notification_names_who_asks_and_every_question_as_inert_text() -> None:
    """Title and body are plain inert text: escapes and bidi become stand-ins, tags stay text."""
    note = notification_for(waiting(), asker="build-bot (agent main)", link="https://x.test/q/1")
    assert note.title == "A question is waiting: Tooling<U+001B>[31m"
    assert note.body == (
        "build-bot (agent main) asks:\n"
        "- Tooling<U+001B>[31m: Which <b>package</b> manager?<U+202E>\n"
        "- Project name?"
    )
    assert note.text().endswith("\n\nAnswer: https://x.test/q/1")


async def test_json_and_form_receivers_get_one_plain_text_message(receiver: Receiver) -> None:
    """json:// and form:// deliver the title, the body and the link, once each."""
    notifier = Notifier(
        [f"json://127.0.0.1:{receiver.port}/hook", f"form://127.0.0.1:{receiver.port}/form"]
    )
    note = notification_for(waiting(), asker="bot", link="http://127.0.0.1:9/q/abc")
    assert await notifier.send(note) is True
    by_path = {path: (kind, body) for path, kind, body in receiver.posts}
    assert sorted(by_path) == ["/form", "/hook"]
    sent = json.loads(by_path["/hook"][1])
    assert (sent["title"], sent["message"]) == (note.title, note.text())
    form = urllib.parse.parse_qs(by_path["/form"][1].decode())
    assert form["message"] == [note.text()]


async def test_mailto_reaches_a_local_smtp_server() -> None:
    """mailto:// to an aiosmtpd server on 127.0.0.1 delivers a text/plain mail."""
    controller_module = pytest.importorskip("aiosmtpd.controller")
    got: list[bytes] = []

    class Handler:
        async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
            got.append(envelope.content)  # type: ignore[attr-defined]
            return "250 OK"

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = controller_module.Controller(Handler(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        notifier = Notifier(
            [
                f"mailto://example.com?smtp=127.0.0.1&port={port}&from=bot@example.com"
                "&to=me@example.com&mode=insecure"
            ]
        )
        assert await notifier.send(notification_for(waiting(), asker="bot")) is True
    finally:
        controller.stop()
    [mail] = got
    assert b"Content-Type: text/plain" in mail
    assert b"A question is waiting: Tooling<U+001B>[31m" in mail


async def test_a_failing_receiver_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    """A 500 makes send() return False and log a warning; nothing raises."""
    failing = Receiver("fail")
    try:
        notifier = Notifier([f"json://127.0.0.1:{failing.port}/hook"])
        assert await notifier.send(Notification(title="t", body="b")) is False
    finally:
        failing.close()
    assert "refused" in caplog.text


async def test_a_hanging_receiver_never_delays_past_the_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A receiver that never answers costs the caller at most the timeout; the loop stays free."""
    caplog.set_level(logging.INFO, logger="dsh_user_questions.notify")
    hanging = Receiver("hang")
    try:
        notifier = Notifier([f"json://127.0.0.1:{hanging.port}/hook"], timeout=0.5)
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.ensure_future(tick())
        assert await notifier.send(Notification(title="t", body="b")) is False
        ticker.cancel()
        assert ticks > 5  # the loop kept running while the receiver hung
    finally:
        hanging.close()
    # Both ends come at 0.5 s: the notifier's own wait, or the request's read timeout (capped at
    # the notifier's timeout), whichever fires first; either way the caller waited no longer.
    assert "longer than 0.5 s" in caplog.text or "refused 't'" in caplog.text, caplog.text


def test_an_unknown_url_is_refused_at_once_with_its_password_redacted() -> None:
    """A URL Apprise does not know is a ValueError naming it, never showing a password."""
    with pytest.raises(ValueError, match="not an Apprise URL") as info:
        Notifier(["nosuchscheme://user:hunter2@example.com"])
    assert "hunter2" not in str(info.value)
    assert redact_url("json://u:p@h/x") == "json://***@h/***"


def test_from_env_reads_urls_and_config_files(tmp_path: object, receiver: Receiver) -> None:
    """The variable holds URLs separated by spaces or commas, or a config file's path."""
    url = f"json://127.0.0.1:{receiver.port}/a"
    assert Notifier.from_env({}) is None
    assert Notifier.from_env({NOTIFY_ENV: "  "}) is None
    assert Notifier.from_env({NOTIFY_ENV: f"{url}, {url}b"}).targets == (url, url + "b")  # type: ignore[union-attr]
    config = tmp_path / "apprise.txt"  # type: ignore[operator]
    config.write_text(url + "\n")
    notifier = Notifier.from_env({NOTIFY_ENV: str(config)})
    assert notifier is not None
    assert notifier.send_blocking(Notification(title="t", body="b")) is True
    assert [path for path, _kind, _body in receiver.posts] == ["/a"]


@pytest.mark.parametrize(("raw", "expected"), [("", None), ("90", 90.0), ("0.5", 0.5)])
def test_remind_after_reads_seconds(raw: str, expected: float | None) -> None:
    """The reminder delay is a positive number of seconds, unset meaning none."""
    assert remind_after({REMIND_ENV: raw}) == expected


@pytest.mark.parametrize("raw", ["soon", "0", "-3", "inf"])
def test_remind_after_refuses_anything_else(raw: str) -> None:
    """Anything but a positive number names the variable."""
    with pytest.raises(ValueError, match=REMIND_ENV):
        remind_after({REMIND_ENV: raw})


def test_send_blocking_reports_an_exception_as_false(monkeypatch: pytest.MonkeyPatch) -> None:
    """Even an exception inside Apprise is logged and reported as False, never raised."""
    adapters = pytest.importorskip("requests.adapters")

    def boom(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("apprise broke")

    monkeypatch.setattr(adapters.HTTPAdapter, "send", boom)  # a fake failure under Apprise
    notifier = Notifier(["json://127.0.0.1:9/a"])
    assert notifier.send_blocking(Notification(title="t", body="b")) is False


HOSTILE = (
    'Deploy <a href="https://evil.example/x">Approve here</a> now? a<b & c>d'
    " @everyone @here <@123> <@&456> <!channel> [docs](https://evil.example/y) *bold* `code`"
    " # not a heading https://evil.example/z"
)
"""A question a hostile model might write: HTML, a bare ``<``, mentions, links, markdown."""


def hostile() -> Notification:
    request = make_request(make_question(header="Deploy", question=HOSTILE))
    return notification_for(request, asker="bot", link="https://answers.example/q/abc?x=1&y=2")


class Captured:
    """The HTTP requests Apprise made, answered by ``status`` without any network."""

    def __init__(
        self, monkeypatch: pytest.MonkeyPatch, status: int = 200, reply: bytes | None = None
    ) -> None:
        requests = pytest.importorskip("requests")
        adapters = pytest.importorskip("requests.adapters")
        self.sent: list[tuple[str, str, Any]] = []
        captured = self

        def send(adapter: object, request: Any, **_kwargs: object) -> Any:
            body = request.body
            text = body.decode() if isinstance(body, bytes) else (body or "")
            try:
                decoded: Any = json.loads(text)
            except ValueError:
                decoded = text
            captured.sent.append((request.method, request.url, decoded))
            response = requests.Response()
            response.status_code = status
            # Enough of a real service's answer for Apprise (Slack's webhook answers "ok").
            response._content = (
                reply
                or json.dumps(
                    {"ok": True, "access_token": "t", "user_id": "@bot:x", "room_id": "!r:x"}
                ).encode()
            )
            response.request = request
            response.url = request.url
            return response

        # Apprise's services go through requests; its transport adapter is where they meet.
        monkeypatch.setattr(adapters.HTTPAdapter, "send", send)

    def last(self) -> Any:
        return self.sent[-1][2]


class TestEachServiceGetsInertText:
    """The request Apprise would send to each service carries the model's text inert."""

    def test_telegram_gets_escaped_html(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Telegram parses HTML: tags, a bare < and & arrive escaped; the link stays whole."""
        captured = Captured(monkeypatch)
        notifier = Notifier(["tgram://123456789:AAHsecretBotToken/987654"])
        assert notifier.send_blocking(hostile()) is True
        payload = captured.last()
        assert payload["parse_mode"] == "HTML"
        text = payload["text"]
        assert "<a href" not in text
        assert "</a>" not in text
        assert "&lt;a href=" in text
        assert "a&lt;b &amp; c&gt;d" in text
        assert "https://answers.example/q/abc?x=1&amp;y=2" in text

    @pytest.mark.parametrize("query", ["", "?format=markdown"])
    def test_discord_gets_escaped_markdown_and_no_mention(
        self, monkeypatch: pytest.MonkeyPatch, query: str
    ) -> None:
        """Discord: no mention can fire (also from an embed), no masked link or emphasis; the
        link to the question stays clickable."""
        captured = Captured(monkeypatch)
        notifier = Notifier([f"discord://111222333/secretWebhookToken{query}"])
        assert notifier.send_blocking(hostile()) is True
        payload = captured.last()
        text = payload.get("content", "") + json.dumps(payload.get("embeds", []))
        assert not re.search(r"@(everyone|here|&?\d)", text)
        assert "allow_mentions" not in payload
        assert "allowed_mentions" not in payload
        assert "[docs](" not in text
        assert "*bold*" not in text
        assert "`code`" not in text
        assert "https://evil" not in text  # escaped: Discord links no bare address of the model's
        assert "https://answers.example/q/abc?x=1&y=2" in text

    def test_slack_gets_its_three_characters_escaped(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Slack: <, > and & escaped, no mrkdwn, so <!channel> and <url|text> stay text."""
        captured = Captured(monkeypatch, reply=b"ok")
        notifier = Notifier(["slack://T1A2B3C4D/B1A2B3C4D/secretslackhooktoken1234"])
        assert notifier.send_blocking(hostile()) is True
        payload = captured.last()
        assert payload["mrkdwn"] is False
        text = json.dumps(payload)
        assert "<!channel>" not in text
        assert "<a href" not in text
        assert "&lt;!channel&gt;" in text
        assert "a&lt;b &amp; c&gt;d" in text

    @pytest.mark.parametrize(
        "url",
        ["ntfy://my-topic", "ntfy://my-topic?format=markdown", "matrix://bot:pw@localhost/#r"],
    )
    def test_ntfy_and_matrix_get_plain_text(
        self, monkeypatch: pytest.MonkeyPatch, url: str
    ) -> None:
        """ntfy and Matrix get plain text (no markdown flag, no formatted body) as written."""
        captured = Captured(monkeypatch)
        notifier = Notifier([url])
        assert notifier.send_blocking(hostile()) is True
        method, _where, payload = captured.sent[-1]
        if url.startswith("ntfy"):
            assert "markdown" not in json.dumps(payload).lower()
            assert HOSTILE in payload["message"]
        else:
            assert method == "PUT"
            assert payload["msgtype"] == "m.text"
            assert "formatted_body" not in payload
            assert "format" not in payload
            assert HOSTILE in payload["body"]


class TestCredentialsNeverLogged:
    """Every target is logged in Apprise's privacy form: no token, webhook id or password."""

    @pytest.mark.parametrize(
        ("url", "secret"),
        [
            ("tgram://123456789:AAHsecretBotToken/987654", "AAHsecretBotToken"),
            ("discord://111222333/secretWebhookToken", "secretWebhookToken"),
            ("slack://T1A2B3C4D/B1A2B3C4D/secretslackhooktoken1234", "secretslackhooktoken1234"),
            ("json://user:hunter2@127.0.0.1:9/hook", "hunter2"),
        ],
    )
    def test_a_refusing_target_is_logged_without_its_secret(
        self,
        monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture,
        url: str,
        secret: str,
    ) -> None:
        """A target answering 500 is logged, named in its privacy form."""
        Captured(monkeypatch, status=500)
        notifier = Notifier([url])
        assert notifier.send_blocking(hostile()) is False
        ours = [r.getMessage() for r in caplog.records if r.name == "dsh_user_questions.notify"]
        assert any("refused" in line for line in ours), ours
        assert secret not in caplog.text
        assert all(secret not in shown for shown in notifier.shown_targets)

    def test_an_unknown_url_shows_no_path_or_query(self) -> None:
        """A URL Apprise cannot read shows its scheme and host only."""
        with pytest.raises(ValueError, match="not an Apprise URL") as info:
            Notifier(["nosuch://host.example/secretpath?token=secretquery"])
        assert "secret" not in str(info.value)
        assert (
            redact_url("nosuch://u:p@host.example:8/a/b?c=d") == "nosuch://***@host.example:8/***"
        )


class TestAHangingReceiverHoldsNothing:
    """A receiver that takes the connection and never answers holds neither the reminder nor the
    process's exit."""

    async def test_the_reminder_keeps_its_own_clock(self, caplog: pytest.LogCaptureFixture) -> None:
        """send() waits for the outcome at most `wait` (never the 15 s timeout), so what follows a
        send (the reminder's sleep) starts at once; the loop is never blocked meanwhile."""
        caplog.set_level(logging.INFO, logger="dsh_user_questions.notify")
        with socket.create_server(("127.0.0.1", 0)) as silent:  # connections queue, never read
            port = silent.getsockname()[1]
            notifier = Notifier([f"json://127.0.0.1:{port}/hook"], wait=0.1)
            assert notifier.timeout == 15.0
            assert await notifier.send(Notification(title="t", body="b")) is False
        assert "longer than 0.1 s" in caplog.text

    def test_dsh_ask_exits_soon_after_its_answer(self, tmp_path: Path) -> None:
        """dsh-ask through the inbox provider, notifying a receiver that never answers, exits
        as soon as it has printed the answer (it waited for Apprise's pool before: 30 s here).

        The one bound on time here is generous (10 s against the 30 s it took): a process that
        is held until a socket gives up cannot be told apart from a slow one otherwise."""
        pytest.importorskip("dsh_user_questions_inbox")
        from dsh_user_questions_inbox import open_inbox

        store = f"sqlite:///{tmp_path / 'inbox.db'}"
        request = tmp_path / "q.json"
        request.write_text(json.dumps(make_request(make_question()).to_dict()), encoding="utf-8")
        with socket.create_server(("127.0.0.1", 0)) as silent:  # connections queue, never read
            port = silent.getsockname()[1]
            env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_USER_QUESTIONS")}
            env.update(
                {
                    # Two targets whose reads may take 30 s (Apprise's rto): Apprise's own pool
                    # would hold the exit that long.
                    NOTIFY_ENV: f"json://127.0.0.1:{port}/a?rto=30 json://127.0.0.1:{port}/b?rto=30",
                    "DSH_USER_QUESTIONS_INBOX": store,
                    "DSH_USER_QUESTIONS_PROVIDER": "inbox",
                }
            )
            process = subprocess.Popen(
                [sys.executable, "-c", _DSH_ASK, str(request)],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                with open_inbox(store) as inbox:
                    record = _first_pending(inbox, process)
                    label = make_question().options[0].label
                    wire = {"answers": [{"id": make_question().id, "selected": [label]}]}
                    assert inbox.answer(record.id, wire, surface="test").applied
                printed = process.stdout.readline()  # type: ignore[union-attr]
                assert label in printed
                process.wait(timeout=10)  # raises when the process is held
            finally:
                process.kill()
                process.communicate()
        assert process.returncode == 0


_DSH_ASK = "import sys; from dsh_user_questions._cli import main; sys.exit(main())"


def _first_pending(inbox: Any, process: subprocess.Popen[str]) -> Any:
    """The first question ``process`` adds to ``inbox`` (waiting for it as long as it runs)."""
    while process.poll() is None:
        found = inbox.records(state="pending")
        if found:
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"dsh-ask ended first: {process.communicate()}")
