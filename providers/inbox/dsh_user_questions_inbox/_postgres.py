"""The PostgreSQL engine: one database shared by harnesses and surfaces on many machines.

Each write is one autocommit statement that also calls ``pg_notify`` for the rows it changed,
so listeners (``LISTEN``) hear of a change exactly when it commits. Under READ COMMITTED a
second ``UPDATE ... WHERE state = 'pending'`` waits for the first one's row lock and then finds
the row no longer pending: the first answer wins. A lost connection (server restart) is
reopened until ``reconnect_seconds`` have passed; listeners then report that they may have
missed changes, and waiters re-read their questions. Only the loss of a server this engine
reached before is retried: a first connection that fails, or an error the server reports as
permanent (authentication, a missing database, no privilege), is ``STORE_UNUSABLE`` at once, in
one line, with the password redacted.
"""

from __future__ import annotations

import hashlib
import logging
import re
import select
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import psycopg
from dsh_user_questions import UserQuestionError
from psycopg.conninfo import conninfo_to_dict

from ._connections import ThreadConnections
from ._engine import (
    ADDED_COLUMNS,
    FIRST_COLUMNS,
    INDEXES,
    LEASES_TABLE,
    TABLE_COLUMNS,
    UPLOADS_TABLE,
)

__all__ = ["CHANNEL", "PostgresEngine", "harness_channel"]

CHANNEL = "dsh_user_questions_inbox"
_SEQ = "nextval('dsh_inbox_seq')"
_HARNESS_DIGITS = 16  # hex digits of a harness channel's hash (the name stays under 63 bytes)
_PARAM = re.compile(r":([a-z_][a-z0-9_]*)")
_LOCK_KEY = 0x6473_6869_6E62  # an advisory lock for creating the schema once
# SQLSTATE classes and codes that no reconnect can cure: authorization, a missing database,
# a missing privilege, a bad setting.
_PERMANENT = ("28", "3D", "42501", "08004", "0A000", "22023", "42P01")
_log = logging.getLogger(__name__)
_TABLE_CHECK_SECONDS = 1.0  # how often `check` asks whether the store's table is still there
T = TypeVar("T")


def _pg(sql: str) -> str:
    return _PARAM.sub(r"%(\1)s", sql)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    text = text.removeprefix("connection is bad: ").removeprefix("connection failed: ")
    return text.splitlines()[0].strip() if text else type(error).__name__


# A failed connection carries no SQLSTATE: these server messages are permanent all the same.
_PERMANENT_CONNECT = re.compile(
    r'FATAL: +(database ".*" does not exist|role ".*" does not exist'
    r"|password authentication failed|permission denied)"
)


def _permanent(error: psycopg.Error) -> bool:
    state = error.sqlstate or ""
    if state:
        return state.startswith(_PERMANENT)
    return _PERMANENT_CONNECT.search(str(error)) is not None


