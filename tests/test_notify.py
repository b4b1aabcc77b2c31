"""Notifications through Apprise to receivers of the test's own on 127.0.0.1."""

from __future__ import annotations

import asyncio
import http.server
import json
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator

import pytest

from dsh_user_questions import AskUserQuestionItem, AskUserQuestionRequest
from dsh_user_questions.notify import (
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
    assert "longer than 0.5 s" in caplog.text


def test_an_unknown_url_is_refused_at_once_with_its_password_redacted() -> None:
    """A URL Apprise does not know is a ValueError naming it, never showing a password."""
    with pytest.raises(ValueError, match="not an Apprise URL") as info:
        Notifier(["nosuchscheme://user:hunter2@example.com"])
    assert "hunter2" not in str(info.value)
    assert redact_url("json://u:p@h/x") == "json://***@h/x"


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


def test_send_blocking_reports_an_exception_as_false(receiver: Receiver) -> None:
    """Even an exception inside Apprise is logged and reported as False, never raised."""
    notifier = Notifier([f"json://127.0.0.1:{receiver.port}/a"])

    def boom(**_kwargs: object) -> bool:
        raise RuntimeError("apprise broke")

    notifier._apprise.notify = boom  # a fake failure inside the library
    started = time.monotonic()
    assert notifier.send_blocking(Notification(title="t", body="b")) is False
    assert time.monotonic() - started < 30
