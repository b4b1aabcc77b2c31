"""One turn order for the process's terminal: asks from any thread or event loop queue here.

A process has one terminal, so two prompts must never be up at once, whichever event loop each
ask runs on (two agents in two threads each with their own loop share the same keyboard). An
`asyncio.Lock` belongs to one loop; this queue is guarded by a `threading.Lock` and hands the turn
to the next waiter on that waiter's own loop, first come first served.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable

__all__ = ["TERMINAL_TURNS", "Turns"]


class Turns:
    """A first-in, first-out turn for one shared resource, usable from any event loop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._busy = False
        self._queue: deque[asyncio.Future[None]] = deque()
        self._watchers: list[Callable[[], None]] = []

    @property
    def waiting(self) -> int:
        """How many asks wait for their turn (not counting the one that has it)."""
        with self._lock:
            return sum(1 for waiter in self._queue if not waiter.done())

    def watch(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback()`` (from any thread) when the queue changes; returns the remover."""
        with self._lock:
            self._watchers.append(callback)

        def remove() -> None:
            with self._lock, contextlib.suppress(ValueError):
                self._watchers.remove(callback)

        return remove

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Wait for the turn, hold it inside the block, pass it on after (also on error)."""
        await self._acquire()
        try:
            yield
        finally:
            self._release()

    async def _acquire(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if not self._busy:
                self._busy = True
                return
            waiter: asyncio.Future[None] = loop.create_future()
            self._queue.append(waiter)
        self._notify()
        try:
            await waiter
        except asyncio.CancelledError:
            with self._lock:
                granted = waiter.done() and not waiter.cancelled()
                if not granted and waiter in self._queue:
                    self._queue.remove(waiter)
            if granted:  # the turn arrived as we were cancelled: pass it on
                self._release()
            else:
                self._notify()
            raise

    def _release(self) -> None:
        with self._lock:
            while self._queue:
                waiter = self._queue.popleft()
                if waiter.done():
                    continue
                try:
                    waiter.get_loop().call_soon_threadsafe(self._grant, waiter)
                except RuntimeError:  # its loop is closed: nobody is waiting there any more
                    continue
                break
            else:
                self._busy = False
        self._notify()

    def _grant(self, waiter: asyncio.Future[None]) -> None:
        if waiter.done():  # cancelled before the turn reached it
            self._release()
        else:
            waiter.set_result(None)

    def _notify(self) -> None:
        with self._lock:
            watchers = list(self._watchers)
        for watcher in watchers:
            watcher()


TERMINAL_TURNS = Turns()
"""The process's terminal: every `TerminalProvider` takes its turns here."""
