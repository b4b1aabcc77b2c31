"""`InboxProvider`: every ask becomes a record in the store; the answer comes from any surface.

``ask()`` records the question and waits for its final state, which another process (``dsh-inbox
answer``, ``dsh-inbox serve``, another harness) writes. An abort withdraws the question and a
timeout expires it (the core's verdict, `is_timeout`), so the record says which and ``resume()``
raises what ``ask()`` raised. ``resume()`` waits again for a question asked before, by this
process or by one that died; `Inbox.undelivered` lists what a restarted harness resumes. Every
final outcome is marked delivered when it reaches its asker, so each is delivered once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, TypeVar

import attrs
from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    UserQuestionError,
    is_timeout,
)
from dsh_user_questions.harness import AbortSignal
from dsh_user_questions.providing import Filing, Receipt, receipt

from ._lease import new_holder
from ._link_page import link_for
from ._notices import Notices, QuestionNotifier
from ._record import QuestionRecord, State
from ._seal import Sealer, register_seal
from ._store import Inbox, new_question_id, open_inbox, pending_record
from ._uploads import write_out
from ._watcher import Watcher, settle

__all__ = ["ENV_HARNESS", "InboxProvider", "default_harness_label"]

ENV_HARNESS = "DSH_USER_QUESTIONS_INBOX_HARNESS"
_log = logging.getLogger(__name__)
# Rows written per transaction at most: larger batches save little time, and what a batch
# holds while it is written (its rows' JSON, its records) raises the process's peak memory.
_BATCH = 500
_process_label: str | None = None


class _Unread:
    """`InboxProvider._final`'s default: the record is read to learn the deadline."""

    __slots__ = ()


_UNREAD = _Unread()
_UNSETTLED = object()  # _Queued.outcome before a cancelled ask's write is handed over
_PLAIN = (None, False)  # the `_inflight` entry of an ask without signal or key


def _forget_label() -> None:
    global _process_label
    _process_label = None


os.register_at_fork(after_in_child=_forget_label)


def default_harness_label() -> str:
    """``DSH_USER_QUESTIONS_INBOX_HARNESS``, else ``<host>:<pid>-<random>``.

    The default is unique per process lifetime (two containers with one host name and pid
    never share it); set a stable label for a harness that resumes its questions after a
    restart.
    """
    global _process_label
    label = os.environ.get(ENV_HARNESS, "").strip()
    if label:
        return label
    if _process_label is None:
        _process_label = f"{socket.gethostname()}:{os.getpid()}-{secrets.token_hex(4)}"
    return _process_label


class AlreadyDelivered(LookupError):
    """The question's outcome was already handed to an asker (another process of the label,
    or an earlier resume): each outcome is delivered once."""

    def __init__(self, question_id: str) -> None:
        super().__init__(
            f"the outcome of inbox question {question_id!r} was already delivered to its asker"
        )
        self.question_id = question_id


