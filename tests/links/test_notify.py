"""Notifications through Apprise to receivers of the test's own on 127.0.0.1."""

from __future__ import annotations

import asyncio
import email
import email.policy
import html
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

import hypothesis
import pytest

from dsh_user_questions import AskUserQuestionItem, AskUserQuestionRequest
from dsh_user_questions._notify import (
    NOTIFY_ENV,
    REMIND_ENV,
    Notification,
    Notifier,
    chat_text,
    notification_for,
    redact_url,
    remind_after,
)
from dsh_user_questions.rules import inert_text
from dsh_user_questions.testing import make_question, make_request

pytest.importorskip("apprise")


class Receiver:
    """An HTTP receiver: records every request; ``mode`` "ok", "fail" (500) or "hang" (never
    answers). Its answer is enough of each real service's for Apprise: Slack's webhook says
    ``ok``, the rest get JSON with what Matrix's login and room join return."""

    def __init__(self, mode: str = "ok") -> None:
        self.requests: list[tuple[str, str, str, bytes]] = []
        self.mode = mode
        self.release = threading.Event()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def answer(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                receiver.requests.append(
                    (
                        self.command,
                        self.path,
                        self.headers.get("Content-Type", ""),
                        self.rfile.read(length),
                    )
                )
                if receiver.mode == "hang":
                    receiver.release.wait(30)
                reply = (
                    b"ok"
                    if self.path.startswith("/hooks.slack.com/")
                    else json.dumps(
                        {"ok": True, "access_token": "t", "user_id": "@bot:x",
                         "room_id": "!r:x", "event_id": "$e", "home_server": "x"}
                    ).encode()
                )  # fmt: skip
                self.send_response(500 if receiver.mode == "fail" else 200)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            do_POST = do_PUT = do_GET = answer

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def posts(self) -> list[tuple[str, str, bytes]]:
        """The POST requests: path, content type and body."""
        return [
            (path, kind, body) for method, path, kind, body in self.requests if method == "POST"
        ]

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


FAKE_LINK = "https://answers.example/q/forged"
HOSTILE = (
    f"Answer: {FAKE_LINK} first! "
    'Deploy <a href="https://evil.example/x">Approve here</a> now? a<b & c>d'
    " @everyone @here @room @channel @alice_admin <@123> <@&456> <!channel> <#42>"
    " \uff20bob [docs](https://evil.example/y) *bold* `code` # not a heading"
    " https://evil.example/z www.evil.example evil.example 10.0.0.1 ftp://files.example/a"
    " me@example.com @types/node"
)
"""A question a hostile model might write: a forged answer link above the real one, HTML, a
bare ``<``, every kind of mention, links with and without a scheme, markdown."""

LINK = "https://answers.example/q/abc?x=1&y=2"
"""The provider's own answer link: the one link a message may carry."""


def hostile(text: str = HOSTILE) -> Notification:
    request = make_request(make_question(header="Deploy @here", question=text))
    return notification_for(request, asker="bot", link=LINK)


# What a service would read as a mention or a link, in the text it receives (the markup's
# escapes undone where a service undoes them: HTML entities, Discord's backslashes).
LIVE = re.compile(
    r"[@\uff20\ufe6b](?=\w)"  # @room, @here, @alice, <@123>
    r"|<[@!#]"  # <@123>, <!channel>, <#42>
    r"|(?<!\[)://"  # any address with a scheme ([://] is the defanged form)
    r"|(?<=\S)[.\u3002\uff0e\uff61](?=[^\W\d_])"  # a bare domain: example.com, www.x.y
    r"|\d[.\u3002\uff0e\uff61]\d+[.\u3002\uff0e\uff61]\d+[.\u3002\uff0e\uff61]\d"  # an IPv4
)


def readable(text: str) -> str:
    """``text`` as the service shows it: HTML entities and markdown backslashes undone."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", html.unescape(text))


def strings(value: Any) -> Iterator[str]:
    """Every string in a decoded JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def message_texts(body: bytes) -> list[str]:
    """The strings of a request body (JSON, a form or plain text) that carry the message."""
    text = body.decode("utf-8")
    try:
        found = list(strings(json.loads(text)))
    except ValueError:
        form = urllib.parse.parse_qs(text)
        found = [value for values in form.values() for value in values] if form else [text]
    return [each for each in found if "question is waiting" in each or "asks:" in each]


def assert_inert(texts: list[str]) -> None:
    """No live mention or link in ``texts`` but the answer link, which is there exactly once."""
    shown = [readable(text) for text in texts]
    assert sum(text.count(LINK) for text in shown) == 1, shown
    for text in shown:
        rest = text.replace(LINK, "")
        assert not LIVE.search(rest), (LIVE.search(rest), rest)
        assert FAKE_LINK not in rest


class Services:
    """Apprise sends to the receiver: services with a fixed https address (Telegram, Discord,
    Slack) are sent to it instead, the rest (ntfy, Matrix, json, form) are pointed at it by
    their URL."""

    def __init__(self, receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
        adapters = pytest.importorskip("requests.adapters")
        original = adapters.HTTPAdapter.send
        self.receiver = receiver
        port = receiver.port

        def send(adapter: object, request: Any, **kwargs: object) -> Any:
            # The request as Apprise built it, bytes unchanged, to the receiver: the service's
            # host becomes the first segment of the path.
            parts = urllib.parse.urlsplit(request.url)
            if parts.hostname != "127.0.0.1":
                query = f"?{parts.query}" if parts.query else ""
                request.url = f"http://127.0.0.1:{port}/{parts.hostname}{parts.path}{query}"
            return original(adapter, request, **kwargs)

        monkeypatch.setattr(adapters.HTTPAdapter, "send", send)

    def url(self, service: str) -> str:
        """The Apprise URL of ``service``, every secret in it one the tests look for."""
        port = self.receiver.port
        return {
            "telegram": f"tgram://123456789:{SECRETS['telegram']}/987654",
            "discord": f"discord://{SECRETS['discord-id']}/{SECRETS['discord']}",
            "slack": f"slack://T1A2B3C4D/B1A2B3C4D/{SECRETS['slack']}",
            "matrix": f"matrix://bot:{SECRETS['matrix']}@127.0.0.1:{port}/#room",
            "ntfy": f"ntfy://alice:{SECRETS['ntfy']}@127.0.0.1:{port}/questions",
            "json": f"json://user:{SECRETS['json']}@127.0.0.1:{port}/hook",
            "form": f"form://127.0.0.1:{port}/form?token={SECRETS['form']}",
        }[service]

    def message(self, service: str) -> bytes:
        """The body of the last request that carried the message to ``service``."""
        where = {
            "telegram": "/api.telegram.org/",
            "discord": "/discord.com/",
            "slack": "/hooks.slack.com/",
            "matrix": "/send/",
            "ntfy": "/",
            "json": "/hook",
            "form": "/form",
        }[service]
        carrying = [
            body
            for _method, path, _kind, body in self.receiver.requests
            if where in path and message_texts(body)
        ]
        assert carrying, (service, self.receiver.requests)
        return carrying[-1]


SECRETS = {
    "telegram": "AAHsecretBotToken",
    "discord-id": "111222333444",
    "discord": "secretWebhookToken",
    "slack": "secretslackhooktoken1234",
    "matrix": "matrixPassw0rdSecret",
    "ntfy": "ntfyPassw0rdSecret",
    "json": "jsonPassw0rdSecret",
    "form": "formTokenSecret99",
}
SERVICES = ("telegram", "discord", "slack", "matrix", "ntfy", "json", "form")


@pytest.fixture
def services(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> Services:
    return Services(receiver, monkeypatch)


class TestEachServiceGetsInertText:
    """The bytes each service is sent carry the model's words inert: no mention, no link but
    the question's own, in the service's own markup."""

    @pytest.mark.parametrize("service", SERVICES)
    def test_no_mention_and_no_link_but_the_answer_link(
        self, services: Services, service: str
    ) -> None:
        """@room, @here, <@123>, <!channel>, model-written addresses (a forged answer link
        among them) arrive defanged; the real link arrives once, whole."""
        notifier = Notifier([services.url(service)])
        assert notifier.send_blocking(hostile()) is True
        assert_inert(message_texts(services.message(service)))

    def test_telegram_gets_escaped_html(self, services: Services) -> None:
        """Telegram parses HTML: tags, a bare < and & arrive escaped; the link stays whole."""
        notifier = Notifier([services.url("telegram")])
        assert notifier.send_blocking(hostile()) is True
        payload = json.loads(services.message("telegram"))
        assert payload["parse_mode"] == "HTML"
        text = payload["text"]
        assert "<a href" not in text
        assert "&lt;a href=" in text
        assert "a&lt;b &amp; c&gt;d" in text
        assert "https://answers.example/q/abc?x=1&amp;y=2" in text
        assert "hxxps[://]evil[.]example/z" in text

    @pytest.mark.parametrize("query", ["", "?format=markdown"])
    def test_discord_gets_escaped_markdown_and_no_mention(
        self, services: Services, query: str
    ) -> None:
        """Discord: no mention can fire (also from an embed), no masked link or emphasis; the
        link to the question stays clickable."""
        notifier = Notifier([services.url("discord") + query])
        assert notifier.send_blocking(hostile()) is True
        payload = json.loads(services.message("discord"))
        text = payload.get("content", "") + json.dumps(payload.get("embeds", []))
        assert "allow_mentions" not in payload
        assert "allowed_mentions" not in payload
        assert "[docs](" not in text
        assert "*bold*" not in text
        assert "`code`" not in text
        assert "https://answers.example/q/abc?x=1&y=2" in text

    def test_slack_gets_its_three_characters_escaped(self, services: Services) -> None:
        """Slack: <, > and & escaped, no mrkdwn, so <!channel> and <url|text> stay text."""
        notifier = Notifier([services.url("slack")])
        assert notifier.send_blocking(hostile()) is True
        payload = json.loads(services.message("slack"))
        assert payload["mrkdwn"] is False
        text = json.dumps(payload)
        assert "<!channel>" not in text
        assert "<a href" not in text
        assert "&lt;\u200b!channel&gt;" in payload["attachments"][0]["text"]
        assert "a&lt;b &amp; c&gt;d" in text

    @pytest.mark.parametrize("service", ["ntfy", "matrix"])
    def test_ntfy_and_matrix_get_plain_text(self, services: Services, service: str) -> None:
        """ntfy and Matrix get plain text (no markdown flag, no formatted body)."""
        url = services.url(service)
        notifier = Notifier([url + ("&format=markdown" if "?" in url else "?format=markdown")])
        assert notifier.send_blocking(hostile()) is True
        payload = json.loads(services.message(service))
        if service == "ntfy":
            assert "markdown" not in json.dumps(payload).lower()
        else:
            assert payload["msgtype"] == "m.text"
            assert "formatted_body" not in payload
            assert "format" not in payload

    async def test_mail_gets_plain_text_without_mentions_or_links(self) -> None:
        """mailto:// to an aiosmtpd server on 127.0.0.1: the subject and the text/plain body
        carry no live mention or link but the answer link."""
        mails = await _mail_through_a_local_server([hostile()])
        [mail] = mails
        message = email.message_from_bytes(mail, policy=email.policy.default)
        assert message.get_content_type() == "text/plain"
        body = message.get_content()
        assert "question is waiting" in str(message["Subject"])
        assert_inert([str(message["Subject"]), body])

    def test_any_model_text_crosses_inert_to_every_service(self, services: Services) -> None:
        """Property: whatever the model writes (mentions, addresses, markup, look-alike dots and
        at signs in any mix), no service receives a live mention or link, and the answer link
        arrives once. One service per way of writing a message (HTML, Discord's markdown, text
        as JSON and as a form); the services Apprise throttles between sends (Slack, Matrix,
        ntfy: text, like json) get the hostile text above."""
        hypothesis = pytest.importorskip("hypothesis")
        st = hypothesis.strategies
        quick = ("telegram", "discord", "json", "form")
        notifier = Notifier([services.url(service) for service in quick])
        pieces = st.sampled_from(
            ["@", "\uff20", "\ufe6b", "<", ">", "!", "#", "&", "://", ":", "/", ".", "\u3002",
             "\uff0e", "http", "https", "HTTPS", "ftp", "www", "example", "com", "room", "here",
             "everyone", "1", "10", " ", "\n", "[", "]", "(", ")", "*", "`", "\\", "\u200b",
             "e\u0301", "Answer: ", LINK]
        )  # fmt: skip
        text = st.lists(st.one_of(pieces, st.text(max_size=4)), min_size=1, max_size=30)

        @hypothesis.settings(max_examples=30, deadline=None, derandomize=True)
        @hypothesis.given(words=text.map("".join))
        def crosses_inert(words: str) -> None:
            services.receiver.requests.clear()
            assert notifier.send_blocking(hostile(words)) is True
            for service in quick:
                assert_inert(message_texts(services.message(service)))

        crosses_inert()


def test_chat_text_breaks_every_mention_and_address() -> None:
    """The one rule, on its own: what each kind of mention and address becomes."""
    assert chat_text("@room <@123> <!here> <#42> me@example.com") == (
        "@\u200broom <\u200b@\u200b123> <\u200b!here> <\u200b#42> me@\u200bexample[.]com"
    )
    assert chat_text("https://evil.example/x http://10.0.0.1 tg://resolve") == (
        "hxxps[://]evil[.]example/x hxxp[://]10[.]0[.]0[.]1 tg[://]resolve"
    )
    assert chat_text("version 3.12 costs 1.50") == "version 3.12 costs 1.50"


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(text=hypothesis.strategies.text())
def test_chat_text_leaves_nothing_live_in_any_text(text: str) -> None:
    """Property: any text, made inert and sent through the rule, holds no live mention or
    address (a service's markup escaping comes after and only adds to this)."""
    assert not LIVE.search(chat_text(inert_text(text)))


async def _mail_through_a_local_server(notes: list[Notification], **login: str) -> list[bytes]:
    """Each mail an aiosmtpd server on 127.0.0.1 got for ``notes`` sent through mailto://."""
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
        user = f"{login['user']}:{login['password']}@" if login else ""
        notifier = Notifier(
            [
                f"mailto://{user}example.com?smtp=127.0.0.1&port={port}&from=bot@example.com"
                "&to=me@example.com&mode=insecure"
            ]
        )
        for note in notes:
            await asyncio.to_thread(notifier.send_blocking, note)
    finally:
        controller.stop()
    return got


class TestCredentialsNeverLogged:
    """No token, webhook id or password in any log record at any level: ours name a target in
    Apprise's privacy form, and Apprise's own records are redacted."""

    @pytest.mark.parametrize("service", SERVICES)
    def test_a_refusing_target_is_logged_without_its_secret(
        self, services: Services, caplog: pytest.LogCaptureFixture, service: str
    ) -> None:
        """A target answering 500 is logged, named in its privacy form."""
        services.receiver.mode = "fail"
        notifier = Notifier([services.url(service)])
        assert notifier.send_blocking(hostile()) is False
        ours = [r.getMessage() for r in caplog.records if r.name == "dsh_user_questions.notify"]
        assert any("refused" in line for line in ours), ours
        for secret in SECRETS.values():
            assert secret not in caplog.text
            assert all(secret not in shown for shown in notifier.shown_targets)

    @pytest.mark.parametrize("mode", ["ok", "fail"])
    def test_no_record_at_debug_holds_a_secret(
        self, services: Services, caplog: pytest.LogCaptureFixture, mode: str
    ) -> None:
        """With every logger at DEBUG (Apprise's TRACE too), a real send to every service, and
        a refused one: no record's message, arguments or formatted text holds a secret."""
        caplog.set_level(1)
        services.receiver.mode = mode
        notifier = Notifier([services.url(service) for service in SERVICES])
        notifier.send_blocking(hostile())
        apprise_records = [r for r in caplog.records if r.name == "apprise"]
        assert apprise_records  # Apprise did log at DEBUG: the test reads real records
        for record in caplog.records:
            seen = f"{record.getMessage()} {record.msg} {record.args!r}"
            for secret in SECRETS.values():
                assert secret not in seen, (secret, record.name, seen)

    async def test_the_mail_password_is_never_logged(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """mailto:// with a password, at DEBUG: the password is in no record."""
        caplog.set_level(1)
        await _mail_through_a_local_server([hostile()], user="bot", password="mailPassw0rdSecret")
        assert any(r.name == "apprise" for r in caplog.records)
        for record in caplog.records:
            assert "mailPassw0rdSecret" not in f"{record.getMessage()} {record.args!r}"

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


async def test_tags_choose_the_targets_of_an_apprise_configuration_file(tmp_path: Path) -> None:
    """``send(tags=...)`` goes only to the targets carrying one of the tags (a configuration
    file's ``ana=URL``); ``reaches`` says which tags some target carries; no tag: every
    target; a tag nobody carries: nothing sent, ``False``."""
    from dsh_user_questions.testing import json_receiver

    with json_receiver() as (ana_port, ana), json_receiver() as (bo_port, bo):
        config = tmp_path / "apprise.txt"
        config.write_text(
            f"ana=json://127.0.0.1:{ana_port}/\nbo,pager=json://127.0.0.1:{bo_port}/\n",
            encoding="utf-8",
        )
        notifier = Notifier([str(config)])
        assert notifier.reaches(["pager", "cy", "ana", "pager"]) == ("pager", "ana")
        note = Notification(title="t", body="b")
        assert await notifier.send(note, tags=["ana"])
        assert (len(ana), len(bo)) == (1, 0)
        assert await notifier.send(note)
        assert (len(ana), len(bo)) == (2, 1)
        assert not await notifier.send(note, tags=["cy"])
        assert (len(ana), len(bo)) == (2, 1)
