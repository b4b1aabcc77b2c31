"""Output from the harness while a prompt is up goes above the prompt, which stays intact."""

from __future__ import annotations

from conftest import question

HINT = "Esc cancel"
ROWS = [
    "1. pnpm \u2014 fast, disk-efficient",
    "2. npm \u2014 comes with node",
    "3. yarn",
    "4. Other \u2014 type your own answer",
    "5. Skip \u2014 leave this question unanswered",
]


def intact(screen: str) -> bool:
    """Whether every option row is on screen as a whole line, with the hint below them, and
    the harness's lines only above the question."""
    lines = screen.splitlines()
    if "Which package manager should I use?" not in lines:
        return False
    below = lines[lines.index("Which package manager should I use?") :]
    return (
        all(row in [line[2:] for line in below] for row in ROWS)
        and HINT in below[-1]
        and not any("background" in line for line in below)
    )


def test_background_logging_and_prints_leave_the_option_rows_intact(terminal):
    """A thread that logs to stderr and prints to stdout every 50 ms while the form is up: its
    lines scroll by above the question, and the rows, pointer and hint redraw whole."""
    term = terminal({"questions": [question()]}, "--log")
    term.wait_for(HINT)
    for _ in range(4):
        term.settle(0.5)
        screen = term.wait_until(intact, "the form redrawn whole below the harness's lines")
        above = screen.split("Which package manager should I use?", 1)[0]
        assert "background log line" in above
        assert "background print" in above
    term.press("down")
    term.wait_until(lambda s: "\u276f 2. npm" in s and intact(s), "the pointer on npm")
    term.press("enter")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["npm"]}]}
