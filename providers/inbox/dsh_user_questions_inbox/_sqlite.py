"""The SQLite engine: one file on one machine, shared by every process that opens it.

WAL lets readers go on while one process writes; ``BEGIN IMMEDIATE`` takes the write lock at
the start, so each transition is one atomic step and writers queue (``busy_timeout``) instead
of failing. ``synchronous=NORMAL`` keeps every commit across a crash of any process; only an
operating-system crash or power cut may lose the last commits.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from dsh_user_questions import UserQuestionError

from ._connections import ThreadConnections
from ._engine import (
    ADDED_COLUMNS,
    FIRST_COLUMNS,
    INDEXES,
    LEASES_TABLE,
    TABLE_COLUMNS,
    UPLOADS_TABLE,
)
from ._url import default_sqlite_path

__all__ = ["SQLiteEngine", "unusable"]

T = TypeVar("T")

_SEQ = "(SELECT seq FROM dsh_inbox_seq) + 1"
_BUSY_MS = 60_000  # a loaded machine with many writers still gets its turn
_POLL_SECONDS = 0.02  # how often a listener asks SQLite whether another connection committed


def _connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=60)
    try:
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
        conn.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        conn.close()
        raise
    return conn


_REASONS = (
    ("readonly", "it is read-only"),
    ("not a database", "it is not a SQLite database"),
    ("malformed", "it is damaged (truncated or overwritten)"),
    ("unable to open", "it cannot be opened"),
    ("disk i/o", "reading or writing it failed (disk I/O error)"),
    ("locked", "another process held it locked for over a minute"),
)


def unusable(path: str, error: BaseException | str) -> UserQuestionError:
    """``STORE_UNUSABLE`` for the SQLite file ``path``: one line with the path and why."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    lowered = text.lower()
    why = next((reason for needle, reason in _REASONS if needle in lowered), None)
    reason = text if why is None or isinstance(error, str) else f"{why} ({text})"
    return UserQuestionError.store_unusable(f"SQLite file {path}: {reason}")


@contextlib.contextmanager
def _as_store_errors(path: str) -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as err:
        raise unusable(path, err) from None
    except OSError as err:
        raise unusable(path, err.strerror or str(err)) from None


_NO_STORE = (
    "there is no store here (deleted or moved?); this command does not make one: a harness's"
    " first ask, `dsh-inbox init` or `dsh-inbox serve` does"
)
_VANISHED = (
    "the store made here before is gone (deleted or moved?); `dsh-inbox serve` makes only a"
    " first store: `dsh-inbox init` makes a new empty one"
)


def _identity(path: str) -> tuple[int, int]:
    status = os.stat(path)
    return status.st_dev, status.st_ino


def damage(path: str, page_size: int = 512, had: int = 0) -> str | None:
    """Why the file at ``path`` is no longer a whole SQLite database, or ``None``.

    From ``stat`` alone: opening the file here and closing it would drop the POSIX locks every
    SQLite connection of this process holds on it. Emptied (``: > inbox.db``), not a whole
    number of ``page_size``-byte pages (truncated or overwritten; 512 divides every page
    size), or smaller than the ``had`` bytes it was seen with (the inbox never shrinks its
    file: no ``VACUUM``). A checkpoint that is extending the file can look truncated for a
    moment: callers confirm a verdict.
    """
    size = os.stat(path).st_size
    if size == 0:
        return "it was emptied (it has no bytes left)"
    if size % page_size:
        return (
            f"it was truncated or overwritten ({size} bytes, not a whole number of"
            f" {page_size}-byte pages)"
        )
    if size < had:
        return f"it was truncated ({size} bytes; it had {had})"
    return None


def _lasting_damage(path: str) -> str | None:
    """`damage`, confirmed: a file that is not empty is read again a few times over 0.2 s,
    since another process's checkpoint may be extending it."""
    fault = damage(path)
    for _ in range(4):
        if fault is None or fault.startswith("it was emptied"):
            break
        time.sleep(0.05)
        fault = damage(path)
    return fault


