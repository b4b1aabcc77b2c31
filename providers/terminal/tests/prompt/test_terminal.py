"""The interactive prompt in a real pseudo-terminal, read through a screen emulator."""

from __future__ import annotations

import signal

from conftest import PLAN, plan_review, question
from dsh_user_questions import AskUserQuestionAnswer
from dsh_user_questions.plan_review import plan_review_question, read_plan_review

HINT = "Esc cancel"


def test_arrow_and_enter_pick_one_option(terminal):
    """Down then Enter picks the second option of a single-select."""
    term = terminal({"questions": [question()]})
    term.wait_for("Which package manager should I use?", HINT)
    term.press("down", "enter")
    result = term.outcome()
    assert result["answer"] == {"answers": [{"id": "pkg", "selected": ["npm"]}]}
    assert result["tty"] == "restored"


def test_number_key_picks_that_option(terminal):
    """Typing 3 picks the third option at once."""
    term = terminal({"questions": [question()]})
    term.wait_for(HINT)
    term.press("3")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["yarn"]}]}


def test_screen_shows_header_question_detail_and_descriptions(terminal):
    """The header chip, the question, the markdown detail and each option's description show."""
    term = terminal({"questions": [question(detail="Pick **one**:\n\n- `pnpm` is fastest")]})
    screen = term.wait_for(HINT)
    assert screen.splitlines()[0] == " Package manager"
    assert all(term.screen.buffer[0][x].reverse for x in range(len(" Package manager ")))
    assert "Pick one:" in screen
    assert "\u2022 pnpm is fastest" in screen
    assert "1. pnpm \u2014 fast, disk-efficient" in screen
    assert "4. Other \u2014 type your own answer" in screen
    assert "5. Skip" in screen
    term.press("esc")
    term.outcome()


def test_multi_select_checks_boxes_and_confirms(terminal):
    """Space and number keys toggle checkboxes; Enter answers the checked labels in option order."""
    term = terminal({"questions": [question(multiSelect=True)]})
    term.wait_for("[ ] pnpm", HINT)
    term.press("3")
    term.wait_for("[x] yarn")
    term.press("up", "up", "space")
    term.wait_for("[x] pnpm")
    term.press("2", "2")
    term.press("enter")
    result = term.outcome()
    assert result["answer"] == {"answers": [{"id": "pkg", "selected": ["pnpm", "yarn"]}]}


def test_multi_select_other_supplements_the_checked_labels(terminal):
    """On a multi-select, Other's text is sent as custom beside the checked labels."""
    term = terminal({"questions": [question(multiSelect=True)]})
    term.wait_for("[ ] pnpm", HINT)
    term.press("1", "4")
    term.wait_for("Your answer:")
    term.press("bun", "enter")
    term.wait_for("[x] Other: bun")
    term.press("enter")
    result = term.outcome()
    assert result["answer"] == {"answers": [{"id": "pkg", "selected": ["pnpm"], "custom": "bun"}]}


def test_other_sends_free_text_instead_of_a_pick(terminal):
    """Choosing Other and typing text answers it as custom with nothing selected."""
    term = terminal({"questions": [question()]})
    term.wait_for(HINT)
    term.press("4")
    term.wait_for("Your answer:")
    term.press("bun, please", "enter")
    result = term.outcome()
    assert result["answer"] == {"answers": [{"id": "pkg", "selected": [], "custom": "bun, please"}]}


def test_skip_answers_with_nothing_selected(terminal):
    """Choosing Skip answers the question as {id, selected: []}."""
    term = terminal({"questions": [question()]})
    term.wait_for(HINT)
    term.press("up", "enter")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": []}]}


def test_question_without_options_takes_text(terminal):
    """A question without options opens the text field at once and sends what is typed."""
    term = terminal(
        {"questions": [{"id": "name", "question": "What should the branch be called?"}]}
    )
    term.wait_for("Your answer:", "Enter send")
    term.press("feature/pnpm", "enter")
    result = term.outcome()
    assert result["answer"] == {
        "answers": [{"id": "name", "selected": [], "custom": "feature/pnpm"}]
    }


