"""Asks started together are recorded in one transaction, each still with its own outcome."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from _requests import PKG, pick
from _waits import until
from dsh_user_questions import AskUserQuestionRequest, UserQuestionError
from dsh_user_questions.errors import UserQuestionErrorCode
from dsh_user_questions.harness import HarnessContext

from dsh_user_questions_inbox import Inbox, open_inbox
from dsh_user_questions_inbox._engine import Engine, Listener
from dsh_user_questions_inbox.provider import InboxProvider


class Counting:
    """An engine that counts the transactions recording new questions, and can be broken."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.inserts = 0  # transactions that inserted questions
        self.rows = 0
        self.broken: UserQuestionError | None = None

    def _insert(self, sql: str, rows: int) -> None:
        if sql.startswith("INSERT INTO dsh_inbox_questions"):
            if self.broken is not None:
                raise self.broken
            self.inserts += 1
            self.rows += rows

    def write(self, sql: str, params: Mapping[str, Any]) -> int:
        self._insert(sql, 1)
        return self.engine.write(sql, params)

    def write_many(self, sql: str, params: Sequence[Mapping[str, Any]]) -> list[int]:
        self._insert(sql, len(params))
        return self.engine.write_many(sql, params)

    def read(self, sql: str, params: Mapping[str, Any]) -> Sequence[Sequence[Any]]:
        return self.engine.read(sql, params)

    def listen(self) -> Listener:
        return self.engine.listen()

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
