"""A model-based test of the inbox that hunts for the next loss (Hypothesis's state machines).

`InboxMachine` drives, in any order Hypothesis chooses: durable calls asking keys (through the
path every durable adapter takes, `tool.durable_key` and ``run_durable``) from two harnesses
(so two live harnesses may ask one key: leases), plain questions and secrets, live asks,
answers from three surfaces (`Inbox.answer` in code, ``dsh-inbox answer``, the page's
``POST /<token>/answer``), plan reviews of an audience that two people must approve
(approvals and feedback from people in it and out of it), the human closing a question, clean
restarts (the asks cancelled, the provider closed; the run asks its key again or resumes its
question), kills (the process gone without a word: nothing it holds reaches the store again,
its lease stays live as on another host), pruning, and (SQLite) store faults: the file
emptied in place (``: > inbox.db``) or replaced with its old ``-wal`` beside it. After every
step it checks:

1. every answer reached one asker at most (one durable call, however often it asks its key
   again), and the right one: the call or ask whose question the human answered;
2. no durable call is handed an error as its result (a refusal is an outcome, never the
   model's answer), and no valid answer is refused;
3. no surface says something false: ``dsh-inbox answer`` says "its asker received the answer"
   only when a live asker did, the page accepts only an answer the question took;
4. no secret in clear at rest (the store's files and rows are searched for each secret text);
5. nothing waits forever: every wait is bounded, and an ask on a broken store ends within
   10 s (``STORE_UNUSABLE``); no command writes the old WAL into the new file;
6. a review that two must approve returns approved only once two distinct people of its
   audience approved it (its log names both, the settling answer's ``answered_by`` is the
   second), and an outsider's answer never reaches its asker.

Budgets: CI runs a derandomized, fixed budget (`CI_EXAMPLES` examples of up to `CI_STEPS`
steps on SQLite, `CI_EXAMPLES_POSTGRESQL` on PostgreSQL). A long random hunt on demand::

    DSH_INBOX_HUNT=2000 python -m pytest tests/provider/test_stateful.py -k machine

(``DSH_INBOX_HUNT`` is the number of random examples, of up to 40 steps each; a failure is
shrunk to its shortest sequence). CI reports a failing sequence as found, unshrunk. Every
sequence the hunt finds is kept below as a plain test replaying it (``test_found_*``).
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import io
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest
from _postgres import PostgresServer
from _requests import LOGIN
from dsh_user_questions import AskUserQuestionRequest, UserQuestionError, plugin, tool
from dsh_user_questions.adapters._common import KEEP_PENDING, run_durable
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.plan_review import PLAN_REVIEW_ID, plan_review_question
from dsh_user_questions.rules import SECRET_PLACEHOLDER
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from dsh_user_questions_inbox import State, cli, open_inbox
from dsh_user_questions_inbox import _board as board_module
from dsh_user_questions_inbox._board import InboxBoard
from dsh_user_questions_inbox.provider import AlreadyDelivered, InboxProvider

CI_EXAMPLES = 20  # on SQLite; PostgreSQL's examples cost more (a database each)
CI_EXAMPLES_POSTGRESQL = 8
CI_STEPS = 20
HUNT = int(os.environ.get("DSH_INBOX_HUNT", "0") or 0)
# How long any wait of the model lasts before it is a failure (an ask that never ends, a
# question that never appears): nothing in this test waits without a bound.
BOUND = 10.0
# The surfaces' wait for the asker's receipt, shortened (an asker that waits takes an answer in
# milliseconds; only "nobody waits" runs the whole wait).
RECEIPT_SECONDS = 0.4
# Steps before a store fault may come.
FAULT_AFTER = 6
# The time limit some durable calls ask with (``ask(timeout=...)``).
TIMEOUT = 0.5

RUNS = ("t", "t:1")  # thread ids, one holding the key's separator
CALLS = ("c", "1:c", "s", "1:s")  # tool call ids; those ending in "s" ask a secret
PLAIN = {"questions": [{"id": "q", "question": "Which way?", "options": [
    {"label": "left"}, {"label": "right"}]}]}  # fmt: skip
SECRET = {"questions": [{"id": "token", "question": "The deploy token?", "secret": True}]}
# A plan review two of its audience must approve; the login (``dsh-inbox answer``) is in it.
REVIEWERS = (LOGIN, "ana", "bo")
REVIEW: dict[str, Any] = {
    "questions": [
        {
            **plan_review_question("# Deploy\n\n1. Migrate").to_dict(),
            "intent": {"kind": "plan-review", "approve": "Approve", "approvals": 2},
        }
    ],
    "audience": list(REVIEWERS),
}
# Who answers in code: two reviewers, and someone outside the audience.
PEOPLE = ("ana", "bo", "dee")
TOKEN = "page-token"
HOST = "127.0.0.1:8765"
_KEEPS_PENDING = (*KEEP_PENDING, AlreadyDelivered)
# The errors a durable call may be handed as its result: its question's own ending (closed by
# the human, or expired); when its record is gone (pruned once final), the code alone.
_GENUINE = {("ASK_CANCELLED", State.CANCELLED), ("ASK_TIMED_OUT", State.EXPIRED)}
_ENDINGS = {"ASK_CANCELLED", "ASK_TIMED_OUT"}
# What the runs of this process did and checked (printed by the machine tests: ``-s``).
TALLY: collections.Counter[str] = collections.Counter()


def _answer_text(n: int, secret: bool) -> str:
    return f"secret-{n}-\u00e9Z" if secret else f"ans-{n}"


def _number(text: str) -> int:
    return int(text.split("-")[1])


class _Loop:
    """An event loop in a thread of its own: the harnesses' asks run there while the steps
    (the human, the faults) run in the test's thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="stateful-loop")
        self._thread.start()

    def submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, coro: Coroutine[Any, Any, Any], what: str) -> Any:
        future = self.submit(coro)
        try:
            return future.result(BOUND)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise AssertionError(f"{what} did not end within {BOUND:g} s") from None

    def close(self) -> None:
        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks, timeout=BOUND) if tasks else None

        with contextlib.suppress(Exception):
            self.submit(cancel_all()).result(BOUND * 2)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.run_until_complete(self.loop.shutdown_default_executor())
        self.loop.close()


