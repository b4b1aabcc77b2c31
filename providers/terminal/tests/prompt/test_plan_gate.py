"""A plan can be approved only once all of it has been on screen."""

from __future__ import annotations

import re

from conftest import plan_review

HINT = "Esc cancel"


def long_plan(steps: int = 31) -> dict:
    """A plan review of ``steps`` steps whose last step is destructive."""
    item = plan_review()
    lines = [f"{n}. Step number {n}" for n in range(1, steps)]
    lines.append(f"{steps}. Drop the production database")
    item["detail"] = "# Big migration\n\n" + "\n".join(lines)
    return {"questions": [item]}


def test_enter_on_an_unseen_plan_does_not_approve(terminal):
    """With 31 steps in 80x24 the card shows its position; Enter and 1 on Approve scroll the plan
    instead of approving it, and Esc then cancels: the plan was never approved."""
    term = terminal(long_plan())
    screen = term.wait_for("Talk instead", HINT)
    assert re.search(r"lines 1-\d+ of 33", screen)
    assert "Drop the production database" not in screen
    term.press("enter")
    term.wait_until(lambda s: "lines 1-" not in s, "the plan scrolled")
    term.press("esc")
    result = term.outcome()
    assert result.get("error") == "ASK_CANCELLED"
    assert "answer" not in result


def test_pages_skipped_in_one_burst_do_not_count_as_read(terminal):
    """PgDn six times at once jumps to the end of an 80-step plan without drawing the lines in
    between: Approve still refuses, says so, and Enter on it shows the first lines skipped
    (17 on), not the end again."""
    term = terminal(long_plan(80))
    term.wait_for("Talk instead", HINT)
    term.press("\x1b[6~" * 6)
    term.wait_for("Drop the production database", "lines 67-82 of 82")
    term.press("enter")
    screen = term.wait_for("Read the whole plan first")
    assert "ANSWER" not in term.settle(0.5)
    screen = term.text
    assert re.search(r"lines 17-\d+ of 82", screen), screen
    assert "15. Step number 15" in screen  # source line 17: the first one never drawn
    term.press("esc")
    assert term.outcome().get("error") == "ASK_CANCELLED"


def test_a_plan_read_to_the_end_can_be_approved(terminal):
    """Once PgDn, page by page, has brought every line on screen, Enter on Approve approves."""
    term = terminal(long_plan())
    screen = term.wait_for("Talk instead", HINT)
    while "Drop the production database" not in screen:
        found = re.search(r"lines \d+-\d+ of 33", screen)
        assert found is not None
        position = found.group(0)
        term.press("pagedown")
        screen = term.wait_until(lambda s, p=position: p not in s, "the plan scrolled")
    term.press("enter")
    assert term.outcome()["answer"] == {"answers": [{"id": "plan-review", "selected": ["Approve"]}]}


def test_the_plan_stays_in_the_scrollback_after_the_answer(terminal):
    """After the answer, the question, the answer and the plan itself are left on screen."""
    term = terminal({"questions": [plan_review()]})
    term.wait_for("Talk instead", HINT)
    term.press("1")
    result = term.outcome()
    assert "Approve this plan and leave plan mode?" in result["screen"]
    assert "Switch CI to pnpm install" in result["screen"]
    assert "Approve" in result["screen"].split("leave plan mode?", 1)[1]


def test_end_jumps_to_the_end_of_a_long_plan_at_40x12(terminal):
    """At 40x12 a 40-step plan: End shows its last step at once and leaves the pointer on its
    row (no button is pressed by a following Enter: Approve, still unread, scrolls instead of
    approving); Home goes back to its first lines."""
    term = terminal(long_plan(40), size=(12, 40))
    screen = term.wait_for("\u276f 1.", HINT)
    assert "Drop the production database" not in screen
    term.press("end")
    screen = term.wait_for("Drop the production")
    assert "\u276f 1." in screen  # the pointer stayed on Approve, not on Talk instead
    term.press("enter")
    assert "ANSWER" not in term.settle(0.5)  # not approved: lines 4-39 were never drawn
    term.press("home")
    term.wait_until(lambda s: "Drop the production" not in s, "back at the plan's start")
    term.press("esc")
    assert term.outcome().get("error") == "ASK_CANCELLED"


def test_after_end_enter_alone_reads_the_rest_then_approves_at_40x12(terminal):
    """At 40x12 a 40-step plan (42 lines, a box of 3): End shows its end with the pointer
    still on Approve; Enter on that Approve (not earned: lines 4-39 were jumped over) shows the
    first lines never drawn, and each Enter the next ones, so Enter alone reads the plan
    through, page by page, and then approves it. (Enter at the end used to change nothing.)"""
    term = terminal(long_plan(40), size=(12, 40))
    term.wait_for("\u276f 1.", HINT)
    term.press("end")
    screen = term.wait_for("lines 40-42 of 42")
    assert "\u276f 1. Approve" in screen  # End pressed no button and moved no pointer
    term.press("enter")
    screen = term.wait_for("lines 4-6 of 42")  # the first lines End jumped over
    assert "4. Step number 4" in screen
    presses = 1
    while "Approve \u2014 read the whole plan first" in screen:
        found = re.search(r"lines \d+-\d+ of 42", screen)
        assert found is not None, screen
        position = found.group(0)
        assert presses < 14, screen  # 42 lines, 3 a page: the lines 4-39 in 12 pages
        term.press("enter")
        presses += 1
        screen = term.wait_until(lambda s, p=position: p not in s, "the plan scrolled on")
    assert "ANSWER" not in term.transcript  # reading it through approved nothing by itself
    term.press("enter")
    assert term.outcome()["answer"] == {"answers": [{"id": "plan-review", "selected": ["Approve"]}]}
