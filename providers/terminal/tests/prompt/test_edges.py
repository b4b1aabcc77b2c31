"""The terminal's edges at small and changing sizes (issue 18, point 5), in a real pty."""

from __future__ import annotations

import re

import pytest
from conftest import question
from test_plan_gate import long_plan

HINT = "Esc cancel"
SMALL = (12, 40)


def long_list(count: int = 30) -> dict:
    options = [{"label": f"region-{n}", "description": f"zone {n}"} for n in range(1, count + 1)]
    return {"questions": [question(options=options)]}


def pointer_row(term) -> int:
    line = term.pointer_line()
    assert line is not None, term.text
    found = re.match(r"\u276f\s*(\d+)\.", line)
    assert found is not None, line
    return int(found.group(1))


def test_pgdn_and_pgup_page_through_a_list(terminal):
    """At 40x12, PgDn moves the pointer a page (the rows shown), not one row; PgUp comes back a
    page; a 30-row list is crossed in a handful of presses."""
    term = terminal(long_list(), size=SMALL)
    term.wait_for(HINT, "region-1 ")
    shown = sum(1 for line in term.text.splitlines() if "region-" in line)
    term.press("pagedown")
    term.wait_until(lambda s: pointer_row(term) != 1, "the pointer moved")
    first = pointer_row(term)
    assert first - 1 >= max(2, shown - 1), term.text
    term.press("pageup")
    term.wait_until(lambda s: pointer_row(term) < first, "the pointer moved back")
    assert pointer_row(term) <= max(1, first - (shown - 2)), term.text
    presses = 0
    while pointer_row(term) < 30:
        before = pointer_row(term)
        term.press("pagedown")
        term.wait_until(lambda s, b=before: pointer_row(term) != b, "the pointer moved")
        presses += 1
        assert presses <= 8, term.text
    term.press("esc")
    term.outcome()


def test_nothing_is_answered_while_the_window_is_too_small(terminal):
    """While the window is too small to show the form, it says so and Enter or a number picks
    nothing; back at a usable size the form is whole again and answers."""
    term = terminal(long_list(), size=SMALL)
    term.wait_for(HINT, "region-1 ")
    term.resize(5, 40)
    term.wait_for("Window too small")
    term.press("enter", "2", " ")
    assert "ANSWER" not in term.settle(1.0)
    term.resize(*SMALL)
    term.wait_for(HINT, "region-1 ")
    term.press("down", "down")
    term.wait_until(lambda s: pointer_row(term) == 3, "the pointer on row 3")
    term.press("enter")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["region-3"]}]}


def _position(screen: str) -> tuple[int, int]:
    found = re.search(r"lines (\d+)-(\d+) of (\d+)", screen)
    assert found is not None, screen
    return int(found.group(1)), int(found.group(2))


def test_the_plan_box_keeps_three_lines_and_pages_by_its_height_at_40x12(terminal):
    """At 40x12 a 200-step plan shows at least three lines; each PgDn moves by the box's height
    (the next line after the last one shown comes first), so the whole plan is read in about
    202/3 presses, after which Approve approves."""
    term = terminal(long_plan(200), size=SMALL)
    screen = term.wait_for("lines 1-", HINT)
    top, bottom = _position(screen)
    assert bottom - top + 1 >= 3, screen
    presses = 0
    while "Drop the production database" not in screen:
        term.press("pagedown")
        screen = term.wait_until(
            lambda s, t=top: "lines" in s and _position(s)[0] != t, "the plan scrolled"
        )
        new_top, new_bottom = _position(screen)
        assert new_bottom - new_top + 1 >= 3, screen
        height = bottom - top + 1
        # A page: the box's height, nothing skipped (the last page ends at the plan's end).
        assert new_top == min(bottom + 1, 202 - height + 1), screen
        top, bottom = new_top, new_bottom
        presses += 1
        assert presses <= 202 // 3 + 1
    term.wait_until(lambda s: "read the whole plan first" not in s, "Approve unlocked")
    term.press("1")
    assert term.outcome()["answer"] == {"answers": [{"id": "plan-review", "selected": ["Approve"]}]}


