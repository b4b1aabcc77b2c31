"""A team at the terminal: the login name is the person (`team.may_answer`), and a review that
needs several approvals is counted with `team.tally`. Real pseudo-terminals."""

from __future__ import annotations

import signal

from conftest import plan_review, question

HINT = "Esc cancel"
OUTSIDER = "bo may not answer this question: it is for group:oncall, cy"
PEOPLE = '[groups]\noncall = ["ana", "dee"]\n'


def _as(person: str) -> dict[str, str]:
    """The environment of a terminal whose login name is ``person`` (what getpass reads)."""
    return {"LOGNAME": person, "USER": person}


def _people(tmp_path) -> dict[str, str]:
    path = tmp_path / "people.toml"
    path.write_text(PEOPLE, encoding="utf-8")
    return {"DSH_USER_QUESTIONS_PEOPLE": str(path)}


def test_an_outsider_is_refused_and_nothing_is_answered(terminal, tmp_path):
    """bo is not in the audience: the terminal shows the refusal instead of the form, keys
    answer nothing, and the question stays open until it is withdrawn (the abort)."""
    request = {"questions": [question()], "audience": ["group:oncall", "cy"]}
    term = terminal(request, **_as("bo"), **_people(tmp_path))
    screen = term.wait_for(OUTSIDER)
    assert "The question stays open for them" in screen
    assert "Which package manager" not in screen
    term.press("1", "enter")
    assert "ANSWER" not in term.settle(1.0)
    assert "ANSWER" not in term.transcript
    term.child.kill(signal.SIGUSR1)
    result = term.outcome()
    assert result.get("error") == "ASK_ABORTED"
    assert "answer" not in result


def test_a_member_of_the_audience_answers(terminal, tmp_path):
    """ana is in group:oncall: the form as always, her login name on the answer."""
    request = {"questions": [question()], "audience": ["group:oncall", "cy"]}
    term = terminal(request, **_as("ana"), **_people(tmp_path))
    term.wait_for(HINT)
    term.press("1")
    result = term.outcome()
    assert result["answer"] == {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
    assert result["answered_by"] == "ana"


def test_the_same_login_approving_twice_counts_once(terminal):
    """A review needing 2 approvals: ana's approval is counted (1 of 2) and the review asked
    again; her second approval still counts once; her feedback then settles it at once."""
    review = plan_review()
    review["intent"]["approvals"] = 2
    term = terminal({"questions": [review], "audience": ["ana", "bo"]}, **_as("ana"))
    term.wait_for("Talk instead", HINT)
    term.press("enter")
    term.wait_for("Approved by ana (1 of 2).", "Another person must approve too")
    term.wait_for("Talk instead", HINT)
    term.press("enter")
    term.wait_until(
        lambda _screen: term.transcript.count("Approved by ana (1 of 2).") == 2,
        "the second approval counted once",
    )
    term.wait_for("Talk instead", HINT)
    term.press("2")
    term.wait_for("What should change?")
    term.press("not on a Friday", "enter")
    result = term.outcome()
    assert result["answer"] == {
        "answers": [{"id": "plan-review", "selected": [], "custom": "not on a Friday"}]
    }
    assert result["answered_by"] == "ana"


def test_line_mode_counts_approvals_the_same_way(piped):
    """Through pipes: two approvals by one login count once (the count shown each time), and
    the feedback that follows settles the review with that login's answer."""
    review = plan_review()
    review["intent"]["approvals"] = 2
    request = {"questions": [review], "audience": ["ana", "bo"]}
    result = piped(request, "approve\napprove\nnot on a Friday\n", **_as("ana"))
    assert result.stderr.count("Approved by ana (1 of 2).") == 2
    assert result.answer == {
        "answers": [{"id": "plan-review", "selected": [], "custom": "not on a Friday"}]
    }
    assert result.answered_by == "ana"
