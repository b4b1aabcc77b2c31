"""What the store needs of a database engine; SQLite and PostgreSQL each supply one.

The store writes its SQL once, with ``:name`` parameters and a ``{seq}`` slot for the change
number; an engine runs it. Every write that fills ``{seq}`` is a change that listeners hear of.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

__all__ = [
    "ADDED_COLUMNS",
    "FIRST_COLUMNS",
    "INDEXES",
    "LEASES_TABLE",
    "TABLE_COLUMNS",
    "UPLOADS_TABLE",
    "Engine",
    "Listener",
    "Transaction",
]

T = TypeVar("T")

# The one table, identical on both engines (DOUBLE PRECISION and BIGINT are also valid SQLite
# type names). Times are seconds since the epoch; request and answers are JSON text.
TABLE_COLUMNS = """
    id TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    agent TEXT,
    harness TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL,
    deadline DOUBLE PRECISION,
    state TEXT NOT NULL
        CHECK (state IN ('pending', 'answered', 'withdrawn', 'expired', 'cancelled')),
    answer TEXT,
    settled_at DOUBLE PRECISION,
    surface TEXT,
    late_answer TEXT,
    late_at DOUBLE PRECISION,
    late_surface TEXT,
    late_delivered_at DOUBLE PRECISION,
    seq BIGINT NOT NULL,
    key TEXT,
    delivered_at DOUBLE PRECISION,
    received_at DOUBLE PRECISION,
    lease TEXT,
    approvals TEXT
"""

# Columns added after the first release: a store made before them gains them on opening.
ADDED_COLUMNS = (
    ("key", "TEXT"),
    ("delivered_at", "DOUBLE PRECISION"),
    ("received_at", "DOUBLE PRECISION"),
    ("lease", "TEXT"),
    # A review needing several approvals: the approving answers counted so far (JSON list).
    ("approvals", "TEXT"),
)
# What a table of that name must have to be this store's (else it belongs to someone else).
FIRST_COLUMNS = frozenset({
    "id", "request", "agent", "harness", "created", "deadline", "state", "answer", "settled_at",
    "surface", "late_answer", "late_at", "late_surface", "late_delivered_at", "seq",
})  # fmt: skip

INDEXES = (
    "CREATE INDEX IF NOT EXISTS dsh_inbox_questions_state ON dsh_inbox_questions (state, created)",
    "CREATE INDEX IF NOT EXISTS dsh_inbox_questions_seq ON dsh_inbox_questions (seq)",
    "CREATE INDEX IF NOT EXISTS dsh_inbox_questions_settled ON dsh_inbox_questions (settled_at)",
    # One record per caller-chosen key (NULL keys never collide, on either engine).
    "CREATE UNIQUE INDEX IF NOT EXISTS dsh_inbox_questions_key ON dsh_inbox_questions (key)",
    "CREATE INDEX IF NOT EXISTS dsh_inbox_questions_harness"
    " ON dsh_inbox_questions (harness, delivered_at)",
)

# The asking providers alive: one row per provider (its lease holder id), its heartbeat
# renewed while it runs and deleted when it closes (see `_lease`). A record's ``lease`` names
# the provider asking it.
LEASES_TABLE = (
    "CREATE TABLE IF NOT EXISTS dsh_inbox_leases"
    " (holder TEXT PRIMARY KEY, beat DOUBLE PRECISION NOT NULL)"
)


# Files uploaded through the store, on their way to the asking harness (see `_uploads`): the
# bytes in one row each. BYTEA is a valid SQLite type name too, and SQLite keeps a blob as is.
UPLOADS_TABLE = (
    "CREATE TABLE IF NOT EXISTS dsh_inbox_uploads ("
    " token TEXT PRIMARY KEY,"
    " question_id TEXT NOT NULL,"
    " item_id TEXT NOT NULL,"
    " name TEXT NOT NULL,"
    " media_type TEXT NOT NULL,"
    " size BIGINT NOT NULL,"
    " sha256 TEXT NOT NULL,"
    " data BYTEA NOT NULL,"
    " created DOUBLE PRECISION NOT NULL)"
)


class Listener(Protocol):
    """Hears of changes made by any process using the same store."""

    def poll(self, timeout: float) -> list[str] | None:
        """Wait up to ``timeout`` seconds; the ids of questions changed since the last poll.

        ``None`` means changes may have been missed (the connection was lost and is back):
        the caller re-reads whatever it cares about.
        """
        ...

    def close(self) -> None:
        """Stop listening and release the connection."""
        ...


class Transaction(Protocol):
    """Reads and writes inside one transaction of `Engine.transact`.

    A read's ``{lock}`` slot locks the rows it reads until the transaction ends (``FOR
    UPDATE`` on PostgreSQL; SQLite's ``BEGIN IMMEDIATE`` already holds the whole store).
    """

    def read(self, sql: str, params: Mapping[str, Any]) -> Sequence[Sequence[Any]]:
        """Rows of one query."""
        ...

    def write(self, sql: str, params: Mapping[str, Any]) -> int:
        """One statement (``{seq}`` numbers the change); the rows it changed."""
        ...


class Engine(Protocol):
    """Runs the store's SQL on one database, from any thread."""

    def write(self, sql: str, params: Mapping[str, Any]) -> int:
        """Run one write as one transaction; the number of rows it changed."""
        ...

    def write_many(self, sql: str, params: Sequence[Mapping[str, Any]]) -> list[int]:
        """Run one write for each parameter set, all in one transaction; the rows each
        changed. A failure writes none of them."""
        ...

    def write_steps(self, steps: Sequence[tuple[str, Mapping[str, Any]]]) -> list[int]:
        """Run several writes (each a statement and its parameters), in order, in one
        transaction; the rows each changed. A failure writes none of them."""
        ...

    def read(self, sql: str, params: Mapping[str, Any]) -> Sequence[Sequence[Any]]:
        """Run one query; its rows."""
        ...

    def transact(self, work: Callable[[Transaction], T]) -> T:
        """Run ``work`` in one transaction: what it reads stays as read (locked) until what
        it writes commits; a failure writes nothing. ``work`` may run again after a lost
        connection, so it does nothing but read and write through its transaction."""
        ...

    def listen(
        self, harness: str | None = None, wanted: Callable[[str], bool] | None = None
    ) -> Listener:
        """A new listener, hearing of changes from now on: of every change, or, with
        ``harness``, at least of the changes to that harness's questions and of those whose
        id ``wanted`` accepts (called on the listener's thread; PostgreSQL then wakes a
        harness's watcher for no other harness's change; SQLite hears of every change)."""
        ...

    def check(self) -> None:
        """Raise ``STORE_UNUSABLE`` if the store is gone (deleted, moved, unreadable, dropped).

        Cheap (a ``stat`` for SQLite): the watcher calls it between two polls, so an ask
        waiting on a vanished store fails within a second instead of waiting forever.
        """
        ...

    def close(self) -> None:
        """Close every connection this engine opened."""
        ...