def test_back_returns_to_the_previous_question_and_summary_submits(terminal):
    """Left goes back a page and a new pick replaces the old one; the summary lists the answers,
    a number there changes one (straight back to the summary) and Enter submits."""
    second = question("ci", header="CI", question="Which CI?", options=[{"label": "GitHub"}])
    term = terminal({"questions": [question(), second]})
    term.wait_for("question 1 of 2", HINT)
    term.press("1")
    term.wait_for("question 2 of 2", "Which CI?", HINT)
    term.press("left")
    term.wait_for("question 1 of 2", HINT)
    term.press("2")
    term.wait_for("Which CI?", HINT)
    term.press("1")
    term.wait_for("Summary", "Submit these answers?", "Package manager: npm", "CI: GitHub", HINT)
    term.press("1")
    term.wait_for("question 1 of 2", HINT)
    term.press("3")
    term.wait_for("Summary", "Package manager: yarn", HINT)
    term.press("enter")
    result = term.outcome()
    assert result["answer"] == {
        "answers": [{"id": "pkg", "selected": ["yarn"]}, {"id": "ci", "selected": ["GitHub"]}]
    }


def test_plan_review_shows_the_plan_as_a_card(terminal):
    """A plan-review question shows the plan in a card with Approve, Keep planning, Talk instead."""
    term = terminal({"questions": [plan_review()]})
    screen = term.wait_for("Talk instead", HINT)
    assert "Plan" in screen.splitlines()[2]
    assert "Migrate to pnpm" in screen
    assert "2. Switch CI to pnpm install" in screen
    assert "1. Approve" in screen
    assert "2. Keep planning" in screen
    assert "Other" not in screen
    term.press("esc")
    term.outcome()


def test_plan_review_approve(terminal):
    """Approve answers the approve label alone."""
    term = terminal({"questions": [plan_review()]})
    term.wait_for("Talk instead", HINT)
    term.press("enter")
    result = term.outcome()
    assert result["answer"] == {"answers": [{"id": "plan-review", "selected": ["Approve"]}]}


def test_plan_review_keep_planning_asks_for_feedback(terminal):
    """Keep planning asks what should change and sends the feedback as custom text."""
    term = terminal({"questions": [plan_review()]})
    term.wait_for("Talk instead", HINT)
    term.press("2")
    term.wait_for("What should change?")
    term.press("use yarn instead", "enter")
    result = term.outcome()
    assert result["answer"] == {
        "answers": [{"id": "plan-review", "selected": [], "custom": "use yarn instead"}]
    }


def test_plan_review_keep_planning_without_feedback(terminal):
    """Keep planning with an empty feedback line answers the Keep planning label."""
    term = terminal({"questions": [plan_review()]})
    term.wait_for("Talk instead", HINT)
    term.press("down", "enter")
    term.wait_for("What should change?")
    term.press("enter")
    result = term.outcome()
    assert result["answer"] == {"answers": [{"id": "plan-review", "selected": ["Keep planning"]}]}


def test_plan_review_talk_instead_cancels(terminal):
    """Talk instead asks first, as the page asks before a close: y closes the question with
    ASK_CANCELLED."""
    term = terminal({"questions": [plan_review()]})
    term.wait_for("Talk instead", HINT)
    term.press("3")
    term.wait_for("Talk instead? This closes the question. y talk")
    term.press("y")
    result = term.outcome()
    assert result["error"] == "ASK_CANCELLED"
    assert result["tty"] == "restored"


