"""Durable asks across a kill -9: LangGraph, pydantic-ai, the Agents SDK, the inbox, two engines.

Issue 19, points 2, 3 and 4. A harness process asks one question through the inbox and is killed
with SIGKILL while it waits; the question is answered with ``dsh-inbox answer``; a new process
resumes the run (the same LangGraph thread on a persistent checkpointer, the pydantic-ai
message history saved with ``ModelMessagesTypeAdapter``, or the Agents SDK's ``RunState``).
The model receives the answer exactly once, and the inbox holds one record: the question was
never asked twice.

SQLite: ``langgraph-checkpoint-sqlite`` and the inbox on SQLite files. PostgreSQL:
``langgraph-checkpoint-postgres`` and the inbox in a real server that the inbox tests' fixture
starts from Debian's ``postgresql`` package (skipped without it, except under ``CI=true``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dsh_user_questions_inbox", reason="the durable tests need the inbox provider")

ROOT = Path(__file__).resolve().parent.parent
HARNESS = Path(__file__).with_name("durable_harness.py")
ANSWER = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
ANSWER_TEXT = '{"answers":[{"id":"pkg","selected":["pnpm"]}]}'
WAIT = float(os.environ.get("DSH_DURABLE_TEST_WAIT", "90"))


@pytest.fixture(scope="module")
def postgres() -> Iterator[Any]:
    """One PostgreSQL server for the module (the inbox tests' own fixture code)."""
    sys.path.insert(0, str(ROOT / "providers" / "inbox" / "tests"))
    try:
        from _postgres import PostgresServer, find_bin
    finally:
        sys.path.pop(0)
    bindir = find_bin()
    if bindir is None:
        message = "PostgreSQL is not installed (Debian package postgresql)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    server = PostgresServer(bindir)
    server.start()
    yield server
    server.destroy()


def _stores(engine: str, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[str, str]:
    """The inbox URL and the checkpoint store (a file, or a database of its own)."""
    if engine == "sqlite":
        return f"sqlite:///{tmp_path / 'inbox.db'}", str(tmp_path / "checkpoints.db")
    pytest.importorskip("psycopg")
    server = request.getfixturevalue("postgres")
    return server.new_database(), server.new_database()


def _inbox_command() -> list[str]:
    script = Path(sys.executable).with_name("dsh-inbox")
    return (
        [str(script)] if script.exists() else [sys.executable, "-m", "dsh_user_questions_inbox.cli"]
    )


def _inbox(
    env: dict[str, str], *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_inbox_command(), *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )


def _records(env: dict[str, str]) -> list[dict[str, Any]]:
    listed = _inbox(env, "list", "--all", "--json")
    assert listed.returncode == 0, listed.stderr
    records: list[dict[str, Any]] = json.loads(listed.stdout)
    return records


def _wait_for_pending(env: dict[str, str], harness: subprocess.Popen[str]) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        pending = [r for r in _records(env) if r["state"] == "pending"]
        if pending:
            (record,) = pending
            return record
        assert harness.poll() is None, harness.communicate()
        time.sleep(0.2)
    raise AssertionError("the harness never asked")


def _harness(env: dict[str, str], *args: str) -> list[str]:
    return [sys.executable, str(HARNESS), *args]


@pytest.mark.flaky(reruns=2)
@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
@pytest.mark.parametrize("framework", ["langgraph", "pydantic-ai", "openai-agents"])
def test_a_run_killed_while_waiting_resumes_and_the_model_gets_the_answer_once(
    engine: str, framework: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if framework == "langgraph":
        pytest.importorskip("langgraph")
        pytest.importorskip(
            "langgraph.checkpoint.sqlite" if engine == "sqlite" else "langgraph.checkpoint.postgres"
        )
    elif framework == "pydantic-ai":
        pytest.importorskip("pydantic_ai")
    else:
        pytest.importorskip("agents")
    inbox_url, checkpoint = _stores(engine, tmp_path, request)
    seen = tmp_path / "seen.jsonl"
    env = {
        **os.environ,
        "DSH_USER_QUESTIONS_PROVIDER": "inbox",
        "DSH_USER_QUESTIONS_INBOX": inbox_url,
        "DSH_TEST_SEEN": str(seen),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    assert _inbox(env, "init").returncode == 0  # `dsh-inbox list` needs the store to exist
    args = (
        ("langgraph", checkpoint)
        if framework == "langgraph"
        else (framework, str(tmp_path / "saved.json"))
    )

    first = subprocess.Popen(
        _harness(env, *args), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        record = _wait_for_pending(env, first)
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.communicate(timeout=WAIT)
    assert first.returncode == -signal.SIGKILL
    assert not seen.exists()  # the model has not been given anything yet

    answered = _inbox(env, "answer", record["id"], stdin=json.dumps(ANSWER))
    assert answered.returncode == 0, answered.stderr

    second = subprocess.run(
        _harness(env, *args), env=env, capture_output=True, text=True, timeout=WAIT
    )
    assert second.returncode == 0, second.stderr
    done = json.loads(second.stdout.splitlines()[-1])
    assert done == {"event": "done", "output": ANSWER_TEXT}
    given = [json.loads(line) for line in seen.read_text().splitlines()]
    assert [g["content"] for g in given] == [ANSWER_TEXT]  # once, and nothing else
    records = _records(env)
    assert [r["id"] for r in records] == [record["id"]]  # never asked twice
    assert records[0]["state"] == "answered"