def test_the_plan_box_keeps_three_lines_while_feedback_is_typed(terminal):
    """At 40x12, with the Keep planning field open, the plan box still shows three lines."""
    term = terminal(long_plan(200), size=SMALL)
    term.wait_for("lines 1-", HINT)
    term.press("2")  # row 2 is not drawn at 40x12 yet: the pointer goes there first
    term.wait_for("\u276f 2. Keep planning")
    term.press("enter")
    screen = term.wait_for("What should change?")
    top, bottom = _position(screen)
    assert bottom - top + 1 >= 3, screen
    term.press("split it up", "enter")
    assert term.outcome()["answer"] == {
        "answers": [{"id": "plan-review", "selected": [], "custom": "split it up"}]
    }


@pytest.mark.flaky(reruns=2)
def test_a_resize_keeps_an_approve_already_earned(terminal):
    """A plan read to its end at 80x24 stays read when the window widens by two columns (and
    when it narrows): Approve approves at once."""
    term = terminal(long_plan(), size=(24, 80))
    screen = term.wait_for("Talk instead", HINT)
    while "Drop the production database" not in screen:
        top, _ = _position(screen)
        term.press("pagedown")
        screen = term.wait_until(lambda s, t=top: _position(s)[0] != t, "the plan scrolled")
    term.wait_until(lambda s: "read the whole plan first" not in s, "Approve unlocked")
    term.resize(24, 82)
    term.settle(0.5)
    term.resize(24, 60)
    screen = term.settle(0.5)
    assert "read the whole plan first" not in screen, screen
    term.press("1")
    assert term.outcome()["answer"] == {"answers": [{"id": "plan-review", "selected": ["Approve"]}]}


def test_the_record_shows_invisible_and_look_alike_labels_as_stand_ins(terminal):
    """The answer record in the scrollback shows a label as the form did: ``npm<U+200B>`` and
    ``n<U+0440>m-cli``, never rows that read "npm" and "npm-cli"."""
    options = [{"label": "pnpm"}, {"label": "npm\u200b"}, {"label": "n\u0440m-cli"}]
    term = terminal({"questions": [question(options=options)]})
    term.wait_for(HINT)
    term.press("3")
    result = term.outcome()
    assert result["answer"] == {"answers": [{"id": "pkg", "selected": ["n\u0440m-cli"]}]}
    assert "\u2192 n<U+0440>m-cli" in result["screen"], result["screen"]
    term = terminal({"questions": [question(options=options)]})
    term.wait_for(HINT)
    term.press("2")
    result = term.outcome()
    assert "\u2192 npm<U+200B>" in result["screen"], result["screen"]


def test_the_bell_rings_when_the_form_appears_if_asked(terminal):
    """With DSH_USER_QUESTIONS_TERMINAL_BELL=1 the form rings the bell (BEL) as it appears;
    without it, no BEL is written."""
    term = terminal({"questions": [question()]}, DSH_USER_QUESTIONS_TERMINAL_BELL="1")
    term.wait_for(HINT)
    assert "\x07" in term.transcript
    term.press("1")
    term.outcome()
    quiet = terminal({"questions": [question()]})
    quiet.wait_for(HINT)
    quiet.press("1")
    quiet.outcome()
    assert "\x07" not in quiet.transcript


def test_the_bell_rings_in_line_mode_at_a_terminal(terminal):
    """Line mode at a terminal rings the bell too when asked to."""
    term = terminal(
        {"questions": [question()]},
        DSH_USER_QUESTIONS_PLAIN="1",
        DSH_USER_QUESTIONS_TERMINAL_BELL="1",
    )
    term.wait_for("Answer: a number 1-3")
    assert "\x07" in term.transcript
    term.press("1\r")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