def test_talk_instead_kept_by_any_other_key(terminal):
    """Enter on Talk instead (End then Enter, a slip) only asks; n keeps the card, whose
    Approve then still answers."""
    term = terminal({"questions": [plan_review()]})
    term.wait_for("Talk instead", HINT)
    term.press("3")
    term.wait_for("Talk instead? This closes the question.")
    term.press("n")
    term.wait_until_gone("This closes the question")
    assert "ERROR" not in term.settle(0.3)
    term.press("1")
    assert term.outcome()["answer"] == {"answers": [{"id": "plan-review", "selected": ["Approve"]}]}


def test_escape_cancels(terminal):
    """Esc closes the question with ASK_CANCELLED, erases the prompt and restores the terminal."""
    term = terminal({"questions": [question()]})
    term.wait_for(HINT)
    term.press("esc")
    result = term.outcome()
    assert result["error"] == "ASK_CANCELLED"
    assert result["tty"] == "restored"
    assert "Which package manager" not in result["screen"]


def test_escape_in_the_text_field_goes_back_to_the_list(terminal):
    """Esc while typing Other's text returns to the options instead of cancelling."""
    term = terminal({"questions": [question()]})
    term.wait_for(HINT)
    term.press("4")
    term.wait_for("Your answer:")
    term.press("esc")
    term.wait_until_gone("Your answer:")
    term.press("1")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}


def test_ctrl_c_cancels(terminal):
    """Ctrl-C closes the question with ASK_CANCELLED."""
    term = terminal({"questions": [question()]})
    term.wait_for(HINT)
    term.press("ctrl-c")
    result = term.outcome()
    assert result["error"] == "ASK_CANCELLED"
    assert result["tty"] == "restored"


def test_abort_closes_the_prompt_and_restores_the_terminal(terminal):
    """Aborting the signal while the prompt is open erases it, restores the tty: ASK_ABORTED."""
    term = terminal({"questions": [question()]})
    term.wait_for(HINT)
    term.child.kill(signal.SIGUSR1)
    result = term.outcome()
    assert result["error"] == "ASK_ABORTED"
    assert result["tty"] == "restored"
    assert "Which package manager" not in result["screen"]
    assert "Esc cancel" not in result["screen"]
    assert term.screen.cursor.hidden is False


def test_abort_from_another_thread_closes_the_prompt(terminal):
    """An abort from a thread other than the event loop's also ends the prompt: ASK_ABORTED."""
    term = terminal({"questions": [question()]})
    term.wait_for(HINT)
    term.child.kill(signal.SIGUSR2)
    result = term.outcome()
    assert result["error"] == "ASK_ABORTED"
    assert result["tty"] == "restored"
    assert "Which package manager" not in result["screen"]


def test_cancelling_the_ask_closes_the_prompt_and_restores_the_terminal(terminal):
    """Cancelling the task that awaits ask() erases the prompt and restores the terminal."""
    term = terminal({"questions": [question()]}, "--cancel")
    term.wait_for(HINT)
    term.child.kill(signal.SIGUSR1)
    result = term.outcome()
    assert result["error"] == "CANCELLED"
    assert result["tty"] == "restored"
    assert "Which package manager" not in result["screen"]


def test_escape_sequences_in_a_question_are_shown_inert(terminal):
    """Escapes, C1 controls and bidi overrides in model text show as visible, inert characters."""
    hostile = question(
        header="\x1b]0;pwned\x07Title",
        question="Pick \x1b[31mRED\x1b[0m\x1b[2J now \x9b1m \u202eexe.txt",
        detail="\x1b[1;1H*moved* &#x1b;[31m",
        options=[{"label": "\x1b[41mbg", "description": "\x07bell\x08"}],
    )
    term = terminal({"questions": [hostile]})
    screen = term.wait_for(HINT)
    assert "Pick <U+001B>[31mRED<U+001B>[0m<U+001B>[2J now <U+009B>1m <U+202E>exe.txt" in screen
    assert "<U+001B>]0;pwned<U+0007>Title" in screen
    assert "<U+001B>[1;1Hmoved" in screen
    assert "<U+001B>[41mbg" in screen
    assert "<U+0007>bell<U+0008>" in screen
    assert term.screen.title == ""
    colours = {char.fg for row in term.screen.buffer.values() for char in row.values()}
    colours |= {char.bg for row in term.screen.buffer.values() for char in row.values()}
    assert not colours & {"red"}
    term.press("esc")
    term.outcome()


