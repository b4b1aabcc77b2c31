"""Waiting for a provider while its request's signal may abort: the service's race.

The rule (documented on `UserQuestionService`): an answer the provider has handed back before
the service acts on the abort wins; a `UserQuestionError` from the provider wins; any other
provider exception once the signal aborted becomes ``ASK_ABORTED``; a provider still pending is
cancelled and the caller gets ``ASK_ABORTED`` (``ASK_TIMED_OUT`` for the ask's own timeout).
"""

from __future__ import annotations

import contextvars
import math
import sys
import types
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from ._abort import AbortSignal, LoopWaker, _Entry, _timers
from .errors import AskTimeoutError, UserQuestionError

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "Deadline",
    "finished_result",
    "start_provider",
    "wait_for_provider",
    "wait_for_task",
]

_NO_CONTEXT = contextvars.Context()


def start_provider(awaitable: Awaitable[Any]) -> asyncio.Future[Any]:
    """The provider's work as a task of its own, so an abort can leave it behind.

    On Python 3.12+ (and no custom task factory) the task starts eagerly: the provider runs at
    once up to its first real wait, inside its own task, and an instant one is done on return.
    A plain function rather than a coroutine: the instant case costs no extra frame.
    """
    import asyncio  # imported by whoever runs the loop; deferred to keep the import light

    loop = asyncio.get_running_loop()
    # Python 3.12+ starts a task eagerly: the provider's first step runs inside its own task at
    # once. The version test stays inline so that type checkers of 3.10/3.11 skip the branch.
    if sys.version_info >= (3, 12):
        if type(awaitable) is types.CoroutineType and loop.get_task_factory() is None:
            return asyncio.Task(awaitable, loop=loop, eager_start=True)
    return asyncio.ensure_future(awaitable, loop=loop)


def finished_result(task: asyncio.Future[Any], signal: AbortSignal) -> Any:
    """The outcome of a provider task that is done, by the abort-versus-answer rule."""
    return task.result() if not signal.aborted else _outcome(task, signal)


async def wait_for_provider(awaitable: Awaitable[Any], signal: AbortSignal) -> Any:
    """Await the provider's work, unless the signal aborts first: then cancel it."""
    task = start_provider(awaitable)
    if task.done():
        return finished_result(task, signal)
    return await wait_for_task(task, signal)


async def wait_for_task(task: asyncio.Future[Any], signal: AbortSignal) -> Any:
    """Wait for a pending provider task, unless the signal aborts first: then cancel it."""
    import asyncio

    loop = task.get_loop()
    waker = _Waker(loop, loop.create_future())
    # Listen only now that the provider is pending: an abort that came meanwhile runs the
    # waker at once.
    remove = signal.add_listener(waker)
    # The callback needs no context variables: a shared empty context spares a copy per ask.
    task.add_done_callback(waker.task_done, context=_NO_CONTEXT)
    try:
        await waker.waiter
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        remove()
    if task.done():
        return _outcome(task, signal)
    task.cancel()
    raise UserQuestionError.aborted_by(signal)


def _outcome(task: asyncio.Future[Any], signal: AbortSignal) -> Any:
    """The finished provider's result, or its error (unless the abort beats it)."""
    if not signal.aborted:
        return task.result()
    if not task.cancelled():
        error = task.exception()
        if error is None:
            return task.result()
        if isinstance(error, Exception):
            _raise_unless_it_wins(error, signal)
        raise error
    if signal.aborted:
        raise UserQuestionError.aborted_by(signal)
    return task.result()  # raises the provider's own cancellation


def _raise_unless_it_wins(error: Exception, signal: AbortSignal) -> None:
    """After an abort, only a `UserQuestionError` of the provider beats it."""
    if signal.aborted and not isinstance(error, UserQuestionError):
        aborted = UserQuestionError.aborted_by(signal)  # caused by the abort's reason
        aborted.__context__ = error  # and shows what the provider raised meanwhile
        raise aborted


class _Waker(LoopWaker):
    """Wakes the caller of one ask when the provider finishes or the signal aborts.

    It stays the provider task's done callback for good, so a provider that finishes after the
    ask has ended still has its exception retrieved. A slotted object rather than closures:
    ten thousand pending asks each hold one.
    """

    __slots__ = ()

    def task_done(self, task: asyncio.Future[Any]) -> None:
        if not task.cancelled():
            # A provider left behind by an abort may still fail; nobody awaits it then, so
            # fetch its exception here rather than have asyncio report it as never retrieved.
            task.exception()
        if not self.waiter.done():
            self.waiter.set_result(None)


class Deadline:
    """An ask's own timeout: a signal aborted with `AskTimeoutError` when it expires.

    Used as a context manager around the ask: leaving it takes the timer off the shared timer
    thread at once, so a finished ask holds nothing until its deadline.
    """

    __slots__ = ("_entry", "_seconds", "signal")

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds
        self.signal = AbortSignal()
        self._entry: _Entry | None = None

    def __enter__(self) -> Deadline:
        if self._seconds != math.inf:
            self._entry = _timers.schedule(self._seconds, self._expire)
        return self

    def __exit__(self, *_: object) -> None:
        entry, self._entry = self._entry, None
        if entry is not None:
            _timers.cancel(entry)

    def _expire(self) -> None:
        self.signal._abort(AskTimeoutError(f"the user did not answer within {self._seconds:g} s"))
