"""The store on both engines: records, the one final state, the first answer, late answers."""

from __future__ import annotations

import time

import pytest
from _requests import PKG, pick
from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest, UserQuestionError

from dsh_user_questions_inbox import AnswerOutcome, Inbox, QuestionRecord, State, open_inbox


def test_a_new_question_is_pending_with_everything_it_was_asked_with(inbox: Inbox) -> None:
    """add() records the request's wire form, agent, harness label, times and a pending state."""
    before = time.time()
    added = inbox.add(PKG, harness="ci-runner", agent="agent-1", deadline=before + 60)
    stored = inbox.get(added.id)
    assert stored == added
    assert stored.request == PKG
    assert (stored.agent, stored.harness, stored.state) == ("agent-1", "ci-runner", State.PENDING)
    assert before <= stored.created <= time.time()
    assert stored.deadline == pytest.approx(before + 60)
    assert stored.answer is None
    assert stored.late is False


def test_ids_are_distinct(inbox: Inbox) -> None:
    """Each question gets its own id."""
    ids = {inbox.add(PKG, harness="h").id for _ in range(50)}
    assert len(ids) == 50


def test_a_request_payload_is_stored_in_its_wire_form(inbox: Inbox) -> None:
    """An AskUserQuestionRequest is kept as its to_dict() form and rebuilt from it."""
    request = AskUserQuestionRequest.from_dict(PKG)
    record = inbox.add(request, harness="h")
    assert inbox.get(record.id).to_request().questions == request.questions


def test_a_bad_request_never_reaches_the_store(inbox: Inbox) -> None:
    """A wire form the core cannot read is refused before anything is stored."""
    with pytest.raises(ValueError, match="questions"):
        inbox.add({"questions": [{"id": "x"}]}, harness="h")
    assert inbox.records() == []


def test_the_first_answer_wins(inbox: Inbox) -> None:
    """The first answer is applied with its surface; a second one is refused and changes nothing."""
    record = inbox.add(PKG, harness="h")
    first = inbox.answer(record.id, pick("pnpm"), surface="web")
    second = inbox.answer(record.id, pick("npm"), surface="cli")
    assert first.applied
    assert second.outcome is AnswerOutcome.ALREADY_ANSWERED
    stored = inbox.get(record.id)
    assert stored.state is State.ANSWERED
    assert stored.to_answer() == AskUserQuestionAnswer.from_dict(pick("pnpm"))
    assert stored.surface == "web"
    assert stored.settled_at is not None


def test_a_bad_answer_is_refused_and_nothing_is_stored(inbox: Inbox) -> None:
    """An answer the core's rules refuse raises BAD_ANSWER; the question stays pending."""
    record = inbox.add(PKG, harness="h")
    with pytest.raises(UserQuestionError) as caught:
        inbox.answer(record.id, pick("yarn"), surface="cli")
    assert caught.value.code == "BAD_ANSWER"
    assert "yarn" in str(caught.value)
    assert inbox.get(record.id).state is State.PENDING


def test_an_unknown_id_is_reported_as_unknown(inbox: Inbox) -> None:
    """Answering an id that was never asked is the outcome unknown, not an error."""
    result = inbox.answer("no-such-id", pick("pnpm"), surface="cli")
    assert result.outcome is AnswerOutcome.UNKNOWN
    assert result.record is None


@pytest.mark.parametrize("final", [State.WITHDRAWN, State.EXPIRED])
def test_an_answer_after_withdrawal_or_expiry_is_kept_as_late(inbox: Inbox, final: State) -> None:
    """The first answer after the question ended is stored as late, never applied."""
    record = inbox.add(PKG, harness="h")
    assert inbox.settle(record.id, final, surface="harness")
    result = inbox.answer(record.id, pick("npm"), surface="cli")
    again = inbox.answer(record.id, pick("pnpm"), surface="web")
    assert result.outcome is AnswerOutcome.LATE
    assert again.outcome is AnswerOutcome.ALREADY_ANSWERED
    stored = inbox.get(record.id)
    assert stored.state is final
    assert stored.answer is None
    assert stored.late
    assert stored.late_answer == pick("npm")
    assert stored.late_surface == "cli"


