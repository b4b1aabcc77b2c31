"""An engine's connections: one per thread, made on first use, all closed with the engine.

SQLite and PostgreSQL connections are each used by one thread at a time; both engines keep
theirs here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

__all__ = ["ThreadConnections"]


class _Closable(Protocol):
    def close(self) -> None: ...


_C = TypeVar("_C", bound=_Closable)


def _never(_conn: object) -> bool:
    return False


class ThreadConnections(Generic[_C]):
    """An engine's connections: one per thread, made on first use; `close` closes them all.

    ``connect()`` makes one; ``is_closed(conn)`` says one was closed under its thread (it is
    then made again).
    """

    def __init__(self, connect: Callable[[], _C], is_closed: Callable[[_C], bool] = _never) -> None:
        self._connect = connect
        self._is_closed = is_closed
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list[_C] = []
        self._closed = False

    def get(self) -> _C:
        """This thread's connection; `RuntimeError` once the engine is closed."""
        conn: _C | None = getattr(self._local, "conn", None)
        if conn is None or self._is_closed(conn):
            if self._closed:
                raise RuntimeError("the inbox is closed")
            conn = self._connect()
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def opened(self) -> list[_C]:
        """The connections open now (of every thread)."""
        with self._lock:
            return list(self._all)

    def drop(self) -> None:
        """Close this thread's connection (it failed): the next `get` makes a new one."""
        conn: _C | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def close(self) -> None:
        """Close the connections of every thread; none is made after."""
        with self._lock:
            self._closed = True
            conns, self._all = self._all, []
        for conn in conns:
            conn.close()
        self._local = threading.local()
