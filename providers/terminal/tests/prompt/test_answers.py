"""Answering: nothing thrown away unasked, checkboxes mean what they show, a record stays."""

from __future__ import annotations

from conftest import question

HINT = "Esc cancel"


def test_escape_asks_before_discarding_answers(terminal):
    """With one question of two answered, Esc asks first; n keeps the form, y cancels."""
    second = question("ci", header="CI", question="Which CI?", options=[{"label": "GitHub"}])
    term = terminal({"questions": [question(), second]})
    term.wait_for("question 1 of 2", HINT)
    term.press("2")
    term.wait_for("Which CI?", HINT)
    term.press("esc")
    term.wait_for("Discard")
    term.press("n")
    term.wait_until(lambda s: "Discard" not in s and HINT in s, "the form back")
    term.press("esc")
    term.wait_for("Discard")
    term.press("y")
    result = term.outcome()
    assert result["error"] == "ASK_CANCELLED"


def test_space_twice_then_enter_answers_nothing_checked(terminal):
    """On a multi-select, Space checks and Space unchecks; Enter then sends no label at all."""
    term = terminal({"questions": [question(multiSelect=True)]})
    term.wait_for("[ ] pnpm", HINT)
    term.press("space")
    term.wait_for("[x] pnpm")
    term.press("space")
    term.wait_for("[ ] pnpm")
    term.press("enter")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": []}]}


def test_a_toggles_every_option_of_a_multi_select(terminal):
    """``a`` checks every option, and ``a`` again unchecks them all."""
    term = terminal({"questions": [question(multiSelect=True)]})
    term.wait_for("[ ] pnpm", HINT)
    term.press("a")
    term.wait_for("[x] pnpm", "[x] npm", "[x] yarn")
    term.press("a")
    term.wait_for("[ ] pnpm", "[ ] npm", "[ ] yarn")
    term.press("a", "enter")
    assert term.outcome()["answer"] == {
        "answers": [{"id": "pkg", "selected": ["pnpm", "npm", "yarn"]}]
    }


def test_each_question_and_its_answer_stay_on_screen(terminal):
    """After the answer, a record of each question and its answer is left in the scrollback."""
    second = question("ci", header="CI", question="Which CI?", options=[{"label": "GitHub"}])
    term = terminal({"questions": [question(), second]})
    term.wait_for("question 1 of 2", HINT)
    term.press("2")
    term.wait_for("Which CI?", HINT)
    term.press("1")
    term.wait_for("Submit these answers?", HINT)
    term.press("enter")
    screen = term.outcome()["screen"]
    assert "Which package manager should I use?" in screen
    assert "Which CI?" in screen
    assert "npm" in screen.split("Which package manager should I use?", 1)[1]
    assert "GitHub" in screen.split("Which CI?", 1)[1]


def test_pasted_lines_keep_the_field_label_in_view(terminal):
    """Text pasted with line breaks keeps the field's label on screen and arrives whole."""
    term = terminal({"questions": [question()]})
    term.wait_for(HINT)
    term.press("4")
    term.wait_for("Your answer:")
    term.press("\x1b[200~first line\nsecond line\nthird line\x1b[201~")
    screen = term.wait_for("third line")
    assert "Your answer:" in screen
    term.press("enter")
    assert term.outcome()["answer"] == {
        "answers": [{"id": "pkg", "selected": [], "custom": "first line\nsecond line\nthird line"}]
    }


def test_queued_asks_are_announced(terminal):
    """While one ask is on screen, the heading says another is waiting its turn."""
    term = terminal({"questions": [question()]}, "--twice")
    term.wait_for(HINT, "1 more waiting")
    term.press("1")
    term.wait_for("\u2714")
    screen = term.wait_until(lambda s: s.count("Esc cancel") == 1, "the second prompt")
    term.settle(0.3)
    assert "more waiting" not in term.text
    term.press("1")
    term.outcome()
    assert screen


def test_pasted_text_the_answer_rules_refuse_is_not_taken(terminal):
    """Text the core's answer rules refuse (a pasted control character) is not sent: the field
    says why and keeps the text to edit; the edited text is the answer."""
    term = terminal({"questions": [{"id": "name", "question": "What should it be called?"}]})
    term.wait_for("Your answer:", "Enter send")
    term.press("\x1b[200~ab\x07cd\x1b[201~", "enter")
    term.wait_for("Not taken:", "control character U+0007")
    assert "ANSWER" not in term.settle(0.3)
    term.press("backspace", "backspace", "backspace", "enter")
    assert term.outcome()["answer"] == {"answers": [{"id": "name", "selected": [], "custom": "ab"}]}


class TestNoOtherRow:
    """A question with ``allow_other`` false offers its options and Skip, never "Other"."""

    def test_the_form_has_no_other_row(self, terminal):
        """No "Other" row: the row after the options is Skip, and its number skips."""
        term = terminal({"questions": [question(allow_other=False)]})
        screen = term.wait_for("yarn", "Skip", HINT)
        assert "Other" not in screen
        assert "type your own answer" not in screen
        term.press("4")
        assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": []}]}

    def test_a_multi_select_has_no_other_row(self, terminal):
        """On a multi-select too, only the options can be checked."""
        term = terminal({"questions": [question(multiSelect=True, allow_other=False)]})
        screen = term.wait_for("[ ] yarn", "Skip", HINT)
        assert "Other" not in screen
        term.press("space", "enter")
        assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
