"""Model-written labels and human-typed lines, for any input (Hypothesis)."""

from __future__ import annotations

import unicodedata

from dsh_user_questions import AskUserQuestionItem, AskUserQuestionOption
from hypothesis import given
from hypothesis import strategies as st

from dsh_user_questions_terminal._labels import visible_labels
from dsh_user_questions_terminal._lines import parse_answer_line

labels = st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=5, unique=True)


@given(labels)
def test_shown_labels_hold_no_invisible_or_control_character(texts):
    """No format character, odd space or control character of a label survives to the screen."""
    for shown in visible_labels(texts):
        for char in shown:
            category = unicodedata.category(char)
            assert category not in ("Cf", "Cc", "Cs")
            assert category != "Zs" or char == " "


@given(st.lists(st.sampled_from(["n", "p", "m", "\u0440", "\u200b", "\u00a0", "o", "\u043e"])))
def test_labels_that_look_the_same_are_shown_differently(chars):
    """A label and a copy with a look-alike or invisible character put in are never drawn the
    same."""
    plain = "npm" + "".join(c for c in chars if c in "npmo")
    sneaky = "npm" + "".join(chars)
    if plain == sneaky:
        return
    first, second = visible_labels([plain, sneaky])
    assert first != second


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
