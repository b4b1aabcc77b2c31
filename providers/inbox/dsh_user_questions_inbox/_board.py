"""`InboxBoard`: the web provider's `QuestionBoard` over the store, for ``dsh-inbox serve``.

The page and its protocol are the web provider's (``dsh_user_questions_web.app``); this board
lists the store's pending questions, turns the store's changes (from any process) into page
events, and settles questions through the store, so the first answer from any surface wins.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dsh_user_questions import BadAnswerError, UserQuestionError
from dsh_user_questions._identity import TOKEN_HOLDER, Caller
from dsh_user_questions_web import BoardEvent, Outcome, Settlement, problems_of

from ._record import AnswerOutcome, QuestionRecord, State
from ._store import Inbox, Reception
from ._uploads import InboxUploadSink, open_upload, resolve_uploads

__all__ = ["InboxBoard", "outcome_of", "wire_of"]

_log = logging.getLogger(__name__)
RECEIPT_SECONDS = 1.5  # how long a Submit waits for the asker's receipt
_TOLD = 10_000  # settled ids remembered, so that each is told to the pages once
_OUTCOMES: dict[State, Outcome] = {
    State.ANSWERED: "answered",
    State.CANCELLED: "cancelled",
    State.WITHDRAWN: "withdrawn",
    State.EXPIRED: "expired",
}


def asker_of(record: QuestionRecord) -> str:
    """Who asks, as the page says it: ``harness <label>``, plus ``, agent <id>`` when known."""
    who = f"harness {record.harness}"
    return who if record.agent is None else f"{who}, agent {record.agent}"


def wire_of(record: QuestionRecord) -> dict[str, Any]:
    """The page's form of a pending question, naming who asks (``asker``: the harness label
    and the agent id; ``agent`` and ``harness`` apart), and whom it is for (``audience``,
    when it has one)."""
    wire = {
        "id": record.id,
        "agent": record.agent,
        "harness": record.harness,
        "asker": asker_of(record),
        "createdAt": int(record.created * 1000),
        "questions": record.request["questions"],
    }
    audience = record.request.get("audience")
    if audience:
        wire["audience"] = list(audience)
    return wire


def outcome_of(record: QuestionRecord | None) -> Outcome | None:
    """How the page names a final state; ``None`` if unknown."""
    return None if record is None else _OUTCOMES.get(record.state)


def _log_failure(what: str) -> None:
    """Log a failure: one line for the store's own errors (no traceback), else in full."""
    error = sys.exc_info()[1]
    if isinstance(error, UserQuestionError):
        _log.error("%s: %s", what, error.message)
    else:
        _log.exception(what)


