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
