"""Human-typed lines, for any input (Hypothesis); the look-alike marks of labels are the
core's (tests/test_view_labels.py)."""

from __future__ import annotations

from dsh_user_questions import AskUserQuestionItem, AskUserQuestionOption
from hypothesis import given
from hypothesis import strategies as st

from dsh_user_questions_terminal._lines import parse_answer_line


@given(st.text(max_size=30), st.booleans())
def test_any_line_is_an_answer_for_the_question_or_a_refusal(line, multi):
    """Every line gives an answer that names only the question's options, or is refused with a
    ValueError that says why."""
    options = [AskUserQuestionOption(label) for label in ("pnpm", "npm", "yarn")]
    item = AskUserQuestionItem(id="q", question="?", options=options, multi_select=multi)
    problem = ""
    try:
        answer = parse_answer_line(item, line)
    except ValueError as refusal:
        problem = str(refusal) or "(no reason)"
        answer = None
    if answer is None:
        assert problem != "(no reason)"
        return
    assert answer.id == "q"
    assert set(answer.selected) <= {"pnpm", "npm", "yarn"}
    assert multi or len(answer.selected) <= 1
    assert answer.custom is None or answer.custom == line.strip()
