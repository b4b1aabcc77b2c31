"""Waiting for a provider while its request's signal may abort: the service's race.

The rule (documented on `UserQuestionService`): an answer the provider has handed back before
the service acts on the abort wins; a `UserQuestionError` from the provider wins; any other
provider exception once the signal aborted becomes ``ASK_ABORTED``; a provider still pending is
cancelled and the caller gets ``ASK_ABORTED`` (``ASK_TIMED_OUT`` for the ask's own timeout).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import sys
import threading
import time
import types
from collections.abc import Awaitable, Callable, Generator
from typing import TYPE_CHECKING, Any

import attrs

from ._abort import AbortSignal, LoopWaker
from .errors import UserQuestionError

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "NOT_TAKEN",
    "Deadline",
    "Filing",
    "Flight",
    "Receipt",
    "Ticket",
    "board",
    "board_with",
    "flight_of",
    "flights",
    "land",
    "race",
    "receipt_for",
    "start_provider",
    "task_finished",
    "wait_for_provider",
    "wait_for_task",
]

_NO_CONTEXT = contextvars.Context()
_is_str = attrs.validators.instance_of(str)
_FILINGS_LOCK = threading.Lock()


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


async def wait_for_provider(awaitable: Awaitable[Any], signal: AbortSignal) -> Any:
    """Await the provider's work, unless the signal aborts first: then cancel it."""
    return await wait_for_task(start_provider(awaitable), signal)


async def wait_for_task(task: asyncio.Future[Any], signal: AbortSignal) -> Any:
    """Wait for a provider task, unless the signal aborts first: then cancel it.

    A task already done (an instant provider, started eagerly) gives its outcome at once.
    """
    import asyncio

    if task.done():
        return _outcome(task, signal)
    loop = task.get_loop()
    waker = _Waker(loop, loop.create_future())
    # Listen only now that the provider is pending: an abort that came meanwhile runs the
    # waker at once.
    remove = signal.add_listener(waker)
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


class Deadline(AbortSignal):
    """An ask's own timeout: a signal that aborts with `AskTimedOutError` when it expires.

    The time counts from the deadline's making; the timer is the asking loop's own
    (``loop.call_later``), so the expiry runs on the loop, between two of its steps. `arm`
    starts it once something waits (an instant answer leaves no cancelled timer on the loop);
    `disarm` (or leaving the ``with`` block) cancels it. The deadline is its own signal.
    """

    __slots__ = ("_handle", "_seconds", "_started")

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self._seconds = seconds
        self._started = time.monotonic()
        self._handle: asyncio.TimerHandle | None = None

    @property
    def signal(self) -> AbortSignal:
        """The signal that aborts when the deadline expires (the deadline itself)."""
        return self

    def arm(self) -> None:
        """Start the timer on the running loop (once; a deadline of ``inf`` never expires)."""
        if self._handle is None and self._seconds != math.inf:
            import asyncio

            left = self._seconds - (time.monotonic() - self._started)
            self._handle = asyncio.get_running_loop().call_later(max(left, 0), self._expire)

    def disarm(self) -> None:
        """Cancel the timer (idempotent)."""
        handle, self._handle = self._handle, None
        if handle is not None:
            handle.cancel()

    def __enter__(self) -> Deadline:
        self.arm()
        return self

    def __exit__(self, *_: object) -> None:
        self.disarm()

    def _expire(self) -> None:
        self._abort(UserQuestionError.timed_out())


# Asks in flight: receipts and withdrawal -------------------------------------------------------


@attrs.frozen
class Filing:
    """Where a provider that keeps questions (an inbox) filed one, for the asker to tell its
    human: `Receipt.file` by the provider, `Receipt.when_filed` for the asker.

    ``question_id``: the provider's id of the question; ``link``: a page that answers it, when
    one is served; ``answer_command``: a shell command that answers it (e.g.
    ``dsh-inbox answer ID``).
    """

    question_id: str = attrs.field(validator=attrs.validators.instance_of(str))
    link: str | None = attrs.field(
        default=None, kw_only=True, validator=attrs.validators.optional(_is_str)
    )
    answer_command: str | None = attrs.field(
        default=None, kw_only=True, validator=attrs.validators.optional(_is_str)
    )