def _wal_fault(path: str, create: bool | Literal["first"]) -> str | None:
    """Why opening ``path`` must be refused before SQLite reads it, or ``None``.

    SQLite replays a ``-wal`` file lying beside a database into whatever file has the
    database's name: the log of a store emptied, truncated, overwritten or replaced would be
    written into the new file. A log beside a file that is damaged, or that is not the file
    this user's last opening recorded beside that same log (`made_marker`), is refused; so
    is an empty file that a command which makes no store would otherwise turn into a new
    empty store.
    """
    wal = Path(f"{path}-wal")
    try:
        logged = wal.stat().st_size > 0
    except FileNotFoundError:
        logged = False
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        if not logged:
            return None
        return (
            f"there is no store file, but the write-ahead log {wal.name} of one is beside"
            " where it was: a new store here would have that log written into it (restore the"
            f" store's file, or move {wal.name} and {Path(path).name}-shm away)"
        )
    if not logged:
        if size == 0 and create is not True:
            return "it is empty (emptied?); this command does not make a store in it"
        return None
    fault = _lasting_damage(path)
    if fault is None:
        # Replaced while the log of the file it was stayed beside it (a log replaced along
        # with it, as a restore of both files does, is the new file's own).
        recorded = _recorded_files(path)
        database, wal_now = _files(path)
        if recorded is not None and recorded[0] != database and recorded[1] in (None, wal_now):
            fault = "it was replaced by another file"
    if fault is None:
        return None
    return (
        f"{fault}, and the write-ahead log {wal.name} of the store it was is still beside it:"
        " opening it would write that log into this file, so it is left as it is (restore"
        f" the store's file, or move {wal.name} and {Path(path).name}-shm away to use this"
        " file as it is)"
    )


_Files = tuple[tuple[int, int], tuple[int, int] | None]


def _files(path: str) -> _Files:
    """The identity of the database file, and of its ``-wal`` file if there is one."""
    try:
        wal: tuple[int, int] | None = _identity(f"{path}-wal")
    except FileNotFoundError:
        wal = None
    return _identity(path), wal


def _recorded_files(path: str) -> _Files | None:
    """What this user's last opening of ``path`` recorded (`_files`), if anything."""
    try:
        numbers = [int(word) for word in made_marker(path).read_text().split()]
    except (OSError, ValueError):
        return None
    if len(numbers) == 2:
        return (numbers[0], numbers[1]), None
    if len(numbers) == 4:
        return (numbers[0], numbers[1]), (numbers[2], numbers[3])
    return None


def _record_files(path: str) -> None:
    """Remember which files ``path`` and its log are (see `_wal_fault`); best effort."""
    with contextlib.suppress(OSError):
        files = _files(path)
        if _recorded_files(path) == files:
            return
        (dev, ino), wal = files
        text = f"{dev} {ino}" + ("" if wal is None else f" {wal[0]} {wal[1]}")
        marker = made_marker(path)
        marker.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        draft = marker.with_name(f".{marker.name}.{os.getpid()}")
        draft.write_text(text + "\n")
        draft.replace(marker)


def made_marker(path: str) -> Path:
    """The file in the user's state folder saying a store was made at ``path`` (whoever made
    it: a harness's first ask, ``dsh-inbox init`` or ``serve``)."""
    where = str(Path(path).absolute())
    digest = hashlib.sha256(f"sqlite:{where}".encode()).hexdigest()[:24]
    return default_sqlite_path().parent / "made-stores" / digest


def made_before(path: str) -> bool:
    """A store was made at ``path`` before (by this user): if it is missing now, it vanished."""
    return made_marker(path).exists()


def _create_private(path: str) -> None:
    """Make the folder (0700, when this creates it) and the file (0600) before SQLite does."""
    folder = Path(path).parent
    if not folder.is_dir():
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder.chmod(0o700)  # the mode of mkdir() is masked by the umask
    if Path(path).is_dir():
        raise unusable(path, "it is a directory, not a database file")
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        # Remembered, so that a command that makes only a first store knows this one vanished
        # if it goes; a state folder that cannot be written only loses that knowledge.
        with contextlib.suppress(OSError):
            marker = made_marker(path)
            marker.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            marker.touch()