class _Gone:
    """The store as a killed process sees it: it is gone, so nothing it still held (a write,
    a receipt, a release) reaches the store after the kill."""

    def _gone(self, *_args: object, **_kwargs: object) -> Any:
        raise UserQuestionError.store_unusable("this harness was killed")

    write = write_many = read = listen = check = _gone

    def close(self) -> None:
        return None


@attrs.define(eq=False)
class _Harness:
    slot: int
    label: str
    generation: int
    ctx: HarnessContext
    provider: InboxProvider


@attrs.define(eq=False)
class _Ask:
    """One ask in flight: ``name`` is its asker as the model knows it (a durable call is its
    thread and call ids, ``t:1/c``; a live ask ``live#2``), so an answer reaching it is checked
    against the asker of the question the human answered."""

    name: str
    how: str  # "durable", "live", "review" or "resume"
    harness: _Harness
    future: concurrent.futures.Future[Any]
    secrets: dict[str, str]
    key: str | None = None
    record: str | None = None
    dead: bool = False
    cancelled: bool = False
    checked: bool = False
    timed: bool = False  # asked with a time limit: it may run out before the fault is seen


class InboxMachine(RuleBasedStateMachine):
    """The inbox, its askers, its surfaces and its faults (see the module's docstring)."""

    askers = Bundle("askers")

    def __init__(self, new_url: Callable[[], str] | None = None) -> None:
        super().__init__()
        TALLY["examples"] += 1
        self._dir = Path(tempfile.mkdtemp(prefix="dsh-stateful-"))
        self.db = self._dir / "inbox.db"
        self.url = new_url() if new_url is not None else f"sqlite:///{self.db}"
        self.sqlite = self.url.startswith("sqlite:")
        self.loop = _Loop()
        self.inbox = open_inbox(self.url)  # the human's surfaces
        self.page = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=_page_app(self.inbox)), base_url=f"http://{HOST}"
        )
        self.harnesses = [self._start(slot, 0) for slot in range(2)]
        self.corpses: list[_Harness] = []  # killed: closed at the end only
        self._engines: list[Any] = []  # the killed harnesses' connections, closed at the end
        self.asks: list[_Ask] = []
        self.owner: dict[str, str] = {}  # record id -> the asker whose question it is
        self.given: dict[int, tuple[str, str]] = {}  # answer number -> (record id, surface)
        self.givers: dict[int, str] = {}  # answer number -> who gave it
        self.approvals: set[int] = set()  # answer numbers that approve a review (no text)
        self.receivers: dict[int, set[str]] = {}  # answer number -> askers it reached
        self.claims: dict[int, str] = {}  # answer number -> surface that said "received"
        self.secrets: list[str] = []
        self.broken: str | None = None
        self.live_asks = 0
        self.answers = 0
        self.steps = -1  # the invariants are checked once before the first step

    # Harnesses -----------------------------------------------------------------------------

    def _start(self, slot: int, generation: int) -> _Harness:
        ctx = HarnessContext()
        ctx.register(plugin)
        label = f"harness-{slot}"
        provider = InboxProvider(self.url, harness=label)
        ctx.user_questions.register_provider(provider)
        return _Harness(slot, label, generation, ctx, provider)

    def _asks_of(self, harness: _Harness) -> list[_Ask]:
        return [a for a in self.asks if a.harness is harness and not a.future.done()]

    def _settled_in(self, ask: _Ask) -> None:
        """Wait until ``ask`` ended or waits on its question (its record is written and taken
        by its provider), so the next step meets it where a person would."""
        deadline = time.monotonic() + BOUND
        while not ask.future.done():
            record = self._record_of_ask(ask)
            if record is not None and record in ask.harness.provider._inflight:
                return
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the ask of {ask.name} neither waited on its question nor ended within"
                    f" {BOUND:g} s"
                )
            time.sleep(0.005)

    def _record_of_ask(self, ask: _Ask) -> str | None:
        if ask.record is not None:
            return ask.record
        if ask.key is not None:
            found = self.inbox.by_key(ask.key)
            return None if found is None else found.id
        return None

    # Askers --------------------------------------------------------------------------------

    @precondition(lambda self: self.broken is None)
    @rule(
        target=askers,
        harness=st.integers(0, 1),
        run=st.sampled_from(RUNS),
        call=st.sampled_from(CALLS),
        answer_now=st.sampled_from([None, "code", "cli", "page"]),
        timeout=st.sampled_from([None, TIMEOUT]),
    )
    def ask(
        self,
        harness: int,
        run: str,
        call: str,
        answer_now: str | None = None,
        timeout: float | None = None,
    ) -> str:
        """A durable call (LangGraph's thread ``run``, tool call ``call``) asks its key, as
        every durable adapter does, with ``timeout`` seconds to be answered (``None``: no
        limit); ``answer_now``: the human answers the moment the question appears, through
        that surface."""
        name = f"{run}/{call}"
        secret = call.endswith("s")
        key = tool.durable_key("langgraph", run, call)
        taker = self.harnesses[harness]
        texts: dict[str, str] = {}
        arguments = SECRET if secret else PLAIN
        future = self.loop.submit(
            run_durable(
                taker.ctx,
                arguments,
                key,
                agent=None,
                signal=None,
                on_secrets=lambda _name, given: texts.update(given),
                timeout=timeout,
            )
        )
        ask = _Ask(name, "durable", taker, future, texts, key=key, timed=timeout is not None)
        self.asks.append(ask)
        if answer_now is not None:
            found = self._appears(ask)
            if found is not None:
                self.owner.setdefault(found, name)
                self._answer(found, answer_now, secret=secret)
        self._settled_in(ask)
        found = self._record_of_ask(ask)
        if found is not None:
            self.owner.setdefault(found, name)
            ask.record = found  # the key's record from now on: its outcome is this ask's
        return name

    def _appears(self, ask: _Ask) -> str | None:
        """The id of the key's record as soon as it is in the store (``None``: the ask ended
        first)."""
        deadline = time.monotonic() + BOUND
        while not ask.future.done():
            found = self._record_of_ask(ask)
            if found is not None:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"the question of {ask.name} never reached the store")
        return self._record_of_ask(ask)

    @precondition(lambda self: self.broken is None)
    @rule(target=askers, harness=st.integers(0, 1))
    def ask_live(self, harness: int) -> str:
        """A live tool call (no key) asks a plain question."""
        name = f"live#{self.live_asks}"
        self.live_asks += 1
        taker = self.harnesses[harness]
        before = {r.id for r in self.inbox.records()}
        future = self.loop.submit(tool.run(taker.ctx, PLAIN))
        ask = _Ask(name, "live", taker, future, {})
        self.asks.append(ask)
        self._recorded(ask, before)
        return name

    def _recorded(self, ask: _Ask, before: set[str]) -> None:
        """Wait (within BOUND) for ``ask``'s question to reach the store, the one record not in
        ``before``, unless the ask ended first; then see whether it settled."""
        deadline = time.monotonic() + BOUND
        while ask.record is None and not ask.future.done():
            new = [r.id for r in self.inbox.records() if r.id not in before]
            if new:
                (ask.record,) = new
                self.owner[ask.record] = ask.name
            elif time.monotonic() > deadline:
                raise AssertionError(f"the question of {ask.name} never reached the store")
            else:
                time.sleep(0.005)
        self._settled_in(ask)

    @precondition(lambda self: self.broken is None)
    @rule(target=askers, harness=st.integers(0, 1))
    def ask_review(self, harness: int) -> str:
        """A harness asks for a plan review that two of its audience must approve."""
        name = f"review#{self.live_asks}"
        self.live_asks += 1
        TALLY["reviews asked"] += 1
        taker = self.harnesses[harness]
        before = {r.id for r in self.inbox.records()}
        request = AskUserQuestionRequest.from_dict(REVIEW)
        future = self.loop.submit(taker.ctx.user_questions.ask(request))
        ask = _Ask(name, "review", taker, future, {})
        self.asks.append(ask)
        self._recorded(ask, before)
        return name

    @precondition(lambda self: self.broken is None)
    @rule(harness=st.integers(0, 1))
    def resume(self, harness: int) -> None:
        """A restarted harness resumes its live questions still undelivered (`Inbox.undelivered`):
        each one's asker waits for it again."""
        taker = self.harnesses[harness]
        waited = {a.record for a in self._asks_of(taker)}
        for record in self.inbox.undelivered(harness=taker.label):
            if record.key is not None or record.id in waited:
                continue  # a durable call asks its key again instead
            future = self.loop.submit(taker.ctx.user_questions.resume(record.id))
            ask = _Ask(self.owner.get(record.id, "?"), "resume", taker, future, {})
            ask.record = record.id
            self.asks.append(ask)
            self._settled_in(ask)

    @precondition(lambda self: self.broken is None)
    @rule(harness=st.integers(0, 1))
    def restart(self, harness: int) -> None:
        """The harness stops cleanly (SIGINT: its asks are cancelled, its provider closes) and
        starts again with the same label."""
        old = self.harnesses[harness]
        for ask in self._asks_of(old):
            ask.cancelled = True
            ask.future.cancel()
        self.loop.call(_close(old), f"closing {old.label}")
        self.harnesses[harness] = self._start(harness, old.generation + 1)

    @precondition(lambda self: self.broken is None)
    @rule(harness=st.integers(0, 1))
    def kill(self, harness: int) -> None:
        """The harness is killed (kill -9, on another host as far as its lease goes): nothing
        it holds reaches the store again; a new process of the same label starts."""
        old = self.harnesses[harness]
        old.provider._watcher.close()  # its thread stops: no heartbeat, no wake-up
        self._engines.append(old.provider.inbox._engine)
        old.provider.inbox._engine = _Gone()  # type: ignore[assignment]
        for ask in self._asks_of(old):
            ask.dead = True
        self.corpses.append(old)
        self.harnesses[harness] = self._start(harness, old.generation + 1)

    @precondition(lambda self: self.broken is None and self.corpses)
    @rule()
    def leases_go_stale(self) -> None:
        """The killed harnesses' leases go stale (their heartbeats made older than the 30 s a
        lease lives: the time passing, without waiting for it), so their keys are free."""
        holders = [corpse.provider._holder for corpse in self.corpses]
        names = ", ".join(f":h{n}" for n in range(len(holders)))
        self.inbox._engine.write(
            f"UPDATE dsh_inbox_leases SET beat = beat - 3600 WHERE holder IN ({names})",
            {f"h{n}": holder for n, holder in enumerate(holders)},
        )

    # The human -----------------------------------------------------------------------------

    def _latest(self, whose: str) -> str | None:
        """The question of ``whose`` a person would answer: its pending one, else its latest."""
        mine = [r for r in self.inbox.records() if self.owner.get(r.id) == whose]
        pending = [r for r in mine if r.state is State.PENDING]
        chosen = (pending or mine or [None])[-1]
        return None if chosen is None else chosen.id

    @precondition(lambda self: self.broken is None)
    @rule(
        whose=askers,
        surface=st.sampled_from(["code", "cli", "page"]),
        person=st.sampled_from(PEOPLE),
        approve=st.booleans(),
    )
    def answer(self, whose: str, surface: str, person: str = "ana", approve: bool = False) -> None:
        """The human answers the question of ``whose`` through ``surface`` (in code as
        ``person``; a review: approving it, or with feedback)."""
        found = self._latest(whose)
        if found is not None:
            self._answer(
                found, surface, secret=whose.split("/")[-1].endswith("s"), person=person,
                approve=approve,
            )  # fmt: skip

    def _answer(
        self, record: str, surface: str, *, secret: bool, person: str = "ana",
        approve: bool = False,
    ) -> None:  # fmt: skip
        self._give(record, surface, secret=secret, person=person, approve=approve)
        self._takers_end(record)

    def _takers_end(self, record: str) -> None:
        """Once ``record`` is answered or closed, every live ask waiting on it ends (within
        the bound): the check of what each got then runs at this very step."""
        stored = self.inbox.get(record)
        if stored is None or stored.state not in (State.ANSWERED, State.CANCELLED):
            return
        takers = [
            a for a in self.asks
            if not (a.dead or a.cancelled or a.future.done()) and self._record_of_ask(a) == record
        ]  # fmt: skip
        concurrent.futures.wait([a.future for a in takers], timeout=BOUND)
        TALLY["asks waiting on a settled question checked to end"] += len(takers)
        still = [a.name for a in takers if not a.future.done()]
        assert not still, (
            f"the question of {self.owner.get(record)} is {stored.state.value}, but the asks of"
            f" {still} waiting on it still wait after {BOUND:g} s"
        )

    def _give(
        self, record: str, surface: str, *, secret: bool, person: str = "ana",
        approve: bool = False,
    ) -> None:  # fmt: skip
        n = self.answers
        self.answers += 1
        text = _answer_text(n, secret)
        if secret:
            self.secrets.append(text)
        answer: dict[str, Any] = {"answers": [{"id": "token" if secret else "q", "custom": text}]}
        review = self.owner.get(record, "").startswith("review#")
        if review:
            item: dict[str, Any] = {"id": PLAN_REVIEW_ID, "selected": ["Approve"]}
            answer = {"answers": [item if approve else {"id": PLAN_REVIEW_ID, "custom": text}]}
        if review and approve:
            self.approvals.add(n)
        self.given[n] = (record, surface)
        self.givers[n] = LOGIN if surface == "cli" else person if surface == "code" else "token"
        if surface == "code":
            try:
                self.inbox.answer(record, answer, surface="code", by=person)
            except UserQuestionError as error:
                if error.code == "BAD_ANSWER":
                    raise AssertionError(
                        f"a valid answer to {self.owner.get(record)}'s question was refused:"
                        f" {error.message}"
                    ) from error
                raise
            return
        if surface == "cli":
            status, out, err = _cli("--inbox", self.url, "answer", record, stdin=json.dumps(answer))
            assert status != cli.EXIT_INVALID, (
                f"dsh-inbox answer refused a valid answer to {self.owner.get(record)}'s question:"
                f" {err.strip()}"
            )
            if "its asker received the answer" in out:
                self.claims[n] = "dsh-inbox answer"
            return
        response = self.loop.call(
            self.page.post(
                f"/{TOKEN}/answer",
                json={"id": record, "answer": answer},
                headers={"origin": f"http://{HOST}"},
            ),
            "the page's answer",
        )
        assert response.status_code != 422, (
            f"the page refused a valid answer to {self.owner.get(record)}'s question:"
            f" {response.text}"
        )
        if response.status_code == 200:
            stored = self.inbox.get(record)
            state = None if stored is None else stored.state
            assert state is State.ANSWERED, f"the page said {response.json()}; it is {state}"

    @precondition(lambda self: self.broken is None)
    @rule(whose=askers)
    def close_question(self, whose: str) -> None:
        """The human closes the question of ``whose`` (``dsh-inbox cancel``)."""
        found = self._latest(whose)
        if found is not None:
            _cli("--inbox", self.url, "cancel", found)
            self._takers_end(found)

    @precondition(lambda self: self.broken is None)
    @rule()
    def prune(self) -> None:
        """``dsh-inbox prune --older-than 0``: every final record already delivered goes."""
        status, _out, err = _cli("--inbox", self.url, "prune", "--older-than", "0")
        assert status == 0, err

    # Store faults (SQLite) -----------------------------------------------------------------

    # A fault ends what else an example can do: it comes after a few steps of asking and answering.
    @precondition(lambda self: self.broken is None and self.sqlite and self.steps >= FAULT_AFTER)
    @rule(how=st.sampled_from(["emptied", "replaced"]))
    def break_store(self, how: str) -> None:
        """The SQLite file is emptied in place (``: > inbox.db``), or replaced by another
        inbox's file with its old ``-wal`` left beside it. Every ask waiting on it ends within
        10 s with ``STORE_UNUSABLE``; no command writes the old WAL into the new file."""
        self.broken = how
        TALLY[f"store {how}"] += 1
        # The asks that ended since the last check (a time limit) are checked now, while their
        # records can still be read; every other one is waiting, and the fault must end it.
        self._check_ended()
        waiting = [a for a in self.asks if not a.dead and not a.future.done()]
        if how == "emptied":
            with open(self.db, "r+b") as file:
                file.truncate(0)
        else:
            other = self._dir / "other.db"
            open_inbox(f"sqlite:///{other}").close()
            os.replace(other, self.db)
        deadline = time.monotonic() + BOUND
        concurrent.futures.wait([a.future for a in waiting], timeout=BOUND)
        still = [a.name for a in waiting if not a.future.done()]
        assert not still, (
            f"after the store was {how}, the asks of {still} still wait"
            f" ({time.monotonic() - deadline + BOUND:.1f} s later)"
        )
        for ask in waiting:
            error = ask.future.exception()
            result = None if error is not None else ask.future.result()
            code = getattr(error, "code", None) or (result.error or {}).get("code")
            # A time limit that runs out before the watcher sees the fault is that ask's true
            # outcome (a loaded machine takes longer to notice); anything else is not.
            allowed = ("STORE_UNUSABLE", "ASK_TIMED_OUT") if ask.timed else ("STORE_UNUSABLE",)
            assert code in allowed, (
                f"after the store was {how}, the ask of {ask.name} ended with"
                f" {error!r}" + ("" if result is None else f" {result.content!r}")
            )
            ask.checked = True
        if how == "replaced":
            assert not self._old_records(), "the old WAL was written into the new file"
            _cli("--inbox", self.url, "list")
            rows = self._old_records()
            assert not rows, (
                f"dsh-inbox list wrote {rows} records of the old store's WAL into the new file"
            )

    def _old_records(self) -> int:
        """How many records the SQLite file itself holds (read from a copy of the file alone,
        so no WAL beside it is read)."""
        alone = self._dir / "alone"
        alone.mkdir(exist_ok=True)
        shutil.copyfile(self.db, alone / "copy.db")
        with contextlib.closing(sqlite3.connect(alone / "copy.db")) as conn:
            count: int = conn.execute("SELECT COUNT(*) FROM dsh_inbox_questions").fetchone()[0]
        return count

    @precondition(lambda self: self.broken is not None)
    @rule(harness=st.integers(0, 1), call=st.sampled_from(CALLS))
    def ask_broken_store(self, harness: int, call: str) -> None:
        """A durable call asks on the broken store: it ends within 10 s, ``STORE_UNUSABLE``
        raised (the call stays pending), never an answer or an error handed to the model."""
        future = self.loop.submit(
            run_durable(
                self.harnesses[harness].ctx,
                SECRET if call.endswith("s") else PLAIN,
                tool.durable_key("langgraph", "t", call),
                agent=None,
                signal=None,
                on_secrets=None,
            )
        )
        try:
            error = future.exception(BOUND)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise AssertionError(
                f"an ask on the {self.broken} store still waits after {BOUND:g} s"
            ) from None
        assert getattr(error, "code", None) == "STORE_UNUSABLE", (
            f"an ask on the {self.broken} store ended with {error!r}"
            + ("" if error is not None else f": {future.result().content!r}")
        )

    # Invariants ----------------------------------------------------------------------------

    @invariant()
    def every_outcome_is_true(self) -> None:
        """Check each ask that ended, each "received" said, and the store's files."""
        TALLY["invariant checks (after setup and each step)"] += 1
        self.steps += 1
        self._check_ended()
        for n, surface in list(self.claims.items()):
            self._check_received(n, surface)
            del self.claims[n]
        self._no_secret_at_rest()

    def _check_ended(self) -> None:
        """Check each ask that ended and was not checked yet."""
        for ask in self.asks:
            if ask.future.done() and not ask.checked:
                ask.checked = True
                self._check_outcome(ask)

    def _check_outcome(self, ask: _Ask) -> None:
        TALLY["outcomes checked"] += 1
        if ask.dead or ask.cancelled or ask.future.cancelled():
            return
        error = ask.future.exception()
        if error is not None:
            if ask.how == "durable" and isinstance(error, _KEEPS_PENDING):
                return  # the call stays pending: the run asks its key again later
            if ask.how == "resume" and isinstance(error, (UserQuestionError, LookupError)):
                return  # an ending that is an error, as ask() raised it
            if ask.how == "review" and isinstance(error, UserQuestionError):
                return  # closed, withdrawn, a broken store: as ask() raises it
            raise AssertionError(f"the ask of {ask.name} failed with {error!r}") from error
        result = ask.future.result()
        if ask.how == "review":
            self._check_review(ask, result)
            answered = result.to_dict()["answers"]
        elif ask.how == "resume":
            answered = result.to_dict()["answers"]
        elif result.is_error:
            code = (result.error or {}).get("code")
            record = self.inbox.get(ask.record) if ask.record else self.inbox.by_key(ask.key or "")
            state = None if record is None else record.state
            genuine = (code, state) in _GENUINE or (code in _ENDINGS and record is None)
            # Answered as the time ran out: the time limit is this ask's outcome, and the answer
            # was received by nobody, or by another ask of the same call (asked again meanwhile).
            if code == "ASK_TIMED_OUT" and state is State.ANSWERED:
                genuine = not record.received_at or any(  # type: ignore[union-attr]
                    other is not ask and other.name == ask.name and other.future.done()
                    for other in self.asks
                )
            if ask.how == "durable":
                assert genuine, (
                    f"the durable call {ask.name} was handed an error as its result (its"
                    f" question is {state}): {result.content!r}; {record}"
                )
            return
        else:
            answered = json.loads(result.content)["answers"]
            assert not any(s in result.content for s in self.secrets), (
                f"a secret reached the model's text of {ask.name}: {result.content!r}"
            )
        texts = [a.get("custom") for a in answered] + list(ask.secrets.values())
        for text in texts:
            if text is None or text == SECRET_PLACEHOLDER:
                continue
            n = _number(text)
            record, surface = self.given[n]
            whose = self.owner.get(record)
            assert whose == ask.name, (
                f"answer {n} (given by {surface} to the question of {whose}) reached {ask.name}"
            )
            TALLY["answers checked against their asker"] += 1
            if whose is not None and whose.startswith("review#"):
                assert self.givers[n] in REVIEWERS, (
                    f"answer {n}, given by {self.givers[n]} outside the review's audience,"
                    f" reached {ask.name}"
                )
            reached = self.receivers.setdefault(n, set())
            reached.add(ask.name)

    def _check_review(self, ask: _Ask, result: Any) -> None:
        """A review returned approved only after two distinct people of its audience approved
        it; the settling answer is the second approver's."""
        items = result.to_dict()["answers"]
        if not (items and items[0].get("selected") == ["Approve"]):
            return
        assert ask.record is not None
        approvers = [e.by for e in self.inbox.events(ask.record) if e.event == "approved"]
        if not approvers and self.inbox.get(ask.record) is None:
            return  # pruned since: its log went with it
        TALLY["reviews checked to be approved by two"] += 1
        assert len(set(approvers)) == len(approvers) == 2, (
            f"the review of {ask.name} returned approved; its approvers: {approvers}"
        )
        assert set(approvers) <= set(REVIEWERS), approvers
        assert result.answered_by == approvers[-1], (result.answered_by, approvers)
        # The settling approval (it has no text to number it by) reached this asker.
        for n, (record, _surface) in self.given.items():
            if record == ask.record and n in self.approvals and self.givers[n] == approvers[-1]:
                self.receivers.setdefault(n, set()).add(ask.name)

    def _check_received(self, n: int, surface: str) -> None:
        """``surface`` said answer ``n`` was received: a live asker has it (within the bound)."""
        TALLY['"received" claims checked'] += 1
        deadline = time.monotonic() + BOUND
        while True:
            for ask in self.asks:
                if ask.future.done() and not ask.checked:
                    ask.checked = True
                    self._check_outcome(ask)
            if n in self.receivers:
                return
            if time.monotonic() > deadline:
                record, _ = self.given[n]
                raise AssertionError(
                    f"{surface} said the asker received answer {n} (to the question of"
                    f" {self.owner.get(record)}), but no live asker did"
                )
            time.sleep(0.01)

    def _no_secret_at_rest(self) -> None:
        if not self.secrets:
            return
        TALLY["secret searches at rest"] += 1
        if self.sqlite:
            for path in self._dir.glob("*.db*"):
                data = path.read_bytes()
                for text in self.secrets:
                    assert text.encode() not in data, f"the secret {text!r} is in clear in {path}"
        else:
            rows = json.dumps([r.to_dict() for r in self.inbox.records()], ensure_ascii=False)
            for text in self.secrets:
                assert text not in rows, f"the secret {text!r} is in clear in the store"

    def teardown(self) -> None:
        try:
            for corpse in self.corpses:  # a killed process never closes: its threads just stop
                corpse.provider._work.shutdown(wait=False, cancel_futures=True)
            for harness in self.harnesses + self.corpses:
                for ask in self._asks_of(harness):
                    ask.cancelled = True
                    ask.future.cancel()
            for harness in self.harnesses:
                with contextlib.suppress(Exception):
                    self.loop.call(_close(harness), f"closing {harness.label}")
            for corpse in self.corpses:
                with contextlib.suppress(Exception):
                    self.loop.call(corpse.ctx.aclose(grace=1.0), f"dropping {corpse.label}")
            with contextlib.suppress(Exception):
                self.loop.call(self.page.aclose(), "closing the page's client")
        finally:
            self.loop.close()
            for engine in self._engines:
                engine.close()
            self.inbox.close()
            shutil.rmtree(self._dir, ignore_errors=True)