class InboxProvider:
    """A user-questions provider whose questions live in an `Inbox`.

    ``inbox`` is an open store, a URL, or ``None`` for ``DSH_USER_QUESTIONS_INBOX`` (then the
    default SQLite file). ``harness`` labels this process's questions (default
    `default_harness_label`); late answers to questions of that label are handed to
    ``on_late_answer(record)``, on the event loop of the latest ask, by exactly one process
    of the label.
    """

    def __init__(
        self,
        inbox: Inbox | str | None = None,
        *,
        harness: str | None = None,
        on_late_answer: Callable[[QuestionRecord], object] | None = None,
    ) -> None:
        self._owns_inbox = not isinstance(inbox, Inbox)
        self.inbox = inbox if isinstance(inbox, Inbox) else open_inbox(inbox)
        self.harness = harness or default_harness_label()
        # Secret answers are sealed to this store's key, kept in the user's state directory
        # (see _seal), so a restarted harness, whatever its label, opens them.
        self._sealer = Sealer.for_store(self.inbox.url)
        # This provider's lease on the questions it asks (see _lease): a key is asked by one
        # live provider at a time.
        self._holder = new_holder()
        self.inbox.beat(self._holder)
        self._watcher = Watcher(
            self.inbox, harness=self.harness, on_late_answer=on_late_answer, lease=self._holder
        )
        # Writes of asks run here, not on the loop's executor, so close() can wait for them.
        self._work = concurrent.futures.ThreadPoolExecutor(4, "dsh-inbox-ask")
        self._lock = threading.Lock()
        # Questions being waited for by this provider, with the signal of their ask and
        # whether it was keyed.
        self._inflight: dict[str, tuple[AbortSignal | None, bool]] = {}
        # Asks whose rows are still to be written (see _drain), and how many are queued or
        # being written (close() waits for them).
        self._queued: _Batches[_Queued] = _Batches()
        self._writing = 0
        self._written = threading.Condition(self._lock)
        # Records to read for asks about to wait (see _read).
        self._reads: _Batches[
            tuple[str, asyncio.Future[QuestionRecord | None], asyncio.AbstractEventLoop]
        ] = _Batches()
        self._closed = False
        # DSH_USER_QUESTIONS_NOTIFY: a bad URL fails here, when the provider starts.
        self._notices = QuestionNotifier.from_env(self.inbox)
        self._link_notices: Notices | None = None  # made for the first filing that needs it

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        """Record the question, then wait for its final state (see the module's docstring).

        With a ``key``, the record holding that key is attached to (see `Inbox.add`): its
        answer (or late answer), given while nobody waited, comes back at once.
        """
        signal = request.signal
        # The asker's receipt, when it listens for where the question is filed (dsh-ask takes
        # it in a wrapper of this hook): read before this provider takes one of its own.
        heard = receipt(request, make=False)
        # The receipt (whether the answer reaches the asker's caller): taken now when the ask
        # may end before this provider does (its signal aborting), else once the outcome is
        # here (see _taken_receipt): a pending ask holds none.
        taken = None if signal is None else receipt(request)
        if signal is not None and signal.aborted:
            raise UserQuestionError.aborted_by(signal)
        self._watcher.start(asyncio.get_running_loop())
        agent = getattr(request.agent, "id", None)
        agent = agent if isinstance(agent, str) else None
        deadline = None if request.timeout is None else time.time() + request.timeout
        if request.key is not None:
            return await self._ask_keyed(request, agent, deadline, taken, heard)
        # A new question: its id is chosen and watched before its row is written, so every
        # change of the row reaches the watcher and nothing is read back. One coroutine frame
        # (this one) and the watcher's future are all a pending ask holds here.
        question_id = new_question_id()
        future = self._watcher.watch(question_id)
        written = False
        try:
            one = self._submit_add(request, agent, deadline, question_id)
            try:
                added = await one.future
            except asyncio.CancelledError:
                # Cancelled while the row was being written: the question ends (below) once
                # its row exists, before the ask goes.
                written = not isinstance(await self._write_outcome(one), Exception)
                raise
            written = True
            del one
            if taken is not None and taken.done():
                taken = None
            self._announce(question_id, added)
            await self._file(heard, question_id, added)
            del added  # not held while waiting
            if deadline is None:
                record = await future
            else:
                found = await self._final(question_id, future, deadline)
                record = found if isinstance(found, QuestionRecord) else await found
        except asyncio.CancelledError:
            if written:
                await self._end_now(question_id, signal)
            raise
        except Exception:
            self._forget(question_id)
            if self._closed and written:  # the store went with the provider: withdrawn
                raise _closed_error(signal) from None
            raise
        finally:
            self._watcher.unwatch(question_id, future)
        if signal is None:
            taken = _taken_receipt(request)
        return await self._deliver(record, signal, keyed=False, taken=taken)

    async def _ask_keyed(
        self,
        request: AskUserQuestionRequest,
        agent: str | None,
        deadline: float | None,
        taken: Receipt | None,
        heard: Receipt | None,
    ) -> AskUserQuestionAnswer:
        """`ask` with a key: the key's record (maybe asked before, maybe final) is attached
        to, then read again once watched and waited for as a resume waits."""
        one = self._submit_add(request, agent, deadline, None)
        try:
            record = await one.future
        except asyncio.CancelledError:
            # Cancelled while the row was being written: end it once it exists, before going.
            written = await self._write_outcome(one)
            if isinstance(written, QuestionRecord):
                with contextlib.suppress(Exception):
                    await self._end_now(written.id, request.signal, keyed=True)
            raise
        del one
        assert record is not None  # a keyed ask's outcome is the key's record
        self._announce(record.id, record)
        try:
            await self._file(heard, record.id, record)
        except asyncio.CancelledError:
            # Cancelled while filing it (a read in a thread): it ends as a wait would.
            await self._end_now(record.id, request.signal, keyed=True)
            raise
        if taken is not None and taken.done():
            taken = None
        # A pending question is waited for by its id alone (see _final).
        question: QuestionRecord | str = record if record.state.final else record.id
        del record
        return await self._wait(question, request.signal, keyed=True, taken=taken, ask=request)

    def _announce(self, question_id: str, record: QuestionRecord | None) -> None:
        """Log a question that waits in the inbox; notify of it (``DSH_USER_QUESTIONS_NOTIFY``).

        ``record``: the question's record (always there when notices are sent), ``None`` for a
        new question whose row was written.
        """
        if record is not None and record.state is not State.PENDING:
            return
        _log.info(
            "question %s waits in the inbox %s: answer it with `dsh-inbox answer %s`"
            " or on the page of `dsh-inbox serve`",
            question_id,
            self.inbox.url.shown,
            question_id,
        )
        if self._notices is not None and record is not None:
            self._notices.question_waiting(record)

    async def _file(
        self, heard: Receipt | None, question_id: str, record: QuestionRecord | None
    ) -> None:
        """File a pending question on the asker's receipt ``heard`` (`Receipt.file`): its id,
        its link when a ``dsh-inbox serve --public-url`` serves links, and the command that
        answers it. Only when the asker took the receipt before this provider ran (``dsh-ask``
        does, to tell its human at once): otherwise nothing is read."""
        if heard is None or (record is not None and record.state is not State.PENDING):
            return
        if record is None:
            record = await self._read(question_id)
        link = None
        if record is not None:
            if self._link_notices is None:
                self._link_notices = await asyncio.to_thread(Notices, self.inbox)
            settings = await asyncio.to_thread(self._link_notices.link_settings)
            if settings is not None:
                link = link_for(settings[0], settings[1], record)
        command = f"dsh-inbox answer {question_id}"
        heard.file(Filing(question_id, link=link, answer_command=command))

    async def _write_outcome(self, one: _Queued) -> QuestionRecord | Exception | None:
        """For an ask cancelled while its row was queued or being written: the outcome of the
        write (its record, or its error), once known."""
        outcome = one.outcome
        if outcome is not _UNSETTLED:
            return outcome  # type: ignore[return-value]  # a record or an error
        if one.future.done() and not one.future.cancelled():
            return one.future.exception() or one.future.result()  # type: ignore[return-value]
        # Not handed over yet: `_settle_adds` settles whatever future the entry holds then.
        one.future = asyncio.get_running_loop().create_future()
        try:
            return await asyncio.shield(one.future)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            return error

    def _submit_add(
        self,
        request: AskUserQuestionRequest,
        agent: str | None,
        deadline: float | None,
        question_id: str | None,
    ) -> _Queued:
        """Queue the question's row (``question_id``: a new question's id, ``None`` for a
        keyed one); the asks queued together are written in one transaction by one thread
        (`_drain`), so ten thousand asks started at once are not ten thousand commits. The
        entry's future gets the record (or the error)."""
        loop = asyncio.get_running_loop()
        one = _Queued(request, agent, deadline, question_id, loop.create_future(), loop)
        with self._lock:
            if self._closed:
                raise UserQuestionError.aborted("the inbox provider is closed")
            self._writing += 1
            if not self._queued.add(one):
                return one
        try:
            self._work.submit(self._drain)
        except BaseException:
            with self._lock:
                self._queued.stopped()
            raise
        return one

    def _write_batch(self, batch: list[_Queued]) -> list[QuestionRecord | Exception | None]:
        """Each queued ask's outcome: a keyed ask's record (`Inbox.add`, a transaction of its
        own), a new question's ``None`` once its row is written (one transaction for all of
        them; a record only when notices need one), or its error."""
        outcomes: list[QuestionRecord | Exception | None] = [None] * len(batch)
        new: list[int] = []
        for index, one in enumerate(batch):
            try:
                if one.question_id is None:
                    record = self.inbox.add(
                        one.request,
                        harness=self.harness,
                        agent=one.agent,
                        deadline=one.deadline,
                        lease=self._holder,
                        # With the record, in its transaction: never a secret question
                        # without the key to seal its answer to.
                        seal=self._sealer.registered_key if _secret(one.request) else None,
                    )
                    outcomes[index] = record
                    continue
                if _secret(one.request):
                    # Registered before the row is written: an answer never finds the
                    # question without the key to seal to.
                    register_seal(self.inbox, one.question_id, self._sealer.registered_key)
                new.append(index)
            except Exception as error:  # that ask's alone
                outcomes[index] = error
        if not new:
            return outcomes
        try:
            rows = self.inbox._insert_new(
                [(batch[i].request, batch[i].agent, batch[i].deadline, batch[i].question_id)
                 for i in new],
                harness=self.harness,
                lease=self._holder,
            )  # fmt: skip
        except Exception as error:  # as one write failing: every ask of it has it
            rows = [error] * len(new)
        for index, row in zip(new, rows, strict=True):
            if isinstance(row, Exception):
                outcomes[index] = row
            elif self._notices is not None:
                outcomes[index] = pending_record(row, batch[index].request)
        return outcomes

    def _drain(self) -> None:
        """Write every queued ask's row, a batch at a time, until none is queued; each ask
        gets its own outcome (see `_write_batch`)."""
        while True:
            with self._lock:
                batch = self._queued.take()
            if not batch:
                return
            outcomes = self._write_batch(batch)
            for one, outcome in zip(batch, outcomes, strict=True):
                if isinstance(outcome, Exception):
                    continue
                signal = one.request.signal
                keyed = one.question_id is None
                question_id = outcome.id if isinstance(outcome, QuestionRecord) else one.question_id
                assert question_id is not None  # a new question's id is chosen by its ask
                with self._lock:
                    # Most asks have neither signal nor key: they share one entry value.
                    self._inflight[question_id] = (
                        _PLAIN if signal is None and not keyed else (signal, keyed)
                    )
            _settle_on_loops(
                ((one.loop, (one, outcome)) for one, outcome in zip(batch, outcomes, strict=True)),
                _settle_adds,
            )
            with self._lock:
                self._writing -= len(batch)
                self._written.notify_all()

    async def _read(self, question_id: str) -> QuestionRecord | None:
        """The question's record as stored now; the reads asked for together are one query
        (`_drain_reads`), so ten thousand asks waiting at once are not ten thousand reads."""
        loop = asyncio.get_running_loop()
        reading: asyncio.Future[QuestionRecord | None] = loop.create_future()
        with self._lock:
            start = self._reads.add((question_id, reading, loop))
        if start:
            try:
                self._work.submit(self._drain_reads)
            except RuntimeError:  # closed: read it here
                with self._lock:
                    self._reads.stopped()
                return await asyncio.to_thread(self.inbox.get, question_id)
        return await reading

    def _drain_reads(self) -> None:
        while True:
            with self._lock:
                batch = self._reads.take()
            if not batch:
                return
            try:
                found: dict[str, QuestionRecord] | Exception = {
                    record.id: record for record in self.inbox.get_many(i for i, _, _ in batch)
                }
            except Exception as error:
                found = error
            settled = [
                (loop, (future, found if isinstance(found, Exception) else found.get(question_id)))
                for question_id, future, loop in batch
            ]
            del batch, found
            _settle_on_loops(settled, _settle_all)

    async def resume(
        self, question_id: str, *, signal: AbortSignal | None = None
    ) -> AskUserQuestionAnswer:
        """Wait again for a question asked before; its answer, or the error ``ask()`` raised.

        Answered: the answer. Withdrawn: ``ASK_ABORTED``; expired (also a pending one whose
        deadline passes meanwhile): ``ASK_TIMED_OUT``; cancelled: ``ASK_CANCELLED``. Pending:
        wait as ``ask()`` does (an abort of ``signal`` withdraws it). An id the store does not
        know is a `LookupError`. An answer is handed over once: one that another process (or an
        earlier ask or resume) already took is `AlreadyDelivered` (a `LookupError` too); an
        ending that is an error is raised again by every resume (nothing is consumed).
        """
        if signal is not None and signal.aborted:
            raise UserQuestionError.aborted_by(signal)
        self._watcher.start(asyncio.get_running_loop())
        with self._lock:
            if self._closed:
                raise UserQuestionError.aborted("the inbox provider is closed")
            self._inflight.setdefault(question_id, (signal, False))
        return await self._wait(question_id, signal, keyed=False)

    async def _wait(
        self,
        question: QuestionRecord | str,
        signal: AbortSignal | None,
        *,
        keyed: bool,
        taken: Receipt | None = None,
        ask: AskUserQuestionRequest | None = None,
    ) -> AskUserQuestionAnswer:
        """Wait for a question asked before (a resume, a keyed ask: ``ask`` is its request,
        whose receipt is taken once the outcome is here when ``taken`` is not given)."""
        question_id = question if isinstance(question, str) else question.id
        future = self._watcher.watch(question_id)
        try:
            if isinstance(question, QuestionRecord) and question.state.final:
                found: QuestionRecord | asyncio.Future[QuestionRecord] = question
            else:
                del question  # a pending record is not held while waiting
                found = await self._final(question_id, future)
            # Waiting with no deadline: the future is awaited here, so a pending ask holds
            # no frame of _final's while it waits.
            record = found if isinstance(found, QuestionRecord) else await found
        except asyncio.CancelledError:
            await self._end_now(question_id, signal, keyed=keyed)
            raise
        except Exception:
            self._forget(question_id)
            if self._closed:  # the store went with the provider: the ask ends as withdrawn
                raise _closed_error(signal) from None
            raise
        finally:
            self._watcher.unwatch(question_id, future)
        if ask is not None and taken is None and signal is None:
            taken = _taken_receipt(ask)
        return await self._deliver(record, signal, keyed=keyed, taken=taken)

    async def _final(
        self,
        question_id: str,
        future: asyncio.Future[QuestionRecord],
        deadline: float | _Unread | None = _UNREAD,
    ) -> QuestionRecord | asyncio.Future[QuestionRecord]:
        """The question's record once it is final (expired here when its deadline passes), or
        (a pending question without a deadline) ``future``, for the caller to await.

        ``deadline``: a pending question's deadline, when the caller knows it (it just wrote
        the row); by default the record is read first.
        """
        while True:
            if isinstance(deadline, _Unread):
                current = await self._read(question_id)
                if current is None:
                    raise LookupError(f"the inbox has no question {question_id!r}")
                if current.state.final:
                    return current
                deadline = current.deadline
                del current  # not held while waiting
            left = None if deadline is None else deadline - time.time()
            if left is None:
                return future
            if left > 0:
                with contextlib.suppress(asyncio.TimeoutError):
                    return await asyncio.wait_for(asyncio.shield(future), left)
            await asyncio.to_thread(self.inbox.expire_overdue, question_id)
            current = await asyncio.to_thread(self.inbox.get, question_id)
            if current is None:
                raise LookupError(f"the inbox has no question {question_id!r}")
            if current.state.final:
                return current
            deadline = current.deadline
            del current

    async def _deliver(
        self,
        record: QuestionRecord,
        signal: AbortSignal | None,
        *,
        keyed: bool,
        taken: Receipt | None,
    ) -> AskUserQuestionAnswer:
        """Take the final outcome for this asker (once), then return or raise it.

        An answer is recorded as received once the core's receipt says ``ask()`` returned it
        to its caller (``taken``; without one, e.g. for ``resume()``, on returning it); one
        whose caller was cancelled as it landed goes to the late-answer hook instead.
        """
        if self._closed:
            self._forget(record.id)
            if record.delivered and record.state in (State.WITHDRAWN, State.EXPIRED):
                return self._opened(record, _result(record))
            raise _closed_error(signal)
        answer = record.state is State.ANSWERED or (keyed and record.late_answer is not None)
        late = keyed and record.late_answer is not None and record.state is not State.ANSWERED
        opened: AskUserQuestionAnswer | None = None
        if answer:
            # Open a secret before taking the answer: one this process cannot open stays
            # undelivered in the store (nothing reports it delivered) and the error says why.
            try:
                opened = self._opened(record, _late_result(record) if late else _result(record))
            except UserQuestionError as error:
                self._forget(record.id)
                _log.error("inbox question %s: %s", record.id, error.message)
                raise
        received_now = answer and taken is None
        claiming = asyncio.ensure_future(
            asyncio.to_thread(self._claim, record, keyed, received_now)
        )
        try:
            won = await asyncio.shield(claiming)
        except asyncio.CancelledError:
            # Cancelled while taking it: an answer taken for nobody goes where late ones go.
            with contextlib.suppress(Exception):
                if await claiming and record.state is State.ANSWERED:
                    self._watcher.deliver(record)
            raise
        finally:
            self._forget(record.id)
        if not won and record.state is State.ANSWERED:
            raise AlreadyDelivered(record.id)
        if answer and taken is not None:
            taken.add_done_callback(lambda ok: self._taken_soon(record, ok))
        if opened is not None:
            return opened
        return _result(record)  # an ending that is an error: raised

    def _opened(
        self, record: QuestionRecord, answer: AskUserQuestionAnswer
    ) -> AskUserQuestionAnswer:
        # Secret answers are sealed to this provider's key in the store; opened only here.
        # Files uploaded through the store are written out here, on the asker's machine.
        return write_out(self.inbox, self._sealer.open(record.to_request(), answer))

    def _claim(self, record: QuestionRecord, keyed: bool, received: bool) -> bool:
        """Mark the outcome delivered; ``True`` when this asker may have it."""
        won = self.inbox.claim_delivery(record.id)
        if received and (won or keyed):
            self.inbox.mark_received(record.id)
        if not keyed:
            return won
        if record.late_answer is not None and record.state is not State.ANSWERED:
            self.inbox.claim_late(record.id)  # the key's asker has it: not the hook too
        return True  # a key names its question for good: asking again gets its outcome again

    def _taken_soon(self, record: QuestionRecord, taken: bool) -> None:
        try:
            self._work.submit(self._taken, record, taken).add_done_callback(_log_failure)
        except RuntimeError:  # closed meanwhile
            return

    def _taken(self, record: QuestionRecord, taken: bool) -> None:
        """The receipt: received by the asker's caller, or not (cancelled as it landed)."""
        if taken:
            self.inbox.mark_received(record.id)
        elif self._watcher.has_callback:
            self._watcher.deliver(record)  # where late answers go, rather than lost
        else:
            self.inbox.unclaim_delivery(record.id)  # undelivered again, for a resume

    def _forget(self, question_id: str) -> None:
        with self._lock:
            self._inflight.pop(question_id, None)

    async def _end_now(
        self, question_id: str, signal: AbortSignal | None, *, keyed: bool = False
    ) -> None:
        """Withdraw (or expire) a question whose asker gave up, before the asker goes on.

        A keyed question whose ask was cancelled without its signal aborting (the process
        stopping: SIGINT, the loop shutting down) is released instead: it stays pending, same
        id and link, for the run that asks its key again (see `_releases`).
        """
        self._forget(question_id)
        state = State.EXPIRED if is_timeout(signal) else State.WITHDRAWN
        try:
            if _releases(signal, keyed):
                ending = self._work.submit(self.inbox.release, self._holder, question_id)
            else:
                ending = self._work.submit(self._end, question_id, state, True)
        except RuntimeError:  # closed: close() settled it
            return
        ending.add_done_callback(_log_failure)
        with contextlib.suppress(Exception):
            await asyncio.shield(asyncio.wrap_future(ending))

    def _end(self, question_id: str, state: State, hand_over: bool) -> None:
        if self.inbox.settle(question_id, state, surface="harness", delivered=True):
            return
        record = self.inbox.get(question_id)
        if record is None or not record.state.final or record.delivered:
            return
        if record.state is not State.ANSWERED:
            # Ended meanwhile (a deadline, a person closing it): the asker gave up knowing.
            self.inbox.claim_delivery(record.id)
        elif hand_over and self.inbox.claim_delivery(record.id):
            # Answered in the very moment the ask gave up: the asker never got it, so it
            # goes where late answers go rather than being lost.
            self._watcher.deliver(record)

    def close(self) -> None:
        """Settle the questions still waited for, stop listening, close the store if this
        provider opened it. Idempotent.

        A question an ask of this provider still waits for is withdrawn (expired when its
        ask's timeout ended it), so no unkeyed record is left pending by a process that closed
        cleanly; the ask raises ``ASK_ABORTED`` (``ASK_TIMED_OUT``). One answered in that very
        moment stays undelivered in the store, for `Inbox.undelivered`. A keyed question stays
        pending (its ask raises ``ASK_ABORTED`` all the same): it belongs to its durable run,
        which re-attaches to it, same id and link, by asking its key again. The provider's
        leases end with it.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self._notices is not None:
            self._notices.cancel()
        with self._lock:
            self._written.wait_for(lambda: self._writing == 0)
        with self._lock:
            inflight, self._inflight = self._inflight, {}
        kept: list[str] = []
        for question_id, (signal, keyed) in inflight.items():
            if _releases(signal, keyed):
                kept.append(question_id)
                continue
            state = State.EXPIRED if is_timeout(signal) else State.WITHDRAWN
            try:
                self._end(question_id, state, False)
            except Exception:
                _log.exception("could not end inbox question %s on closing", question_id)
        self._work.shutdown(wait=True)
        with contextlib.suppress(Exception):
            self.inbox.release(self._holder)
        self._watcher.fail(kept, UserQuestionError.aborted("the inbox provider was closed"))
        with contextlib.suppress(Exception):
            self._watcher.wake(self.inbox.get_many(inflight))
        self._watcher.close()
        if self._owns_inbox:
            self.inbox.close()


def _secret(request: AskUserQuestionRequest) -> bool:
    return any(question.secret for question in request.questions)


@attrs.define(slots=True, eq=False)
class _Queued:
    """An ask whose row waits to be written (``question_id``: a new question's, ``None`` for
    a keyed one); ``future`` gets the outcome, or (once cancelled) ``outcome`` does."""

    request: AskUserQuestionRequest
    agent: str | None
    deadline: float | None
    question_id: str | None
    future: asyncio.Future[QuestionRecord | None]
    loop: asyncio.AbstractEventLoop
    outcome: object = _UNSETTLED


_T = TypeVar("_T")


class _Batches(Generic[_T]):
    """Work queued by many asks, done a batch at a time by one drainer thread at most.

    Every method runs under the provider's lock.
    """

    def __init__(self) -> None:
        self._items: list[_T] = []
        self._draining = False

    def add(self, item: _T) -> bool:
        """Queue ``item``; true when no drainer runs, so the caller starts one."""
        self._items.append(item)
        start = not self._draining
        self._draining = True
        return start

    def take(self) -> list[_T]:
        """The next batch; empty when nothing is queued, and then the drainer ends."""
        batch = self._items[:_BATCH]
        del self._items[:_BATCH]
        if not batch:
            self._draining = False
        return batch

    def stopped(self) -> None:
        """The drainer the caller was to start did not start."""
        self._draining = False


def _settle_on_loops(
    settled: Iterable[tuple[asyncio.AbstractEventLoop, _T]], on_loop: Callable[[list[_T]], None]
) -> None:
    """From a drainer thread: ``on_loop`` with each loop's part of ``settled``, on that loop."""
    by_loop: dict[asyncio.AbstractEventLoop, list[_T]] = {}
    for loop, one in settled:
        by_loop.setdefault(loop, []).append(one)
    for loop, mine in by_loop.items():
        with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
            loop.call_soon_threadsafe(on_loop, mine)


