"""Server-sent events for the page: one hub per app, one bounded queue per open page.

A page must show that it reads: the snapshot and every ``ping`` (the heartbeats) carry a
number ``n`` (the snapshot also the stream's id), and the page posts ``alive`` ``{"id",
"n"}`` once it has read one. A stream whose oldest unconfirmed heartbeat is older than
`Limits.write_timeout` is dropped (its connection closed), however little else it is sent:
data piling up in socket buffers cannot hide a reader that reads nothing.

Every frame is built once and shared by all pages. A page's queue holds at most
`Limits.stream_buffer_bytes`; a page that falls further behind is dropped (its stream ends, or
its connection is closed when it reads nothing at all) and gets a fresh snapshot when its
browser reconnects. The snapshot is written ask by ask from the shared frames, so even a
thousand pending asks cost one page no more than one ask's bytes at a time.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import secrets
from collections.abc import Callable, Mapping
from typing import Any, cast

from dsh_user_questions import AskUserQuestionItem, AskUserQuestionRequest, UserQuestionError
from dsh_user_questions._identity import CALLER_KEY, TOKEN_HOLDER, Caller
from dsh_user_questions.rules import inert_text
from dsh_user_questions.team import may_answer
from dsh_user_questions.view import question_view
from starlette.types import Message, Receive, Scope, Send

from ._board import BoardEvent, QuestionBoard
from ._limits import Limits

__all__ = ["EventHub", "encode"]

# Bytes of the snapshot written at a time.
_SNAPSHOT_CHUNK = 64 * 1024


def encode(data: object) -> bytes:
    """JSON on one line, ASCII only: CR and LF (SSE's line ends) and lone surrogates escaped."""
    return json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def page_form(ask: Mapping[str, Any]) -> dict[str, Any]:
    """The ask as the page gets it: each question as the core's one view of it.

    A question (wire form, read by `AskUserQuestionItem.from_dict`) reaches the page only as
    its `dsh_user_questions.view.QuestionView.to_dict`: every model-written text inert, the
    detail and each option's preview as markdown trees, a diff review's diff parsed, the kind
    of card; an answer names an option by the view's ``label`` (its wire label). A file
    question's candidates are left out (``candidate_count`` says how many; the page fetches
    them from the ``files`` route). The ask's own
    fields stay, with ``agentShown``: the agent's name, inert
    (`dsh_user_questions.rules.inert_text`).
    """
    questions = [
        _lean(question_view(AskUserQuestionItem.from_dict(question)).to_dict())
        for question in ask.get("questions", ())
    ]
    agent = ask.get("agent")
    shown_agent = inert_text(agent) if isinstance(agent, str) else None
    return {**ask, "agentShown": shown_agent, "questions": questions}


def _lean(view: dict[str, Any]) -> dict[str, Any]:
    # A file question's candidates (up to a whole repository's paths) are fetched by the page
    # when it opens the question (the ``files`` route), never carried by the stream: their
    # count stands in for them.
    field = view.get("input")
    if isinstance(field, dict) and field.get("type") == "files":
        count = len(field.get("candidates") or ())
        view["input"] = {**field, "candidates": None, "shown": None, "candidate_count": count}
    return view


class _Page:
    """One open page's queue of frames, and the reading it still owes."""

    __slots__ = ("awaiting", "frames", "id", "person", "sent", "size", "state", "wake")

    def __init__(self, person: str = TOKEN_HOLDER) -> None:
        self.id = secrets.token_hex(8)
        self.person = person  # who reads it: it shows only the asks that admit them
        self.frames: collections.deque[bytes] = collections.deque()
        self.size = 0
        self.state = "open"  # then "dropped" (fell behind) or "ended" (the board closed)
        self.wake = asyncio.Event()
        self.sent = 0  # how many heartbeats (the snapshot is the first) were written
        # When the oldest heartbeat not yet confirmed was written (loop time), or None.
        self.awaiting: float | None = None

    def beat(self) -> int:
        self.sent += 1
        if self.awaiting is None:
            self.awaiting = asyncio.get_running_loop().time()
        return self.sent

    def confirm(self, seen: int) -> None:
        if seen >= self.sent:
            self.awaiting = None
        self.wake.set()

    def push(self, frame: bytes, limit: int) -> None:
        if self.state != "open":
            return
        if self.size + len(frame) > limit:
            self.state = "dropped"
            self.frames.clear()
            self.size = 0
        else:
            self.frames.append(frame)
            self.size += len(frame)
        self.wake.set()

    def pop(self) -> bytes:
        frame = self.frames.popleft()
        self.size -= len(frame)
        return frame


class EventHub:
    """Fans a board's events out to the open pages; the ASGI app of the ``events`` route."""

    def __init__(
        self,
        board: QuestionBoard,
        limits: Limits,
        drop_connection: Callable[[object], None] | None,
    ) -> None:
        self._board = board
        self._limits = limits
        self._drop_connection = drop_connection
        self._pages: dict[str, _Page] = {}
        self._unwatch: Callable[[], None] | None = None
        self._asks: dict[str, bytes] = {}
        # Each pending ask with an audience, as a request (the core decides who it admits).
        self._audiences: dict[str, AskUserQuestionRequest] = {}

    @property
    def page_count(self) -> int:
        """How many event streams are open."""
        return len(self._pages)

    def confirm(self, stream_id: str, seen: int) -> bool:
        """A page read heartbeat ``seen`` of stream ``stream_id``; ``False`` if no such stream."""
        page = self._pages.get(stream_id)
        if page is None:
            return False
        page.confirm(seen)
        return True

    def ask_bytes(self, ask: Mapping[str, Any]) -> bytes:
        """The ask's page form as JSON, rendered once per ask id."""
        ask_id = str(ask.get("id"))
        cached = self._asks.get(ask_id)
        if cached is None:
            cached = self._asks[ask_id] = encode(page_form(ask))
        return cached

    def refusal(self, ask: Mapping[str, Any], person: str) -> str | None:
        """Why ``person`` may not see or answer ``ask`` (the core's `team.may_answer` message
        for its ``audience``), or ``None``: an ask without an audience admits everyone."""
        audience = ask.get("audience")
        if not audience:
            return None
        decide = getattr(self._board, "refusal", None)
        if decide is not None:  # a board with its own additions (the inbox's escalation)
            return cast("str | None", decide(ask, person))
        ask_id = str(ask.get("id"))
        request = self._audiences.get(ask_id)
        if request is None:
            wire = {"questions": ask.get("questions", ()), "audience": audience}
            request = self._audiences[ask_id] = AskUserQuestionRequest.from_dict(wire)
        try:
            return may_answer(request, person)
        except UserQuestionError as err:  # an audience naming no known group admits nobody
            return err.message

    async def refusal_of(self, ask_id: str, person: str) -> str | None:
        """`refusal` of the pending ask ``ask_id`` (``None`` when it is not pending: the route
        that asked says so in its own words)."""
        for ask in await self._board.pending():
            if str(ask.get("id")) == ask_id:
                return self.refusal(ask, person)
        return None

    async def snapshot(self, person: str = TOKEN_HOLDER) -> list[bytes]:
        """Every pending ask ``person`` may see, as page-form JSON; forgets the renderings of
        settled asks."""
        pending = await self._board.pending()
        asks = [self.ask_bytes(ask) for ask in pending if self.refusal(ask, person) is None]
        keep = {str(ask.get("id")) for ask in pending}
        for ask_id in [ask_id for ask_id in self._asks if ask_id not in keep]:
            del self._asks[ask_id]
        for ask_id in [ask_id for ask_id in self._audiences if ask_id not in keep]:
            del self._audiences[ask_id]
        return asks

    def _on_event(self, event: BoardEvent) -> None:
        if event.name == "added":
            frame = b"event: added\ndata: " + self.ask_bytes(event.data) + b"\n\n"
        elif event.name == "resolved":
            self._asks.pop(str(event.data.get("id")), None)
            self._audiences.pop(str(event.data.get("id")), None)
            frame = b"event: resolved\ndata: " + encode(dict(event.data)) + b"\n\n"
        else:
            frame = b"event: bye\ndata: " + encode(dict(event.data)) + b"\n\n"
        limit = self._limits.stream_buffer_bytes
        for page in list(self._pages.values()):
            if event.name == "added" and self.refusal(event.data, page.person) is not None:
                continue  # not for this reader: never sent to their page
            page.push(frame, limit)
            if event.name == "closed" and page.state == "open":
                page.state = "ended"

    def _join(self, page: _Page) -> None:
        if not self._pages:
            self._unwatch = self._board.watch(self._on_event)
        self._pages[page.id] = page

    def _leave(self, page: _Page) -> None:
        self._pages.pop(page.id, None)
        if not self._pages and self._unwatch is not None:
            self._unwatch()
            self._unwatch = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if len(self._pages) >= self._limits.max_streams:
            await _plain(send, 503, b"too many event streams; try again later")
            return
        caller = scope.get(CALLER_KEY)
        page = _Page(caller.person if isinstance(caller, Caller) else TOKEN_HOLDER)
        self._join(page)
        gone = asyncio.Event()

        async def watch_disconnect() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()
            page.wake.set()

        watcher = asyncio.ensure_future(watch_disconnect())
        try:
            if await self._serve(page, send, gone):
                await self._write(send, gone, {"type": "http.response.body", "more_body": False})
            elif not gone.is_set() and self._drop_connection is not None:
                # It reads nothing: close its connection rather than wait for it.
                self._drop_connection(scope.get("client"))
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(gone.wait(), 5)
        finally:
            self._leave(page)
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    async def _serve(self, page: _Page, send: Send, gone: asyncio.Event) -> bool:
        """Write the stream; ``True`` to end it cleanly, ``False`` when a write timed out."""
        start = {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"text/event-stream; charset=utf-8"),
                (b"x-accel-buffering", b"no"),
            ],
        }
        if not await self._write(send, gone, start):
            return False
        asks = await self.snapshot(page.person)
        beat = page.beat()
        head = (
            f'retry: 2000\n\nevent: snapshot\ndata: {{"stream":"{page.id}","n":{beat},"pending":[\n'
        )
        chunk = [head.encode("ascii")]
        size = 0
        for index, ask in enumerate(asks):
            # Data lines join with LF in the browser, and JSON allows LF between values.
            chunk.append(b"data: " + (b"," if index else b"") + ask + b"\n")
            size += len(ask)
            if size >= _SNAPSHOT_CHUNK:  # written in pieces: one page never holds it all
                if not await self._body(send, gone, b"".join(chunk)):
                    return False
                chunk, size = [], 0
        chunk.append(b"data: ]}\n\n")
        if not await self._body(send, gone, b"".join(chunk)):
            return False
        loop = asyncio.get_running_loop()
        next_ping = loop.time() + self._limits.ping_seconds
        while not gone.is_set():
            if page.state == "dropped":
                return True
            now = loop.time()
            if page.awaiting is not None and now - page.awaiting > self._limits.write_timeout:
                return False  # it did not read what was written (heartbeats count): drop it
            if page.frames:
                if not await self._body(send, gone, page.pop()):
                    return False
                continue
            if page.state == "ended":
                return True
            if now >= next_ping:
                ping = b'event: ping\ndata: {"n":' + str(page.beat()).encode() + b"}\n\n"
                if not await self._body(send, gone, ping):
                    return False
                next_ping = loop.time() + self._limits.ping_seconds
                continue
            wait = next_ping - now
            if page.awaiting is not None:
                wait = min(wait, page.awaiting + self._limits.write_timeout - now + 0.01)
            page.wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(page.wake.wait(), max(wait, 0.001))
        return True

    async def _body(self, send: Send, gone: asyncio.Event, chunk: bytes) -> bool:
        message = {"type": "http.response.body", "body": chunk, "more_body": True}
        return await self._write(send, gone, message)

    async def _write(self, send: Send, gone: asyncio.Event, message: Message) -> bool:
        if gone.is_set():
            return True
        try:
            await asyncio.wait_for(send(message), self._limits.write_timeout)
        except asyncio.TimeoutError:
            return False
        return True


async def _plain(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"retry-after", b"2")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
