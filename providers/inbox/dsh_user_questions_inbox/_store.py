"""`Inbox`: the durable store of questions, over SQLite or PostgreSQL.

Every transition is one conditional statement (``... WHERE state = 'pending'``), so across
processes and machines exactly one final state is ever written and the first answer wins;
the losers learn what happened instead. Answers are checked with the core's rules before they
are stored.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

import attrs
from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    UserQuestionError,
    team,
)
from dsh_user_questions.rules import check_answer

from ._engine import Engine, Listener, Transaction
from ._events import EVENTS_TABLES, SURFACE_EVENTS, InboxEvent
from ._events import step as event_step
from ._lease import STALE_SECONDS, live
from ._record import AnswerOutcome, QuestionRecord, State
from ._seal import register_seal, seal_secrets, seal_step
from ._url import InboxURL, parse_url

__all__ = ["AnswerResult", "Inbox", "Reception", "open_inbox"]

Reception = Literal["received", "not-taken", "no-asker"]

_COLUMNS = (
    "id, request, agent, harness, created, deadline, state, answer, settled_at, surface,"
    " late_answer, late_at, late_surface, late_delivered_at, key, delivered_at,"
    " received_at"
)
_SELECT = f"SELECT {_COLUMNS} FROM dsh_inbox_questions"
# Ids are read aloud and typed (dsh-inbox answer ID): short, but 64 random bits.
_ID_BYTES = 8
_INSERT = (
    "INSERT INTO dsh_inbox_questions"
    " (id, request, agent, harness, created, deadline, state, seq, key, lease)"
    " VALUES (:id, :request, :agent, :harness, :created, :deadline, 'pending', {seq},"
    " :key, :lease) ON CONFLICT DO NOTHING"
)
# Ids per IN (...) list: far below SQLite's and PostgreSQL's parameter limits.
_CHUNK = 500
# Rounds of insert / read the key's record / give it up, before a keyed add gives up.
_KEY_ATTEMPTS = 20
# `tool.durable_key` escapes ':' and '~' inside ids since issue 35; before, it wrote them as they
# are, a spelling two pairs of ids could share.
_ESCAPED = re.compile(r"~(3A|7E)")
# Heartbeat rows of providers gone longer than this are deleted by `Inbox.prune`.
_LEASE_ROWS_KEPT = 86_400.0


def _dump(data: Mapping[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _load(text: str | None) -> dict[str, Any] | None:
    return None if text is None else json.loads(text)


def _same_questions(stored: Mapping[str, Any], wire: Mapping[str, Any]) -> bool:
    """Whether two wire forms ask the same questions (as JSON reads them back)."""
    return bool(stored.get("questions") == json.loads(_dump({"q": wire.get("questions")}))["q"])


def _record(row: Sequence[Any]) -> QuestionRecord:
    request = _load(row[1])
    assert request is not None  # NOT NULL in the schema
    return QuestionRecord(
        id=row[0],
        request=request,
        agent=row[2],
        harness=row[3],
        created=row[4],
        deadline=row[5],
        state=State(row[6]),
        answer=_load(row[7]),
        settled_at=row[8],
        surface=row[9],
        late_answer=_load(row[10]),
        late_at=row[11],
        late_surface=row[12],
        late_delivered_at=row[13],
        key=row[14],
        delivered_at=row[15],
        received_at=row[16],
    )


def approvals_needed(request: AskUserQuestionRequest) -> int:
    """How many distinct people must approve the request's review (1 for any other)."""
    return max(
        (item.intent.approvals for item in request.questions if item.intent is not None),
        default=1,
    )


def escalation_due(people: team.People, record: QuestionRecord, now: float) -> bool:
    """Whether the people file escalates the pending question with an audience by now: it
    has waited its ``[escalation] after`` seconds unanswered."""
    return (
        people.escalate_after is not None
        and bool(people.escalate_to)
        and record.state is State.PENDING
        and bool(record.request.get("audience"))
        and now - record.created >= people.escalate_after
    )


def _named_in(answer: object) -> str | None:
    """The ``answered_by`` an answer names itself, if any (before it is checked)."""
    if isinstance(answer, AskUserQuestionAnswer):
        return answer.answered_by
    named = answer.get("answered_by") if isinstance(answer, Mapping) else None
    return named if isinstance(named, str) else None


def pending_record(row: Mapping[str, Any], request: AskUserQuestionRequest) -> QuestionRecord:
    """The record of a new question whose row (its parameters) was just written."""
    return QuestionRecord(
        id=row["id"],
        request=request.to_dict(),
        agent=row["agent"],
        harness=row["harness"],
        created=row["created"],
        deadline=row["deadline"],
        state=State.PENDING,
        key=None,
    )


