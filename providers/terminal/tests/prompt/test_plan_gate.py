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
    """PgDn three times at once jumps to the end without drawing the lines in between: Approve
    still refuses until those lines have been on screen (PgUp shows them)."""
    term = terminal(long_plan())
    term.wait_for("Talk instead", HINT)
    term.press("\x1b[6~" * 3)
    term.wait_for("Drop the production database")
    term.press("enter")
    term.wait_for("Read the whole plan first")
    assert "ANSWER" not in term.settle(0.5)
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