def _settle_adds(settled: Sequence[tuple[_Queued, object]]) -> None:
    """On the asks' loop: hand each its record or its error; an ask cancelled meanwhile finds
    it in ``outcome`` (see `InboxProvider._write_outcome`)."""
    for one, outcome in settled:
        if not settle(one.future, outcome):
            one.outcome = outcome


def _taken_receipt(request: AskUserQuestionRequest) -> Receipt | None:
    """The receipt of an ask without a signal, taken once its outcome is here: it is still
    in flight then (its provider runs in its caller's task); ``None`` when it is no ask of
    a service (nobody to receive it: the outcome counts as received on return)."""
    taken = receipt(request)
    return None if taken.done() else taken


def _settle_all(settled: Sequence[tuple[asyncio.Future[Any], object]]) -> None:
    """On the futures' loop: each its result, or its error."""
    for future, outcome in settled:
        settle(future, outcome)


def _result(record: QuestionRecord) -> AskUserQuestionAnswer:
    if record.state is State.ANSWERED:
        answer = record.to_answer()
        assert answer is not None  # an answered record always has its answer
        return answer
    if record.state is State.CANCELLED:
        raise UserQuestionError.cancelled()
    if record.state is State.EXPIRED:
        raise UserQuestionError.timed_out()
    raise UserQuestionError.aborted("the question was withdrawn")


def _releases(signal: AbortSignal | None, keyed: bool) -> bool:
    """Whether an ask that stops without an answer leaves its question pending: a keyed one
    whose signal did not abort (its process stops; its run asks the key again later)."""
    return keyed and not (signal is not None and signal.aborted)


def _closed_error(signal: AbortSignal | None) -> UserQuestionError:
    if signal is not None and signal.aborted:
        return UserQuestionError.aborted_by(signal)
    return UserQuestionError.aborted("the inbox provider was closed")


def _late_result(record: QuestionRecord) -> AskUserQuestionAnswer:
    assert record.late_answer is not None
    return AskUserQuestionAnswer.from_dict(record.late_answer)


def _log_failure(done: concurrent.futures.Future[None]) -> None:
    with contextlib.suppress(concurrent.futures.CancelledError):
        error = done.exception()
        if error is not None:
            _log.error("could not end an inbox question", exc_info=error)
