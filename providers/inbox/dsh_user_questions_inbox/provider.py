"""`InboxProvider`: every ask becomes a record in the store; the answer comes from any surface.

``ask()`` records the question and waits for its final state, which another process (``dsh-inbox
answer``, ``dsh-inbox serve``, another harness) writes. An abort withdraws the question and a
timeout expires it, so the record says which; ``ask()`` raises as it always does. ``resume()``
waits again for a question asked before, by this process or by one that died.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import socket
import time
from collections.abc import Callable

from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest, UserQuestionError
from dsh_user_questions.harness import AbortSignal

from ._record import QuestionRecord, State
from ._store import Inbox, open_inbox
from ._watcher import Watcher

__all__ = ["ENV_HARNESS", "InboxProvider", "default_harness_label"]

ENV_HARNESS = "DSH_USER_QUESTIONS_INBOX_HARNESS"
_log = logging.getLogger(__name__)


def default_harness_label() -> str:
    """``DSH_USER_QUESTIONS_INBOX_HARNESS``, else ``<host>:<pid>``."""
    label = os.environ.get(ENV_HARNESS, "").strip()
    return label or f"{socket.gethostname()}:{os.getpid()}"


def _timed_out(signal: AbortSignal | None) -> bool:
    """Whether the wait ended by a timeout: the ask's own, or a signal made by
    ``AbortSignal.timeout`` (its reason is a `TimeoutError`)."""
    return signal is not None and signal.aborted and isinstance(signal.reason, TimeoutError)


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
        self._watcher = Watcher(self.inbox, harness=self.harness, on_late_answer=on_late_answer)
        # Withdrawals run here, not on the loop's executor, so close() can wait for them.
        self._ending = concurrent.futures.ThreadPoolExecutor(2, "dsh-inbox-end")
        self._closed = False

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        """Record the question, then wait for its final state (see the module's docstring)."""
        signal = request.signal
        if signal is not None and signal.aborted:
            raise UserQuestionError.aborted_by(signal)
        loop = asyncio.get_running_loop()
        self._watcher.start(loop)
        agent = getattr(request.agent, "id", None)
        deadline = None if request.timeout is None else time.time() + request.timeout
        adding = loop.run_in_executor(
            None,
            lambda: self.inbox.add(
                request,
                harness=self.harness,
                agent=agent if isinstance(agent, str) else None,
                deadline=deadline,
            ),
        )
        try:
            record = await asyncio.shield(adding)
        except asyncio.CancelledError:
            # Aborted while the row was being written: end it once it exists.
            adding.add_done_callback(lambda done: self._end_added(done, signal))
            raise
        return await self._wait(record.id, signal)

    async def resume(
        self, question_id: str, *, signal: AbortSignal | None = None
    ) -> AskUserQuestionAnswer:
        """Wait again for a question asked before; its answer, or the error ``ask()`` raised.

        Answered: the answer. Withdrawn: ``ASK_ABORTED``; expired: ``ASK_TIMED_OUT``;
        cancelled: ``ASK_CANCELLED``. Pending: wait as ``ask()`` does (an abort of ``signal``
        withdraws it). An id the store does not know is a `LookupError`.
        """
        if signal is not None and signal.aborted:
            raise UserQuestionError.aborted_by(signal)
        self._watcher.start(asyncio.get_running_loop())
        return await self._wait(question_id, signal)

    async def _wait(self, question_id: str, signal: AbortSignal | None) -> AskUserQuestionAnswer:
        future = self._watcher.watch(question_id)
        try:
            current = await asyncio.to_thread(self.inbox.get, question_id)
            if current is None:
                raise LookupError(f"the inbox has no question {question_id!r}")
            record = current if current.state.final else await future
        except asyncio.CancelledError:
            self._end_soon(question_id, signal)
            raise
        finally:
            self._watcher.unwatch(question_id, future)
        return _result(record)

    def _end_added(self, done: asyncio.Future[QuestionRecord], signal: AbortSignal | None) -> None:
        if not done.cancelled() and done.exception() is None:
            self._end_soon(done.result().id, signal)

    def _end_soon(self, question_id: str, signal: AbortSignal | None) -> None:
        """Withdraw (or expire) the question without holding up the cancelled caller."""
        state = State.EXPIRED if _timed_out(signal) else State.WITHDRAWN
        try:
            ending = self._ending.submit(self._end, question_id, state)
        except RuntimeError:  # closed: the question stays pending for a later resume
            return
        ending.add_done_callback(_log_failure)

    def _end(self, question_id: str, state: State) -> None:
        if self.inbox.settle(question_id, state, surface="harness"):
            return
        record = self.inbox.get(question_id)
        if (
            record is not None
            and record.state is State.ANSWERED
            and self.inbox.claim_late(record.id)
        ):
            # Answered in the very moment the ask gave up: the asker never got it, so it
            # goes where late answers go rather than being lost.
            self._watcher.deliver(record)

    def close(self) -> None:
        """Stop listening; close the store if this provider opened it. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._ending.shutdown(wait=True)
        self._watcher.close()
        if self._owns_inbox:
            self.inbox.close()


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


def _log_failure(done: concurrent.futures.Future[None]) -> None:
    with contextlib.suppress(concurrent.futures.CancelledError):
        error = done.exception()
        if error is not None:
            _log.error("could not end an inbox question", exc_info=error)
