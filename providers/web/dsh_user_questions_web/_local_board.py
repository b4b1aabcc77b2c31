"""`LocalBoard`: the in-process `QuestionBoard` of `WebProvider`, one future per pending ask.

Everything here runs on the provider's event loop, so "first valid answer wins" is "first call
that settles the ask while it is still on the board". The future of an ask is what the
provider hands the service, so "the agent got this answer" and "the future holds it" are the
same fact: `LocalBoard.submit` sets the result only if the future is still open and the
request's signal has not aborted, in one step with no await, and only then says ``accepted``.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest, UserQuestionError

from .answers import check_page_answer, problems_of
from .board import BoardEvent, Outcome, Receipt

_log = logging.getLogger(__name__)

# How many settled ask ids are remembered, so a late post gets a receipt saying what happened.
_HISTORY = 10_000


@attrs.define(eq=False)
class PendingAsk:
    """One ask waiting for the human."""

    id: str
    request: AskUserQuestionRequest
    agent: str | None
    created_ms: int
    future: asyncio.Future[AskUserQuestionAnswer]
    wire: dict[str, Any]


def _wire(
    ask_id: str, request: AskUserQuestionRequest, agent: str | None, created: int
) -> dict[str, Any]:
    return {
        "id": ask_id,
        "agent": agent,
        "createdAt": created,
        "questions": [question.to_dict() for question in request.questions],
    }


@attrs.define
class LocalBoard:
    """Pending asks in arrival order, as futures of the loop that created them."""

    _pending: dict[str, PendingAsk] = attrs.field(factory=dict)
    _settled: collections.OrderedDict[str, Outcome] = attrs.field(factory=collections.OrderedDict)
    _listeners: dict[object, Callable[[BoardEvent], None]] = attrs.field(factory=dict)
    _ids: itertools.count[int] = attrs.field(factory=lambda: itertools.count(1))
    # Ids differ between boards (a restarted harness), so a page never mistakes a new ask
    # for the old one of the same number, nor restores its draft into it.
    _nonce: str = attrs.field(factory=lambda: secrets.token_hex(3))

    # -- the provider's side ------------------------------------------------------------------

    def add(self, request: AskUserQuestionRequest, agent: str | None) -> PendingAsk:
        """Put an ask on the board and tell every page; cancelling its future withdraws it."""
        ask_id = f"ask-{next(self._ids)}-{self._nonce}"
        created = int(time.time() * 1000)
        future: asyncio.Future[AskUserQuestionAnswer] = asyncio.get_running_loop().create_future()
        wire = _wire(ask_id, request, agent, created)
        ask = PendingAsk(ask_id, request, agent, created, future, wire)
        self._pending[ask_id] = ask
        future.add_done_callback(lambda _: self._settle(ask_id, "withdrawn"))
        self._emit(BoardEvent("added", ask.wire))
        return ask

    def withdraw(self, ask_id: str, error: BaseException) -> None:
        """The agent no longer waits (abort, timeout): fail the ask with ``error``."""
        ask = self._pending.get(ask_id)
        if ask is not None and not ask.future.done():
            ask.future.set_exception(error)

    def fail_all(self, error_factory: Callable[[], BaseException]) -> None:
        """Settle every pending ask as stopped, each failing with a fresh error."""
        for ask in list(self._pending.values()):
            self._settle(ask.id, "stopped")
            if not ask.future.done():
                ask.future.set_exception(error_factory())

    def close(self, reason: str) -> None:
        """Tell every page the board is going away (their streams end)."""
        self._emit(BoardEvent("closed", {"reason": reason}))

    @property
    def pending_count(self) -> int:
        """How many asks are waiting for the human."""
        return len(self._pending)

    # -- QuestionBoard ------------------------------------------------------------------------

    async def pending(self) -> Sequence[Mapping[str, Any]]:
        """Every pending ask in wire form, oldest first."""
        return [ask.wire for ask in self._pending.values()]

    def watch(self, listener: Callable[[BoardEvent], None]) -> Callable[[], None]:
        """Call ``listener`` for every later change; returns the function that stops it."""
        key = object()
        self._listeners[key] = listener
        return lambda: self._listeners.pop(key, None) and None

    async def submit(self, ask_id: str, answer: object) -> Receipt:
        """Settle the ask with ``answer`` if it is pending, valid and still awaited."""
        return self.submit_now(ask_id, answer)

    def submit_now(self, ask_id: str, answer: object) -> Receipt:
        """`submit` without the coroutine: the check and the hand-over in one loop step."""
        ask = self._pending.get(ask_id)
        if ask is None:
            return Receipt.not_pending(ask_id, self._settled.get(ask_id))
        try:
            checked = check_page_answer(ask.request.questions, answer)
        except UserQuestionError as err:
            return Receipt.rejected(ask_id, problems_of(err))
        signal = ask.request.signal
        if ask.future.done() or (signal is not None and signal.aborted):
            # The agent stopped waiting (its withdrawal is on its way): the answer is not taken.
            self._settle(ask_id, "withdrawn")
            return Receipt.not_pending(ask_id, "withdrawn")
        self._settle(ask_id, "answered")
        ask.future.set_result(checked)
        return Receipt.accepted(ask_id)

    async def cancel(self, ask_id: str) -> Receipt:
        """Close the ask: the agent gets ``ASK_CANCELLED``."""
        ask = self._pending.get(ask_id)
        if ask is None:
            return Receipt.not_pending(ask_id, self._settled.get(ask_id))
        if ask.future.done():
            self._settle(ask_id, "withdrawn")
            return Receipt.not_pending(ask_id, "withdrawn")
        self._settle(ask_id, "cancelled")
        ask.future.set_exception(UserQuestionError.cancelled())
        return Receipt.cancelled(ask_id)

    def outcome(self, ask_id: str) -> Outcome | None:
        """How a recently settled ask ended, or ``None``."""
        return self._settled.get(ask_id)

    # -- inside -------------------------------------------------------------------------------

    def _settle(self, ask_id: str, outcome: Outcome) -> None:
        if self._pending.pop(ask_id, None) is None:
            return
        self._settled[ask_id] = outcome
        while len(self._settled) > _HISTORY:
            self._settled.popitem(last=False)
        self._emit(BoardEvent("resolved", {"id": ask_id, "outcome": outcome}))

    def _emit(self, event: BoardEvent) -> None:
        for listener in list(self._listeners.values()):
            try:
                listener(event)
            except Exception:
                # A page's trouble must never fail the agent's ask or another page's stream.
                _log.exception("a listener of the web provider's board failed")