class InboxBoard:
    """Pending questions of the store, their changes, and settling them as ``surface``."""

    def __init__(self, inbox: Inbox, *, surface: str = "web") -> None:
        self._inbox = inbox
        self._surface = surface
        self._listeners: dict[object, Callable[[BoardEvent], None]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # Ids whose "resolved" the pages were told (on the loop only): told once, whether
        # by a Submit here or by the listening thread.
        self._told: collections.OrderedDict[str, None] = collections.OrderedDict()
        # Submits waiting for their asker's receipt, by question id (on the loop only): woken
        # when the listening thread reads the record received, so none holds a worker thread.
        self._receipts: dict[str, list[asyncio.Future[None]]] = {}
        # The pending records with an audience the pages were given, for `refusal`.
        self._audienced: dict[str, QuestionRecord] = {}

    async def start(self) -> None:
        """Begin listening to the store (before the first page can subscribe)."""
        self._loop = asyncio.get_running_loop()
        listening = await asyncio.to_thread(self._inbox.listen)
        self._thread = threading.Thread(
            target=self._run, args=(listening,), name="dsh-inbox-board", daemon=True
        )
        self._thread.start()

    async def close(self, reason: str) -> None:
        """Tell the pages the server is going away, and stop listening."""
        self._emit(BoardEvent("closed", {"reason": reason}))
        self._stop.set()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join)

    # QuestionBoard -----------------------------------------------------------------------------

    async def pending(self) -> Sequence[Mapping[str, Any]]:
        """Every pending question in the page's form, oldest first."""
        records = await asyncio.to_thread(self._inbox.records, state=State.PENDING)
        self._audienced.update((r.id, r) for r in records if r.request.get("audience"))
        return [wire_of(record) for record in records]

    def refusal(
        self, ask: Mapping[str, Any], person: str, record: QuestionRecord | None = None
    ) -> str | None:
        """Why ``person`` may not see the pending ``ask`` (`Inbox.may_answer`: the core's rule,
        and an escalation once due), or ``None``. Read without I/O from the records the pages
        were given; an escalation that falls due later shows on the next snapshot."""
        if not ask.get("audience"):
            return None
        record = record or self._audienced.get(str(ask.get("id")))
        if record is None:
            return "this question is not known here"
        try:
            return self._inbox.may_answer(record, person)
        except (UserQuestionError, ValueError) as err:  # an unknown group, a bad people file
            return err.message if isinstance(err, UserQuestionError) else str(err)

    def watch(self, listener: Callable[[BoardEvent], None]) -> Callable[[], None]:
        """Call ``listener`` on the serving loop for every later change."""
        key = object()
        self._listeners[key] = listener
        return lambda: self._listeners.pop(key, None) and None

    async def submit(
        self, ask_id: str, answer: object, *, caller: Caller | None = None
    ) -> Settlement:
        """Answer through the store: accepted only when this answer was the one applied and
        an asker received it (``kept`` when none waits for it now).

        The answer is checked by the store with the core's rules (`rules.check_answer`, no
        rule of the page's own). An answer to a question withdrawn or expired meanwhile is
        still stored, as its late answer (the page is told the question is no longer pending).
        ``caller`` is who answers (recorded as ``answered_by``; default: the token holder).
        """
        caller = caller or Caller(TOKEN_HOLDER)
        record = await asyncio.to_thread(self._inbox.get, ask_id)
        if record is None or record.state in (State.ANSWERED, State.CANCELLED):
            return Settlement.not_pending(ask_id, outcome_of(record))
        try:
            answer = await asyncio.to_thread(resolve_uploads, self._inbox, ask_id, answer)
            result = await asyncio.to_thread(
                self._inbox.answer,
                ask_id,
                answer,
                surface=self._surface,
                by=caller.person,
                address=caller.address,
            )
        except UserQuestionError as err:
            if not isinstance(err, BadAnswerError):
                raise
            return Settlement.rejected(ask_id, problems_of(err))
        if result.outcome is AnswerOutcome.REFUSED:  # nothing stored but its `refused` event
            return Settlement.refused(ask_id, result.message or "")
        if result.outcome is AnswerOutcome.COUNTED:
            have, needed = result.approvals or (0, 0)
            events = await asyncio.to_thread(self._inbox.events, ask_id)
            approvers = dict.fromkeys(e.by for e in events if e.event == "approved" and e.by)
            return Settlement.counted(ask_id, list(approvers)[:have] or [caller.person], needed)
        if result.applied:
            # Every page hears at once that the question is settled (this process wrote it; the
            # listening thread would tell them one poll later, and says it again harmlessly).
            self._emit(BoardEvent("resolved", {"id": ask_id, "outcome": "answered"}))
            # "Accepted" only once an asker's ask() returned it; "kept" when no asker waits
            # now (stored for the one that resumes); never either for an asker cancelled as
            # it landed.
            reception = await self._reception(ask_id)
            if reception == "not-taken":
                return Settlement.not_pending(ask_id, "withdrawn")
            if reception == "no-asker":
                return Settlement.kept(ask_id)
            return Settlement.accepted(ask_id)
        return Settlement.not_pending(ask_id, outcome_of(result.record))

    async def _reception(self, ask_id: str) -> Reception:
        """Whether an asker received the answer just applied (`Inbox.wait_received`'s verdict
        after `RECEIPT_SECONDS`). It waits for the listening thread to read the record received,
        not in a worker thread: Submits waiting at once would otherwise hold every thread of the
        loop's pool, and the other Submits' reads and writes would queue behind them."""
        waiter = asyncio.get_running_loop().create_future()
        self._receipts.setdefault(ask_id, []).append(waiter)
        try:
            reception = await asyncio.to_thread(self._inbox.wait_received, ask_id, 0)
            if reception == "received":
                return reception
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(waiter, RECEIPT_SECONDS)
            return await asyncio.to_thread(self._inbox.wait_received, ask_id, 0)
        finally:
            waiters = self._receipts.get(ask_id, [])
            if waiter in waiters:
                waiters.remove(waiter)
            if not waiters:
                self._receipts.pop(ask_id, None)

    def _received(self, ask_id: str) -> None:
        for waiter in self._receipts.get(ask_id, []):
            if not waiter.done():
                waiter.set_result(None)

    async def opened(self, ask_id: str, caller: Caller) -> None:
        """A page showed the question to ``caller``: its ``opened`` event (once per showing;
        nothing for a question that is unknown or not for them: the page never showed it)."""
        record = await asyncio.to_thread(self._inbox.get, ask_id)
        if record is None or self.refusal(wire_of(record), caller.person, record) is not None:
            return
        await asyncio.to_thread(
            self._inbox.record_event,
            ask_id,
            "opened",
            by=caller.person,
            surface=self._surface,
            address=caller.address,
        )

    async def history(self, ask_id: str, caller: Caller) -> list[dict[str, Any]] | None:
        """The question's log (`Inbox.events`), for a person it admits; ``None`` when it is
        unknown or not for them. Events hold no answer's text (a secret's neither)."""
        record = await asyncio.to_thread(self._inbox.get, ask_id)
        if record is None:
            return None
        if await asyncio.to_thread(self._inbox.may_answer, record, caller.person) is not None:
            return None
        events = await asyncio.to_thread(self._inbox.events, ask_id)
        return [
            {"event": e.event, "by": e.by, "surface": e.surface, "at": int(e.at * 1000)}
            for e in events
        ]

    def open_upload(
        self, ask_id: str, question_id: str, name: str, media_type: str | None
    ) -> InboxUploadSink:
        """Start a file the human uploads for question ``question_id`` of pending record
        ``ask_id``: its bytes go into the store (`_uploads`), for the asker to write out."""
        return open_upload(self._inbox, ask_id, question_id, name, media_type)

    async def cancel(self, ask_id: str, *, caller: Caller | None = None) -> Settlement:
        """Close the question (the asker gets ``ASK_CANCELLED``) if it is pending and
        ``caller`` may answer it (an outsider is refused, and logged as ``refused``)."""
        record = await asyncio.to_thread(self._inbox.get, ask_id)
        if record is not None and record.state is State.PENDING and caller is not None:
            refusal = await asyncio.to_thread(
                self._inbox.admit,
                record,
                caller.person,
                surface=self._surface,
                address=caller.address,
            )
            if refusal is not None:
                return Settlement.refused(ask_id, refusal)
        if await asyncio.to_thread(
            self._inbox.settle, ask_id, State.CANCELLED, surface=self._surface
        ):
            return Settlement.cancelled(ask_id)
        return Settlement.not_pending(
            ask_id, outcome_of(await asyncio.to_thread(self._inbox.get, ask_id))
        )

    # The listening thread ----------------------------------------------------------------------

    def _run(self, listening: Any) -> None:
        try:
            while not self._stop.is_set():
                try:
                    changed = listening.poll(0.25)
                    if changed is None:  # reconnected: the pages re-read what is pending
                        records = self._inbox.records(state=State.PENDING)
                    elif changed:
                        records = self._inbox.get_many(changed)
                    else:
                        continue
                    for record in records:
                        if record.received_at is not None and self._loop is not None:
                            with contextlib.suppress(RuntimeError):  # the loop closed
                                self._loop.call_soon_threadsafe(self._received, record.id)
                        if record.state is State.PENDING:
                            if record.request.get("audience"):
                                self._audienced[record.id] = record
                            self._emit_soon(BoardEvent("added", wire_of(record)))
                        else:
                            self._emit_soon(BoardEvent("resolved", self._resolved(record)))
                except Exception:
                    _log_failure("the inbox board failed to read changes; going on")
                    self._stop.wait(1.0)
        finally:
            listening.close()

    def _resolved(self, record: QuestionRecord) -> dict[str, Any]:
        """A settled record as the pages hear of it: with ``by`` when another surface than
        these pages settled it (``link`` for a one-question link)."""
        data: dict[str, Any] = {"id": record.id, "outcome": outcome_of(record)}
        surface = record.surface
        if surface is not None and surface != self._surface:
            data["by"] = "link" if surface.endswith("-link") else surface
        return data

    def _emit_soon(self, event: BoardEvent) -> None:
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody listens
                loop.call_soon_threadsafe(self._emit, event)

    def _emit(self, event: BoardEvent) -> None:
        if event.name == "resolved":
            ask_id = str(event.data.get("id"))
            self._audienced.pop(ask_id, None)
            if ask_id in self._told:
                return
            self._told[ask_id] = None
            if len(self._told) > _TOLD:
                self._told.popitem(last=False)
        for listener in list(self._listeners.values()):
            try:
                listener(event)
            except Exception:
                _log.exception("a page listener failed")
