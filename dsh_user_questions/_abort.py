"""Abort signals: tell pending work that it should stop, and why, from any thread.

Re-exported by `dsh_user_questions.harness`, the one public path to these names.

Three promises hold whatever listeners do: every listener of an abort runs (one that raises,
even ``KeyboardInterrupt`` or ``CancelledError``, is logged and the others still run); the shared
timer thread never dies (a timeout of ``inf`` never fires, a huge one waits in steps); and work
that is over costs nothing: a signal made by `AbortSignal.any` leaves its sources as soon as
nobody holds it, and a timeout signal nobody holds leaves the timer.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import math
import sys
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

__all__ = ["AbortController", "AbortError", "AbortSignal"]


class AbortError(Exception):
    """The reason of an abort that gave none (or gave something that is not an exception)."""


class AbortSignal:
    """Tells whether an operation was aborted, and why; listeners hear of it once.

    Made by an `AbortController`, `AbortSignal.abort`, `AbortSignal.timeout` or
    `AbortSignal.any`. Thread-safe: it may be aborted from any thread, with or without a running
    event loop. A listener added while an event loop runs (in that loop's thread) runs on that
    loop: at once when the abort comes from the loop's own thread, else soon after through
    ``call_soon_threadsafe`` (or in the aborting thread when that loop is closed), so a provider
    never hops threads by hand. A listener added outside any loop runs in the aborting thread.
    Coroutines simply ``await signal.wait()``.
    """

    __slots__ = ("__weakref__", "_aborted", "_listeners", "_lock", "_reason")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: object = None
        self._listeners: dict[_Remover, Callable[[], object]] | None = None
        self._lock = threading.Lock()

    @property
    def aborted(self) -> bool:
        """Whether the signal has aborted."""
        return self._aborted

    @property
    def reason(self) -> object:
        """Why it aborted (an exception, or whatever the aborting code gave); ``None`` before."""
        return self._reason

    def throw_if_aborted(self) -> None:
        """Raise the reason (wrapped in an `AbortError` unless it is an exception) if aborted."""
        if self._aborted:
            reason = self._reason
            if isinstance(reason, BaseException):
                raise reason
            raise AbortError(reason)

    def add_listener(self, listener: Callable[[], object]) -> Callable[[], None]:
        """Call ``listener()`` once when the signal aborts; returns a function removing it.

        A listener added after the abort runs at once. A listener added from a running event
        loop runs on that loop (see the class docstring). The remover is idempotent.
        """
        # Allocate before taking the lock: a garbage collection started by an allocation may
        # drop an `any()` signal, whose clean-up takes the locks of its sources.
        kind = type(listener)
        if kind is not _Follow and kind is not LoopWaker and not isinstance(listener, LoopWaker):
            loop = _running_loop()
            if loop is not None:
                listener = _OnLoop(loop, listener)
        remover = _Remover(self)
        fresh: dict[_Remover, Callable[[], object]] | None = {} if self._listeners is None else None
        with self._lock:
            if not self._aborted:
                listeners = self._listeners
                if listeners is None:
                    listeners = self._listeners = fresh if fresh is not None else {}
                listeners[remover] = listener
                self._listening(True)
                return remover
        if type(listener) is _Follow:
            follower = listener.follower()
            if follower is not None:
                follower._abort(self._reason)
        else:
            _run_listeners((listener,))
        return _noop

    async def wait(self) -> None:
        """Return once the signal has aborted (at once if it has); never raises the reason.

        Safe whichever thread aborts the signal. Cancelling the waiting task just stops waiting.
        """
        if self._aborted:
            return
        import asyncio  # imported by whoever runs the loop; deferred to keep the import light

        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        remove = self.add_listener(LoopWaker(loop, waiter))
        try:
            await waiter
        finally:
            remove()

    def _remove(self, remover: _Remover) -> None:
        with self._lock:
            listeners = self._listeners
            # Kept in a local so the listener is dropped after the lock is released (dropping
            # it may run clean-up code that takes this lock).
            removed = listeners.pop(remover, None) if listeners is not None else None
            if removed is not None and not listeners:
                self._listening(False)
        del removed

    def _listening(self, listening: bool) -> None:
        """Called under the lock when the first listener comes or the last one goes."""

    def _settle(self, reason: object) -> dict[_Remover, Callable[[], object]] | None:
        """Mark the signal aborted; return the listeners to run, or ``None`` if it was already."""
        if reason is None:
            reason = AbortError("signal is aborted without reason")
        with self._lock:
            if self._aborted:
                return None
            self._reason = reason
            self._aborted = True
            listeners = self._listeners
            self._listeners = None
        return listeners if listeners is not None else {}

    def _abort(self, reason: object) -> None:
        """Abort this signal and everything following it; every listener runs."""
        # Signals made by `any()` follow their sources without recursion: a chain of any() as
        # deep as memory allows still aborts.
        pending: list[tuple[AbortSignal, object]] = [(self, reason)]
        plain: list[Callable[[], object]] = []
        while pending:
            signal, why = pending.pop()
            listeners = signal._settle(why)
            if listeners is None:
                continue
            signal._settled()
            for listener in listeners.values():
                if type(listener) is _Follow:
                    follower = listener.follower()
                    if follower is not None:
                        pending.append((follower, signal._reason))
                else:
                    plain.append(listener)
        if plain:
            _run_listeners(plain)

    def _settled(self) -> None:
        """Called once, after the signal aborted and before its listeners run."""

    @classmethod
    def abort(cls, reason: object = None) -> AbortSignal:
        """A signal that has already aborted with ``reason``."""
        signal = cls()
        signal._abort(reason)
        return signal

    @classmethod
    def timeout(cls, seconds: float) -> AbortSignal:
        """A signal that aborts with a `TimeoutError` after ``seconds``.

        It needs no event loop: a shared timer thread aborts it. ``math.inf`` never aborts. A
        timeout signal that nobody holds any more (and nobody listens to) leaves the timer.
        Raises `ValueError` for a negative or NaN ``seconds``, `TypeError` for a non-number.
        """
        seconds = check_seconds(seconds, "seconds")
        signal = _TimeoutSignal()
        if seconds != math.inf:
            signal._start(seconds)
        return signal

    @classmethod
    def any(cls, signals: Iterable[AbortSignal]) -> AbortSignal:
        """A signal that aborts as soon as any of ``signals`` aborts, with its reason.

        It listens to its sources only while something holds it: once dropped (or aborted) it
        leaves them, so a long-lived source does not collect one listener per finished task.
        """
        sources = list(signals)
        for source in sources:
            if not callable(getattr(source, "add_listener", None)):
                raise TypeError(
                    f"AbortSignal.any() takes abort signals, got {type(source).__name__}"
                )
        combined = _Combined()
        for source in sources:
            if source.aborted:
                combined._abort(source.reason)
                return combined
        ref: weakref.ReferenceType[AbortSignal] = weakref.ref(combined)
        combined._unlink = [source.add_listener(_Follow(ref, source)) for source in sources]
        if combined._aborted:  # a source aborted while we were adding the links
            combined._leave()
        return combined

    def __repr__(self) -> str:
        state = f"aborted reason={self._reason!r}" if self._aborted else "pending"
        return f"<AbortSignal {state}>"


class _Remover:
    """Removes one listener from its signal, and is its key there (one object per listener)."""

    __slots__ = ("_signal",)

    def __init__(self, signal: AbortSignal) -> None:
        self._signal = signal

    def __call__(self) -> None:
        self._signal._remove(self)


class _Follow:
    """The listener an `any()` signal leaves on a source; it holds the signal weakly.

    Signals of this module hand the abort on without calling it (no recursion); a source of
    another kind (a harness's own signal class) calls it.
    """

    __slots__ = ("follower", "source")

    def __init__(self, follower: weakref.ReferenceType[AbortSignal], source: Any) -> None:
        self.follower = follower
        self.source = source

    def __call__(self) -> None:
        follower = self.follower()
        if follower is not None:
            follower._abort(self.source.reason)


class _Combined(AbortSignal):
    """A signal made by `AbortSignal.any`: it leaves its sources once aborted or dropped."""

    __slots__ = ("_unlink",)

    def __init__(self) -> None:
        super().__init__()
        self._unlink: list[Callable[[], None]] | None = None

    def _settled(self) -> None:
        self._leave()

    def _leave(self) -> None:
        unlink, self._unlink = self._unlink, None
        if unlink:
            for remove in unlink:
                remove()

    def __del__(self) -> None:
        self._leave()


class _TimeoutSignal(AbortSignal):
    """A signal made by `AbortSignal.timeout`.

    The timer holds it weakly, so one nobody holds is dropped (and leaves the timer); while it
    has listeners the timer holds it firmly, since they still wait for it.
    """

    __slots__ = ("_fire",)

    def __init__(self) -> None:
        super().__init__()
        self._fire: _FireTimeout | None = None

    def _start(self, seconds: float) -> None:
        fire = self._fire = _FireTimeout(seconds)
        fire.ref = weakref.ref(self, fire.dropped)
        fire.entry = _timers.schedule(seconds, fire)

    def _listening(self, listening: bool) -> None:
        if self._fire is not None:
            self._fire.pinned = self if listening else None

    def _settled(self) -> None:
        fire, self._fire = self._fire, None
        if fire is not None:
            fire.pinned = None
            if fire.entry is not None:
                _timers.cancel(fire.entry)


class _FireTimeout:
    """The timer's action for a timeout signal."""

    __slots__ = ("entry", "pinned", "ref", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ref: weakref.ReferenceType[_TimeoutSignal] | None = None
        self.pinned: _TimeoutSignal | None = None
        self.entry: _Entry | None = None

    def __call__(self) -> None:
        signal = self.ref() if self.ref is not None else None
        if signal is not None:
            signal._abort(TimeoutError(f"signal timed out after {self.seconds:g} s"))

    def dropped(self, _: object) -> None:
        """The weakref's callback: nobody holds the signal any more, so it leaves the timer."""
        if self.entry is not None:
            _timers.cancel(self.entry)


class AbortController:
    """Owns an `AbortSignal` and aborts it."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: object = None) -> None:
        """Abort the signal (once; later calls do nothing). Safe from any thread.

        Every listener runs. If one raised an exception that is not an `Exception`
        (``KeyboardInterrupt``, ``SystemExit``, ``CancelledError``), the first such is raised
        here once all of them ran.
        """
        self.signal._abort(reason)


class _OnLoop:
    """A listener added from a running event loop: it runs on that loop, whoever aborts."""

    __slots__ = ("_listener", "_loop", "_thread")

    def __init__(self, loop: asyncio.AbstractEventLoop, listener: Callable[[], object]) -> None:
        self._loop = loop
        self._thread = threading.get_ident()
        self._listener = listener

    def __call__(self) -> object:
        if threading.get_ident() == self._thread:
            return self._listener()
        try:
            self._loop.call_soon_threadsafe(_run_listeners, (self._listener,))
        except RuntimeError:  # the loop is closed: run it here rather than never
            return self._listener()
        return None


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, if any (asyncio is not imported for it)."""
    asyncio = sys.modules.get("asyncio")
    return None if asyncio is None else asyncio.events._get_running_loop()


class LoopWaker:
    """A listener that wakes one asyncio future, from whichever thread the abort comes.

    Made in the loop's thread; the abort may come from any thread. Used by `AbortSignal.wait`
    and the service: the one place where an abort crosses into an event loop.
    """

    __slots__ = ("_loop", "_thread", "waiter")

    def __init__(self, loop: asyncio.AbstractEventLoop, waiter: asyncio.Future[Any]) -> None:
        self._loop = loop
        self._thread = threading.get_ident()
        self.waiter = waiter

    def __call__(self, _: object = None) -> None:
        if threading.get_ident() == self._thread:
            # In the loop's own thread (the loop runs everything there): wake the waiter now,
            # so it runs in the loop's next step.
            if not self.waiter.done():
                self.waiter.set_result(None)
            return
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            self._loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        if not self.waiter.done():
            self.waiter.set_result(None)


def _noop() -> None:
    return None


def _run_listeners(listeners: Iterable[Callable[[], object]]) -> None:
    """Run every listener; log failures; re-raise the first non-`Exception` at the end."""
    escaped: BaseException | None = None
    for listener in listeners:
        try:
            listener()
        except Exception:
            _log().exception("an abort listener failed")
        except BaseException as error:
            # KeyboardInterrupt, SystemExit, CancelledError: never swallowed, but raised only
            # after the other listeners ran, so no waiter is left hanging.
            _log().error("an abort listener raised %r; the other listeners still run", error)
            if escaped is None:
                escaped = error
    if escaped is not None:
        raise escaped


def _log() -> Any:
    import logging  # only a failing listener needs it; the import is kept light

    return logging.getLogger("dsh_user_questions.harness")


def check_seconds(seconds: object, name: str) -> float:
    """``seconds`` as a float: a real number >= 0 (``math.inf`` allowed), else an error."""
    # Every timed ask checks its timeout: plain int and float (not bool) are tested first.
    kind = type(seconds)
    if kind is float or kind is int:
        value = float(seconds)  # type: ignore[arg-type]  # an int or a float: just tested
    elif isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
        value = float(seconds)
    else:
        raise TypeError(f"{name} must be a number of seconds, got {kind.__name__}")
    if not value >= 0:  # also NaN
        raise ValueError(f"{name} must be a number of seconds >= 0, got {seconds!r}")
    return value


# The timer thread ------------------------------------------------------------------------------


class _Entry:
    """One scheduled action; ``action`` is ``None`` once it ran or was cancelled."""

    __slots__ = ("action", "due")

    def __init__(self, due: float, action: Callable[[], object] | None) -> None:
        self.due = due
        self.action = action


# Condition.wait refuses timeouts beyond threading.TIMEOUT_MAX (OverflowError); a far deadline
# is waited for in steps of at most this long.
_LONGEST_WAIT = min(threading.TIMEOUT_MAX, 3600.0)


class _Timers:
    """One daemon thread that runs actions when they are due; cancelled ones are dropped."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, _Entry]] = []
        self._counter = itertools.count()
        self._cancelled = 0
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def schedule(self, seconds: float, action: Callable[[], object] | None) -> _Entry:
        """Run ``action()`` in the timer thread after ``seconds`` (finite, >= 0)."""
        import time

        entry = _Entry(time.monotonic() + seconds, action)
        item = (entry.due, next(self._counter), entry)
        with self._wake:
            heap = self._heap
            if self._cancelled > 32 and self._cancelled * 2 > len(heap):
                # Mostly cancelled entries: rebuild, so finished work holds no memory.
                heap[:] = [live for live in heap if live[2].action is not None]
                heapq.heapify(heap)
                self._cancelled = 0
            heapq.heappush(heap, item)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="dsh-abort-timers", daemon=True
                )
                self._thread.start()
            # Wake the thread only when it must wait less than it does now.
            if heap[0] is item:
                self._wake.notify()
        return entry

    def cancel(self, entry: _Entry) -> None:
        """Drop ``entry``: its action never runs, unless it is running already (idempotent).

        Takes no lock: it runs from weakref callbacks, also while the interpreter shuts down,
        when the (daemon) timer thread may be frozen holding the lock. The entry leaves the
        heap when it comes due or when `schedule` next compacts the heap.
        """
        if entry.action is not None:
            entry.action = None
            self._cancelled += 1  # a hint for compaction; a lost update only delays it

    def pending(self) -> int:
        """How many entries wait to run (cancelled ones not counted)."""
        with self._wake:
            return sum(1 for item in self._heap if item[2].action is not None)

    def _run(self) -> None:
        import time

        while True:
            with self._wake:
                action = None
                while action is None:
                    heap = self._heap
                    if not heap:
                        self._wake.wait()
                        continue
                    entry = heap[0][2]
                    if entry.action is None:
                        heapq.heappop(heap)
                        self._cancelled = max(0, self._cancelled - 1)
                        continue
                    delay = entry.due - time.monotonic()
                    if delay > 0:
                        self._wake.wait(min(delay, _LONGEST_WAIT))
                        continue
                    heapq.heappop(heap)
                    action, entry.action = entry.action, None
            try:
                action()
            except BaseException:
                # Deliberately everything: the one timer thread serves every timeout of the
                # process, and a listener's SystemExit must not stop the next timeout.
                _log().exception("a timed abort failed; the timer keeps running")


_timers = _Timers()
