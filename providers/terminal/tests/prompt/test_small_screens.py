"""What was on the screen stays there, and a small terminal (40x12) shows only what is true."""

from __future__ import annotations

import re

import pytest
from conftest import plan_review, question

SMALL = (12, 40)
NORMAL = (24, 80)
HINT = "Esc cancel"
SENTENCE = "Before I scaffold the project I need one decision from you."
READ_FIRST = "Read the whole plan first"


def screen_text(lines: list[str], columns: int) -> str:
    """``lines`` joined as the terminal shows them: a line the terminal wrapped continues."""
    return "".join(line.ljust(columns) for line in lines)


def long_plan(steps: int = 31) -> dict:
    """A plan review of ``steps`` steps."""
    item = plan_review()
    item["detail"] = "# Big migration\n\n" + "\n".join(
        f"{n}. Step number {n}" for n in range(1, steps + 1)
    )
    return {"questions": [item]}


def read_to_the_end(term, screen: str) -> str:
    """PgDn page by page until the plan's last line has been drawn; the screen."""
    while not re.search(r"lines \d+-(\d+) of \1\b", screen):
        found = re.search(r"lines \d+-\d+ of \d+", screen)
        assert found is not None, screen
        position = found.group(0)
        term.press("pagedown")
        screen = term.wait_until(lambda s, p=position: p not in s, "the plan scrolled")
    return screen


class TestTheFormKeepsWhatWasOnTheScreen:
    """The form starts on a fresh line below the cursor's line, and leaves that line alone."""

    @pytest.mark.parametrize("size", [NORMAL, SMALL])
    def test_a_sentence_streamed_without_a_newline_stays(self, terminal, size) -> None:
        """An agent's last sentence, printed without a newline before the ask, is on the screen
        above the form while it is up and after it is gone, followed by the record."""
        _rows, columns = size
        term = terminal({"questions": [question()]}, f"--before={SENTENCE}", size=size)
        screen = term.wait_for(HINT)
        lines = screen.splitlines()
        assert SENTENCE in screen_text(lines, columns)
        form_top = next(i for i, line in enumerate(lines) if "Package manager" in line)
        assert SENTENCE in screen_text(lines[:form_top], columns)
        term.press("2")
        result = term.outcome()
        assert result["answer"] == {"answers": [{"id": "pkg", "selected": ["npm"]}]}
        everything = term.everything()
        record = next(i for i, line in enumerate(everything) if line.startswith("\u2714"))
        assert SENTENCE in screen_text(everything[:record], columns)


class TestSmallScreens:
    """At 40x12: no stale hint, a plan box of three lines at least, records wrapped at words."""

    @pytest.mark.parametrize("size", [NORMAL, SMALL])
    def test_the_read_first_notice_goes_once_the_plan_is_read(self, terminal, size) -> None:
        """Enter on Approve before the plan is read scrolls it; once the last line has been
        drawn, no "Read the whole plan first" is left on screen, and Enter approves."""
        term = terminal(long_plan(), size=size)
        screen = term.wait_for("Talk instead" if size == NORMAL else "more below", HINT)
        term.press("enter")
        screen = term.wait_until(lambda s: "lines 1-" not in s, "the plan scrolled")
        screen = read_to_the_end(term, screen)
        assert READ_FIRST not in term.settle(0.3)
        term.press("enter")
        assert term.outcome()["answer"] == {
            "answers": [{"id": "plan-review", "selected": ["Approve"]}]
        }

    def test_the_plan_box_keeps_three_lines(self, terminal) -> None:
        """After Enter on an unread Approve at 40x12, the plan's box still shows three lines of
        the plan (the notice gives up its room), never one."""
        term = terminal(long_plan(), size=SMALL)
        term.wait_for("more below", HINT)
        term.press("enter")
        screen = term.wait_until(lambda s: "lines 4-" in s, "the plan scrolled")
        lines = screen.splitlines()
        top = next(i for i, line in enumerate(lines) if line.startswith("\u250c"))
        bottom = next(i for i, line in enumerate(lines) if line.startswith("\u2514"))
        assert bottom - top - 1 >= 3, screen
        assert "lines 4-6 of 33" in screen
        term.press("esc")
        term.outcome()

    def test_records_wrap_at_word_boundaries(self, terminal) -> None:
        """The record left after the answer wraps a plan's long lines at spaces, so no word of
        the plan is cut across two lines."""
        item = plan_review()
        words = "Migrate every service to pnpm and check continuous integration afterwards"
        item["detail"] = f"# Plan\n\n{words} {words}"
        term = terminal({"questions": [item]}, size=SMALL)
        screen = term.wait_for(HINT)
        screen = read_to_the_end(term, screen) if "lines " in screen else screen
        term.press("1")
        assert term.outcome()["answer"] == {
            "answers": [{"id": "plan-review", "selected": ["Approve"]}]
        }
        record = [line for line in term.everything() if line.startswith("  \u2502")]
        shown = " ".join(line.removeprefix("  \u2502").strip() for line in record)
        assert f"{words} {words}" in shown, record
