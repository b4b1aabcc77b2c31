"""``dsh-inbox serve``: the web provider's page and protocol over the store, across processes."""

from __future__ import annotations

import contextlib
import json
import queue
import signal
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from _processes import Harness, Server, pending, until
from _requests import PKG, pick

from dsh_user_questions_inbox import Inbox, State


@pytest.fixture
def server(inbox_url: str) -> Iterator[Server]:
    """An inbox server on a free loopback port."""
    running = Server(inbox_url)
    yield running
    running.stop_and_read()


class Events:
    """The page's event stream, read in a thread: (event, data) pairs in order."""

    def __init__(self, server: Server) -> None:
        self.queue: queue.Queue[tuple[str, dict[str, object]]] = queue.Queue()
        self._client = httpx.Client(timeout=httpx.Timeout(60, read=None))
        self._socket: queue.Queue[socket.socket] = queue.Queue()
        self._thread = threading.Thread(target=self._read, args=(server.base,), daemon=True)
        self._thread.start()

    def _read(self, base: str) -> None:
        event, data = "", []
        try:
            with self._client.stream("GET", base + "events") as response:
                # httpx's documented network_stream extension: close() shuts this socket, so
                # the read below ends at once rather than at the server's next heartbeat.
                stream = response.extensions["network_stream"]
                self._socket.put(stream.get_extra_info("socket"))
                for line in response.iter_lines():
                    if line.startswith("event:"):
                        event = line[6:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].removeprefix(" "))
                    elif not line and data:  # a blank line ends the event
                        self.queue.put((event, json.loads("\n".join(data))))
                        event, data = "", []
        except (httpx.HTTPError, OSError):
            return

    def next(self, name: str, timeout: float = 60) -> dict[str, object]:
        """The next event called ``name``."""
        while True:
            event, data = self.queue.get(timeout=timeout)
            if event == name:
                return data

    def close(self) -> None:
        """Stop reading: the stream's socket is shut, its reader ends."""
        with contextlib.suppress(queue.Empty, OSError):
            self._socket.get(timeout=60).shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=60)
        self._client.close()


def test_a_question_asked_by_a_harness_is_shown_and_answered_on_the_page(
    inbox: Inbox, inbox_url: str, server: Server, harnesses: list[Harness]
) -> None:
    """The page's stream shows the harness's question (added); the page's answer is accepted,
    returns from the harness's ask(), and the record says it came from the web."""
    events = Events(server)
    try:
        assert events.next("snapshot")["pending"] == []
        harness = Harness(inbox_url, "paged", "ask", "1")
        harnesses.append(harness)
        added = events.next("added")
        (record,) = pending(inbox, "paged", 1)
        assert added["id"] == record.id
        assert (added["agent"], added["harness"]) == (None, "paged")
        assert added["asker"] == "harness paged"
        assert [q["id"] for q in added["questions"]] == ["pkg"]  # type: ignore[union-attr]
        status, body = server.post("answer", {"id": record.id, "answer": pick("npm")})
        assert (status, body) == (200, {"status": "accepted", "id": record.id})
        assert harness.next("answer")["answer"] == pick("npm", by="token")
        assert events.next("resolved") == {"id": record.id, "outcome": "answered"}
        assert inbox.get(record.id).surface == "web"
        harness.finish()
    finally:
        events.close()


def test_an_answer_from_another_surface_resolves_the_question_on_the_page(
    inbox: Inbox, server: Server
) -> None:
    """Answered through the store elsewhere: the page hears resolved, by that surface, and a
    late click gets 409 saying it was already answered."""
    events = Events(server)
    try:
        events.next("snapshot")
        record = inbox.add(PKG, harness="h")
        assert events.next("added")["id"] == record.id
        inbox.answer(record.id, pick("npm"), surface="cli")
        resolved = events.next("resolved")
        assert resolved == {"id": record.id, "outcome": "answered", "by": "cli"}
    finally:
        events.close()
    status, body = server.post("answer", {"id": record.id, "answer": pick("pnpm")})
    assert status == 409
    assert body["outcome"] == "answered"
    assert inbox.get(record.id).answer == pick("npm")


def test_an_answer_no_asker_waits_for_is_kept_never_accepted(inbox: Inbox, server: Server) -> None:
    """Issue 35: a page answer to a question whose asker is not waiting now (it stopped, or
    was refused as asked elsewhere) is the question's answer, and the page hears "kept" with
    a plain message: never "accepted", which says an asker's ask() returned it."""
    record = inbox.add(PKG, harness="gone")
    status, body = server.post("answer", {"id": record.id, "answer": pick("npm")})
    assert status == 200
    assert body["status"] == "kept"
    assert "No agent is waiting for it" in str(body["message"])
    assert inbox.get(record.id).answer == pick("npm", by="token")
    assert inbox.get(record.id).received_at is None


