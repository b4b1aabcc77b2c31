"""The PostgreSQL engine: one database shared by harnesses and surfaces on many machines.

Each write is one autocommit statement that also calls ``pg_notify`` for the rows it changed,
so listeners (``LISTEN``) hear of a change exactly when it commits. Under READ COMMITTED a
second ``UPDATE ... WHERE state = 'pending'`` waits for the first one's row lock and then finds
the row no longer pending: the first answer wins. A lost connection (server restart) is
reopened until ``reconnect_seconds`` have passed; listeners then report that they may have
missed changes, and waiters re-read their questions.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import psycopg

from ._engine import INDEXES, TABLE_COLUMNS

__all__ = ["CHANNEL", "PostgresEngine"]

CHANNEL = "dsh_user_questions_inbox"
_SEQ = "nextval('dsh_inbox_seq')"
_PARAM = re.compile(r":([a-z_][a-z0-9_]*)")
_LOCK_KEY = 0x6473_6869_6E62  # an advisory lock for creating the schema once
_log = logging.getLogger(__name__)
T = TypeVar("T")


def _pg(sql: str) -> str:
    return _PARAM.sub(r"%(\1)s", sql)


class PostgresEngine:
    """The store's engine over one PostgreSQL database (schema created when missing)."""

    def __init__(self, conninfo: str, *, reconnect_seconds: float = 60.0) -> None:
        self._conninfo = conninfo
        self.reconnect_seconds = reconnect_seconds
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list[psycopg.Connection[Any]] = []
        self._closed = False
        self._run(self._create_schema)

    @staticmethod
    def _create_schema(conn: psycopg.Connection[Any]) -> None:
        with conn.transaction():
            # Several processes may start at once: CREATE ... IF NOT EXISTS is not race-free.
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            conn.execute("CREATE SEQUENCE IF NOT EXISTS dsh_inbox_seq")
            conn.execute(f"CREATE TABLE IF NOT EXISTS dsh_inbox_questions ({TABLE_COLUMNS})")
            for index in INDEXES:
                conn.execute(index)

    def _conn(self) -> psycopg.Connection[Any]:
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            if self._closed:
                raise RuntimeError("the inbox is closed")
            conn = psycopg.connect(self._conninfo, autocommit=True)
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def _run(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """Run ``work`` on this thread's connection, reconnecting while the server is away."""
        give_up = time.monotonic() + self.reconnect_seconds
        delay = 0.05
        while True:
            try:
                return work(self._conn())
            except psycopg.OperationalError:
                conn = getattr(self._local, "conn", None)
                if conn is not None:
                    conn.close()
                    self._local.conn = None
                if time.monotonic() >= give_up:
                    raise
                _log.warning("inbox database unreachable; retrying", exc_info=True)
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    def write(self, sql: str, params: Mapping[str, Any]) -> int:
        """One autocommit statement; changes numbered by ``{seq}`` are announced on commit."""
        if "{seq}" in sql:
            statement = (
                f"WITH changed AS ({_pg(sql.replace('{seq}', _SEQ))} RETURNING id)"
                f" SELECT pg_notify('{CHANNEL}', id) FROM changed"
            )
            return self._run(lambda conn: len(conn.execute(statement, params).fetchall()))
        return self._run(lambda conn: conn.execute(_pg(sql), params).rowcount)

    def read(self, sql: str, params: Mapping[str, Any]) -> Sequence[Sequence[Any]]:
        """Rows of one query."""
        return self._run(lambda conn: conn.execute(_pg(sql), params).fetchall())

    def listen(self) -> _PostgresListener:
        """A listener on its own connection."""
        return _PostgresListener(self._conninfo)

    def close(self) -> None:
        """Close the connections of every thread."""
        with self._lock:
            self._closed = True
            conns, self._all = self._all, []
        for conn in conns:
            conn.close()
        self._local = threading.local()


class _PostgresListener:
    """``LISTEN`` on a connection of its own; reconnects (and says so) after losing it."""

    def __init__(self, conninfo: str) -> None:
        self._conninfo = conninfo
        self._conn: psycopg.Connection[Any] | None = self._connect()

    def _connect(self) -> psycopg.Connection[Any]:
        conn = psycopg.connect(self._conninfo, autocommit=True)
        conn.execute(f"LISTEN {CHANNEL}")
        return conn

    def poll(self, timeout: float) -> list[str] | None:
        """Ids announced within ``timeout``; ``None`` right after a reconnect."""
        if self._conn is None:
            try:
                self._conn = self._connect()
            except psycopg.OperationalError:
                time.sleep(min(timeout, 0.5))
                return []
            return None
        try:
            ids = [n.payload for n in self._conn.notifies(timeout=timeout, stop_after=1)]
            if ids:  # take whatever else already arrived, without waiting
                ids += [n.payload for n in self._conn.notifies(timeout=0.001)]
        except psycopg.OperationalError:
            self._conn.close()
            self._conn = None
            return []
        return ids

    def close(self) -> None:
        """Close the listening connection."""
        if self._conn is not None:
            self._conn.close()