class SQLiteEngine:
    """The store's engine over one SQLite file (created, with its folder, when missing).

    A file this creates is readable by its owner only (0600), and so are SQLite's ``-wal`` and
    ``-shm`` files beside it (SQLite gives them the database file's mode); a folder it
    creates is 0700. Any SQLite or file-system error is ``STORE_UNUSABLE``, naming the file.
    """

    def __init__(self, path: str, *, create: bool | Literal["first"] = True) -> None:
        self._path = path
        self._damaged: str | None = None  # what the last check found wrong, to confirm
        self._page = 512  # the file's page size, once open
        self._had = 0  # the largest size a check found the file whole at
        self._conns = ThreadConnections(lambda: _connect(path))
        try:
            with _as_store_errors(path):
                if Path(path).is_dir():
                    raise unusable(path, "it is a directory, not a database file")
                missing = not Path(path).exists()
                if missing and create == "first" and made_before(path):
                    raise unusable(path, _VANISHED)
                fault = _wal_fault(path, create)
                if fault is not None:
                    raise unusable(path, fault)
                if create:
                    _create_private(path)
                elif missing:
                    raise unusable(path, _NO_STORE)
                # The file this engine uses: a file deleted, moved or replaced under it is
                # an error (`check`), never a silent new store or an unlinked one.
                self._identity = _identity(path)
                self._create_schema(self._conns.get())
                self._page = int(self._conns.get().execute("PRAGMA page_size").fetchone()[0])
                if _identity(path) != self._identity:
                    raise unusable(path, "it was replaced by another file as it was opened")
                _record_files(path)
        except Exception:
            self.close()
            raise

    def _create_schema(self, conn: sqlite3.Connection) -> None:
        # WAL is a property of the file: the first opener sets it, for good.
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(f"CREATE TABLE IF NOT EXISTS dsh_inbox_questions ({TABLE_COLUMNS})")
            columns = {row[1] for row in conn.execute("PRAGMA table_info(dsh_inbox_questions)")}
            missing = FIRST_COLUMNS - columns
            if missing:
                raise unusable(
                    self._path,
                    "its table dsh_inbox_questions is not an inbox's (no column "
                    + ", ".join(sorted(missing))
                    + ")",
                )
            for name, kind in ADDED_COLUMNS:
                if name not in columns:
                    conn.execute(f"ALTER TABLE dsh_inbox_questions ADD COLUMN {name} {kind}")
            conn.execute(LEASES_TABLE)
            conn.execute(UPLOADS_TABLE)
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

    def _guarded(self, work: Callable[[], T]) -> T:
        with _as_store_errors(self._path):
            self._same_file()
            return work()

    def _same_file(self) -> None:
        # An open connection goes on using a deleted (unlinked) file: nobody else would see
        # what it writes, so a store that vanished is an error at once. So does one whose
        # file was emptied in place (it reads its write-ahead log).
        try:
            status = os.stat(self._path)
        except FileNotFoundError:
            raise unusable(self._path, "it was deleted or moved away") from None
        if (status.st_dev, status.st_ino) != self._identity:
            raise unusable(self._path, "it was replaced by another file")
        if status.st_size == 0:
            raise unusable(self._path, "it was emptied (it has no bytes left)")

    def check(self) -> None:
        """``STORE_UNUSABLE`` if the file was deleted, moved, replaced, emptied, truncated,
        overwritten or became unreadable.

        A damaged file is reported when two checks in a row find it so (a checkpoint that
        is extending the file can look truncated for a moment).
        """
        with _as_store_errors(self._path):
            self._same_file()
            if not os.access(self._path, os.R_OK | os.W_OK):
                raise unusable(self._path, "it is no longer readable and writable")
            fault = damage(self._path, self._page, self._had)
            if fault is None:
                self._damaged = None
                self._had = max(self._had, os.stat(self._path).st_size)
            elif fault == self._damaged or fault.startswith("it was emptied"):
                raise unusable(self._path, fault)
            else:
                self._damaged = fault  # confirmed (or not) by the next check

    @property
    def path(self) -> str:
        """The database file."""
        return self._path

    def write(self, sql: str, params: Mapping[str, Any]) -> int:
        """One transaction: the statement, and a new change number if it changed a row."""
        return self._guarded(lambda: self._write(sql, params))

    def _write(self, sql: str, params: Mapping[str, Any]) -> int:
        return self._write_many(sql, [params])[0]

    def write_many(self, sql: str, params: Sequence[Mapping[str, Any]]) -> list[int]:
        """One transaction: the statement once per parameter set, each change numbered."""
        return self._guarded(lambda: self._write_many(sql, params))

    def _write_many(self, sql: str, params: Sequence[Mapping[str, Any]]) -> list[int]:
        return self._write_steps([(sql, one) for one in params])

    def write_steps(self, steps: Sequence[tuple[str, Mapping[str, Any]]]) -> list[int]:
        """One transaction: each statement with its parameters, each change numbered."""
        return self._guarded(lambda: self._write_steps(steps))

    def _write_steps(self, steps: Sequence[tuple[str, Mapping[str, Any]]]) -> list[int]:
        conn = self._conns.get()
        changed: list[int] = []
        conn.execute("BEGIN IMMEDIATE")
        try:
            for sql, one in steps:
                changed.append(conn.execute(sql.replace("{seq}", _SEQ), one).rowcount)
                if "{seq}" in sql and changed[-1]:
                    conn.execute("UPDATE dsh_inbox_seq SET seq = seq + 1")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return changed

    def transact(self, work: Callable[[_Transaction], T]) -> T:
        """``work`` in one ``BEGIN IMMEDIATE`` transaction (it holds the store's write lock)."""
        return self._guarded(lambda: self._transact(work))

    def _transact(self, work: Callable[[_Transaction], T]) -> T:
        conn = self._conns.get()
        conn.execute("BEGIN IMMEDIATE")
        try:
            done = work(_Transaction(conn))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return done

    def read(self, sql: str, params: Mapping[str, Any]) -> Sequence[Sequence[Any]]:
        """Rows of one query (a consistent snapshot under WAL)."""
        return self._guarded(lambda: self._conns.get().execute(sql, params).fetchall())

    def listen(
        self, harness: str | None = None, wanted: Callable[[str], bool] | None = None
    ) -> _SQLiteListener:
        """A listener with its own connection, hearing of every change (``harness`` and
        ``wanted`` narrow nothing here: reading the changed ids is one query either way)."""
        del harness, wanted
        return self._guarded(lambda: _SQLiteListener(self._path, self._intact))

    def close(self) -> None:
        """Close the connections of every thread.

        SQLite writes its log into the database file when its last connection closes: not
        into a file that is no longer this store's (replaced, emptied, damaged), whose log
        then stays beside it for whoever restores the store.
        """
        if self._conns.opened() and not self._intact():
            for conn in self._conns.opened():
                _keep_log(conn)
        self._conns.close()

    def _intact(self) -> bool:
        try:
            return (
                _identity(self._path) == self._identity
                and damage(self._path, self._page, self._had) is None
            )
        except OSError:
            return False


