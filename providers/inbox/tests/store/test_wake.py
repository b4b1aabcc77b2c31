"""A harness's watcher wakes (and reads the store) only for the changes that concern it.

On PostgreSQL every write is announced on the shared channel (the page's server hears every
change) and on its question's harness channel; a harness's watcher hears its own harness's
changes and those of the questions it waits on, not every change of a store fifty harnesses
share. Counted through the watcher's reads (`Inbox.get_many`), never timed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from pathlib import Path

from _requests import PKG, pick
from _waits import until

from dsh_user_questions_inbox import Inbox, QuestionRecord, State, open_inbox
from dsh_user_questions_inbox._watcher import Watcher


def _heard_until(listener: object, last: str, timeout: float = 30.0) -> set[str]:
    """Every id ``listener`` hears until it hears ``last`` (announced last, in commit order)."""
    heard: set[str] = set()
    deadline = time.monotonic() + timeout
    while last not in heard and time.monotonic() < deadline:
        heard.update(listener.poll(0.5) or [])  # type: ignore[attr-defined]
    assert last in heard, f"never heard of {last}"
    return heard


def test_a_harness_listener_hears_its_harness_and_what_it_wants_only(postgres: object) -> None:
    """listen(harness, wanted) on PostgreSQL: the harness's changes and the wanted ids, none of
    another harness's; listen() still hears every change (the page's server)."""
    url = postgres.new_database()  # type: ignore[attr-defined]
    writer = open_inbox(url)
    reader = open_inbox(url)
    other = writer.add(PKG, harness="b")  # created before: `wanted` may name it
    wanted = writer.add(PKG, harness="c")
    harness = reader.listen("a", lambda question_id: question_id == wanted.id)
    everything = reader.listen()
    try:
        writer.answer(other.id, pick("npm"), surface="cli")
        unrelated = writer.add(PKG, harness="b")
        writer.answer(wanted.id, pick("npm"), surface="cli")
        own = writer.add(PKG, harness="a")
        heard = _heard_until(harness, own.id)
        assert heard == {wanted.id, own.id}
        assert _heard_until(everything, own.id) == {other.id, unrelated.id, wanted.id, own.id}
    finally:
        harness.close()
        everything.close()
        writer.close()
        reader.close()


class _Reads:
    """The ids a watcher's store was asked to read (`Inbox.get_many`), wrapped on one store."""

    def __init__(self, inbox: Inbox) -> None:
        self.ids: list[str] = []
        self._get_many = inbox.get_many
        inbox.get_many = self  # type: ignore[method-assign]

    def __call__(self, question_ids: Iterable[str], *, final: bool = False) -> list[QuestionRecord]:
        ids = list(question_ids)
        self.ids += ids
        return self._get_many(ids, final=final)


async def test_a_watcher_reads_no_other_harness_question(postgres: object) -> None:
    """Another harness's questions, asked and answered, cost a watcher no read; a question of
    another harness it waits on (attached by key) still settles its waiter, and a late answer
    for its own harness is still handed over."""
    url = postgres.new_database()  # type: ignore[attr-defined]
    writer = open_inbox(url)
    store = open_inbox(url)
    reads = _Reads(store)
    late: list[QuestionRecord] = []
    watcher = Watcher(store, harness="a", on_late_answer=late.append)
    try:
        waited = writer.add(PKG, harness="c")  # e.g. asked by key from another harness
        mine = writer.add(PKG, harness="a")
        assert writer.settle(mine.id, State.WITHDRAWN, surface="harness")
        future = watcher.watch(waited.id)
        await until(lambda: reads.ids, "the watcher's first read (its resync)")
        reads.ids.clear()
        others = [writer.add(PKG, harness="b") for _ in range(3)]
        for record in others:
            writer.answer(record.id, pick("npm"), surface="cli")
        writer.answer(waited.id, pick("npm"), surface="cli")
        settled = await asyncio.wait_for(future, 30)
        assert settled.id == waited.id
        assert settled.state is State.ANSWERED
        writer.answer(mine.id, pick("pnpm"), surface="cli")  # late: mine was withdrawn
        await until(lambda: late, "the late answer")
        assert [record.id for record in late] == [mine.id]
        assert late[0].late_answer == pick("pnpm")
        assert not {record.id for record in others} & set(reads.ids)
        assert set(reads.ids) <= {waited.id, mine.id}
    finally:
        watcher.close()
        writer.close()
        store.close()


async def test_a_watcher_on_sqlite_still_hears_every_change(tmp_path: Path) -> None:
    """SQLite's listener is unchanged (it hears every change): a waiter on another harness's
    question settles, and a late answer for the watcher's harness is handed over."""
    url = f"sqlite:///{tmp_path / 'inbox.db'}"
    store = open_inbox(url)
    writer = open_inbox(url)
    late: list[QuestionRecord] = []
    watcher = Watcher(store, harness="a", on_late_answer=late.append)
    try:
        waited = writer.add(PKG, harness="c")
        mine = writer.add(PKG, harness="a")
        assert writer.settle(mine.id, State.EXPIRED, surface="deadline")
        future = watcher.watch(waited.id)
        writer.answer(waited.id, pick("npm"), surface="cli")
        assert (await asyncio.wait_for(future, 30)).state is State.ANSWERED
        writer.answer(mine.id, pick("npm"), surface="cli")
        await until(lambda: late, "the late answer")
        assert [record.id for record in late] == [mine.id]
    finally:
        watcher.close()
        writer.close()
        store.close()