def test_long_detail_scrolls_with_page_down(terminal):
    """A detail taller than the terminal is clipped with a scroll hint and PgDn shows the rest."""
    detail = "\n\n".join(f"Paragraph {n}" for n in range(1, 31))
    term = terminal({"questions": [question(detail=detail)]})
    screen = term.wait_for("PgUp/PgDn scroll", HINT)
    assert "Paragraph 1" in screen
    assert "Paragraph 30" not in screen
    term.press(*["pagedown"] * 6)
    term.wait_for("Paragraph 30")
    term.press("1")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}


def test_entry_point_provides_the_terminal(terminal):
    """Loading the installed dsh entry points registers this provider as `terminal`."""
    term = terminal({"questions": [question()]}, "--entrypoints")
    term.wait_for(HINT)
    term.press("1")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}


def test_plan_markdown_heading_is_in_the_card(terminal):
    """The plan's level-1 heading text is the card's first line."""
    term = terminal({"questions": [plan_review()]})
    screen = term.wait_for("Talk instead", HINT)
    card = screen.splitlines()[3]
    assert PLAN.splitlines()[0].lstrip("# ") in card
    term.press("esc")
    term.outcome()


def test_unknown_intent_is_shown_as_a_generic_list(terminal):
    """An intent kind other than plan-review gets the ordinary rows (Other, Skip), no card."""
    item = question(detail="Why: speed.", intent={"kind": "deploy-review", "approve": "pnpm"})
    term = terminal({"questions": [item]})
    screen = term.wait_for("5. Skip", HINT)
    assert "Talk instead" not in screen
    assert "\u250c" not in screen
    term.press("1")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}


def test_core_plan_review_question_round_trips_through_read_plan_review(terminal):
    """The core's plan_review_question, answered in the card, reads back as approved or as
    keep planning with the typed feedback."""
    request = {"questions": [plan_review_question(PLAN).to_dict()]}
    approve = terminal(request)
    approve.wait_for("Talk instead", HINT)
    approve.press("1")
    answer = AskUserQuestionAnswer.from_dict(approve.outcome()["answer"])
    assert read_plan_review(answer).approved is True
    keep = terminal(request)
    keep.wait_for("Talk instead", HINT)
    keep.press("2")
    keep.wait_for("What should change?")
    keep.press("smaller steps", "enter")
    outcome = read_plan_review(AskUserQuestionAnswer.from_dict(keep.outcome()["answer"]))
    assert (outcome.approved, outcome.feedback) == (False, "smaller steps")


def test_long_question_wraps_on_screen(terminal):
    """A question longer than the terminal is wide wraps onto further lines, every word shown."""
    words = " ".join(f"w{n}" for n in range(40))
    term = terminal({"questions": [question(question=words)]})
    screen = term.wait_for(HINT)
    assert "w0 " in screen.splitlines()[1]
    assert "w39" in screen
    assert all(f"w{n}" in screen.replace("\n", " ") for n in range(40))
    term.press("esc")
    term.outcome()


def test_a_timeout_closes_the_prompt_and_restores_the_terminal(terminal):
    """An ask whose timeout expires while the prompt is up ends with ASK_TIMED_OUT, the prompt
    erased and the terminal restored."""
    term = terminal({"questions": [question()]}, "--timeout=2")
    term.wait_for(HINT)
    result = term.outcome()
    assert result["error"] == "ASK_TIMED_OUT"
    assert result["tty"] == "restored"
    assert "Which package manager" not in result["screen"]
    assert term.screen.cursor.hidden is False