async def _close(harness: _Harness) -> None:
    await asyncio.to_thread(harness.provider.close)
    await harness.ctx.aclose(grace=1.0)


def _page_app(inbox: Any) -> Any:
    from dsh_user_questions_web.app import create_app

    return create_app(InboxBoard(inbox, surface="page"), token=TOKEN, allowed_hosts=lambda: {HOST})


_STDIO = threading.Lock()


def _cli(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    """``dsh-inbox ARGV`` in this process: its exit status, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with _STDIO, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        saved, sys.stdin = sys.stdin, io.StringIO(stdin)
        try:
            status = cli.main(list(argv))
        finally:
            sys.stdin = saved
    return status, out.getvalue(), err.getvalue()


# Running it ----------------------------------------------------------------------------------

# No "explain" phase: it traces every line the store runs, for minutes. CI does not shrink
# either (a failure is reported as found, at once: shrinking a hang costs the bound per try).
if HUNT:
    SETTINGS = settings(
        phases=(Phase.generate, Phase.shrink),
        max_examples=HUNT,
        stateful_step_count=40,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
else:
    SETTINGS = settings(
        phases=(Phase.explicit, Phase.generate),
        derandomize=True,
        database=None,
        max_examples=CI_EXAMPLES,
        stateful_step_count=CI_STEPS,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )


@pytest.fixture
def machine_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The seal keys in the test's own state folder; the surfaces' receipt wait shortened."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("DSH_USER_QUESTIONS_NOTIFY", raising=False)
    monkeypatch.setattr(cli, "RECEIPT_SECONDS", RECEIPT_SECONDS)
    monkeypatch.setattr(board_module, "RECEIPT_SECONDS", RECEIPT_SECONDS)


def _run(factory: Callable[[], InboxMachine], engine: str, examples: int = CI_EXAMPLES) -> None:
    TALLY.clear()
    started = time.monotonic()
    chosen = SETTINGS if HUNT else settings(SETTINGS, max_examples=examples)
    run_state_machine_as_test(factory, settings=chosen)
    print(f"\n{engine}: {time.monotonic() - started:.1f} s", *sorted(TALLY.items()), sep="\n  ")


def test_machine_on_sqlite(machine_env: None) -> None:
    """The inbox on SQLite keeps every invariant in every sequence tried."""
    _run(InboxMachine, "SQLite")


def test_machine_on_postgresql(machine_env: None, postgres: PostgresServer) -> None:
    """The inbox on PostgreSQL keeps every invariant in every sequence tried (no file faults)."""
    _run(lambda: InboxMachine(postgres.new_database), "PostgreSQL", CI_EXAMPLES_POSTGRESQL)


# Sequences the hunt found --------------------------------------------------------------------
# Each test replays, step for step, a sequence Hypothesis found and shrank (the invariants are
# checked after each step, as in the hunt). Those marked "07db131" failed on that commit (the
# defects of issue 35) and are kept as regression tests.


@contextlib.contextmanager
def _machine(new_url: Callable[[], str] | None = None) -> Iterator[InboxMachine]:
    state = InboxMachine(new_url)
    try:
        state.every_outcome_is_true()
        yield state
    finally:
        state.teardown()


def test_found_a_lease_refusal_is_never_the_models_answer(machine_env: None) -> None:
    """07db131: a second live harness asking a key the first one waits on was handed the
    refusal ("being asked by another live harness", BAD_QUESTION) as the call's result."""
    with _machine() as state:
        state.ask(harness=0, run="t", call="c")
        state.every_outcome_is_true()
        state.ask(harness=1, run="t", call="c")
        state.every_outcome_is_true()


def test_found_a_restart_within_the_lease_is_not_handed_the_refusal(machine_env: None) -> None:
    """07db131: a harness killed (its lease still live, as on another host) and started
    again asks its key: the restarted run was handed the refusal as the call's result."""
    with _machine() as state:
        state.ask(harness=0, run="t", call="c")
        state.every_outcome_is_true()
        state.kill(harness=0)
        state.every_outcome_is_true()
        state.ask(harness=0, run="t", call="c")
        state.every_outcome_is_true()


def test_found_ids_holding_the_separator_never_share_a_key(machine_env: None) -> None:
    """07db131: thread ``t`` + call ``1:c`` and thread ``t:1`` + call ``c`` made one key
    (``langgraph:t:1:c``): the second run attached to the first's question and got its
    answer."""
    with _machine() as state:
        first = state.ask(harness=0, run="t", call="1:c")
        state.every_outcome_is_true()
        state.ask(harness=0, run="t:1", call="c")
        state.every_outcome_is_true()
        state.answer(whose=first, surface="code")
        state.every_outcome_is_true()


def test_found_a_keyed_secret_answered_at_once_is_sealed(machine_env: None) -> None:
    """07db131: a keyed secret answered the moment its question appears was refused ("its
    asker left no key to seal it to"): its record was written before its sealing key. Three
    keys, each answered at once (the race was lost most times, not every time)."""
    with _machine() as state:
        for run, call in (("t", "s"), ("t:1", "s"), ("t:1", "1:s")):
            state.ask(harness=0, run=run, call=call, answer_now="code")
            state.every_outcome_is_true()


def test_found_an_ask_on_an_emptied_store_ends(machine_env: None) -> None:
    """07db131: the SQLite file emptied in place (``: > inbox.db``) under a waiting ask: the
    ask waited forever."""
    with _machine() as state:
        state.ask_live(harness=0)
        state.every_outcome_is_true()
        state.break_store(how="emptied")
        state.every_outcome_is_true()


def test_found_a_replaced_store_never_takes_the_old_wal(machine_env: None) -> None:
    """07db131: the SQLite file replaced by another inbox's, its old ``-wal`` left beside it:
    the old WAL's records were written into the new file."""
    with _machine() as state:
        state.ask_live(harness=0)
        state.every_outcome_is_true()
        state.break_store(how="replaced")
        state.every_outcome_is_true()


def test_a_review_two_must_approve_through_every_surface(machine_env: None) -> None:
    """A review approved twice by Ana (code), refused to Dee and the page's token holder,
    then approved from ``dsh-inbox answer``: it returns approved by two, the login settling
    it; a second review is settled at once by Bo's feedback."""
    with _machine() as state:
        first = state.ask_review(harness=0)
        for person, surface in (("ana", "code"), ("ana", "code"), ("dee", "code"), ("", "page")):
            state.answer(whose=first, surface=surface, person=person, approve=True)
            state.every_outcome_is_true()
        (ask,) = [a for a in state.asks if a.name == first]
        assert not ask.future.done()
        state.answer(whose=first, surface="cli", approve=True)
        state.every_outcome_is_true()
        assert ask.future.result().answered_by == LOGIN
        second = state.ask_review(harness=1)
        state.answer(whose=second, surface="code", person="bo", approve=False)
        state.every_outcome_is_true()
        assert TALLY["reviews checked to be approved by two"] >= 1