class _Transaction:
    """Reads and writes on the connection holding the transaction (see `Engine.transact`)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def read(self, sql: str, params: Mapping[str, Any]) -> Sequence[Sequence[Any]]:
        return self._conn.execute(sql.replace("{lock}", ""), params).fetchall()

    def write(self, sql: str, params: Mapping[str, Any]) -> int:
        changed: int = self._conn.execute(sql.replace("{seq}", _SEQ), params).rowcount
        if "{seq}" in sql and changed:
            self._conn.execute("UPDATE dsh_inbox_seq SET seq = seq + 1")
        return changed


def _keep_log(conn: sqlite3.Connection) -> None:
    """Close ``conn`` without writing the log into the file (Python 3.12+; else as before)."""
    if sys.version_info >= (3, 12):  # a check mypy reads, whichever Python it runs on
        option = getattr(sqlite3, "SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE", None)  # SQLite >= 3.16
        if option is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.setconfig(option, True)


class _SQLiteListener:
    """Polls ``PRAGMA data_version`` (free when nothing changed), then reads changed ids."""

    def __init__(self, path: str, intact: Callable[[], bool]) -> None:
        self._path = path
        self._intact = intact
        self._conn = _connect(path)
        try:
            self._version = self._data_version()
            self._cursor: int = self._conn.execute("SELECT seq FROM dsh_inbox_seq").fetchone()[0]
        except BaseException:
            self._conn.close()
            raise

    def _data_version(self) -> int:
        version: int = self._conn.execute("PRAGMA data_version").fetchone()[0]
        return version

    def poll(self, timeout: float) -> list[str] | None:
        """Changed ids since the last poll, waiting up to ``timeout`` for the first one."""
        with _as_store_errors(self._path):
            return self._poll(timeout)

    def _poll(self, timeout: float) -> list[str] | None:
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
        """Close the listener's connection (see `SQLiteEngine.close`)."""
        if not self._intact():
            _keep_log(self._conn)
        self._conn.close()
