"""Typed answers through the inbox (issue 36): ``dsh-inbox show`` says what is asked,
``dsh-inbox answer --value/--attach`` answers, uploads travel in the store (SQLite and
PostgreSQL) and the asking harness writes them out; retention deletes them with the record."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from _requests import LOGIN
from _waits import pending_one, until
from dsh_user_questions import AskUserQuestionInput, AskUserQuestionRequest, UserQuestionService
from surfaces.test_cli import run

from dsh_user_questions_inbox import Inbox, State


def typed(kind: str, question: str = "How many workers?", **fields: Any) -> dict[str, Any]:
    field = AskUserQuestionInput(type=kind, **fields).to_dict()
    return {"questions": [{"id": "q", "question": question, "input": field}]}


def uploads_kept(inbox: Inbox) -> int:
    try:
        return len(inbox._engine.read("SELECT token FROM dsh_inbox_uploads", {}))
    except Exception:
        return 0


def test_show_says_what_is_asked_and_how_to_answer(inbox: Inbox, inbox_url: str) -> None:
    record = inbox.add(typed("number", min=1, max=10, unit="workers"), harness="h")
    shown = run(inbox_url, "show", record.id)
    assert shown.returncode == 0, shown.stderr
    assert "asks for a number between 1 and 10 (workers)" in shown.stdout
    assert "(options only)" not in shown.stdout
    assert "dsh-inbox answer ID --question q --value VALUE" in shown.stdout
    upload = inbox.add(typed("upload", question="Send it", max_bytes=2048), harness="h")
    shown = run(inbox_url, "show", upload.id)
    assert "asks for upload files (up to 10, each at most 2 KB)" in shown.stdout
    assert "dsh-inbox answer ID --question q --attach FILE" in shown.stdout


def test_answer_value_applies_a_number(inbox: Inbox, inbox_url: str) -> None:
    record = inbox.add(typed("number", min=1, max=10), harness="h")
    done = run(inbox_url, "answer", record.id, "--value", "7")
    assert done.returncode == 0, done.stderr
    assert inbox.get(record.id).answer == {
        "answers": [{"id": "q", "selected": [], "value": 7}],
        "answered_by": LOGIN,  # dsh-inbox answer records who ran it
    }


def test_answer_value_out_of_range_is_refused_naming_question_and_rule(
    inbox: Inbox, inbox_url: str
) -> None:
    record = inbox.add(typed("number", min=1, max=10), harness="h")
    done = run(inbox_url, "answer", record.id, "--value", "11")
    assert done.returncode == 2
    assert '"q"' in done.stderr
    assert "10" in done.stderr
    assert inbox.get(record.id).state is State.PENDING


def test_answer_values_pick_files(inbox: Inbox, inbox_url: str, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (root / name).write_text(name)
    field = AskUserQuestionInput.files(root).to_dict()
    record = inbox.add(
        {"questions": [{"id": "q", "question": "Which?", "input": field}]}, harness="h"
    )
    shown = run(inbox_url, "show", record.id)
    assert "3 files to pick from" in shown.stdout
    assert "    b.txt" in shown.stdout
    done = run(inbox_url, "answer", record.id, "--value", "a.txt", "--value", "c.txt")
    assert done.returncode == 0, done.stderr
    assert inbox.get(record.id).answer["answers"][0]["value"] == ["a.txt", "c.txt"]


def test_a_value_for_a_question_without_input_is_refused(inbox: Inbox, inbox_url: str) -> None:
    from _requests import PKG

    record = inbox.add(PKG, harness="h")
    done = run(inbox_url, "answer", record.id, "--value", "7")
    assert done.returncode == 2
    assert "asks for a value" in done.stderr


async def test_an_attached_file_travels_in_the_store_to_the_asker(
    service: UserQuestionService,
    inbox: Inbox,
    inbox_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--attach`` puts the bytes in the store; the asking harness writes them into its
    uploads folder when it takes the answer, and the record's path is that file."""
    folder = tmp_path / "asker-uploads"
    monkeypatch.setenv("DSH_USER_QUESTIONS_UPLOADS", str(folder))
    source = tmp_path / "log.txt"
    source.write_bytes(b"line\n" * 500)
    question = typed("upload", question="Send the log", accept=[".txt"], max_count=1)
    asking = asyncio.ensure_future(service.ask(AskUserQuestionRequest.from_dict(question)))
    record = await pending_one(inbox)
    done = await asyncio.to_thread(run, inbox_url, "answer", record.id, "--attach", str(source))
    assert done.returncode == 0, done.stderr
    await until(lambda: inbox.get(record.id).answer is not None, "the answer in the store")
    stored = json.dumps(inbox.get(record.id).answer)
    assert "/dsh-inbox-upload/" in stored  # the store names the file; its bytes are in the table
    answer = await asyncio.wait_for(asking, 60)
    (upload,) = answer.answers[0].value
    written = Path(upload.path)
    assert written.is_relative_to(folder)
    assert written.read_bytes() == source.read_bytes()  # noqa: ASYNC240 (a test, small files)
    assert upload.sha256 == hashlib.sha256(source.read_bytes()).hexdigest()
    assert upload.name == "log.txt"
    assert uploads_kept(inbox) == 1
    # Retention deletes the file's bytes with its record.
    assert inbox.prune(0) == 1
    assert uploads_kept(inbox) == 0


