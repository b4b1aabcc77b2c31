"""The SQLite engine: one file on one machine, shared by every process that opens it.

WAL lets readers go on while one process writes; ``BEGIN IMMEDIATE`` takes the write lock at
the start, so each transition is one atomic step and writers queue (``busy_timeout``) instead
of failing. ``synchronous=NORMAL`` keeps every commit across a crash of any process; only an
operating-system crash or power cut may lose the last commits.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ._engine import INDEXES, TABLE_COLUMNS

__all__ = ["SQLiteEngine"]

_SEQ = "(SELECT seq FROM dsh_inbox_seq) + 1"
_BUSY_MS = 60_000  # a loaded machine with many writers still gets its turn
_POLL_SECONDS = 0.02  # how often a listener asks SQLite whether another connection committed


def _connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=60)
    conn.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


class SQLiteEngine:
    """The store's engine over one SQLite file (created, with its folder, when missing)."""

    def __init__(self, path: str) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._path = path
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list[sqlite3.Connection] = []
        self._closed = False
        conn = self._conn()
        # WAL is a property of the file: the first opener sets it, for good.
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(f"CREATE TABLE IF NOT EXISTS dsh_inbox_questions ({TABLE_COLUMNS})")
            conn.execute("CREATE TABLE IF NOT EXISTS dsh_inbox_seq (seq BIGINT NOT NULL)")
            conn.execute(
                "INSERT INTO dsh_inbox_seq SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM dsh_inbox_seq)"
            )
            for index in INDEXES:
                conn.execute(index)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @property
    def path(self) -> str:
        """The database file."""
        return self._path

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            if self._closed:
                raise RuntimeError("the inbox is closed")
            conn = _connect(self._path)
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def write(self, sql: str, params: Mapping[str, Any]) -> int:
        """One transaction: the statement, and a new change number if it changed a row."""
        conn = self._conn()
        bumps = "{seq}" in sql
        conn.execute("BEGIN IMMEDIATE")
        try:
            changed = conn.execute(sql.replace("{seq}", _SEQ), params).rowcount
            if bumps and changed:
                conn.execute("UPDATE dsh_inbox_seq SET seq = seq + 1")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return changed

    def read(self, sql: str, params: Mapping[str, Any]) -> Sequence[Sequence[Any]]:
        """Rows of one query (a consistent snapshot under WAL)."""
        return self._conn().execute(sql, params).fetchall()

    def listen(self) -> _SQLiteListener:
        """A listener with its own connection."""
        return _SQLiteListener(self._path)

    def close(self) -> None:
        """Close the connections of every thread."""
        with self._lock:
            self._closed = True
            conns, self._all = self._all, []
        for conn in conns:
            conn.close()
        self._local = threading.local()


class _SQLiteListener:
    """Polls ``PRAGMA data_version`` (free when nothing changed), then reads changed ids."""

    def __init__(self, path: str) -> None:
        self._conn = _connect(path)
        self._version = self._data_version()
        self._cursor: int = self._conn.execute("SELECT seq FROM dsh_inbox_seq").fetchone()[0]

    def _data_version(self) -> int:
        version: int = self._conn.execute("PRAGMA data_version").fetchone()[0]
        return version

    def poll(self, timeout: float) -> list[str] | None:
        """Changed ids since the last poll, waiting up to ``timeout`` for the first one."""
        deadline = time.monotonic() + timeout
        while True:
            version = self._data_version()
            if version != self._version:
                self._version = version
                rows = self._conn.execute(
                    "SELECT id, seq FROM dsh_inbox_questions WHERE seq > ? ORDER BY seq",
                    (self._cursor,),
                ).fetchall()
                if rows:
                    self._cursor = rows[-1][1]
                    return [row[0] for row in rows]
            left = deadline - time.monotonic()
            if left <= 0:
                return []
            time.sleep(min(_POLL_SECONDS, left))

    def close(self) -> None:
        """Close the listener's connection."""
        self._conn.close()
