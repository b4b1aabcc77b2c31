"""The viewport: the highlighted row is always on screen, and nothing is cut silently."""

from __future__ import annotations

import re

from conftest import question

SMALL = (12, 40)
HINT = "Esc cancel"


def many_options(count: int = 20) -> dict:
    """A question with ``count`` options whose labels wrap at 40 columns."""
    options = [
        {"label": f"Option {n}", "description": f"a long description of option {n} that wraps"}
        for n in range(1, count + 1)
    ]
    return {"questions": [question(options=options)]}


def test_highlighted_row_stays_visible_after_every_key_at_40x12(terminal):
    """With 20 long options in a 40x12 terminal, the pointer is on screen after every Down, and
    every row (Other and Skip too) can be reached; Enter answers the row the pointer shows."""
    term = terminal(many_options(), size=SMALL)
    term.wait_for(HINT)
    labels = [f"Option {n}" for n in range(1, 21)] + ["Other", "Skip"]
    assert "Option 1" in (term.pointer_line() or "")
    for label in labels[1:]:
        term.press("down")
        term.wait_until(
            lambda screen, label=label: re.search(rf"\u276f +\d+\. {label}\b", screen) is not None,
            f"the pointer on {label}",
        )
    for _ in range(8):
        term.press("up")
    screen = term.wait_until(lambda s: "\u276f 14. Option 14" in s, "the pointer on Option 14")
    assert "more above" in screen
    assert "more below" in screen
    term.press("enter")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["Option 14"]}]}


def test_rows_out_of_view_are_announced(terminal):
    """When the rows do not fit, a marker says how many more rows are below (and above once
    scrolled), and the key hint stays on screen."""
    term = terminal(many_options(), size=SMALL)
    screen = term.wait_for(HINT)
    below = re.search(r"\u2193 (\d+) more below", screen)
    assert below is not None
    shown = len(re.findall(r"^(?:\u276f| ) +\d+\. ", screen, flags=re.M))
    assert shown + int(below.group(1)) == 22
    term.press("end")
    screen = term.wait_until(lambda s: "\u276f 22. Skip" in s, "the pointer on Skip")
    assert re.search(r"\u2191 \d+ more above", screen)
    assert HINT in screen
    term.press("esc")
    term.outcome()


def test_a_number_beyond_nine_picks_that_row(terminal):
    """Typing 1 then 2 moves to option 12 (it may be off screen); Enter then picks it."""
    term = terminal(many_options(), size=SMALL)
    term.wait_for(HINT)
    term.press("1", "2")
    term.wait_until(lambda s: "\u276f 12. Option 12" in s, "the pointer on Option 12")
    term.press("enter")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["Option 12"]}]}


def test_keys_typed_in_one_burst_never_pick_an_unseen_row(terminal):
    """Down x10 and Enter sent at once move the pointer but do not pick a row that was never
    drawn; a second Enter, with that row on screen, does."""
    term = terminal(many_options(), size=SMALL)
    term.wait_for(HINT)
    term.press("\x1b[B" * 10 + "\r")
    term.wait_until(lambda s: "\u276f 11. Option 11" in s, "the pointer on Option 11")
    assert "ANSWER" not in term.settle()
    term.press("enter")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["Option 11"]}]}


def test_home_end_and_j_k_move_the_pointer(terminal):
    """End goes to the last row, Home to the first, j and k move down and up."""
    term = terminal(many_options(5))
    term.wait_for(HINT)
    term.press("end")
    term.wait_until(lambda s: "\u276f 7. Skip" in s, "the pointer on Skip")
    term.press("home")
    term.wait_until(lambda s: "\u276f 1. Option 1" in s, "the pointer on Option 1")
    term.press("j", "j", "k")
    term.wait_until(lambda s: "\u276f 2. Option 2" in s, "the pointer on Option 2")
    term.press("enter")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["Option 2"]}]}


def test_long_detail_shows_its_position_and_scrolls(terminal):
    """A detail taller than the screen shows which lines are visible; PgDn and PgUp move it."""
    detail = "\n\n".join(f"Paragraph {n}" for n in range(1, 31))
    term = terminal({"questions": [question(detail=detail)]})
    screen = term.wait_for(HINT)
    first = re.search(r"lines 1-(\d+) of 59", screen)
    assert first is not None
    term.press("pagedown")
    screen = term.wait_until(lambda s: "lines 1-" not in s, "the detail scrolled")
    assert re.search(r"lines \d+-\d+ of 59", screen)
    term.press("pageup")
    term.wait_for(first.group(0))
    term.press("esc")
    term.outcome()


def test_a_row_taller_than_the_screen_is_marked_as_cut(terminal):
    """An option whose label alone needs more lines than a 40x12 terminal has is drawn as far as
    it fits and ends with a visible cut mark; the rows below are announced."""
    words = " ".join(f"word{n}" for n in range(150))
    term = terminal(
        {"questions": [question(options=[{"label": words}, {"label": "b"}])]}, size=SMALL
    )
    screen = term.wait_for(HINT)
    assert "\u2026" in screen
    assert "more below" in screen
    assert "word149" not in screen
    term.press("esc")
    term.outcome()
