"""The page's Submit waits for its asker's receipt without holding a worker thread."""

from __future__ import annotations

import asyncio
import concurrent.futures

import pytest
from _requests import PKG, pick

from dsh_user_questions_inbox import Inbox, State
from dsh_user_questions_inbox import _board as board_module
from dsh_user_questions_inbox._board import InboxBoard


async def test_a_submit_waiting_for_its_receipt_holds_no_worker_thread(
    inbox: Inbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one worker thread in the loop's pool, other work runs while a Submit waits for its
    asker's receipt, and the receipt (read by the board's listening thread) ends the wait."""
    monkeypatch.setattr(board_module, "RECEIPT_SECONDS", 20.0)
    pool = concurrent.futures.ThreadPoolExecutor(1)
    asyncio.get_running_loop().set_default_executor(pool)
    board = InboxBoard(inbox)
    await board.start()
    try:
        record = inbox.add(PKG, harness="h")
        submitting = asyncio.ensure_future(board.submit(record.id, pick("npm")))
        while inbox.get(record.id).state is State.PENDING:  # noqa: ASYNC110 (the store is read)
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)  # the Submit now waits for a receipt
        await asyncio.wait_for(asyncio.to_thread(lambda: None), 10)  # the one thread is free
        assert not submitting.done()
        assert inbox.claim_delivery(record.id)  # what an asker does as its ask() returns
        inbox.mark_received(record.id)
        settled = await asyncio.wait_for(submitting, 30)
        assert settled.status == "accepted"
    finally:
        await board.close("done")
        pool.shutdown()
