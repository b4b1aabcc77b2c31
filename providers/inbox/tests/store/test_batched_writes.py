"""Asks started together are recorded in one transaction, each still with its own outcome."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from _requests import PKG, pick
from _waits import until
from dsh_user_questions import AskUserQuestionItem, AskUserQuestionRequest, UserQuestionError
from dsh_user_questions.errors import UserQuestionErrorCode
from dsh_user_questions.harness import HarnessContext

from dsh_user_questions_inbox import Inbox, State, open_inbox
from dsh_user_questions_inbox._engine import Engine, Listener
from dsh_user_questions_inbox.provider import InboxProvider


class Counting:
    """An engine that counts the transactions recording new questions, and can be broken,
    held back (``gate``), or made to run ``after_insert(ids)`` once rows are written."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.inserts = 0  # transactions that inserted questions
        self.rows = 0
        self.broken: UserQuestionError | None = None
        self.broken_seals: UserQuestionError | None = None
        self.gate: threading.Event | None = None
        self.entered = threading.Event()  # an insert reached the gate
        self.after_insert: Callable[[list[str]], None] | None = None

    def _insert(self, sql: str, rows: int) -> None:
        if sql.startswith("INSERT INTO dsh_inbox_seals") and self.broken_seals is not None:
            raise self.broken_seals
        if sql.startswith("INSERT INTO dsh_inbox_questions"):
            if self.broken is not None:
                raise self.broken
            self.inserts += 1
            self.rows += rows
            self.entered.set()
            if self.gate is not None:
                self.gate.wait()

    def _inserted(self, sql: str, params: Sequence[Mapping[str, Any]]) -> None:
        if sql.startswith("INSERT INTO dsh_inbox_questions") and self.after_insert is not None:
            self.after_insert([one["id"] for one in params])

    def write(self, sql: str, params: Mapping[str, Any]) -> int:
        self._insert(sql, 1)
        changed = self.engine.write(sql, params)
        self._inserted(sql, [params])
        return changed

    def write_many(self, sql: str, params: Sequence[Mapping[str, Any]]) -> list[int]:
        self._insert(sql, len(params))
        changed = self.engine.write_many(sql, params)
        self._inserted(sql, params)
        return changed

    def write_steps(self, steps: Sequence[tuple[str, Mapping[str, Any]]]) -> list[int]:
        # One transaction: its question inserts (each with its event) count once, as a batch.
        by_statement: dict[str, list[Mapping[str, Any]]] = {}
        for sql, params in steps:
            by_statement.setdefault(sql, []).append(params)
        for sql, rows in by_statement.items():
            self._insert(sql, len(rows))
        changed = self.engine.write_steps(steps)
        for sql, rows in by_statement.items():
            self._inserted(sql, rows)
        return changed

    def read(self, sql: str, params: Mapping[str, Any]) -> Sequence[Sequence[Any]]:
        return self.engine.read(sql, params)

    def listen(
        self, harness: str | None = None, wanted: Callable[[str], bool] | None = None
    ) -> Listener:
        return self.engine.listen(harness, wanted)

    def check(self) -> None:
        self.engine.check()

    def close(self) -> None:
        self.engine.close()


def _counted(url: str) -> tuple[Inbox, Counting]:
    opened = open_inbox(url)
    counting = Counting(opened._engine)
    return Inbox(counting, opened.url), counting


class TestBatchedWrites:
    async def test_asks_started_together_share_transactions(
        self, inbox_url: str, inbox: Inbox, dsh_context: HarnessContext
    ) -> None:
        """Sixty asks started in one loop turn are recorded in fewer transactions than asks,
        and each returns the answer given to its own record."""
        store, counting = _counted(inbox_url)
        ctx = dsh_context
        provider = InboxProvider(store, harness="batched")
        ctx.user_questions.register_provider(provider)
        try:
            asks = [
                asyncio.ensure_future(ctx.user_questions.ask(AskUserQuestionRequest.from_dict(PKG)))
                for _ in range(60)
            ]
            await until(lambda: inbox.count("pending") == 60, "sixty questions")
            assert counting.rows == 60
            assert counting.inserts < 60, "one transaction per ask"
            labels = {}
            for n, record in enumerate(inbox.records(state="pending")):
                labels[record.id] = "pnpm" if n % 2 else "npm"
                await asyncio.to_thread(
                    inbox.answer, record.id, pick(labels[record.id]), surface="t"
                )
            answers = await asyncio.wait_for(asyncio.gather(*asks), 60)
            assert sorted(a.answers[0].selected[0] for a in answers) == sorted(labels.values())
        finally:
            await asyncio.to_thread(provider.close)
            store.close()

    async def test_a_failed_batch_fails_each_of_its_asks(
        self, inbox_url: str, inbox: Inbox, dsh_context: HarnessContext
    ) -> None:
        """When the transaction recording asks fails, every one of them raises the store's
        STORE_UNUSABLE error and nothing is recorded."""
        store, counting = _counted(inbox_url)
        counting.broken = UserQuestionError.store_unusable("the disk is full")
        ctx = dsh_context
        provider = InboxProvider(store, harness="batched")
        ctx.user_questions.register_provider(provider)
        try:
            outcomes = await asyncio.wait_for(
                asyncio.gather(
                    *(
                        ctx.user_questions.ask(AskUserQuestionRequest.from_dict(PKG))
                        for _ in range(10)
                    ),
                    return_exceptions=True,
                ),
                60,
            )
            assert all(isinstance(error, UserQuestionError) for error in outcomes)
            assert {error.code for error in outcomes if isinstance(error, UserQuestionError)} == {
                UserQuestionErrorCode.STORE_UNUSABLE
            }
            assert inbox.count("pending") == 0
        finally:
            await asyncio.to_thread(provider.close)
            store.close()