class PostgresEngine:
    """The store's engine over one PostgreSQL database (schema created when missing).

    ``shown`` names the database in messages (the URL without its password).
    """

    def __init__(
        self,
        conninfo: str,
        *,
        reconnect_seconds: float = 60.0,
        shown: str | None = None,
        create: bool = True,
    ) -> None:
        self._conninfo = conninfo
        self._shown = shown or "the PostgreSQL inbox"
        self._secret = _password_of(conninfo)
        self.reconnect_seconds = reconnect_seconds
        self._conns = ThreadConnections(self._connect, lambda conn: conn.closed)
        self._reached = False  # a server reached once is waited for when it goes away
        self._create = create
        self._gone: UserQuestionError | None = None  # a listener found the store gone for good
        self._next_table_check = 0.0
        self._run(self._create_schema)
        self._reached = True

    def unusable(self, error: BaseException | str) -> UserQuestionError:
        """``STORE_UNUSABLE`` naming the database (never its password) and why, in one line."""
        why = error if isinstance(error, str) else _first_line(error)
        if self._secret:
            why = why.replace(self._secret, "***")
        return UserQuestionError.store_unusable(f"PostgreSQL {self._shown}: {why}")

    def _create_schema(self, conn: psycopg.Connection[Any]) -> None:
        if not self._create:
            row = conn.execute("SELECT to_regclass('dsh_inbox_questions')").fetchone()
            if row is None or row[0] is None:
                raise self.unusable(
                    "there is no store in this database (its table dsh_inbox_questions is"
                    " missing); this command does not make one: a harness's first ask,"
                    " `dsh-inbox init` or `dsh-inbox serve` does"
                )
        with conn.transaction():
            # Several processes may start at once: CREATE ... IF NOT EXISTS is not race-free.
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            conn.execute("CREATE SEQUENCE IF NOT EXISTS dsh_inbox_seq")
            conn.execute(f"CREATE TABLE IF NOT EXISTS dsh_inbox_questions ({TABLE_COLUMNS})")
            columns = {
                row[0]
                for row in conn.execute(
                    "SELECT column_name FROM information_schema.columns"
                    " WHERE table_schema = current_schema() AND table_name = 'dsh_inbox_questions'"
                )
            }
            missing = FIRST_COLUMNS - columns
            if missing:
                raise self.unusable(
                    "its table dsh_inbox_questions is not an inbox's"
                    f" (no column {', '.join(sorted(missing))})"
                )
            for name, kind in ADDED_COLUMNS:
                conn.execute(
                    f"ALTER TABLE dsh_inbox_questions ADD COLUMN IF NOT EXISTS {name} {kind}"
                )
            conn.execute(LEASES_TABLE)
            conn.execute(UPLOADS_TABLE)
            for index in INDEXES:
                conn.execute(index)

    def _connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self._conninfo, autocommit=True)

    def _run(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """Run ``work`` on this thread's connection, reconnecting while the server is away."""
        give_up = time.monotonic() + self.reconnect_seconds
        delay = 0.05
        warned = False
        while True:
            try:
                return work(self._conns.get())
            except psycopg.OperationalError as err:
                self._conns.drop()
                if not self._reached or _permanent(err):
                    raise self.unusable(err) from None
                if time.monotonic() >= give_up:
                    raise self.unusable(
                        f"unreachable for {self.reconnect_seconds:g} s ({_first_line(err)})"
                    ) from None
                if not warned:
                    _log.warning("inbox database unreachable; retrying: %s", _first_line(err))
                    warned = True
                time.sleep(delay)
                delay = min(delay * 2, 1.0)
            except psycopg.Error as err:
                raise self.unusable(err) from None

    def write(self, sql: str, params: Mapping[str, Any]) -> int:
        """One autocommit statement; changes numbered by ``{seq}`` are announced on commit."""
        return self._run(lambda conn: _execute(conn, sql, params))

    def write_steps(self, steps: Sequence[tuple[str, Mapping[str, Any]]]) -> list[int]:
        """One transaction: each statement with its parameters (announced on commit)."""

        def run(conn: psycopg.Connection[Any]) -> list[int]:
            with conn.transaction():
                return [_execute(conn, sql, params) for sql, params in steps]

        return self._run(run)

    def write_many(self, sql: str, params: Sequence[Mapping[str, Any]]) -> list[int]:
        """One transaction: the statement once per parameter set (announced on commit)."""
        if "{seq}" in sql:
            statement = _announcing(sql)

            def run(conn: psycopg.Connection[Any]) -> list[int]:
                with conn.transaction(), conn.cursor() as cursor:
                    cursor.executemany(statement, params, returning=True)
                    counts = [len(cursor.fetchall())]
                    while cursor.nextset():
                        counts.append(len(cursor.fetchall()))
                return counts

            return self._run(run)

        def plain(conn: psycopg.Connection[Any]) -> list[int]:
            with conn.transaction():
                return [conn.execute(_pg(sql), one).rowcount for one in params]

        return self._run(plain)

    def transact(self, work: Callable[[_Transaction], T]) -> T:
        """``work`` in one transaction; its reads' ``{lock}`` is ``FOR UPDATE``."""

        def run(conn: psycopg.Connection[Any]) -> T:
            with conn.transaction():
                return work(_Transaction(conn))

        return self._run(run)

    def read(self, sql: str, params: Mapping[str, Any]) -> Sequence[Sequence[Any]]:
        """Rows of one query."""
        return self._run(lambda conn: conn.execute(_pg(sql), params).fetchall())

    def listen(
        self, harness: str | None = None, wanted: Callable[[str], bool] | None = None
    ) -> _PostgresListener:
        """A listener on its own connection (see `Engine.listen`): with ``harness``, it keeps
        the ids of `CHANNEL` that ``wanted`` accepts and every id of the harness's channel."""
        try:
            return _PostgresListener(self._conninfo, self._lost, harness, wanted)
        except psycopg.Error as err:
            raise self.unusable(err) from None

    def _lost(self, error: psycopg.Error) -> None:
        if _permanent(error):  # the database was dropped, the role removed...
            self._gone = self.unusable(error)

    def check(self) -> None:
        """``STORE_UNUSABLE`` once a listener's reconnect met a permanent error (the database
        dropped, the role or its privilege removed), or once the store's table is gone (at
        most one query a second); a server away for a while is no error."""
        if self._gone is not None:
            raise self._gone
        now = time.monotonic()
        if now < self._next_table_check:
            return
        self._next_table_check = now + _TABLE_CHECK_SECONDS
        try:
            row = self._conns.get().execute("SELECT to_regclass('dsh_inbox_questions')").fetchone()
        except psycopg.Error as err:
            self._conns.drop()  # the reads and the listener reconnect
            if isinstance(err, psycopg.OperationalError) or not _permanent(err):
                return  # away for now, or a passing fault: no verdict
            raise self.unusable(err) from None
        if row is None or row[0] is None:
            raise self.unusable("its table dsh_inbox_questions was dropped")

    def close(self) -> None:
        """Close the connections of every thread."""
        self._conns.close()


def _execute(conn: psycopg.Connection[Any], sql: str, params: Mapping[str, Any]) -> int:
    """One statement; the rows it changed (those numbered by ``{seq}`` are announced)."""
    if "{seq}" in sql:
        return len(conn.execute(_announcing(sql), params).fetchall())
    return conn.execute(_pg(sql), params).rowcount


def harness_channel(harness: str) -> str:
    """The channel that also hears of every change to the questions of ``harness``: `CHANNEL`
    and the start of the MD5 of its name (as ``_announcing`` computes it in SQL, over the
    database's encoding: UTF-8 here; a name outside ASCII in a database of another encoding
    misses its channel, and its late answers wait for the watcher's next resync). Two harnesses
    sharing a channel only cost their watchers a read each of the other's changes."""
    digest = hashlib.md5(harness.encode(), usedforsecurity=False).hexdigest()
    return f"{CHANNEL}_{digest[:_HARNESS_DIGITS]}"


def _announcing(sql: str) -> str:
    """A write numbered by ``{seq}`` that announces each row it changed, on commit: its id on
    `CHANNEL` (every listener hears it, as before) and on its harness's channel (a harness's
    watcher hears only those, and the changes to questions it waits on)."""
    return (
        f"WITH changed AS ({_pg(sql.replace('{seq}', _SEQ))} RETURNING id, harness)"
        f" SELECT pg_notify('{CHANNEL}', id),"
        f" pg_notify('{CHANNEL}_' || left(md5(coalesce(harness, '')), {_HARNESS_DIGITS}), id)"
        " FROM changed"
    )


class _Transaction:
    """Reads and writes on the connection holding the transaction (see `Engine.transact`)."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def read(self, sql: str, params: Mapping[str, Any]) -> Sequence[Sequence[Any]]:
        return self._conn.execute(_pg(sql.replace("{lock}", " FOR UPDATE")), params).fetchall()

    def write(self, sql: str, params: Mapping[str, Any]) -> int:
        return _execute(self._conn, sql, params)


def _password_of(conninfo: str) -> str | None:
    try:
        password = conninfo_to_dict(conninfo).get("password")
    except psycopg.Error:
        return None
    return str(password) if password else None


class _PostgresListener:
    """``LISTEN`` on a connection of its own; reconnects (and says so) after losing it."""

    def __init__(
        self,
        conninfo: str,
        lost: Callable[[psycopg.Error], None],
        harness: str | None = None,
        wanted: Callable[[str], bool] | None = None,
    ) -> None:
        self._conninfo = conninfo
        self._lost = lost
        self._own = None if harness is None else harness_channel(harness)
        self._wanted = wanted
        self._conn: psycopg.Connection[Any] | None = self._connect()

    def _connect(self) -> psycopg.Connection[Any]:
        conn = psycopg.connect(self._conninfo, autocommit=True)
        conn.execute(f"LISTEN {CHANNEL}")
        if self._own is not None:
            conn.execute(f'LISTEN "{self._own}"')
        return conn

    def _kept(self, notices: Iterable[tuple[str, str]]) -> list[str]:
        """The announced ids (channel, id) this listener is for, each once."""
        if self._own is None:
            return [payload for _, payload in notices]
        wanted = self._wanted
        kept = [
            payload
            for channel, payload in notices
            if channel == self._own or (wanted is not None and wanted(payload))
        ]
        return list(dict.fromkeys(kept))

    def poll(self, timeout: float) -> list[str] | None:
        """Ids announced within ``timeout`` (those it is for, see `PostgresEngine.listen`);
        ``None`` right after a reconnect."""
        if self._conn is None:
            try:
                self._conn = self._connect()
            except psycopg.OperationalError as err:
                self._lost(err)
                time.sleep(min(timeout, 0.5))
                return []
            return None
        # Straight from libpq: `Connection.notifies` costs about 0.7 ms of CPU per
        # notification, this 0.03 ms; fifty harnesses each hear every change of the shared
        # channel (BENCHMARKS.md, the team on one PostgreSQL).
        pgconn = self._conn.pgconn
        deadline = time.monotonic() + timeout
        try:
            # poll(2), not select(2): a process with more than 1024 open files is no error.
            readable = select.poll()
            readable.register(pgconn.socket, select.POLLIN)
            while True:  # changes this listener is not for do not end the wait
                pgconn.consume_input()
                notices: list[tuple[str, str]] = []
                while (notice := pgconn.notifies()) is not None:
                    notices.append((notice.relname.decode(), notice.extra.decode()))
                ids = self._kept(notices)
                left = deadline - time.monotonic()
                if ids or left <= 0:
                    break
                readable.poll(max(1, int(left * 1000)))
        except (psycopg.OperationalError, OSError, ValueError):
            self._conn.close()
            self._conn = None
            return []
        return ids

    def close(self) -> None:
        """Close the listening connection."""
        if self._conn is not None:
            self._conn.close()