def test_an_answer_to_a_cancelled_question_is_closed(inbox: Inbox) -> None:
    """The human closed it: an answer after that is refused as closed and not kept."""
    record = inbox.add(PKG, harness="h")
    assert inbox.settle(record.id, State.CANCELLED, surface="web")
    assert inbox.answer(record.id, pick("npm"), surface="cli").outcome is AnswerOutcome.CLOSED
    assert inbox.get(record.id).late is False


def test_a_passed_deadline_expires_the_question_and_the_answer_is_late(inbox: Inbox) -> None:
    """An answer after the record's deadline finds it expired (even with its harness gone)."""
    record = inbox.add(PKG, harness="h", deadline=time.time() - 1)
    result = inbox.answer(record.id, pick("npm"), surface="cli")
    assert result.outcome is AnswerOutcome.LATE
    assert result.record.state is State.EXPIRED
    assert result.record.surface == "deadline"


def test_only_one_final_state_is_ever_written(inbox: Inbox) -> None:
    """settle() moves a pending question once; later transitions of any kind change nothing."""
    record = inbox.add(PKG, harness="h")
    assert inbox.settle(record.id, State.WITHDRAWN, surface="harness")
    assert not inbox.settle(record.id, State.CANCELLED, surface="web")
    assert not inbox.settle(record.id, State.EXPIRED, surface="harness")
    assert inbox.get(record.id).state is State.WITHDRAWN


def test_settle_refuses_states_that_are_not_endings_without_answer(inbox: Inbox) -> None:
    """settle() cannot answer nor reopen a question."""
    record = inbox.add(PKG, harness="h")
    for state in (State.PENDING, State.ANSWERED):
        with pytest.raises(ValueError, match="settle"):
            inbox.settle(record.id, state, surface="x")


def test_records_filter_by_state_harness_and_lateness(inbox: Inbox) -> None:
    """records() lists oldest first, filtered by state, harness label and late answers."""
    a = inbox.add(PKG, harness="one")
    b = inbox.add(PKG, harness="two")
    c = inbox.add(PKG, harness="one")
    inbox.answer(b.id, pick("npm"), surface="cli")
    inbox.settle(c.id, State.WITHDRAWN, surface="harness")
    inbox.answer(c.id, pick("npm"), surface="cli")
    assert [r.id for r in inbox.records()] == [a.id, b.id, c.id]
    assert [r.id for r in inbox.records(state="pending")] == [a.id]
    assert [r.id for r in inbox.records(harness="one")] == [a.id, c.id]
    assert [r.id for r in inbox.records(late=True)] == [c.id]
    assert [r.id for r in inbox.records(limit=2)] == [a.id, b.id]
    assert inbox.count("pending") == 1


def test_a_late_answer_is_claimed_once(inbox: Inbox) -> None:
    """claim_late() hands a late answer to exactly one caller."""
    record = inbox.add(PKG, harness="h")
    inbox.settle(record.id, State.EXPIRED, surface="harness")
    assert not inbox.claim_late(record.id)  # nothing to claim yet
    inbox.answer(record.id, pick("npm"), surface="cli")
    assert inbox.claim_late(record.id)
    assert not inbox.claim_late(record.id)
    assert inbox.records(late=True, undelivered=True) == []


def test_prune_deletes_only_old_final_records(inbox: Inbox) -> None:
    """prune() keeps pending and recent records and deletes final ones past the retention."""
    pending = inbox.add(PKG, harness="h")
    done = inbox.add(PKG, harness="h")
    inbox.answer(done.id, pick("npm"), surface="cli")
    assert inbox.claim_delivery(done.id)
    assert inbox.prune(older_than=3600) == 0
    time.sleep(0.05)
    assert inbox.prune(older_than=0) == 1
    assert [r.id for r in inbox.records()] == [pending.id]
    with pytest.raises(ValueError, match="negative"):
        inbox.prune(older_than=-1)


