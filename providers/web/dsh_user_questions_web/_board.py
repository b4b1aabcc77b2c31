"""The board of pending asks: what every open page shows, and the one place they resolve.

Everything here runs on the provider's event loop, so "first valid answer wins" is simply
"first call of `Board.resolve` while the ask is still on the board".
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import time
from typing import Any, Literal

import attrs
from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest

Outcome = Literal["answered", "cancelled", "withdrawn", "stopped"]

# How many resolved ask ids are remembered, so a late post gets a receipt saying what happened.
_HISTORY = 10_000

# An SSE frame: bytes ready to write, or None to end the stream.
Frame = bytes | None


@attrs.define(eq=False)
class PendingAsk:
    """One ask waiting for the human."""

    id: str
    request: AskUserQuestionRequest
    agent: str | None
    created_ms: int
    future: asyncio.Future[AskUserQuestionAnswer]

    def wire(self) -> dict[str, Any]:
        """The form the page receives."""
        return {
            "id": self.id,
            "agent": self.agent,
            "createdAt": self.created_ms,
            "questions": [question.to_dict() for question in self.request.questions],
        }


@attrs.define
class Board:
    """Pending asks in arrival order, and the event streams of the open pages."""

    _pending: dict[str, PendingAsk] = attrs.field(factory=dict)
    _resolved: collections.OrderedDict[str, Outcome] = attrs.field(factory=collections.OrderedDict)
    _streams: set[asyncio.Queue[Frame]] = attrs.field(factory=set)
    _ids: itertools.count[int] = attrs.field(factory=lambda: itertools.count(1))
    _seq: itertools.count[int] = attrs.field(factory=lambda: itertools.count(1))

    def add(self, request: AskUserQuestionRequest, agent: str | None) -> PendingAsk:
        """Put an ask on the board and push it to every page."""
        ask = PendingAsk(
            id=f"ask-{next(self._ids)}",
            request=request,
            agent=agent,
            created_ms=int(time.time() * 1000),
            future=asyncio.get_running_loop().create_future(),
        )
        self._pending[ask.id] = ask
        self._broadcast("added", ask.wire())
        return ask

    def get(self, ask_id: str) -> PendingAsk | None:
        """The pending ask of that id, or ``None`` when it is not pending."""
        return self._pending.get(ask_id)

    def outcome(self, ask_id: str) -> Outcome | None:
        """How a recently resolved ask ended, or ``None`` if it is unknown."""
        return self._resolved.get(ask_id)

    def pending(self) -> list[PendingAsk]:
        """The pending asks, oldest first."""
        return list(self._pending.values())

    def resolve(
        self,
        ask_id: str,
        outcome: Outcome,
        result: AskUserQuestionAnswer | BaseException | None = None,
    ) -> bool:
        """Take the ask off the board and settle its future; ``False`` if it was not pending.

        ``result`` is the answer, or the exception the asker gets; ``None`` only for an ask whose
        waiter is already gone (cancelled), so nobody reads it.
        """
        ask = self._pending.pop(ask_id, None)
        if ask is None:
            return False
        self._resolved[ask_id] = outcome
        while len(self._resolved) > _HISTORY:
            self._resolved.popitem(last=False)
        if not ask.future.done():
            if isinstance(result, BaseException):
                ask.future.set_exception(result)
            elif result is not None:
                ask.future.set_result(result)
            else:
                ask.future.cancel()
        self._broadcast("resolved", {"id": ask_id, "outcome": outcome})
        return True

    def fail_all(self, error_factory: Any) -> None:
        """Resolve every pending ask as stopped, each with a fresh error from the factory."""
        for ask_id in list(self._pending):
            self.resolve(ask_id, "stopped", error_factory())

    def subscribe(self) -> asyncio.Queue[Frame]:
        """A new page's stream, starting with the snapshot of everything pending."""
        queue: asyncio.Queue[Frame] = asyncio.Queue()
        queue.put_nowait(
            self._frame("snapshot", {"pending": [ask.wire() for ask in self._pending.values()]})
        )
        self._streams.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[Frame]) -> None:
        """Forget a page's stream (the page went away)."""
        self._streams.discard(queue)

    def close_streams(self, reason: str) -> None:
        """Tell every page the server is going away, then end their streams."""
        bye = self._frame("bye", {"reason": reason})
        for queue in self._streams:
            queue.put_nowait(bye)
            queue.put_nowait(None)
        self._streams.clear()

    @property
    def stream_count(self) -> int:
        """How many pages are listening."""
        return len(self._streams)

    def _broadcast(self, event: str, data: dict[str, Any]) -> None:
        frame = self._frame(event, data)
        for queue in self._streams:
            queue.put_nowait(frame)

    def _frame(self, event: str, data: dict[str, Any]) -> bytes:
        # json.dumps escapes CR and LF, so the data stays on the one line SSE allows.
        payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return f"id: {next(self._seq)}\nevent: {event}\ndata: {payload}\n\n".encode()