class Receipt:
    """Whether the answer a provider returned was handed to the asker: "a receipt means taken".

    Got by a provider with `dsh_user_questions.providing.receipt` while it answers an ask. It
    resolves once, when the ask ends: ``True`` only when ``ask()`` returned that answer to its
    caller; ``False`` when the ask ended any other way (the caller's task was cancelled as the
    answer landed, the answer was refused as ``BAD_ANSWER``, the ask was aborted, timed out or
    withdrawn by ``aclose()``). Thread-safe: ``await receipt`` works on any event loop, and a
    callback added from an event loop runs on that loop.
    """

    __slots__ = ("_filed", "_settled", "_taken")

    def __init__(self) -> None:
        self._settled = AbortSignal()
        self._taken: bool | None = None
        # Aborted with the `Filing` once the provider files it; made on first use, so that a
        # receipt nobody files on costs no more than before.
        self._filed: AbortSignal | None = None

    @property
    def taken(self) -> bool | None:
        """``True`` taken, ``False`` not taken, ``None`` while the ask is still in flight."""
        return self._taken

    def done(self) -> bool:
        """Whether the ask has ended (`taken` is ``True`` or ``False``)."""
        return self._settled.aborted

    def add_done_callback(self, callback: Callable[[bool], object]) -> Callable[[], None]:
        """Call ``callback(taken)`` once the ask ends (at once if it has); returns a remover."""
        return self._settled.add_listener(functools.partial(self._tell, callback))

    async def wait(self) -> bool:
        """Wait for the ask to end; ``True`` if its caller received the answer."""
        await self._settled.wait()
        return self._taken is True

    def __await__(self) -> Generator[Any, None, bool]:
        return self.wait().__await__()

    def file(self, filing: Filing) -> None:
        """The provider says where the question waits (its id, a link, the command that
        answers it), so that an asker can tell its human at once. Only the first filing
        counts; from any thread."""
        if not isinstance(filing, Filing):
            raise TypeError(f"Receipt.file() takes a Filing, not {type(filing).__name__}")
        self._filings()._abort(filing)

    @property
    def filing(self) -> Filing | None:
        """The `Filing` the provider gave `file`, or ``None`` while it has given none."""
        filed = self._filed
        return filed.reason if filed is not None and filed.aborted else None  # type: ignore[return-value]

    def when_filed(self, callback: Callable[[Filing], object]) -> Callable[[], None]:
        """Call ``callback(filing)`` once the provider files the question (at once if it has;
        never if it does not); returns a remover. From an event loop, it runs on that loop."""
        filed = self._filings()
        return filed.add_listener(lambda: callback(filed.reason))  # type: ignore[arg-type]

    def _filings(self) -> AbortSignal:
        filed = self._filed
        if filed is None:
            with _FILINGS_LOCK:  # the provider and the asker may come from two threads
                filed = self._filed
                if filed is None:
                    filed = self._filed = AbortSignal()
        return filed

    def _tell(self, callback: Callable[[bool], object]) -> None:
        callback(self._taken is True)

    def _resolve(self, taken: bool) -> None:
        if self._taken is None:
            self._taken = taken
            self._settled._abort(taken)


NOT_TAKEN = Receipt()
NOT_TAKEN._resolve(False)


class Flight:
    """What an ask in flight needs beyond its `Ticket`, made when first needed (`flight_of`):
    its receipt, its withdrawal by ``aclose()``, its provider's task, its own timeout."""

    __slots__ = ("_ended", "_over", "caller", "deadline", "receipt", "task", "withdrawn")

    def __init__(self, caller: asyncio.Task[Any] | None, deadline: Deadline | None = None) -> None:
        self.caller = caller
        self.deadline = deadline  # the ask's own timeout, when it has one
        self.task: asyncio.Future[Any] | None = None  # the provider's own task, when it has one
        self.receipt: Receipt | None = None
        self.withdrawn = self._over = False
        self._ended: AbortSignal | None = None

    def withdrawn_by(self, error: BaseException) -> bool:
        """Whether ``error`` is the cancellation `withdraw` sent (and nobody else's too)."""
        import asyncio

        if not (self.withdrawn and isinstance(error, asyncio.CancelledError)):
            return False
        # After the withdrawal's cancel: someone else may have cancelled the task too (3.11+).
        uncancel = getattr(self.caller, "uncancel", None)
        return uncancel is None or uncancel() == 0

    def end(self, taken: bool) -> None:
        """The ask ended; ``taken``: its caller received the answer."""
        self._over = True
        if self.deadline is not None:
            self.deadline.disarm()
        receipt = self.receipt
        if receipt is not None:
            receipt._resolve(taken)
        ended = self._ended
        if ended is not None:
            ended._abort(None)

    def withdraw(self) -> AbortSignal:
        """Withdraw the ask (its caller then gets ``ASK_ABORTED``); returns a signal of its end.

        The caller's task is cancelled (on its own loop, from whichever thread) and the ask
        turns that cancellation into ``ASK_ABORTED`` once the provider's work has finished.
        """
        ended = self._ended
        if ended is None:
            ended = self._ended = AbortSignal()
        if self._over:
            ended._abort(None)
            return ended
        self.withdrawn = True
        caller = self.caller
        if caller is not None:
            loop = caller.get_loop()
            if _running_loop() is loop:
                caller.cancel()
            else:
                with contextlib.suppress(RuntimeError):  # that loop is closed: nothing waits
                    loop.call_soon_threadsafe(caller.cancel)
        return ended