class TestAsksBeingRecorded:
    @pytest.mark.parametrize("keyed", [False, True], ids=["new", "keyed"])
    async def test_an_ask_cancelled_while_its_row_is_written_ends_it_before_going(
        self, inbox_url: str, inbox: Inbox, dsh_context: HarnessContext, keyed: bool
    ) -> None:
        """An ask cancelled while its row is being written raises CancelledError only once
        the row is written and ended: withdrawn (a keyed one released: pending, no lease)."""
        store, counting = _counted(inbox_url)
        counting.gate = threading.Event()
        provider = InboxProvider(store, harness="cancelled")
        dsh_context.user_questions.register_provider(provider)
        try:
            asking = asyncio.ensure_future(
                dsh_context.user_questions.ask(
                    AskUserQuestionRequest.from_dict(PKG, key="k" if keyed else None)
                )
            )
            await asyncio.to_thread(counting.entered.wait)
            asking.cancel()
            await asyncio.sleep(0)  # the cancellation reaches the ask while its row is held
            counting.gate.set()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(asking, 60)
            (record,) = await asyncio.to_thread(inbox.records)
            if keyed:
                assert record.state is State.PENDING
                assert inbox.lease_of(record.id)[0] is None
            else:
                assert record.state is State.WITHDRAWN
        finally:
            counting.gate.set()
            await asyncio.to_thread(provider.close)
            store.close()

    async def test_an_answer_given_as_the_rows_are_written_is_received(
        self, inbox_url: str, inbox: Inbox, dsh_context: HarnessContext
    ) -> None:
        """Questions answered the moment their rows are written (before their asks hear of
        it) still return those answers: nothing between the write and the wait is missed."""
        store, counting = _counted(inbox_url)
        answerer = open_inbox(inbox_url)

        def answer(ids: list[str]) -> None:
            for question_id in ids:
                assert answerer.answer(question_id, pick("npm"), surface="t").applied

        counting.after_insert = answer
        provider = InboxProvider(store, harness="answered-at-once")
        dsh_context.user_questions.register_provider(provider)
        try:
            answers = await asyncio.wait_for(
                asyncio.gather(
                    *(
                        dsh_context.user_questions.ask(AskUserQuestionRequest.from_dict(PKG))
                        for _ in range(20)
                    )
                ),
                60,
            )
            assert [a.answers[0].selected for a in answers] == [("npm",)] * 20
            assert counting.rows == 20
        finally:
            await asyncio.to_thread(provider.close)
            store.close()
            answerer.close()

    async def test_a_keyed_secret_answered_the_moment_it_is_written_is_sealed(
        self, inbox_url: str, dsh_context: HarnessContext
    ) -> None:
        """Issue 35: a keyed secret question answered from another connection as soon as its
        row is committed (before anything else the asker writes) is sealed and reaches its
        asker: its sealing key is written in the same transaction as its record."""
        store, counting = _counted(inbox_url)
        answerer = open_inbox(inbox_url)
        applied: list[object] = []

        def answer(ids: list[str]) -> None:
            for question_id in ids:
                given = {"answers": [{"id": "token", "selected": [], "custom": "s3cr3t-npm"}]}
                try:
                    applied.append(answerer.answer(question_id, given, surface="t").applied)
                except UserQuestionError as err:  # the defect: "left no key to seal it to"
                    applied.append(err.message)

        counting.after_insert = answer
        provider = InboxProvider(store, harness="sealed-at-once")
        dsh_context.user_questions.register_provider(provider)
        request = AskUserQuestionRequest(
            questions=[AskUserQuestionItem(id="token", question="The token?", secret=True)],
            key="deploy-token",
        )
        try:
            answer_got = await asyncio.wait_for(dsh_context.user_questions.ask(request), 30)
            assert applied == [True]
            assert answer_got.answers[0].custom == "s3cr3t-npm"
            (record,) = await asyncio.to_thread(answerer.records)
            assert "s3cr3t-npm" not in str(record.answer)  # sealed at rest
        finally:
            await asyncio.to_thread(provider.close)
            store.close()
            answerer.close()

    async def test_a_keyed_secret_ask_whose_seal_cannot_be_recorded_fails(
        self, inbox_url: str, dsh_context: HarnessContext
    ) -> None:
        """A keyed ask with a secret question whose sealing key cannot be written raises the
        store's error, rather than waiting for an answer that could never be sealed."""
        store, counting = _counted(inbox_url)
        counting.broken_seals = UserQuestionError.store_unusable("the disk is full")
        provider = InboxProvider(store, harness="sealed")
        dsh_context.user_questions.register_provider(provider)
        request = AskUserQuestionRequest(
            questions=[AskUserQuestionItem(id="token", question="The token?", secret=True)],
            key="deploy-token",
        )
        try:
            with pytest.raises(UserQuestionError) as raised:
                await asyncio.wait_for(dsh_context.user_questions.ask(request), 30)
            assert raised.value.code == UserQuestionErrorCode.STORE_UNUSABLE
        finally:
            await asyncio.to_thread(provider.close)
            store.close()
