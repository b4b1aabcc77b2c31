"""Harnesses in their own processes: concurrent surfaces, kill -9 and resume, late answers,
and a PostgreSQL restart in the middle of a wait."""

from __future__ import annotations

import collections
import json
import subprocess
import sys
import threading
from pathlib import Path

from _postgres import PostgresServer
from _processes import Harness, Server, dsh_inbox_answer, pending, until
from _requests import LOGIN, pick

from dsh_user_questions_inbox import Inbox, State, open_inbox

HERE = Path(__file__).resolve().parents[1]


def test_two_harnesses_and_several_surfaces_each_question_answered_once(
    inbox: Inbox, inbox_url: str, harnesses: list[Harness]
) -> None:
    """Two harness processes ask 6 questions each; the inbox server's page, three store
    surfaces and dsh-inbox race to answer all 12. Each question is applied once; each harness
    receives exactly the answers recorded for its questions; every other surface is told it
    lost (the page gets 409 not-pending)."""
    server = Server(inbox_url)
    harnesses += [Harness(inbox_url, f"h{n}", "ask", "6") for n in (1, 2)]
    records = pending(inbox, "h1", 6) + pending(inbox, "h2", 6)
    ids = [record.id for record in records]
    until(lambda: len(server.state()) == 12, "the page to list all twelve")
    page_results: dict[str, int] = {}

    def click_all() -> None:
        for question_id in ids:
            status, _ = server.post("answer", {"id": question_id, "answer": pick("pnpm")})
            page_results[question_id] = status

    page = threading.Thread(target=click_all)
    page.start()
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
    page.join(timeout=120)
    server.stop_and_read()
    for question_id, status in page_results.items():
        assert status in (200, 409)
        if status == 200:
            applied[question_id].append("web")
    assert len(page_results) == len(ids)
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
    assert second.next("answer")["answer"] == pick("pnpm", by=LOGIN)
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
    assert harness.next("error")["code"] == "ASK_TIMED_OUT"
    # Under load the timeout may come while the record is still being written: it is then
    # expired as soon as it exists.
    until(lambda: inbox.records(harness="late"), "the record")
    (record,) = inbox.records(harness="late")
    until(lambda: inbox.get(record.id).state is State.EXPIRED, "the expiry")
    answering = dsh_inbox_answer(inbox_url, record.id, pick("npm"))
    status, err = answering.wait()
    assert status == 4
    assert "kept as a late answer" in err
    late = harness.next("late")
    assert late == {"event": "late", "id": record.id, "late_answer": pick("npm", by=LOGIN)}
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