Ticket = tuple[object, Any, "asyncio.Task[Any] | None"]
"""An ask in flight as its service books it: its owner (the service), the request its provider
got, and the caller's task. A tuple: a plain ask that nobody asks a receipt of or withdraws
makes no `Flight` at all."""

flights: dict[int, Ticket] = {}
"""Every ask in flight in this process, by ``id()`` of the request its provider got. Each ask in
flight has a request object of its own (`board`), so a key is only ever its ask's."""

_boarded: dict[int, Flight] = {}
"""The `Flight` of an ask in flight that needed one, by the same key as in `flights`."""


def board(ticket: Ticket) -> bool:
    """Book an ask in flight; ``False`` (nothing booked) when another ask in flight already has
    that very request object: the service then books a copy of it."""
    return flights.setdefault(id(ticket[1]), ticket) is ticket


def board_with(ticket: Ticket, flight: Flight) -> None:
    """Book an ask whose request is a fresh object (the copy carrying its timeout), with the
    `Flight` it needs from the start."""
    key = id(ticket[1])
    _boarded[key] = flight
    flights[key] = ticket


def flight_of(request: object, *, make: bool = True) -> Flight | None:
    """The `Flight` of the ask in flight whose provider got ``request`` (made now if it has
    none yet, unless not ``make``); ``None`` when no ask in flight has that very request.
    From any thread."""
    key = id(request)
    ticket = flights.get(key)
    if ticket is None or ticket[1] is not request:
        return None
    flight = _boarded.get(key)
    if flight is None and make:
        flight = _make_flight(key, ticket)
    return flight


def _make_flight(key: int, ticket: Ticket) -> Flight:
    """The `Flight` of the booked ask ``ticket``, made from any thread: one per ask (whoever
    comes second gets the first one's); if the ask ended meanwhile, an ended one, not kept."""
    mine = Flight(ticket[2])
    flight = _boarded.setdefault(key, mine)
    if flights.get(key) is ticket:  # still in flight: `land` hands this one to the ask's end
        return flight
    # The ask ended meanwhile, on another thread: nothing of it may stay booked.
    if _boarded.get(key) is mine:
        _boarded.pop(key, None)
    mine.end(False)
    return mine


def land(request: object, taken: bool, keep: Callable[[asyncio.Future[Any]], object]) -> None:
    """End the ask whose provider got ``request`` (``taken``: its caller got the answer): its
    booking, and its `Flight` if it has one (the timer stopped, the receipt resolved), after
    handing ``keep`` its provider's task when that is still cleaning up."""
    key = id(request)
    del flights[key]
    flight = _boarded.pop(key, None)
    if flight is None:  # a plain ask: nobody asked for a receipt, nothing to stop
        return
    leftover = flight.task
    if leftover is not None and not leftover.done():
        keep(leftover)
    flight.end(taken)


async def race(request: object, awaitable: Awaitable[Any], signal: AbortSignal) -> Any:
    """Wait for the provider's answer unless ``signal`` (the abort, the timeout) ends the wait
    first: the provider's work runs in a task of its own (`start_provider`), which the ask
    booked for ``request`` keeps, and a timed ask's timer starts only now."""
    task = start_provider(awaitable)
    flight = flight_of(request)
    if flight is not None:  # always: the ask is booked until it lands
        flight.task = task
        if flight.deadline is not None and not task.done():
            flight.deadline.arm()  # a timer only for a provider that keeps us waiting
    return await wait_for_task(task, signal)


def receipt_for(request: object) -> Receipt:
    """The receipt of the ask whose provider got ``request``; resolved ``False`` if none is."""
    flight = flight_of(request)
    if flight is None:
        return NOT_TAKEN
    receipt = flight.receipt
    if receipt is None:
        receipt = flight.receipt = Receipt()
        if flight._over:  # ended meanwhile, on another thread
            receipt._resolve(False)
    return receipt


def _running_loop() -> asyncio.AbstractEventLoop | None:
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # no loop runs in this thread
        return None


def task_finished(task: asyncio.Future[Any]) -> AbortSignal:
    """A signal that aborts once ``task`` is done (awaitable from any loop)."""
    finished = AbortSignal()
    if task.done():
        finished._abort(None)
    else:
        task.add_done_callback(lambda _: finished._abort(None), context=_NO_CONTEXT)
    return finished
