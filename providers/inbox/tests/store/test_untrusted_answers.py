"""Answers come from the network and from people: whatever JSON arrives, the store stays sound."""

from __future__ import annotations

from pathlib import Path

from _requests import PKG
from dsh_user_questions import AskUserQuestionAnswer, UserQuestionError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_user_questions_inbox import AnswerOutcome, AnswerResult, Inbox, State, open_inbox

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
_items = st.fixed_dictionaries(
    {"id": st.sampled_from(["pkg", "other", ""])},
    optional={
        "selected": st.lists(st.sampled_from(["pnpm", "npm", "yarn"]), max_size=3) | _json,
        "custom": st.text(max_size=5) | _json,
        "extra": _json,
    },
)
_answers = st.fixed_dictionaries({"answers": st.lists(_items, max_size=3)}) | _json


def _answer(
    inbox: Inbox, question_id: str, answer: object
) -> tuple[AnswerResult | None, UserQuestionError | None]:
    try:
        return inbox.answer(question_id, answer, surface="fuzz"), None  # type: ignore[arg-type]
    except UserQuestionError as err:
        return None, err


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(answer=_answers)
def test_any_json_answer_is_refused_cleanly_or_applied_exactly(
    tmp_path: Path, answer: object
) -> None:
    """A JSON value either raises BAD_ANSWER and leaves the question pending, or is applied and
    stored as exactly its checked wire form."""
    inbox = open_inbox(f"sqlite:///{tmp_path / 'fuzz.db'}")
    try:
        record = inbox.add(PKG, harness="h")
        result, error = _answer(inbox, record.id, answer)
        if error is not None:
            assert error.code == "BAD_ANSWER"
            assert inbox.get(record.id).state is State.PENDING
            return
        assert result is not None
        assert result.outcome is AnswerOutcome.APPLIED
        stored = inbox.get(record.id)
        assert stored.state is State.ANSWERED
        assert stored.answer == AskUserQuestionAnswer.from_dict(answer).to_dict()
    finally:
        inbox.close()


_SAME_RULES = [
    {"answers": [{"id": "pkg", "custom": "\x1b[2J\x1b]0;pwned\x07"}]},
    {"answers": [{"id": "pkg", "custom": "x" * 20_015}]},
    {"answers": [{"id": "pkg", "custom": "abc\u202edef"}]},
    {"answers": [{"id": "pkg", "custom": "lone \ud800 surrogate"}]},
    {"answers": [{"id": "pkg", "selected": ["bun"]}]},
    {"answers": [{"id": "pkg", "custom": "tabs\tand\nnewlines are fine"}]},
    {"answers": [{"id": "pkg", "selected": ["npm"]}]},
]


async def test_the_page_and_the_store_refuse_exactly_what_the_rules_refuse(
    inbox: Inbox,
) -> None:
    """The inbox page's Submit (the board) and every store surface refuse exactly the answers
    rules.check_answer refuses, with its problems (paths as the page names them): no rule of
    their own."""
    from dsh_user_questions.rules import check_answer
    from dsh_user_questions_web import problems_of

    from dsh_user_questions_inbox._board import InboxBoard

    board = InboxBoard(inbox)
    for answer in _SAME_RULES:
        record = inbox.add(PKG, harness="h")
        try:
            check_answer(record.to_request(), answer)
        except UserQuestionError as err:
            expected: tuple[str, ...] | None = problems_of(err)
        else:
            expected = None
        receipt = await board.submit(record.id, answer)
        if expected is None:
            assert receipt.status == "kept", answer  # applied; no asker waits for it here
        else:
            assert receipt.status == "rejected", answer
            assert tuple(receipt.problems) == expected
            assert inbox.get(record.id).state is State.PENDING