@attrs.frozen
class AnswerResult:
    """What `Inbox.answer` did: the outcome, and the record as it stands afterwards.

    ``message``: why a ``refused`` answer was refused (the core's `team.may_answer` text, to
    show the person as it is). ``approvals``: for a review needing several approvals, how many
    distinct people have approved and how many must, ``(have, needed)``, after this answer.
    """

    outcome: AnswerOutcome
    record: QuestionRecord | None
    message: str | None = None
    approvals: tuple[int, int] | None = None

    @property
    def applied(self) -> bool:
        """Whether this answer became the question's answer."""
        return self.outcome is AnswerOutcome.APPLIED


class Inbox:
    """The question store; thread-safe, and shared by every process that opens the same URL.

    Open one with `open_inbox`. The methods block on the database; async code calls them in a
    thread (``asyncio.to_thread``).
    """

    def __init__(self, engine: Engine, url: InboxURL) -> None:
        self._engine = engine
        self.url = url
        self._people: team.People | None = None
        for statement in EVENTS_TABLES:  # the log of every step (`_events`)
            engine.write(statement, {})

    # Writing -----------------------------------------------------------------------------------

    def add(
        self,
        request: AskUserQuestionRequest | Mapping[str, Any],
        *,
        harness: str,
        agent: str | None = None,
        deadline: float | None = None,
        question_id: str | None = None,
        lease: str | None = None,
        seal: str | None = None,
    ) -> QuestionRecord:
        """Record a new pending question and return its record (with its new id).

        ``seal``: the key its secret answers are sealed to (`_seal`), written in the
        transaction that writes a new record (so an answer given the moment the question
        appears finds it), and set on a record the key attaches to.

        A request with a ``key`` attaches to the record holding that key, if one does (from
        any process, before any crash): that record is returned as it stands: pending (now
        asked by ``harness``), answered, cancelled, or withdrawn/expired with its late answer.
        A withdrawn or expired one without a late answer gives its key up to a new question
        (a fresh ask: the one before was given up). The key's record must hold the same
        questions (``BAD_QUESTION`` otherwise).

        ``lease`` is the asking provider's holder id (see `_lease`): the record is leased to
        it (the holder keeps its heartbeat with `beat`). A key whose record is leased to another
        live provider is refused with ``ASKED_ELSEWHERE`` (never the question's answer: a
        durable call stays pending): one run asks a key at a time, never two resumed by one
        answer.
        """
        wire = request.to_dict() if isinstance(request, AskUserQuestionRequest) else request
        parsed = AskUserQuestionRequest.from_dict(wire)  # a bad wire form never reaches the store
        key = parsed.key
        if key is not None:
            self._refuse_old_spelling(key, wire)
        for _ in range(_KEY_ATTEMPTS):
            now = time.time()
            new_id = question_id or secrets.token_hex(_ID_BYTES)
            params = {
                "id": new_id,
                "request": _dump(wire),
                "agent": agent,
                "harness": harness,
                "created": now,
                "deadline": deadline,
                "key": key,
                "lease": lease,
            }
            steps = [(_INSERT, params), event_step(new_id, "asked", now, surface="harness")]
            if seal is not None:
                steps.append(seal_step(self, new_id, seal))
            if self._engine.write_steps(steps)[0]:
                return QuestionRecord(
                    id=new_id,
                    request=dict(wire),
                    agent=agent,
                    harness=harness,
                    created=now,
                    deadline=deadline,
                    state=State.PENDING,
                    key=key,
                )
            if key is None:  # an id collision (64 random bits: never), or a given id taken
                raise ValueError(f"the inbox already has a question {new_id!r}")
            held = self.by_key(key)
            if held is None:
                continue  # given up or pruned meanwhile: insert again
            if _same_questions(held.request, wire) is False:
                raise UserQuestionError.key_in_use(key)
            if held.state in (State.WITHDRAWN, State.EXPIRED) and held.late_answer is None:
                # Given up with no answer: the key goes to a new question. Its asker moved on,
                # so the old outcome counts as delivered.
                self._engine.write(
                    "UPDATE dsh_inbox_questions SET key = NULL,"
                    " delivered_at = COALESCE(delivered_at, :now), seq = {seq}"
                    " WHERE id = :id AND key = :key AND state IN ('withdrawn', 'expired')"
                    " AND late_answer IS NULL",
                    {"id": held.id, "key": key, "now": now},
                )
                continue
            if lease is not None and not self._take_lease(held, key, lease):
                continue  # taken by another provider meanwhile: read the key again
            if seal is not None:
                register_seal(self, held.id, seal)
            if held.state is State.PENDING and (held.harness, held.agent) != (harness, agent):
                self._engine.write(
                    "UPDATE dsh_inbox_questions SET harness = :harness, agent = :agent"
                    " WHERE id = :id AND state = 'pending'",
                    {"id": held.id, "harness": harness, "agent": agent},
                )
                held = self.get(held.id) or held
            return held
        raise UserQuestionError.store_unusable(
            f"the key {key!r} kept changing hands while this ask tried to record it"
        )

    def _refuse_old_spelling(self, key: str, wire: Mapping[str, Any]) -> None:
        """``STORE_UNUSABLE`` while a pending question holds ``key`` as `tool.durable_key` spelt
        it before ids were escaped (``langgraph:t:1:c`` for ``langgraph:t~3A1:c``).

        That spelling is ambiguous (thread ``t:1`` + call ``c``, thread ``t`` + call ``1:c``),
        so it is never adopted: the human closes it, and the run asks anew under its new key.
        """
        old = _ESCAPED.sub(lambda found: ":" if found.group(1) == "3A" else "~", key)
        if old == key:
            return
        held = self.by_key(old)
        if held is None or held.state is not State.PENDING:
            return
        if not _same_questions(held.request, wire):
            return
        raise UserQuestionError.store_unusable(
            f"question {held.id} holds the key {old!r}, the way keys were written before ids"
            f" were escaped, which this call's key {key!r} replaces (two runs' ids could spell"
            f" the old one alike); close it with 'dsh-inbox cancel {held.id}' and run again:"
            " the question is asked anew under the new key"
        )

    def add_many(
        self,
        asks: Sequence[tuple[AskUserQuestionRequest, str | None, float | None, str | None]],
        *,
        harness: str,
        lease: str | None = None,
    ) -> list[QuestionRecord | Exception]:
        """Record several new pending questions of ``harness`` in one transaction.

        ``asks`` holds (request, agent, deadline, question id or ``None`` for a new one)
        tuples; each gets what `add` would have returned or raised, in order. A request with a
        ``key`` is recorded by `add` on its own (its key may attach it to a record). A failed
        transaction fails every question of it with the same error: none of them is recorded.
        """  # fmt: skip
        results: list[QuestionRecord | Exception | None] = [None] * len(asks)
        new: list[int] = []
        for index, (request, agent, deadline, _) in enumerate(asks):
            if request.key is None:
                new.append(index)
                continue
            try:
                results[index] = self.add(
                    request, harness=harness, agent=agent, deadline=deadline, lease=lease
                )
            except Exception as error:  # handed to that ask alone
                results[index] = error
        written = self._insert_new([asks[index] for index in new], harness=harness, lease=lease)
        for index, row in zip(new, written, strict=True):
            results[index] = (
                row if isinstance(row, Exception) else pending_record(row, asks[index][0])
            )
        done = [result for result in results if result is not None]
        assert len(done) == len(asks)  # every ask has its outcome
        return done

    def _insert_new(
        self,
        asks: Sequence[tuple[AskUserQuestionRequest, str | None, float | None, str | None]],
        *,
        harness: str,
        lease: str | None,
    ) -> list[dict[str, Any] | Exception]:
        """Insert the rows of new questions without keys in one transaction (see `add_many`):
        each row's parameters as written, or its error. Nothing of the requests is kept."""
        results: list[dict[str, Any] | Exception] = []
        rows: list[dict[str, Any]] = []
        for request, agent, deadline, question_id in asks:
            try:
                # A payload object is valid by construction (its fields are validated), so
                # its wire form is written as it is, without parsing it back as add() does.
                row: dict[str, Any] = {
                    "id": question_id or new_question_id(), "request": _dump(request.to_dict()),
                    "agent": agent, "harness": harness, "created": time.time(),
                    "deadline": deadline, "key": None, "lease": lease,
                }  # fmt: skip
            except Exception as error:  # handed to that ask alone
                results.append(error)
                continue
            results.append(row)
            rows.append(row)
        if not rows:
            return results
        try:
            steps: list[tuple[str, Mapping[str, Any]]] = []
            for row in rows:  # each new record with its "asked" event, in one transaction
                steps.append((_INSERT, row))
                steps.append(event_step(row["id"], "asked", row["created"], surface="harness"))
            changed = self._engine.write_steps(steps)[::2]
        except Exception as error:  # the whole batch failed: each ask says so
            return [error if isinstance(row, dict) else row for row in results]
        wrote = iter(changed)
        for position, written in enumerate(results):
            if isinstance(written, dict) and not next(wrote):
                results[position] = ValueError(
                    f"the inbox already has a question {written['id']!r}"
                )
        return results

    def _take_lease(self, held: QuestionRecord, key: str, lease: str) -> bool:
        """Lease the key's record to ``lease``; refused while another live provider holds it."""
        holder, beat = self.lease_of(held.id)
        if holder == lease:
            return True
        if live(holder, beat):
            raise UserQuestionError.asked_elsewhere(
                key,
                f"label {held.harness!r}, process {holder}; one run asks a key at a time: this"
                " call stays pending and asks again when that harness stops (a killed one frees"
                f" the key at once on its own host, else {STALE_SECONDS:g} s after its last"
                " heartbeat)",
            )
        return bool(
            self._engine.write(
                "UPDATE dsh_inbox_questions SET lease = :lease"
                " WHERE id = :id AND COALESCE(lease, '') = :old",
                {"id": held.id, "lease": lease, "old": holder or ""},
            )
        )

    def lease_of(self, question_id: str) -> tuple[str | None, float | None]:
        """The provider the question is leased to and its last heartbeat (``None`` when its
        row is gone: it closed, or was pruned)."""
        rows = self._engine.read(
            "SELECT q.lease, l.beat FROM dsh_inbox_questions q"
            " LEFT JOIN dsh_inbox_leases l ON l.holder = q.lease WHERE q.id = :id",
            {"id": question_id},
        )
        if not rows:
            return None, None
        return rows[0][0], rows[0][1]

    def lease_live(self, question_id: str) -> bool:
        """Whether a live provider is asking the question now (see `_lease`)."""
        return live(*self.lease_of(question_id))

    def beat(self, holder: str) -> None:
        """Renew the heartbeat of the provider ``holder`` (its leases stay live)."""
        self._engine.write(
            "INSERT INTO dsh_inbox_leases (holder, beat) VALUES (:holder, :now)"
            " ON CONFLICT (holder) DO UPDATE SET beat = :now",
            {"holder": holder, "now": time.time()},
        )

    def release(self, holder: str, question_id: str | None = None) -> None:
        """Give up the lease of one question, or (no id) every lease of ``holder``: the
        provider closed, so the next asker of its keys takes them at once."""
        if question_id is not None:
            self._engine.write(
                "UPDATE dsh_inbox_questions SET lease = NULL WHERE id = :id AND lease = :holder",
                {"id": question_id, "holder": holder},
            )
            return
        self._engine.write(
            "DELETE FROM dsh_inbox_leases WHERE holder = :holder", {"holder": holder}
        )

    def check(self) -> None:
        """``STORE_UNUSABLE`` if the store is gone: a SQLite file deleted, moved, replaced or
        unreadable, a PostgreSQL database dropped (see `Engine.check`)."""
        self._engine.check()

    @property
    def people(self) -> team.People:
        """Who is who: the people file (`team.People`) that audiences are expanded with and
        escalation is read from; by default `team.People.from_env` (read again when the file
        changes). Set it to use another."""
        return team.People.from_env() if self._people is None else self._people

    @people.setter
    def people(self, people: team.People) -> None:
        self._people = people

    def may_answer(self, record: QuestionRecord, person: str | None) -> str | None:
        """``None`` when ``person`` may answer the question; else the refusal to show them.

        The core's `team.may_answer` decides (no audience: anyone), with one addition of the
        inbox's: once the people file's ``[escalation]`` is due for a question (``after``
        seconds unanswered), the people it escalates ``to`` may answer it too.
        """
        request = record.to_request()
        if not request.audience:
            return None
        people = self.people
        refusal = team.may_answer(request, person, people)
        if refusal is None or person is None:
            return refusal
        if escalation_due(people, record, time.time()) and person in people.expand(
            people.escalate_to
        ):
            return None
        return refusal

    def admit(
        self,
        record: QuestionRecord,
        person: str | None,
        *,
        surface: str,
        address: str | None = None,
    ) -> str | None:
        """`may_answer`, logged: ``None`` when ``person`` may answer (an escalation found due
        is logged as ``escalated``), else the refusal, logged as a ``refused`` event by
        ``person`` from ``surface`` (and ``address``). What a surface calls before it takes an
        answer or asks for one (`answer` calls it too)."""
        if not record.request.get("audience"):
            return None  # anyone may answer: nothing to check, no people file read
        refusal = self.may_answer(record, person)
        if refusal is not None:
            self._log_step(record.id, "refused", by=person, surface=surface, address=address)
        elif escalation_due(self.people, record, time.time()):
            self._escalate(record)  # logged once, whoever notices it is due first
        return refusal

    def answer(
        self,
        question_id: str,
        answer: object,
        *,
        surface: str,
        by: str | None = None,
        address: str | None = None,
    ) -> AnswerResult:
        """Give the question an answer from ``surface``; the first answer wins.

        ``by`` names who answered (a person's id), recorded as the answer's ``answered_by``
        (it wins over one the answer carries). Whoever can write the store names themselves:
        it is trusted as given; the page behind a logging-in proxy is where identity is checked.
        ``address`` is where the answer came from (a page's client address), kept in the log.

        A question with an ``audience`` takes answers only from the people in it (the core's
        `team.may_answer`; after an escalation, the people it was escalated to as well, see
        `may_answer`): anyone else is ``refused`` (`AnswerResult.message` says why) and nothing
        is stored but a ``refused`` event. A review needing several approvals
        (``intent.approvals``) counts each person's approval once (``counted``, with
        `AnswerResult.approvals`) and settles, in the same transaction as the approval that
        completes it, with the core's `team.tally`: approved by the N-th person, or at once
        by the first answer that does not approve; every approval is an ``approved`` event.

        ``answer`` is an `AskUserQuestionAnswer` or its wire form, checked against the
        question's request first by `rules.check_answer` (``BAD_ANSWER``, nothing stored). A
        pending question takes it (``applied``) unless its deadline has passed; a
        withdrawn or expired one keeps the first such answer as its late answer (``late``);
        otherwise the outcome says why not (``already-answered``, ``closed``, ``unknown``).
        """
        record = self.get(question_id)
        if record is None:
            return AnswerResult(AnswerOutcome.UNKNOWN, None)
        if by is not None and (not isinstance(by, str) or not by.strip()):
            raise ValueError(f"Inbox.answer(by=...) must be a non-empty name, not {by!r}")
        request = record.to_request()
        refusal = self.admit(
            record, by if by is not None else _named_in(answer), surface=surface, address=address
        )
        if refusal is not None:
            return AnswerResult(AnswerOutcome.REFUSED, record, message=refusal)
        checked = check_answer(request, answer)
        now = time.time()
        if by is not None:
            checked = AskUserQuestionAnswer(checked.answers, answered_by=by)
        # A secret's text is sealed to its asker's key before it is written (see _seal).
        checked = seal_secrets(self, question_id, request, checked)
        params: dict[str, Any] = {
            "id": question_id,
            "answer": _dump(checked.to_dict()),
            "surface": surface,
        }
        params["now"] = now
        by_whom = checked.answered_by
        if approvals_needed(request) > 1:
            counted = self._engine.transact(
                lambda tx: self._count(tx, request, checked, params, address)
            )
            if counted is not None:
                return AnswerResult(counted[0], self.get(question_id), approvals=counted[1])
        elif self._engine.write_steps(
            [
                (
                    "UPDATE dsh_inbox_questions SET state = 'answered', answer = :answer,"
                    " settled_at = :now, surface = :surface, seq = {seq}"
                    " WHERE id = :id AND state = 'pending'"
                    " AND (deadline IS NULL OR deadline > :now)",
                    params,
                ),
                event_step(
                    question_id, "answered", now, by=by_whom, surface=surface, address=address
                ),
            ]
        )[0]:
            return AnswerResult(AnswerOutcome.APPLIED, self.get(question_id))
        self._expire_overdue(question_id, now)
        if self._engine.write_steps(
            [
                (
                    "UPDATE dsh_inbox_questions SET late_answer = :answer, late_at = :now,"
                    " late_surface = :surface, seq = {seq}"
                    " WHERE id = :id AND state IN ('withdrawn', 'expired') AND late_answer IS NULL",
                    params,
                ),
                event_step(
                    question_id,
                    "answered-late",
                    now,
                    by=by_whom,
                    surface=surface,
                    address=address,
                ),
            ]
        )[0]:
            return AnswerResult(AnswerOutcome.LATE, self.get(question_id))
        record = self.get(question_id)
        if record is None:
            return AnswerResult(AnswerOutcome.UNKNOWN, None)
        if record.state is State.CANCELLED:
            return AnswerResult(AnswerOutcome.CLOSED, record)
        return AnswerResult(AnswerOutcome.ALREADY_ANSWERED, record)

    def _count(
        self,
        tx: Transaction,
        request: AskUserQuestionRequest,
        given: AskUserQuestionAnswer,
        params: Mapping[str, Any],
        address: str | None,
    ) -> tuple[AnswerOutcome, tuple[int, int]] | None:
        """One answer to a review needing several approvals, inside the transaction that
        holds its record: counted or settled with `team.tally`; ``None`` when the question is
        no longer pending or is overdue (the caller goes on as for any answer)."""
        question_id, now, surface = params["id"], params["now"], params["surface"]
        rows = tx.read(
            "SELECT state, deadline, approvals FROM dsh_inbox_questions WHERE id = :id{lock}",
            {"id": question_id},
        )
        if not rows or rows[0][0] != "pending" or (rows[0][1] is not None and rows[0][1] <= now):
            return None
        before = [AskUserQuestionAnswer.from_dict(one) for one in json.loads(rows[0][2] or "[]")]
        earlier = team.tally(request, before)
        verdict = team.tally(request, [*before, given])
        person = given.answered_by
        steps: list[tuple[str, Mapping[str, Any]]] = []
        if person is not None and person in verdict.approvers and person not in earlier.approvers:
            steps.append(
                event_step(
                    question_id, "approved", now, by=person, surface=surface, address=address
                )
            )
        if verdict.settled is None:
            if len(verdict.approvers) > len(earlier.approvers):
                stored = [one.to_dict() for one in (*before, given)]
                tx.write(
                    "UPDATE dsh_inbox_questions SET approvals = :approvals, seq = {seq}"
                    " WHERE id = :id AND state = 'pending'",
                    {"id": question_id, "approvals": json.dumps(stored)},
                )
            for sql, values in steps:
                tx.write(sql, values)
            return AnswerOutcome.COUNTED, (len(verdict.approvers), verdict.needed)
        for sql, values in steps:  # the approval, while the record is still pending
            tx.write(sql, values)
        settled = verdict.settled
        tx.write(
            "UPDATE dsh_inbox_questions SET state = 'answered', answer = :answer,"
            " settled_at = :now, surface = :surface, seq = {seq}"
            " WHERE id = :id AND state = 'pending'",
            {"id": question_id, "answer": _dump(settled.to_dict()), "now": now, "surface": surface},
        )
        tx.write(
            *event_step(
                question_id,
                "answered",
                now,
                by=settled.answered_by,
                surface=surface,
                address=address,
            )
        )
        return AnswerOutcome.APPLIED, (len(verdict.approvers), verdict.needed)

    def _escalate(self, record: QuestionRecord) -> bool:
        """Log the ``escalated`` event of a question (once, while pending; ``by`` names the
        audience it escalates to); ``True`` for the one call that wrote it."""
        return self._log_step(
            record.id, "escalated", by=", ".join(self.people.escalate_to), surface="deadline"
        )

    def record_event(
        self,
        question_id: str,
        event: str,
        *,
        by: str | None = None,
        surface: str,
        address: str | None = None,
    ) -> bool:
        """Log a surface's own step of a question: ``opened`` (the surface showed it to ``by``,
        from ``address``). ``False`` when there is no such question (nothing logged)."""
        if event not in SURFACE_EVENTS:
            raise ValueError(
                f"record_event() logs {', '.join(sorted(SURFACE_EVENTS))}, not {event!r}:"
                " the store logs its own changes"
            )
        return self._log_step(question_id, event, by=by, surface=surface, address=address)

    def _log_step(
        self,
        question_id: str,
        event: str,
        *,
        by: str | None = None,
        surface: str | None = None,
        address: str | None = None,
    ) -> bool:
        """Write one event of a step that changes no record (``opened``, ``notified``,
        ``escalated``...); ``True`` when it was written (see `_events.step`)."""
        written = self._engine.write_steps(
            [event_step(question_id, event, time.time(), by=by, surface=surface, address=address)]
        )
        return bool(written[0])

    def _expire_overdue(self, question_id: str, now: float) -> int:
        return self._engine.write_steps(
            [
                (
                    "UPDATE dsh_inbox_questions SET state = 'expired', settled_at = deadline,"
                    " surface = 'deadline', seq = {seq}"
                    " WHERE id = :id AND state = 'pending' AND deadline <= :now",
                    {"id": question_id, "now": now},
                ),
                event_step(question_id, "expired", now, surface="deadline"),
            ]
        )[0]

    def settle(
        self, question_id: str, state: State, *, surface: str, delivered: bool = False
    ) -> bool:
        """Move a pending question to ``withdrawn``, ``expired`` or ``cancelled``.

        ``True`` when this call made the transition; ``False`` when the question was already
        final (or unknown): the state it has stays. ``delivered``: the asker itself ends it
        (it knows the outcome), so the record is marked delivered in the same step.
        """
        if state not in (State.WITHDRAWN, State.EXPIRED, State.CANCELLED):
            raise ValueError(f"settle() takes withdrawn, expired or cancelled, not {state}")
        now = time.time()
        steps = [
            (
                "UPDATE dsh_inbox_questions SET state = :state, settled_at = :now,"
                " surface = :surface, delivered_at = :delivered, seq = {seq}"
                " WHERE id = :id AND state = 'pending'",
                {
                    "id": question_id,
                    "state": state.value,
                    "now": now,
                    "surface": surface,
                    "delivered": now if delivered else None,
                },
            ),
            event_step(question_id, state.value, now, surface=surface),
        ]
        if delivered:
            steps.append(event_step(question_id, "delivered", now, surface=surface))
        return bool(self._engine.write_steps(steps)[0])

    def claim_delivery(self, question_id: str) -> bool:
        """Mark a final question's outcome as handed to its asker; ``True`` for the one caller
        that did (so across processes each outcome is delivered once)."""
        now = time.time()
        return bool(
            self._engine.write_steps(
                [
                    (
                        "UPDATE dsh_inbox_questions SET delivered_at = :now, seq = {seq}"
                        " WHERE id = :id AND state <> 'pending' AND delivered_at IS NULL",
                        {"id": question_id, "now": now},
                    ),
                    event_step(question_id, "delivered", now, surface="harness"),
                ]
            )[0]
        )

    def mark_received(self, question_id: str) -> None:
        """Record that the asker's ``ask()`` returned the answer to its caller."""
        self._stamp(
            "UPDATE dsh_inbox_questions SET received_at = :now, seq = {seq}"
            " WHERE id = :id AND received_at IS NULL",
            question_id,
        )

    def unclaim_delivery(self, question_id: str) -> None:
        """Undo `claim_delivery` for an answer its asker never took (cancelled as it landed)."""
        self._engine.write(
            "UPDATE dsh_inbox_questions SET delivered_at = NULL, seq = {seq}"
            " WHERE id = :id AND received_at IS NULL",
            {"id": question_id},
        )

    def wait_received(self, question_id: str, timeout: float) -> Reception:
        """After applying an answer: whether its asker received it, within ``timeout`` s.

        ``received``: an ``ask()`` returned it to its caller; ``not-taken``: an asker took it
        but was cancelled as it landed (it went to the late-answer hook, or stays undelivered);
        ``no-asker``: no asker waits for it now (it is kept for `undelivered` / ``resume()``).
        """
        deadline = time.monotonic() + timeout
        while True:
            record = self.get(question_id)
            if record is None or record.received_at is not None:
                return "received" if record is not None else "no-asker"
            if time.monotonic() >= deadline:
                return "not-taken" if record.delivered_at is not None else "no-asker"
            time.sleep(0.02)

    def expire_overdue(self, question_id: str) -> bool:
        """Expire a pending question whose deadline has passed; ``True`` if this call did."""
        return bool(self._expire_overdue(question_id, time.time()))

    def claim_late(self, question_id: str) -> bool:
        """Mark a late answer as handed to its harness; ``True`` for the one caller that did."""
        return self._stamp(
            "UPDATE dsh_inbox_questions SET late_delivered_at = :now WHERE id = :id"
            " AND late_answer IS NOT NULL AND late_delivered_at IS NULL",
            question_id,
        )

    def _stamp(self, sql: str, question_id: str) -> bool:
        # One record's time stamp (``:id``, ``:now``); true when this call wrote it.
        return bool(self._engine.write(sql, {"id": question_id, "now": time.time()}))

    def prune(self, older_than: float) -> int:
        """Delete final records settled (and late-answered) more than ``older_than`` s ago.

        An answer not yet delivered is never deleted: an answered record its asker has not
        taken (``delivered_at`` unset), and a late answer not yet handed over
        (``late_delivered_at`` unset), are kept until their harness takes them.
        """
        if older_than < 0:
            raise ValueError(f"prune(older_than={older_than!r}): a retention cannot be negative")
        now = time.time()
        self._engine.write(
            "DELETE FROM dsh_inbox_leases WHERE beat < :cutoff",
            {"cutoff": now - _LEASE_ROWS_KEPT},
        )
        pruned = self._engine.write_steps(
            [
                (
                    "DELETE FROM dsh_inbox_questions WHERE state <> 'pending'"
                    " AND settled_at < :cutoff AND (late_at IS NULL OR late_at < :cutoff)"
                    " AND (state <> 'answered' OR delivered_at IS NOT NULL)"
                    " AND (late_answer IS NULL OR late_delivered_at IS NOT NULL)",
                    {"cutoff": now - older_than},
                ),
                # A record's events go with it (the log of a pruned question is pruned too).
                (
                    "DELETE FROM dsh_inbox_events WHERE NOT EXISTS (SELECT 1"
                    " FROM dsh_inbox_questions q WHERE q.id = dsh_inbox_events.question_id)",
                    {},
                ),
            ]
        )[0]
        from ._uploads import prune_uploads  # uploaded files go with their records

        prune_uploads(self)
        return pruned

    # Reading -----------------------------------------------------------------------------------

    def events(
        self, question_id: str | None = None, *, since: float | None = None
    ) -> list[InboxEvent]:
        """The log: every event (of ``question_id`` alone, when given; at or after ``since``,
        seconds since the epoch, when given), oldest first."""
        where: list[str] = []
        params: dict[str, str | float] = {}
        if question_id is not None:
            where.append("question_id = :question_id")
            params["question_id"] = question_id
        if since is not None:
            where.append("at >= :since")
            params["since"] = since
        rows = self._engine.read(
            "SELECT question_id, event, at, person, surface, address FROM dsh_inbox_events"
            + (" WHERE " + " AND ".join(where) if where else "")
            + " ORDER BY at, CASE event WHEN 'asked' THEN 0 WHEN 'delivered' THEN 2 ELSE 1 END",
            params,
        )
        return [
            InboxEvent(
                question_id=row[0], event=row[1], at=row[2], by=row[3], surface=row[4],
                address=row[5],
            )
            for row in rows
        ]  # fmt: skip

    def get(self, question_id: str) -> QuestionRecord | None:
        """The record of that id, or ``None``."""
        rows = self._engine.read(f"{_SELECT} WHERE id = :id", {"id": question_id})
        return _record(rows[0]) if rows else None

    def by_key(self, key: str) -> QuestionRecord | None:
        """The record holding the request key ``key``, or ``None``."""
        rows = self._engine.read(f"{_SELECT} WHERE key = :key", {"key": key})
        return _record(rows[0]) if rows else None

    def undelivered(self, *, harness: str) -> list[QuestionRecord]:
        """Every question ``harness`` asked whose outcome it has not received, oldest first.

        Pending ones, and final ones (answered, cancelled, expired: while no process of the
        label waited) not yet delivered. Resume each (``ctx.user_questions.resume(id)``):
        each outcome is handed over exactly once, across restarts and across processes
        sharing the label (another process that took it first makes resume raise
        `AlreadyDelivered`).
        """
        rows = self._engine.read(
            f"{_SELECT} WHERE harness = :harness AND delivered_at IS NULL ORDER BY created, id",
            {"harness": harness},
        )
        return [_record(row) for row in rows]

    def get_many(self, question_ids: Iterable[str], *, final: bool = False) -> list[QuestionRecord]:
        """The records of those ids that exist (in no particular order); with ``final``, only
        those no longer pending."""
        ids = list(dict.fromkeys(question_ids))
        found: list[QuestionRecord] = []
        settled = " AND state <> 'pending'" if final else ""
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            names = [f"i{n}" for n in range(len(chunk))]
            where = ", ".join(f":{name}" for name in names)
            rows = self._engine.read(
                f"{_SELECT} WHERE id IN ({where}){settled}", dict(zip(names, chunk, strict=True))
            )
            found.extend(_record(row) for row in rows)
        return found

    def records(
        self,
        *,
        state: State | str | None = None,
        harness: str | None = None,
        late: bool | None = None,
        undelivered: bool = False,
        limit: int | None = None,
    ) -> list[QuestionRecord]:
        """Records, oldest first, filtered by state, harness label and lateness."""
        where: list[str] = []
        params: dict[str, Any] = {}
        if state is not None:
            where.append("state = :state")
            params["state"] = State(state).value
        if harness is not None:
            where.append("harness = :harness")
            params["harness"] = harness
        if late is not None:
            where.append("late_answer IS NOT NULL" if late else "late_answer IS NULL")
        if undelivered:
            where.append("late_delivered_at IS NULL")
        sql = _SELECT + (f" WHERE {' AND '.join(where)}" if where else "")
        sql += " ORDER BY created, id"
        if limit is not None:
            sql += " LIMIT :limit"
            params["limit"] = limit
        return [_record(row) for row in self._engine.read(sql, params)]

    def count(self, state: State | str = State.PENDING) -> int:
        """How many records are in ``state``."""
        rows = self._engine.read(
            "SELECT COUNT(*) FROM dsh_inbox_questions WHERE state = :state",
            {"state": State(state).value},
        )
        return int(rows[0][0])

    def listen(
        self, harness: str | None = None, wanted: Callable[[str], bool] | None = None
    ) -> Listener:
        """A listener hearing of every change from now on (see `Listener`); with ``harness``,
        of at least the changes to its questions and to those ``wanted`` accepts (see
        `Engine.listen`)."""
        return self._engine.listen(harness, wanted)

    def close(self) -> None:
        """Close the store's connections."""
        self._engine.close()

    def __enter__(self) -> Inbox:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Inbox {self.url.engine}>"