def test_an_attachment_of_a_refused_type_or_too_large_keeps_nothing(
    inbox: Inbox, inbox_url: str, tmp_path: Path
) -> None:
    record = inbox.add(
        typed("upload", question="Send it", accept=[".txt"], max_bytes=100), harness="h"
    )
    (tmp_path / "tool.exe").write_bytes(b"MZ")
    (tmp_path / "big.txt").write_bytes(b"x" * 500)
    for name, why in (("tool.exe", "not a type this question takes"), ("big.txt", "larger")):
        done = run(inbox_url, "answer", record.id, "--attach", str(tmp_path / name))
        assert done.returncode == 2, done.stderr
        assert why in done.stderr
        assert "q" in done.stderr
    assert uploads_kept(inbox) == 0
    assert inbox.get(record.id).state is State.PENDING


async def test_a_file_uploaded_on_the_inbox_page_reaches_the_asker(
    service: UserQuestionService,
    inbox: Inbox,
    inbox_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``dsh-inbox serve`` (another process, as on another machine) takes the page's upload
    into the store; over the limit it is 413 with nothing kept; the page's answer names the
    file by its token and the asker gets its own copy."""
    import httpx
    from _processes import Server

    folder = tmp_path / "asker-uploads"
    monkeypatch.setenv("DSH_USER_QUESTIONS_UPLOADS", str(folder))
    question = typed("upload", question="Send the log", accept=[".txt"], max_bytes=1000)
    asking = asyncio.ensure_future(service.ask(AskUserQuestionRequest.from_dict(question)))
    record = await pending_one(inbox)
    server = await asyncio.to_thread(Server, inbox_url)
    try:
        async with httpx.AsyncClient(base_url=server.base, timeout=60) as http:
            params = {"ask": record.id, "question": "q", "name": "log.txt"}
            big = await http.post("upload", params=params, content=b"x" * 5000)
            assert big.status_code == 413
            assert uploads_kept(inbox) == 0
            sent = await http.post(
                "upload", params=params, content=b"hello", headers={"Content-Type": "text/plain"}
            )
            assert sent.status_code == 200, sent.text
            token = sent.json()["upload"]
            assert "path" not in sent.json()
            items = [{"id": "q", "selected": [], "value": [{"upload": token}]}]
            posted = await http.post("answer", json={"id": record.id, "answer": {"answers": items}})
            assert posted.status_code == 200, posted.text
        answer = await asyncio.wait_for(asking, 60)
        (upload,) = answer.answers[0].value
        assert Path(upload.path).read_bytes() == b"hello"  # noqa: ASYNC240 (a test)
        assert Path(upload.path).is_relative_to(folder)
    finally:
        await asyncio.to_thread(server.stop_and_read)
