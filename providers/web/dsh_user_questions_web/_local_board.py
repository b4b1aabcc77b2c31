"""`LocalBoard`: the in-process `QuestionBoard` of `WebProvider`, one future per pending ask.

Everything here runs on the provider's event loop, so "first valid answer wins" is "first call
that settles the ask while it is still on the board". `LocalBoard.submit` hands the answer over
(the future's result) only if the future is still open and the request's signal has not
aborted, in one step with no await; then it waits for the core's receipt
(`dsh_user_questions.providing.receipt`) and says ``accepted`` only when ``ask()`` returned
that answer to its caller, also when the asking task is cancelled as the answer lands (then
the ask is ``withdrawn``). An ask made without the service (the provider driven directly) has
no receipt: the future holding the answer is all there is to know.
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
from dsh_user_questions._identity import TOKEN_HOLDER, Caller
from dsh_user_questions._uploads import UploadWriter, discard_upload
from dsh_user_questions.providing import Receipt
from dsh_user_questions.team import may_answer, tally

from ._answers import check_page_answer, problems_of
from ._board import BoardEvent, Outcome, Settlement
from ._uploads_web import UploadSink, resolve_uploads, upload_input

_log = logging.getLogger(__name__)

# How many settled ask ids are remembered, so a late post gets a `Settlement` saying what happened.
_HISTORY = 10_000
# Seconds an answer's poster waits to hear whether the asker took it (the core resolves the
# receipt as ask() returns, so this bound is only for a harness that hangs in its observers).
_RECEIPT_WAIT = 30.0


@attrs.define(eq=False)
class PendingAsk:
    """One ask waiting for the human."""

    id: str
    request: AskUserQuestionRequest
    agent: str | None
    created_ms: int
    future: asyncio.Future[AskUserQuestionAnswer]
    wire: dict[str, Any]
    taken: Receipt | None = None
    # While an answer is handed over: the outcome it ends with ("answered" or "withdrawn").
    delivery: asyncio.Future[Outcome] | None = None
    # Files the human uploaded for its questions: token -> (question id, answer record).
    uploads: dict[str, tuple[str, dict[str, Any]]] = attrs.field(factory=dict)
    # The answers given so far to a review that needs several approvals (`team.tally`).
    answers: list[AskUserQuestionAnswer] = attrs.field(factory=list)


def _wire(
    ask_id: str, request: AskUserQuestionRequest, agent: str | None, created: int
) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "id": ask_id,
        "agent": agent,
        "createdAt": created,
        "questions": [question.to_dict() for question in request.questions],
    }
    if request.audience:  # who the pages show it to (`team.may_answer`)
        wire["audience"] = list(request.audience)
    return wire


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

    def add(
        self, request: AskUserQuestionRequest, agent: str | None, taken: Receipt | None = None
    ) -> PendingAsk:
        """Put an ask on the board and tell every page; cancelling its future withdraws it.

        ``taken`` is the core's receipt of the ask (``None`` when asked without the service).
        """
        ask_id = f"ask-{next(self._ids)}-{self._nonce}"
        created = int(time.time() * 1000)
        future: asyncio.Future[AskUserQuestionAnswer] = asyncio.get_running_loop().create_future()
        wire = _wire(ask_id, request, agent, created)
        ask = PendingAsk(ask_id, request, agent, created, future, wire, taken)
        self._pending[ask_id] = ask

        def done(_: object) -> None:
            if ask.delivery is None:  # not an answer being handed over: withdrawn
                self._settle(ask_id, "withdrawn")

        future.add_done_callback(done)
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
            if ask.delivery is not None:
                continue  # an answer is being handed over: its receipt decides how it ends
            self._settle(ask.id, "stopped")
            if not ask.future.done():
                ask.future.set_exception(error_factory())

    def close(self, reason: str) -> None:
        """Tell every page the board is going away (their streams end)."""
        self._emit(BoardEvent("closed", {"reason": reason}))

    def get(self, ask_id: str) -> PendingAsk | None:
        """The pending ask of that id, or ``None``."""
        return self._pending.get(ask_id)

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

    async def submit(
        self,
        ask_id: str,
        answer: object,
        *,
        by: str | None = None,
        caller: Caller | None = None,
    ) -> Settlement:
        """Hand ``answer`` over if the ask is pending, valid and still awaited; ``accepted``
        only once the asker has it (the core's receipt). ``by`` names where the answer came
        from when not from a page (``"link"``: the one-question link); the pages are told.
        ``caller``'s person is the answer's ``answered_by`` (default: the token holder)."""
        ask = self._pending.get(ask_id)
        if ask is None:
            return Settlement.not_pending(ask_id, self._settled.get(ask_id))
        if ask.delivery is not None:  # another answer is being handed over
            return Settlement.not_pending(ask_id, await asyncio.shield(ask.delivery))
        person = TOKEN_HOLDER if caller is None else caller.person
        refusal = _refusal(ask.request, person)
        if refusal is not None:  # not in its audience: nothing is taken
            return Settlement.refused(ask_id, refusal)
        try:
            answer = resolve_uploads(answer, ask.uploads)
            checked = check_page_answer(ask.request.questions, answer, answered_by=person)
        except UserQuestionError as err:
            return Settlement.rejected(ask_id, problems_of(err))
        signal = ask.request.signal
        if ask.future.done() or (signal is not None and signal.aborted):
            # The agent stopped waiting (its withdrawal is on its way): the answer is not taken.
            self._settle(ask_id, "withdrawn")
            return Settlement.not_pending(ask_id, "withdrawn")
        verdict = tally(ask.request, [*ask.answers, checked])
        if verdict.settled is None:  # an approval counted; the review needs more
            ask.answers.append(checked)
            return Settlement.counted(ask_id, verdict.approvers, verdict.needed)
        delivery = ask.delivery = asyncio.get_running_loop().create_future()
        ask.future.set_result(verdict.settled)
        # Shielded: a poster that goes away does not leave the ask half handed over.
        delivering = self._deliver(ask, delivery, by)
        outcome = await asyncio.shield(asyncio.ensure_future(delivering))
        if outcome == "answered":
            return Settlement.accepted(ask_id)
        return Settlement.not_pending(ask_id, outcome)

    async def _deliver(
        self, ask: PendingAsk, delivery: asyncio.Future[Outcome], by: str | None
    ) -> Outcome:
        taken = True
        if ask.taken is not None:
            try:
                taken = await asyncio.wait_for(ask.taken.wait(), _RECEIPT_WAIT)
            except asyncio.TimeoutError:
                taken = False
                _log.warning("the harness did not confirm the answer to %s in time", ask.id)
        outcome: Outcome = "answered" if taken else "withdrawn"
        self._settle(ask.id, outcome, by)
        delivery.set_result(outcome)
        return outcome

    def open_upload(
        self, ask_id: str, question_id: str, name: str, media_type: str | None
    ) -> UploadSink:
        """Start writing a file the human uploads for question ``question_id`` of a pending
        ask into the uploads folder (`dsh_user_questions._uploads`). Raises
        `dsh_user_questions._uploads.UploadRefused` (a bad name, a refused type) or
        `LookupError` (no such pending ask or upload question)."""
        ask = self._pending.get(ask_id)
        if ask is None or ask.delivery is not None:
            raise LookupError(f"question {ask_id!r} is not pending")
        field = upload_input(ask.request.questions, question_id)
        writer = UploadWriter(
            name, media_type=media_type, max_bytes=field.max_bytes, accept=field.accept
        )

        def keep(record: dict[str, Any]) -> str:
            if self._pending.get(ask_id) is not ask:  # settled while the bytes came
                discard_upload(record)
                raise LookupError(f"question {ask_id!r} is not pending")
            token = secrets.token_urlsafe(12)
            ask.uploads[token] = (question_id, record)
            return token

        return UploadSink(writer, keep)

    async def cancel(
        self, ask_id: str, *, by: str | None = None, caller: Caller | None = None
    ) -> Settlement:
        """Close the ask: the agent gets ``ASK_CANCELLED`` (``by``, ``caller``: as for
        `submit`)."""
        ask = self._pending.get(ask_id)
        if ask is None:
            return Settlement.not_pending(ask_id, self._settled.get(ask_id))
        refusal = None if caller is None else _refusal(ask.request, caller.person)
        if refusal is not None:  # on the page, only its audience may close it
            return Settlement.refused(ask_id, refusal)
        if ask.future.done():
            self._settle(ask_id, "withdrawn")
            return Settlement.not_pending(ask_id, "withdrawn")
        self._settle(ask_id, "cancelled", by)
        ask.future.set_exception(UserQuestionError.cancelled())
        return Settlement.cancelled(ask_id)

    def outcome(self, ask_id: str) -> Outcome | None:
        """How a recently settled ask ended, or ``None``."""
        return self._settled.get(ask_id)

    # -- inside -------------------------------------------------------------------------------

    def _settle(self, ask_id: str, outcome: Outcome, by: str | None = None) -> None:
        ask = self._pending.pop(ask_id, None)
        if ask is None:
            return
        _discard_unused(ask, outcome)
        self._settled[ask_id] = outcome
        while len(self._settled) > _HISTORY:
            self._settled.popitem(last=False)
        data = {"id": ask_id, "outcome": outcome}
        if by is not None:
            data["by"] = by
        self._emit(BoardEvent("resolved", data))

    def _emit(self, event: BoardEvent) -> None:
        for listener in list(self._listeners.values()):
            try:
                listener(event)
            except Exception:
                # A page's trouble must never fail the agent's ask or another page's stream.
                _log.exception("a listener of the web provider's board failed")


def _refusal(request: AskUserQuestionRequest, person: str) -> str | None:
    """The core's refusal of ``person`` for ``request`` (`team.may_answer`), or ``None``."""
    try:
        return may_answer(request, person)
    except UserQuestionError as err:  # an audience naming no known group admits nobody
        return err.message


def _discard_unused(ask: PendingAsk, outcome: Outcome) -> None:
    """Delete the uploaded files the settled ask's answer does not name (all of them when it
    was not answered): nothing the human sent is kept for an answer that was not taken."""
    used: set[str] = set()
    if outcome == "answered" and ask.future.done() and not ask.future.cancelled():
        error = ask.future.exception()
        if error is None:
            for item in ask.future.result().answers:
                value = item.value if isinstance(item.value, tuple) else ()
                used.update(
                    path
                    for record in value
                    if isinstance(path := getattr(record, "path", None), str)
                )
    for _question, record in ask.uploads.values():
        if record["path"] not in used:
            discard_upload(record)
    ask.uploads.clear()
