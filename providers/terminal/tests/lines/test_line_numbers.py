"""One meaning for a number in line mode: a number in range is always the row (issue 18.4)."""

from __future__ import annotations

import pytest
from conftest import question
from dsh_user_questions import AskUserQuestionItem, AskUserQuestionOption

from dsh_user_questions_terminal._lines import parse_answer_line


def numbered(*labels: str, multi: bool = False) -> AskUserQuestionItem:
    return AskUserQuestionItem(
        id="n",
        question="Which one?",
        options=[AskUserQuestionOption(label) for label in labels],
        multi_select=multi,
    )


@pytest.mark.parametrize(
    ("line", "selected"),
    [
        ("2", ["1"]),  # row 2, whose label is "1"
        ("1", ["2"]),
        ("3", ["4"]),
        ("=2", ["2"]),  # the label "2" (row 1)
        ("= 1", ["1"]),
        ("=4", ["4"]),
        ("4", ["4"]),  # no row 4: the option labelled "4"
    ],
)
def test_numbers_are_rows_and_labels_need_the_prefix(line, selected):
    """Labels "2", "1", "4": typing 2 picks row 2 (the label "1"), as the prompt says and as
    the interactive form's key 2 does; ``=2`` picks the label "2"; 4 (no row 4) is the label."""
    assert parse_answer_line(numbered("2", "1", "4"), line).selected == tuple(selected)


def test_a_prefix_naming_no_label_is_refused():
    """``=9`` when no option is labelled 9 is refused with the reason (asked again)."""
    with pytest.raises(ValueError, match='no option is labelled "9"'):
        parse_answer_line(numbered("2", "1", "4"), "=9")


def test_a_number_with_neither_row_nor_label_is_refused():
    """7 with three rows and no label "7" is refused, naming the rows."""
    with pytest.raises(ValueError, match="there is no option 7: the options are 1-3"):
        parse_answer_line(numbered("2", "1", "4"), "7")


def test_rows_and_a_label_that_read_alike_are_asked_again_with_both_readings():
    """On a multi-select with a label "1 3", the line ``1 3`` could be rows 1 and 3 or that
    label: it is refused with both readings and how to choose each."""
    item = numbered("a", "1 3", "c", multi=True)
    with pytest.raises(ValueError, match="could mean") as refused:
        parse_answer_line(item, "1 3")
    message = str(refused.value)
    assert 'options 1 ("a"), 3 ("c")' in message
    assert 'the option labelled "1 3" (row 2)' in message
    assert "=1 3" in message
    assert parse_answer_line(item, "1,3").selected == ("a", "c")
    assert parse_answer_line(item, "=1 3").selected == ("1 3",)


def test_a_label_of_several_numbers_is_taken_where_rows_cannot_be_meant():
    """On a single-select, ``1 3`` cannot be two rows: with a label "1 3" it is that label."""
    assert parse_answer_line(numbered("a", "1 3", "c"), "1 3").selected == ("1 3",)


def test_multi_select_mixes_rows_and_numeric_labels():
    """``1,9`` on a multi-select with a label "9" and three rows: row 1 and the label "9"."""
    item = numbered("x", "9", "y", multi=True)
    assert parse_answer_line(item, "1,9").selected == ("x", "9")


def test_line_mode_with_numeric_labels_through_pipes(piped):
    """Through real pipes: ``2`` answers row 2's label, the prompt shows the ``=`` prefix, and
    ``=2`` picks the label "2"."""
    item = question(options=[{"label": "2"}, {"label": "1"}, {"label": "4"}])
    by_row = piped({"questions": [item]}, "2\n")
    assert by_row.answer == {"answers": [{"id": "pkg", "selected": ["1"]}]}
    assert "Answer: a number 1-3 (=LABEL for a label that is a number, e.g. =2)" in by_row.stderr
    by_label = piped({"questions": [item]}, "=2\n")
    assert by_label.answer == {"answers": [{"id": "pkg", "selected": ["2"]}]}
