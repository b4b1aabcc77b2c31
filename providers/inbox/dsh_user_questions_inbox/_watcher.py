"""One thread per provider that listens to the store and wakes the asks waiting on it.

It also prunes final records past the retention, when it starts and hourly, renews its
provider's lease heartbeat (see `_lease`), and checks that the store is still there: an ask
waiting on a store that was deleted, moved or became unreadable fails with ``STORE_UNUSABLE``
within a second instead of waiting forever.

A thousand waiting asks cost one listener, not a thousand polls: the thread hears which
questions changed (from any process), reads those records once, settles the futures of the
ones that reached a final state, and hands late answers for its harness to a callback. It hears
only of the changes to its harness's questions and to those it waits on (on PostgreSQL; see
`Engine.listen`): fifty harnesses on one store do not each read every other's change.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from dsh_user_questions import UserQuestionError

from ._lease import BEAT_SECONDS
from ._record import QuestionRecord
from ._retention import retention_seconds
from ._store import Inbox

__all__ = ["Watcher", "settle"]

_log = logging.getLogger(__name__)
_POLL_SECONDS = 0.25  # upper bound on how long close() waits for the thread
_PRUNE_EVERY = 3600.0  # seconds between two prunes of final records past the retention


def _log_failure(what: str, last: str | None = None) -> str | None:
    """Log a failure: one line for the store's own errors (no traceback), else in full.

    The store's error is logged once while it stays the same (``last``, returned): a store
    that is gone is not one line a second.
    """
    error = sys.exc_info()[1]
    if isinstance(error, UserQuestionError):
        if error.message != last:
            _log.error("%s: %s", what, error.message)
        return error.message
    _log.exception(what)
    return None


class Watcher:
    """Wakes waiters when their question is final; delivers this harness's late answers."""

    def __init__(
        self,
        inbox: Inbox,
        *,
        harness: str,
        on_late_answer: Callable[[QuestionRecord], object] | None,
        lease: str | None = None,
    ) -> None:
        self._inbox = inbox
        self._harness = harness
        self._lease = lease
        self._on_late_answer = on_late_answer
        self._lock = threading.Lock()
        # One future per question, a list only when several wait for it (ten thousand
        # pending asks hold no list each).
        self._waiters: dict[str, _Waiters] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Start listening (once); late answers are handed over on ``loop``, when given."""
        with self._lock:
            if loop is not None:
                self._loop = loop
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._run, name="dsh-inbox-watcher", daemon=True)
            self._thread.start()

    def watch(self, question_id: str) -> asyncio.Future[QuestionRecord]:
        """A future settled with the record once the question is final; call on the loop.

        The caller reads the record once after this returns. Nothing falls between: a change
        before that read is seen by it; a later one is heard by the listener if it was
        listening, and otherwise read by the re-check of every waiter that follows the
        listener's (re)start.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[QuestionRecord] = loop.create_future()
        with self._lock:
            held = self._waiters.get(question_id)
            if held is None:
                self._waiters[question_id] = future
            elif isinstance(held, list):
                held.append(future)
            else:
                self._waiters[question_id] = [held, future]
        self.start(loop)
        return future

    def unwatch(self, question_id: str, future: asyncio.Future[QuestionRecord]) -> None:
        """Stop waking ``future``."""
        with self._lock:
            held = self._waiters.get(question_id)
            if held is future:
                del self._waiters[question_id]
            elif isinstance(held, list):
                with contextlib.suppress(ValueError):
                    held.remove(future)
                if not held:
                    del self._waiters[question_id]

    def _waits_on(self, question_id: str) -> bool:
        # The listener's filter, on its thread: one dict lookup (atomic), no lock. A waiter
        # added just after is safe: its ask reads the record after `watch` returns.
        return question_id in self._waiters

    @property
    def waiting(self) -> int:
        """How many questions have a waiter."""
        with self._lock:
            return len(self._waiters)

    def close(self) -> None:
        """Stop the thread and wait for it."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    # The thread --------------------------------------------------------------------------------

    def _run(self) -> None:
        listener = None
        while listener is None and not self._stop.is_set():
            try:
                self._check()
                # Only its harness's changes and those of the questions it waits on (one
                # may be another harness's, by key) wake it: not every change of the store.
                listener = self._inbox.listen(self._harness, self._waits_on)
            except Exception:
                _log_failure("the inbox watcher cannot listen yet; retrying")
                self._stop.wait(1.0)
        if listener is None:
            return
        resync = True  # late answers that came while no process of this harness listened
        next_prune = next_beat = time.monotonic()
        last: str | None = None
        try:
            while not self._stop.is_set():
                try:
                    self._check()
                    if self._lease is not None and time.monotonic() >= next_beat:
                        next_beat = time.monotonic() + BEAT_SECONDS
                        self._inbox.beat(self._lease)
                    if time.monotonic() >= next_prune:
                        next_prune = time.monotonic() + _PRUNE_EVERY
                        self._prune()
                    if resync:
                        self._resync()
                        resync = False
                    changed = listener.poll(_POLL_SECONDS)
                    if changed is None:
                        resync = True
                    elif changed:
                        # Only final records matter (a waiter wakes, a late answer is handed
                        # over): the rows of new questions are not read.
                        self._handle(self._inbox.get_many(changed, final=True))
                    last = None
                except Exception:
                    last = _log_failure("the inbox watcher failed; it will re-read and go on", last)
                    resync = True
                    self._stop.wait(1.0)
        finally:
            listener.close()

    def _check(self) -> None:
        """Fail every waiter with the store's error if the store is gone, then raise it."""
        try:
            self._inbox.check()
        except UserQuestionError as error:
            self.fail(None, error)
            raise

    def fail(self, question_ids: list[str] | None, error: BaseException) -> None:
        """End the waits for those questions (``None``: all) with ``error``."""
        with self._lock:
            if question_ids is None:
                waiters, self._waiters = self._waiters, {}
            else:
                waiters = {i: self._waiters.pop(i) for i in question_ids if i in self._waiters}
        for held in waiters.values():
            for future in _each(held):
                _settle_soon(future, error)

    def _prune(self) -> None:
        retention = retention_seconds()
        if retention is not None:
            self._inbox.prune(retention)

    def _resync(self) -> None:
        with self._lock:
            watched = list(self._waiters)
        records = self._inbox.get_many(watched, final=True)
        records += self._inbox.records(harness=self._harness, late=True, undelivered=True)
        self._handle(records)

    def _handle(self, records: list[QuestionRecord]) -> None:
        self.wake(records)
        for record in records:
            if (
                record.late
                and record.late_delivered_at is None
                and record.harness == self._harness
                and self._on_late_answer is not None
                and self._inbox.claim_late(record.id)
            ):
                self.deliver(record)

    @property
    def has_callback(self) -> bool:
        """Whether late answers have somewhere to go."""
        return self._on_late_answer is not None

    def wake(self, records: list[QuestionRecord]) -> None:
        """Settle the waiters of those records that are final (e.g. settled on closing)."""
        for record in records:
            if record.state.final:
                with self._lock:
                    held = self._waiters.pop(record.id, [])
                for future in _each(held):
                    _settle_soon(future, record)

    def deliver(self, record: QuestionRecord) -> None:
        """Hand ``record`` to the late-answer callback, on the harness's loop when it runs."""
        callback = self._on_late_answer
        if callback is None:
            return
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # closed between the check and the call
                loop.call_soon_threadsafe(_call, callback, record)
                return
        _call(callback, record)


def _call(callback: Callable[[QuestionRecord], object], record: QuestionRecord) -> None:
    try:
        callback(record)
    except Exception:
        _log.exception("the late-answer callback failed for question %s", record.id)


def settle(future: asyncio.Future[Any], outcome: object) -> bool:
    """On the future's loop: its result, or its error (an exception); false if it was done."""
    if future.done():
        return False
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)
    return True


def _settle_soon(
    future: asyncio.Future[QuestionRecord], outcome: QuestionRecord | BaseException
) -> None:
    # From the watcher's thread: the waiter's future gets the record (or the error) on its loop.
    with contextlib.suppress(RuntimeError):  # the waiter's loop is gone: nobody waits
        future.get_loop().call_soon_threadsafe(settle, future, outcome)


_Waiters = asyncio.Future[QuestionRecord] | list[asyncio.Future[QuestionRecord]]


def _each(held: _Waiters) -> list[asyncio.Future[QuestionRecord]]:
    return held if isinstance(held, list) else [held]
