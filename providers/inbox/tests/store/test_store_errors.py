"""Honest store errors: an unusable store is one line (path or database, the reason, never a
password), never a traceback, a retry of a permanent error, or ASK_TIMED_OUT; and files that
keep secrets (0600 in 0700)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from _postgres import PostgresServer
from _requests import PKG, pick
from dsh_user_questions import AskUserQuestionRequest, StoreError, UserQuestionError
from dsh_user_questions.harness import HarnessContext

from dsh_user_questions_inbox import Inbox, open_inbox

DSH_INBOX = str(Path(sys.executable).parent / "dsh-inbox")


def run(url: str, *args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    """The installed dsh-inbox against ``url`` (a timeout so a retry loop fails the test)."""
    return subprocess.run(
        [DSH_INBOX, "--inbox", url, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=45,
        check=False,
        env={**os.environ, **env},
    )


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a failed run (exit 1, nothing else printed)."""
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def _not_a_database(path: Path) -> None:
    path.write_bytes(b"this is a text file, not SQLite\n" * 100)


def _truncated(path: Path) -> None:
    with open_inbox(f"sqlite:///{path}") as inbox:
        for _ in range(200):
            inbox.add(PKG, harness="h")
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = path.stat().st_size
    with path.open("r+b") as file:
        file.truncate(size // 3)


def _foreign_table(path: Path) -> None:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE dsh_inbox_questions (name TEXT, price REAL)")


def _directory(path: Path) -> None:
    path.mkdir()


UNUSABLE = {
    "not a database": (_not_a_database, "not a SQLite database"),
    "truncated": (_truncated, "damaged"),
    "foreign table": (_foreign_table, "not an inbox's"),
    "directory": (_directory, "is a directory"),
}


@pytest.mark.parametrize("case", sorted(UNUSABLE))
def test_an_unusable_sqlite_file_is_one_line_from_the_cli(tmp_path: Path, case: str) -> None:
    """dsh-inbox list on a file that is no inbox: exit 1, one line naming the file and why."""
    path = tmp_path / "inbox.db"
    make, reason = UNUSABLE[case]
    make(path)
    line = one_line_error(run(f"sqlite:///{path}", "list"))
    assert line.startswith("dsh-inbox: the user-questions store is unusable: ")
    assert str(path) in line
    assert reason in line


@pytest.mark.parametrize("case", sorted(UNUSABLE))
async def test_an_ask_on_an_unusable_sqlite_file_is_a_store_error(
    tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ask(timeout=5) through the installed provider: STORE_UNUSABLE (StoreError), not
    ASK_TIMED_OUT, naming the file."""
    path = tmp_path / "inbox.db"
    make, reason = UNUSABLE[case]
    make(path)
    monkeypatch.setenv("DSH_USER_QUESTIONS_INBOX", f"sqlite:///{path}")
    monkeypatch.setenv("DSH_USER_QUESTIONS_PROVIDER", "inbox")
    async with HarnessContext() as ctx:
        ctx.load_entrypoints()
        with pytest.raises(StoreError) as caught:
            await ctx.user_questions.ask(AskUserQuestionRequest.from_dict(PKG), timeout=5)
    assert caught.value.code == "STORE_UNUSABLE"
    assert str(path) in caught.value.message
    assert reason in caught.value.message


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes a read-only file all the same")
def test_a_read_only_sqlite_file_is_one_line(tmp_path: Path) -> None:
    """A file the user may only read: one line saying it is read-only."""
    path = tmp_path / "inbox.db"
    open_inbox(f"sqlite:///{path}").close()
    path.chmod(0o400)
    line = one_line_error(run(f"sqlite:///{path}", "list"))
    assert "read-only" in line


def test_the_store_and_the_token_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    """The default store: its folder made 0700, the file and SQLite's -wal beside it 0600;
    the serve token file 0600 in that folder."""
    state = tmp_path / "state"
    done = run("sqlite:///" + str(state / "dsh-user-questions" / "inbox.db"), "init")
    assert done.returncode == 0, done.stderr
    folder = state / "dsh-user-questions"
    with open_inbox(f"sqlite:///{folder / 'inbox.db'}") as inbox:
        inbox.add(PKG, harness="h")
        modes = {
            name: stat.S_IMODE((folder / name).stat().st_mode)
            for name in ("inbox.db", "inbox.db-wal")
        }
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert modes == {"inbox.db": 0o600, "inbox.db-wal": 0o600}
    code = (
        "import os, stat; from dsh_user_questions_inbox._serve import token_from;"
        "from dsh_user_questions_inbox import default_sqlite_path as d; token_from(None);"
        "p = d().parent / 'serve-token'; print(oct(stat.S_IMODE(p.stat().st_mode)),"
        " oct(stat.S_IMODE(p.parent.stat().st_mode)))"
    )
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "other")}
    env.pop("DSH_USER_QUESTIONS_INBOX_TOKEN", None)
    shown = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert shown.stdout.split() == ["0o600", "0o700"]


def _postgres_cases(server: PostgresServer) -> dict[str, tuple[str, str]]:
    host = server.root
    return {
        "missing database": (
            f"postgresql://postgres:hunter2@/no_such_db?host={host}",
            "no_such_db",
        ),
        "unknown role": (f"postgresql://nobody:hunter2@/postgres?host={host}", "nobody"),
        "port 99999": ("postgresql://postgres:hunter2@localhost:99999/db", "port"),
        "bogus sslmode": (f"postgresql://postgres:hunter2@/db?host={host}&sslmode=bogus", "ssl"),
        "no server": (f"postgresql://postgres:hunter2@/db?host={host}/nowhere", "nowhere"),
    }


@pytest.mark.flaky(reruns=2)
def test_permanent_postgresql_errors_fail_at_once_in_one_line(postgres: PostgresServer) -> None:
    """A missing database, an unknown role, port 99999, sslmode=bogus, no server at all: each
    is one line from dsh-inbox (exit 1, no retry, no traceback), the password never shown."""
    for case, (url, needle) in _postgres_cases(postgres).items():
        line = one_line_error(run(url, "list"))
        assert "hunter2" not in line, case
        assert "store is unusable" in line, case
        assert needle in line, (case, line)


async def test_an_ask_on_a_missing_postgresql_database_is_a_store_error(
    postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ask(timeout=5) with a database that does not exist: STORE_UNUSABLE, not ASK_TIMED_OUT,
    without the password."""
    url = f"postgresql://postgres:hunter2@/no_such_db?host={postgres.root}"
    monkeypatch.setenv("DSH_USER_QUESTIONS_INBOX", url)
    monkeypatch.setenv("DSH_USER_QUESTIONS_PROVIDER", "inbox")
    async with HarnessContext() as ctx:
        ctx.load_entrypoints()
        with pytest.raises(UserQuestionError) as caught:
            await ctx.user_questions.ask(AskUserQuestionRequest.from_dict(PKG), timeout=5)
    assert caught.value.code == "STORE_UNUSABLE"
    assert "hunter2" not in str(caught.value)


def test_a_malformed_url_never_echoes_the_password() -> None:
    """A URL that is no store URL is refused without its password."""
    done = run("mysql://admin:hunter2@db/inbox", "list")
    assert done.returncode == 1
    assert "hunter2" not in done.stderr
    assert "***" in done.stderr


def test_json_nested_too_deep_is_not_json(inbox: Inbox, inbox_url: str) -> None:
    """An answer nested 100,000 deep: exit 2, "not JSON", no RecursionError traceback."""
    record = inbox.add(PKG, harness="h")
    done = run(inbox_url, "answer", record.id, stdin="[" * 100_000 + "]" * 100_000)
    assert done.returncode == 2, done.stderr
    assert "not JSON" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_typed_answer_refused_is_the_persons_answer(inbox: Inbox, inbox_url: str) -> None:
    """A refused CLI answer is the person's answer breaking a rule, never "the provider gave a
    bad answer"; control characters in custom text are refused as every surface refuses them
    (rules.check_answer)."""
    record = inbox.add(PKG, harness="h")
    bad = '{"answers": [{"id": "pkg", "custom": "\\u001b[2J\\u001b]0;pwned\\u0007"}]}'
    done = run(inbox_url, "answer", record.id, stdin=bad)
    assert done.returncode == 2
    assert "your answer was refused" in done.stderr
    assert "provider" not in done.stderr
    assert "\x1b" not in done.stderr
    long = '{"answers": [{"id": "pkg", "custom": "' + "x" * 20_015 + '"}]}'
    assert run(inbox_url, "answer", record.id, stdin=long).returncode == 2
    assert run(inbox_url, "answer", record.id, stdin=json_of(pick("npm"))).returncode == 0


def json_of(data: object) -> str:
    import json

    return json.dumps(data)


def test_a_store_made_before_keys_gains_the_new_columns(tmp_path: Path) -> None:
    """A SQLite store of the first release (no key, delivered_at, received_at) is upgraded on
    opening: its records stay, and keyed asks work."""
    path = tmp_path / "old.db"
    old_columns = """
        id TEXT PRIMARY KEY, request TEXT NOT NULL, agent TEXT, harness TEXT NOT NULL,
        created DOUBLE PRECISION NOT NULL, deadline DOUBLE PRECISION, state TEXT NOT NULL,
        answer TEXT, settled_at DOUBLE PRECISION, surface TEXT, late_answer TEXT,
        late_at DOUBLE PRECISION, late_surface TEXT, late_delivered_at DOUBLE PRECISION,
        seq BIGINT NOT NULL
    """
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute(f"CREATE TABLE dsh_inbox_questions ({old_columns})")
        conn.execute(
            "INSERT INTO dsh_inbox_questions (id, request, harness, created, state, seq)"
            """ VALUES ('old1', '{"questions": []}', 'h', 1.0, 'pending', 1)"""
        )
        conn.commit()
    with open_inbox(f"sqlite:///{path}") as inbox:
        assert inbox.get("old1").key is None
        keyed = AskUserQuestionRequest.from_dict(PKG, key="k")
        assert inbox.add(keyed, harness="h").id == inbox.add(keyed, harness="h").id