class TestRetentionKeepsUndeliveredAnswers:
    """Retention never deletes an answer its asker has not received."""

    def test_an_undelivered_answer_survives_a_short_retention(self, inbox: Inbox) -> None:
        """Past a zero retention, an answered record nobody took and a late answer nobody
        took are kept; once taken (delivered), the next prune deletes them."""
        answered = inbox.add(PKG, harness="down")
        inbox.answer(answered.id, pick("npm"), surface="cli")
        late = inbox.add(PKG, harness="down")
        inbox.settle(late.id, State.WITHDRAWN, surface="harness", delivered=True)
        inbox.answer(late.id, pick("pnpm"), surface="cli")
        withdrawn = inbox.add(PKG, harness="down")
        inbox.settle(withdrawn.id, State.WITHDRAWN, surface="harness", delivered=True)
        time.sleep(0.05)
        assert inbox.prune(older_than=0) == 1  # the withdrawn one: no answer in it
        assert {r.id for r in inbox.records()} == {answered.id, late.id}
        assert [r.id for r in inbox.undelivered(harness="down")] == [answered.id]
        assert inbox.claim_delivery(answered.id)
        assert inbox.claim_late(late.id)
        assert inbox.prune(older_than=0) == 2
        assert inbox.records() == []


def test_a_listener_hears_of_changes_from_another_connection(inbox_url: str) -> None:
    """A change committed through one store is heard by a listener of another one."""
    writer = open_inbox(inbox_url)
    reader = open_inbox(inbox_url)
    listener = reader.listen()
    try:
        record = writer.add(PKG, harness="h")
        heard: set[str] = set()
        deadline = time.monotonic() + 30
        while record.id not in heard and time.monotonic() < deadline:
            heard.update(listener.poll(0.5) or [])
        assert record.id in heard
        writer.answer(record.id, pick("npm"), surface="cli")
        heard.clear()
        while record.id not in heard and time.monotonic() < deadline:
            heard.update(listener.poll(0.5) or [])
        assert record.id in heard
    finally:
        listener.close()
        writer.close()
        reader.close()


class TestManyRecords:
    def test_get_many_final_reads_only_the_records_no_longer_pending(self, inbox: Inbox) -> None:
        """get_many(ids, final=True) leaves out pending records (and unknown ids); without
        final it returns every record of the ids."""
        pending = inbox.add(PKG, harness="h")
        answered = inbox.add(PKG, harness="h")
        withdrawn = inbox.add(PKG, harness="h")
        inbox.answer(answered.id, pick("npm"), surface="cli")
        inbox.settle(withdrawn.id, State.WITHDRAWN, surface="harness")
        ids = [pending.id, answered.id, withdrawn.id, "no-such-id"]
        final = {record.id: record.state for record in inbox.get_many(ids, final=True)}
        assert final == {answered.id: State.ANSWERED, withdrawn.id: State.WITHDRAWN}
        assert {record.id for record in inbox.get_many(ids)} == set(ids[:3])

    def test_add_many_records_each_question_as_add_would(self, inbox: Inbox) -> None:
        """add_many() returns, for each new question, the record the store then holds: its
        wire form, agent, deadline, and the id it was given (or a new one)."""
        request = AskUserQuestionRequest.from_dict(PKG)
        deadline = time.time() + 60
        first, second = inbox.add_many(
            [(request, "agent-1", None, None), (request, None, deadline, "0123456789abcdef")],
            harness="many",
        )
        assert isinstance(first, QuestionRecord)
        assert isinstance(second, QuestionRecord)
        assert second.id == "0123456789abcdef"
        for record in (first, second):
            assert inbox.get(record.id) == record
            assert record.request == request.to_dict()
            assert (record.harness, record.state) == ("many", State.PENDING)
        assert (first.agent, first.deadline) == ("agent-1", None)
        assert second.deadline == pytest.approx(deadline)
