"""Harnesses in their own processes: concurrent surfaces, kill -9 and resume, late answers,
and a PostgreSQL restart in the middle of a wait."""

from __future__ import annotations

import collections
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _postgres import PostgresServer
from _requests import pick

from dsh_user_questions_inbox import Inbox, QuestionRecord, State, open_inbox

HERE = Path(__file__).parent
DSH_INBOX = str(Path(sys.executable).parent / "dsh-inbox")


class Harness:
    """A running harness_proc.py whose JSON events are read as they come."""

    def __init__(self, url: str, label: str, *args: str) -> None:
        env = {
            **os.environ,
            "DSH_USER_QUESTIONS_INBOX": url,
            "DSH_USER_QUESTIONS_INBOX_HARNESS": label,
            "DSH_USER_QUESTIONS_PROVIDER": "inbox",
        }
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "harness_proc.py"), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        self.events: queue.Queue[dict[str, object]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        with self.process.stdout:
            for line in self.process.stdout:
                self.events.put(json.loads(line))

    def next(self, kind: str, timeout: float = 120) -> dict[str, object]:
        """The next event of that kind (others before it are kept in ``seen``)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"the harness sent no {kind!r} event")
            event = self.events.get(timeout=left)
            if event["event"] == kind:
                return event

    def finish(self) -> None:
        """Close stdin and wait for a clean exit."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert self.process.wait(timeout=120) == 0
        self._reader.join()

    def kill(self) -> None:
        """kill -9."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=60)
        self._reader.join()
        if self.process.stdin is not None:
            self.process.stdin.close()


@pytest.fixture
def harnesses() -> Iterator[list[Harness]]:
    """Harness processes started by the test; killed if the test leaves them running."""
    started: list[Harness] = []
    yield started
    for harness in started:
        if harness.process.poll() is None:
            harness.kill()


def until(condition: Callable[[], object], what: str, timeout: float = 120) -> None:
    """Wait for ``condition()`` to hold."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def pending(inbox: Inbox, label: str, count: int) -> list[QuestionRecord]:
    """Wait until ``label`` has ``count`` pending questions; those records."""
    until(
        lambda: len(inbox.records(state="pending", harness=label)) == count,
        f"{count} questions from {label}",
    )
    return inbox.records(state="pending", harness=label)


class Answering:
    """The installed ``dsh-inbox answer``, running with the answer on stdin."""

    def __init__(self, url: str, question_id: str, answer: object) -> None:
        self.process = subprocess.Popen(
            [DSH_INBOX, "--inbox", url, "answer", question_id, "--surface", "dsh-inbox"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._answer = json.dumps(answer)

    def wait(self) -> tuple[int, str]:
        """The exit status and stderr."""
        _, err = self.process.communicate(self._answer, timeout=120)
        return self.process.returncode, err


def dsh_inbox_answer(url: str, question_id: str, answer: object) -> Answering:
    """Start the installed ``dsh-inbox answer`` with the answer on stdin."""
    return Answering(url, question_id, answer)


def test_two_harnesses_and_several_surfaces_each_question_answered_once(
    inbox: Inbox, inbox_url: str, harnesses: list[Harness]
) -> None:
    """Two harness processes ask 6 questions each; three store surfaces and dsh-inbox race to
    answer all 12. Each question is applied once; each harness receives exactly the answers
    recorded for its questions; every other surface is told it lost."""
    harnesses += [Harness(inbox_url, f"h{n}", "ask", "6") for n in (1, 2)]
    records = pending(inbox, "h1", 6) + pending(inbox, "h2", 6)
    ids = [record.id for record in records]
    racers = [
        subprocess.Popen(
            [sys.executable, str(HERE / "answer_all.py"), inbox_url, f"surface-{n}", *ids],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(3)
    ]
    for racer in racers:
        assert racer.stdin is not None
        racer.stdin.write("go\n")
        racer.stdin.close()
    cli = [dsh_inbox_answer(inbox_url, question_id, pick("npm")) for question_id in ids[::3]]
    applied: dict[str, list[str]] = collections.defaultdict(list)
    for n, racer in enumerate(racers):
        assert racer.stdout is not None
        with racer.stdout:
            for line in racer.stdout:
                result = json.loads(line)
                assert result["outcome"] in ("applied", "already-answered")
                if result["outcome"] == "applied":
                    applied[result["id"]].append(f"surface-{n}")
        assert racer.wait(timeout=120) == 0
    for question_id, process in zip(ids[::3], cli, strict=True):
        status, err = process.wait()
        assert status in (0, 3), err
        if status == 0:
            applied[question_id].append("dsh-inbox")
    final = {record.id: record for record in inbox.get_many(ids)}
    assert sorted(applied) == sorted(ids)
    for question_id in ids:
        assert applied[question_id] == [final[question_id].surface]
        assert final[question_id].state is State.ANSWERED
    for n, harness in enumerate(harnesses, start=1):
        got = sorted(json.dumps(harness.next("answer")["answer"]) for _ in range(6))
        recorded = sorted(json.dumps(r.answer) for r in final.values() if r.harness == f"h{n}")
        assert got == recorded
        harness.next("done")
        harness.finish()


def test_a_harness_killed_mid_wait_resumes_after_restart(
    inbox: Inbox, inbox_url: str, harnesses: list[Harness]
) -> None:
    """kill -9 leaves the question pending; a restarted harness resumes it by id and gets the
    answer given afterwards through dsh-inbox."""
    first = Harness(inbox_url, "restartable", "ask", "1")
    harnesses.append(first)
    (record,) = pending(inbox, "restartable", 1)
    first.kill()
    assert inbox.get(record.id).state is State.PENDING
    second = Harness(inbox_url, "restartable", "resume", record.id)
    harnesses.append(second)
    second.next("ready")
    answering = dsh_inbox_answer(inbox_url, record.id, pick("pnpm"))
    assert answering.wait() == (0, "")
    assert second.next("answer")["answer"] == pick("pnpm")
    second.next("done")
    second.finish()
    assert inbox.get(record.id).surface == "dsh-inbox"


def test_a_late_answer_after_a_timeout_reaches_the_harness_hook(
    inbox: Inbox, inbox_url: str, harnesses: list[Harness]
) -> None:
    """The ask times out (the record expires); dsh-inbox answer then exits 4 and the harness's
    dsh_user_questions_late_answer hook receives that answer."""
    harness = Harness(inbox_url, "late", "ask", "1", "0.5")
    harnesses.append(harness)
    assert harness.next("error")["code"] in ("ASK_TIMED_OUT", "ASK_ABORTED")
    (record,) = inbox.records(harness="late")
    until(lambda: inbox.get(record.id).state is State.EXPIRED, "the expiry")
    answering = dsh_inbox_answer(inbox_url, record.id, pick("npm"))
    status, err = answering.wait()
    assert status == 4
    assert "kept as a late answer" in err
    late = harness.next("late")
    assert late == {"event": "late", "id": record.id, "late_answer": pick("npm")}
    harness.finish()


def test_a_late_answer_given_while_the_harness_was_down_is_delivered_on_restart(
    inbox: Inbox, inbox_url: str, harnesses: list[Harness]
) -> None:
    """Late answers wait in the store: the next process of the same harness label gets them."""
    record = inbox.add(
        {"questions": [{"id": "pkg", "question": "?", "options": [{"label": "npm"}]}]},
        harness="comes-back",
    )
    inbox.settle(record.id, State.WITHDRAWN, surface="harness")
    inbox.answer(record.id, pick("npm"), surface="cli")
    harness = Harness(inbox_url, "comes-back", "ask", "1")
    harnesses.append(harness)
    assert harness.next("late")["id"] == record.id
    (asked,) = pending(inbox, "comes-back", 1)
    inbox.answer(asked.id, pick("npm"), surface="cli")
    harness.next("done")
    harness.finish()


def test_a_postgresql_restart_mid_wait_loses_nothing(
    own_postgres: PostgresServer, harnesses: list[Harness]
) -> None:
    """The database restarts while a harness waits: the harness reconnects, the question is
    still there, and the answer given after the restart returns from ask()."""
    url = own_postgres.new_database()
    harness = Harness(url, "pg", "ask", "2")
    harnesses.append(harness)
    inbox = open_inbox(url)
    try:
        first, second = pending(inbox, "pg", 2)
        inbox.answer(first.id, pick("npm"), surface="before")
        assert harness.next("answer")["answer"] == pick("npm")
        inbox.close()
        own_postgres.restart()
        inbox = open_inbox(url)
        assert inbox.get(second.id).state is State.PENDING
        assert inbox.answer(second.id, pick("pnpm"), surface="after").applied
        assert harness.next("answer")["answer"] == pick("pnpm")
        harness.next("done")
        harness.finish()
    finally:
        inbox.close()