def new_question_id() -> str:
    """A new random question id (64 bits, hex)."""
    return secrets.token_hex(_ID_BYTES)


def open_inbox(url: str | None = None, *, create: bool | Literal["first"] = True) -> Inbox:
    """Open (and, with ``create``, create when missing) the store at ``url``.

    ``None`` reads ``DSH_USER_QUESTIONS_INBOX``, else uses the default SQLite file under the
    user's state directory. A ``postgresql://`` URL needs the ``[postgresql]`` extra (psycopg).
    A URL that is no store URL is a `ValueError`; a store that cannot be used (a file that is
    no database, read-only, a wrong password, a missing database...) is ``STORE_UNUSABLE``
    (`StoreError`), one line naming it without its password. Without ``create`` (what
    ``dsh-inbox`` does) a store that does not exist is ``STORE_UNUSABLE`` too: a configured
    store that vanished is never silently replaced by an empty one. ``create="first"`` (what
    ``dsh-inbox serve`` does) makes a store only where none was made before: a SQLite file made
    earlier and gone since is ``STORE_UNUSABLE`` saying so (``dsh-inbox init`` makes a new one).
    """
    parsed = parse_url(url)
    if parsed.engine == "sqlite":
        from ._sqlite import SQLiteEngine

        return Inbox(SQLiteEngine(parsed.target, create=create), parsed)
    try:
        from ._postgres import PostgresEngine
    except ImportError:
        raise UserQuestionError.store_unusable(
            f"{parsed.shown}: a PostgreSQL inbox needs psycopg;"
            " install dsh-user-questions-inbox[postgresql]"
        ) from None
    # A PostgreSQL database cannot vanish into a new one: its tables are made when missing.
    return Inbox(PostgresEngine(parsed.target, shown=parsed.shown, create=bool(create)), parsed)
