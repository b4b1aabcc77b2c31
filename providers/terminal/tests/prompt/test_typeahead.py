"""Type-ahead discipline: a key answers only a question that was on screen when it was typed."""

from __future__ import annotations

import re

from conftest import question

HINT = "Esc cancel"


def test_keys_typed_before_the_prompt_are_dropped(terminal):
    """A key typed while the harness is busy, before the prompt shows, does not answer it."""
    term = terminal({"questions": [question()]}, "--delay")
    term.press("1")
    term.wait_for(HINT)
    screen = term.settle(1.0)
    assert "\u276f 1. pnpm" in screen
    assert "ANSWER" not in term.transcript
    term.press("2")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["npm"]}]}


def test_two_concurrent_asks_with_2_enter_typed_at_once_answer_only_the_first(terminal):
    """Two asks at once: ``2`` and Enter typed together answer the first; the leftover Enter
    does not answer the second question, which waits for its own key."""
    term = terminal({"questions": [question()]}, "--twice")
    term.wait_for(HINT)
    term.press("2\r")
    term.wait_for("\u2714", HINT)
    screen = term.settle(1.0)
    assert "\u276f 1. pnpm" in screen
    assert "ANSWER" not in term.transcript
    term.press("3")
    result = term.outcome()
    assert "ANSWER" in term.transcript
    picks = sorted(
        re.findall(r'ANSWER \{"answers": \[\{"id": "pkg", "selected": \["(\w+)"', term.transcript)
    )
    # Whichever ask took the first turn: 2 answered it, 3 the other (a leaked Enter: pnpm).
    assert picks == ["npm", "yarn"]
    assert result["answer"]


def test_asks_from_two_threads_take_turns(terminal):
    """Asks from two threads, each with its own event loop, show one prompt at a time, and
    each key answers only the prompt on screen."""
    term = terminal({"questions": [question()]}, "--threads")
    term.wait_for(HINT)
    screen = term.settle(1.0)
    assert screen.count("Which package manager") == 1
    term.press("1")
    term.wait_for("\u2714")
    term.wait_until(lambda s: s.count("\u276f 1. pnpm") == 1 and HINT in s, "the second prompt")
    screen = term.settle(0.5)
    assert screen.count("Esc cancel") == 1
    term.press("2")
    term.outcome()
    answers = sorted(re.findall(r"ANSWER [^\r\n]*", term.transcript))
    assert len(answers) == 2
    assert '"selected": ["npm"]' in answers[0]
    assert '"selected": ["pnpm"]' in answers[1]


def test_enter_typed_with_the_answer_does_not_answer_the_next_page(terminal):
    """On a form of two questions, ``2`` and Enter typed together answer the first; the second
    page waits (its hint appears once keys count) for a key of its own."""
    second = question("ci", header="CI", question="Which CI?", options=[{"label": "GitHub"}])
    term = terminal({"questions": [question(), second]})
    term.wait_for("question 1 of 2", HINT)
    term.press("2\r")
    term.wait_for("Which CI?", HINT)
    screen = term.settle(0.5)
    assert "Which CI?" in screen
    assert "Summary" not in screen
    term.press("1")
    term.wait_for("Summary", "Enter submit")
    term.press("enter")
    assert term.outcome()["answer"] == {
        "answers": [{"id": "pkg", "selected": ["npm"]}, {"id": "ci", "selected": ["GitHub"]}]
    }


def test_a_free_text_question_drops_the_keys_typed_for_the_one_before(terminal):
    """Two free-text asks at once: ``abc`` Enter ``xyz`` Enter typed in one burst answer the
    first; the second question's field (open at once) takes none of the leftover keys."""
    text_question = {"id": "name", "question": "What should the branch be called?"}
    term = terminal({"questions": [text_question]}, "--twice")
    term.wait_for("Your answer:", "Enter send")
    term.press("abc\rxyz\r")
    term.wait_for("\u2714")
    term.settle(1.0)
    assert "ANSWER" not in term.transcript
    term.press("final\r")
    term.outcome()
    answers = re.findall(r'"custom": "(\w+)"', term.transcript)
    assert sorted(answers) == ["abc", "final"], term.transcript