def test_a_bad_answer_from_the_page_is_rejected_and_the_question_stays(
    inbox: Inbox, server: Server
) -> None:
    """A page answer breaking a rule is 422 with its problems; the question stays pending."""
    record = inbox.add(PKG, harness="h")
    status, body = server.post("answer", {"id": record.id, "answer": pick("yarn")})
    assert status == 422
    assert body["status"] == "rejected"
    assert any("yarn" in problem for problem in body["problems"])  # type: ignore[union-attr]
    assert inbox.get(record.id).state is State.PENDING


def test_closing_on_the_page_cancels_the_ask(
    inbox: Inbox, inbox_url: str, server: Server, harnesses: list[Harness]
) -> None:
    """The page's cancel closes the question: the harness's ask() raises ASK_CANCELLED."""
    harness = Harness(inbox_url, "closing", "ask", "1")
    harnesses.append(harness)
    (record,) = pending(inbox, "closing", 1)
    assert server.post("cancel", {"id": record.id}) == (
        200,
        {"status": "cancelled", "id": record.id},
    )
    assert harness.next("error")["code"] == "ASK_CANCELLED"
    assert inbox.get(record.id).state is State.CANCELLED
    harness.finish()


def test_a_page_answer_to_a_withdrawn_question_is_kept_as_late(
    inbox: Inbox, server: Server
) -> None:
    """The question was withdrawn between showing and clicking: 409 withdrawn, answer kept late."""
    record = inbox.add(PKG, harness="h")
    until(lambda: server.state(), "the page to list the question")
    inbox.settle(record.id, State.WITHDRAWN, surface="harness")
    status, body = server.post("answer", {"id": record.id, "answer": pick("npm")})
    assert status == 409
    assert body["outcome"] == "withdrawn"
    stored = inbox.get(record.id)
    assert stored.late_answer == pick("npm", by="token")
    assert stored.late_surface == "web"


def test_a_page_answer_to_an_expired_question_is_told_expired(inbox: Inbox, server: Server) -> None:
    """An expired question is told "expired" (its time ran out), not "withdrawn"; the page
    names its server "the inbox server" for when it is down, not "the harness"."""
    import httpx

    record = inbox.add(PKG, harness="h")
    inbox.settle(record.id, State.EXPIRED, surface="harness")
    status, body = server.post("answer", {"id": record.id, "answer": pick("npm")})
    assert status == 409
    assert body["outcome"] == "expired"
    assert "time ran out" in str(body["message"])
    assert "withdr" not in str(body["message"])
    page = httpx.get(server.base, timeout=60).text
    assert 'data-server="the inbox server"' in page


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill-9"])
def test_an_inbox_server_restart_loses_nothing(
    inbox: Inbox, inbox_url: str, harnesses: list[Harness], sig: int
) -> None:
    """The server stops (cleanly or kill -9) while a harness waits; started again at the same
    address it lists the question, and its answer still reaches the harness."""
    first = Server(inbox_url)
    harness = Harness(inbox_url, "survivor", "ask", "1")
    harnesses.append(harness)
    (record,) = pending(inbox, "survivor", 1)
    until(lambda: first.state(), "the page to list the question")
    first.stop_and_read(sig)
    second = Server(inbox_url, port=first.port)
    try:
        assert second.base == first.base
        assert [ask["id"] for ask in second.state()] == [record.id]
        assert second.post("answer", {"id": record.id, "answer": pick("pnpm")})[0] == 200
        assert harness.next("answer")["answer"] == pick("pnpm", by="token")
        harness.finish()
    finally:
        second.stop_and_read()


def test_the_page_is_guarded_by_its_token(server: Server) -> None:
    """Without the token the server answers 401 (the web provider's guard)."""
    root = server.base.rsplit("/", 2)[0]
    assert httpx.get(root + "/wrong-token/state", timeout=60).status_code == 401


def test_the_server_prunes_final_records_past_the_retention(inbox: Inbox, inbox_url: str) -> None:
    """With DSH_USER_QUESTIONS_INBOX_RETENTION=1s, a server started later deletes the answered
    record and keeps the pending one."""
    old = inbox.add(PKG, harness="h")
    inbox.answer(old.id, pick("npm"), surface="cli")
    assert inbox.claim_delivery(old.id)  # an undelivered answer would be kept
    keep = inbox.add(PKG, harness="h")
    until(lambda: time.time() - inbox.get(old.id).settled_at > 1.5, "the record to age")
    server = Server(inbox_url, env={"DSH_USER_QUESTIONS_INBOX_RETENTION": "1s"})
    try:
        until(lambda: inbox.get(old.id) is None, "the prune")
        assert [r.id for r in inbox.records()] == [keep.id]
    finally:
        server.stop_and_read()


def test_the_page_names_the_harness_and_the_agent(inbox: Inbox) -> None:
    """The page's form of a question names who asks: the harness label and, when the request
    named an agent, its id (never the harness label as an "agent")."""
    from dsh_user_questions_inbox._board import wire_of

    with_agent = inbox.add(PKG, harness="vm:2689-ab12", agent="planner")
    without = inbox.add(PKG, harness="vm:2689-ab12")
    assert wire_of(with_agent)["asker"] == "harness vm:2689-ab12, agent planner"
    assert wire_of(without)["asker"] == "harness vm:2689-ab12"
    assert wire_of(without)["agent"] is None
