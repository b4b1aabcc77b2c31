"""Line mode through real pipes: prompts on stderr, one answer line per question on stdin."""

from __future__ import annotations

import getpass
import json
import os
import shlex
import signal
import subprocess
import sys

import pytest
from conftest import DRIVER, TIMEOUT, plan_review, question
from dsh_user_questions import AskUserQuestionItem, AskUserQuestionOption

from dsh_user_questions_terminal._lines import parse_answer_line


@pytest.mark.parametrize(
    ("line", "answer"),
    [
        ("2", {"id": "pkg", "selected": ["npm"]}),
        ("  3  ", {"id": "pkg", "selected": ["yarn"]}),
        ("", {"id": "pkg", "selected": []}),
        ("bun please", {"id": "pkg", "selected": [], "custom": "bun please"}),
        ("npm", {"id": "pkg", "selected": ["npm"]}),
    ],
)
def test_single_select_answer_lines(piped, line, answer):
    """A number picks that option, an exact label picks that option, an empty line skips, other
    text is the human's own answer."""
    result = piped({"questions": [question()]}, line + "\n")
    assert result.answer == {"answers": [answer]}


def test_multi_select_picks_several_with_commas(piped):
    """``1,3`` on a multi-select picks both options (duplicates dropped)."""
    result = piped({"questions": [question(multiSelect=True)]}, "1, 3,1\n")
    assert result.answer == {"answers": [{"id": "pkg", "selected": ["pnpm", "yarn"]}]}


def test_several_numbers_on_a_single_select_ask_again(piped):
    """Several numbers on a single-select are refused and the next line answers."""
    result = piped({"questions": [question()]}, "1,2\n2\n")
    assert "pick one option" in result.stderr
    assert result.answer == {"answers": [{"id": "pkg", "selected": ["npm"]}]}


def test_question_without_options_takes_the_line_as_text(piped):
    """On a question without options even a number is free text."""
    result = piped({"questions": [{"id": "n", "question": "How many workers?"}]}, "4\n")
    assert result.answer == {"answers": [{"id": "n", "selected": [], "custom": "4"}]}


def test_one_line_per_question_in_order(piped):
    """Each question reads its own line, in the order asked."""
    second = question("ci", question="Which CI?", options=[{"label": "GitHub"}, {"label": "Drone"}])
    result = piped({"questions": [question(), second]}, "1\n2\n")
    assert result.answer == {
        "answers": [{"id": "pkg", "selected": ["pnpm"]}, {"id": "ci", "selected": ["Drone"]}]
    }


def test_concurrent_asks_take_turns(piped):
    """Two asks at once are asked one after the other, each reading its own line."""
    result = piped({"questions": [question()]}, "1\n2\n", "--twice")
    picks = sorted(answer["answers"][0]["selected"][0] for answer in result.answers)
    assert picks == ["npm", "pnpm"]
    first, second = result.stderr.split("> 1\n")
    assert first.count("Which package manager") == 1
    assert second.count("Which package manager") == 1
    assert second.rstrip().endswith("> 2")


def test_registered_provider_object_asks_too(piped):
    """``register_provider(TerminalProvider())`` asks the same way as the entry-point plugin."""
    result = piped({"questions": [question()]}, "2\n", "--register")
    assert result.answer == {"answers": [{"id": "pkg", "selected": ["npm"]}]}


def test_the_answer_names_the_login_name(piped):
    """Whoever sits at the terminal is its login user: the answer's ``answered_by``."""
    result = piped({"questions": [question()]}, "2\n")
    assert result.answer == {"answers": [{"id": "pkg", "selected": ["npm"]}]}
    assert result.answered_by == getpass.getuser()


def test_end_of_piped_input_is_not_interactive(piped):
    """A pipe that ends before every question is answered is no person cancelling: the ask
    raises NOT_INTERACTIVE, never ASK_CANCELLED."""
    second = question("ci", question="Which CI?")
    result = piped({"questions": [question(), second]}, "1\n")
    assert result.error == "NOT_INTERACTIVE"
    assert "the user cannot be reached from here" in result.stdout
    assert "its input ended before this question was answered" in result.stdout
    assert result.answer is None


def test_ctrl_d_typed_at_a_terminal_cancels(terminal):
    """In line mode at a terminal, Ctrl-D (end of input typed by the person) is ASK_CANCELLED."""
    term = terminal({"questions": [question()]}, DSH_USER_QUESTIONS_PLAIN="1")
    term.wait_for("Answer: a number 1-3")
    term.press("\x04")
    assert term.outcome()["error"] == "ASK_CANCELLED"


def test_last_line_without_newline_still_answers(piped):
    """A final line without its line break is still an answer."""
    result = piped({"questions": [question()]}, "3")
    assert result.answer == {"answers": [{"id": "pkg", "selected": ["yarn"]}]}


def test_prompts_go_to_stderr_not_stdout(piped):
    """The question, its detail and its numbered options are written to stderr; stdout has none."""
    result = piped({"questions": [question(detail="Use **one** of them.")]}, "1\n")
    assert "[Package manager]" in result.stderr
    assert "Which package manager should I use?" in result.stderr
    assert "Use one of them." in result.stderr
    assert "  1. pnpm - fast, disk-efficient" in result.stderr
    assert "Which package manager" not in result.stdout


def test_plan_review_approve_and_feedback(piped):
    """On a plan review, 1 approves and text keeps planning with that feedback."""
    approved = piped({"questions": [plan_review()]}, "1\n")
    assert approved.answer == {"answers": [{"id": "plan-review", "selected": ["Approve"]}]}
    assert "\u2502 Migrate to pnpm" in approved.stderr
    assert "Answer: 1 (or approve, a, yes) approves" in approved.stderr
    feedback = piped({"questions": [plan_review()]}, "split the CI change out\n")
    assert feedback.answer == {
        "answers": [{"id": "plan-review", "selected": [], "custom": "split the CI change out"}]
    }


def test_plain_env_forces_line_mode(terminal):
    """With DSH_USER_QUESTIONS_PLAIN=1 a real terminal gets line mode."""
    term = terminal({"questions": [question()]}, DSH_USER_QUESTIONS_PLAIN="1")
    term.wait_for("Answer: a number 1-3")
    term.press("2\r")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["npm"]}]}


def test_dumb_terminal_gets_line_mode(terminal):
    """With TERM=dumb (no cursor movement) a real terminal gets line mode."""
    term = terminal({"questions": [question()]}, TERM="dumb")
    term.wait_for("Answer: a number 1-3")
    term.press("3\r")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["yarn"]}]}


def test_model_text_is_inert_on_stderr(piped):
    """Escape sequences, C1 controls and bidi overrides reach stderr as visible stand-ins."""
    hostile = question(
        question="Pick \x1b[31mRED\x1b]0;title\x07 \x9b2J \u202eexe.txt",
        detail="\x1b[2J&#x1b;",
        options=[{"label": "\x1b[8mhidden", "description": "\r\x1b[1A"}],
    )
    result = piped({"questions": [hostile]}, "1\n")
    assert "Pick <U+001B>[31mRED<U+001B>]0;title<U+0007> <U+009B>2J <U+202E>exe.txt" in (
        result.stderr
    )
    assert "1. <U+001B>[8mhidden -  <U+001B>[1A" in result.stderr
    assert "\x1b" not in result.stderr
    assert "\x9b" not in result.stderr
    assert "\u202e" not in result.stderr
    assert result.answer == {"answers": [{"id": "pkg", "selected": ["\x1b[8mhidden"]}]}


def test_abort_while_waiting_for_a_line(tmp_path):
    """An abort while line mode waits on stdin ends the ask (ASK_ABORTED) and the process exits."""
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"questions": [question()]}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_USER_QUESTIONS_")}
    with subprocess.Popen(
        [sys.executable, str(DRIVER), str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as process:
        assert process.stderr is not None
        assert process.stdout is not None
        seen = ""
        while not seen.endswith("> "):
            seen += process.stderr.read(1)
        process.send_signal(signal.SIGUSR1)
        out = process.stdout.read()
        assert process.wait(timeout=TIMEOUT) == 0
        assert process.stdin is not None
        process.stdin.close()
    assert "ERROR ASK_ABORTED" in out


def test_parse_answer_line_refuses_several_picks_on_a_single_select():
    """The line parser raises ValueError for ``1,2`` on a single-select question."""
    item = AskUserQuestionItem(
        id="q", question="?", options=[AskUserQuestionOption("a"), AskUserQuestionOption("b")]
    )
    with pytest.raises(ValueError, match="pick one option"):
        parse_answer_line(item, "1,2")


def test_long_lines_wrap_to_the_terminal_width(piped):
    """Long question, detail and option text is wrapped to COLUMNS, no word lost."""
    words = " ".join(f"word{n}" for n in range(60))
    long = question(question=words, detail=words, options=[{"label": "a", "description": words}])
    result = piped({"questions": [long]}, "1\n", COLUMNS="60")
    assert max(len(line) for line in result.stderr.splitlines()) <= 60
    assert result.stderr.count("word59") == 3


@pytest.mark.parametrize("line", ["7", "0", "2.", "1 3", "#2", "1,2"])
def test_ambiguous_lines_are_refused_and_asked_again(piped, line):
    """A number with no such option, ``2.``, ``1 3`` or ``1,2`` on a single-select is neither a
    pick nor free text: a short re-prompt says why, and the next line answers."""
    result = piped({"questions": [question()]}, line + "\n2\n")
    assert result.stderr.count("> ") == 2
    assert "try again" in result.stderr
    assert result.answer == {"answers": [{"id": "pkg", "selected": ["npm"]}]}


def test_multi_select_takes_numbers_separated_by_spaces(piped):
    """``1 3`` on a multi-select picks both options."""
    result = piped({"questions": [question(multiSelect=True)]}, "1 3\n")
    assert result.answer == {"answers": [{"id": "pkg", "selected": ["pnpm", "yarn"]}]}


@pytest.mark.parametrize("line", ["approve", "a", "1", "Approve", "yes", "y"])
def test_plan_review_line_mode_approves_on_approve_words(piped, line):
    """At a plan review, ``approve``, ``a``, ``1``, ``yes`` (any case) approve the plan."""
    result = piped({"questions": [plan_review()]}, line + "\n")
    assert result.answer == {"answers": [{"id": "plan-review", "selected": ["Approve"]}]}


def test_a_huge_line_is_read_whole_and_refused_by_the_answer_rules(piped):
    """A 4 MiB answer line is read whole (its length is reported) and refused by the core's
    answer rules (at most 10,000 characters) with the reason; the next line answers."""
    text = "x" * (4 * 1024 * 1024)
    result = piped({"questions": [{"id": "n", "question": "Paste it"}]}, text + "\nshort\n")
    assert f"custom text of {len(text)} characters (at most 10000)" in result.stderr
    assert result.answer == {"answers": [{"id": "n", "selected": [], "custom": "short"}]}


def test_text_with_control_characters_is_asked_again(piped):
    """Typed text the core would refuse (an escape sequence) is asked again, not a failed ask."""
    result = piped({"questions": [{"id": "n", "question": "Name?"}]}, "a\x1b[2Jb\nab\n")
    assert "control character U+001B" in result.stderr
    assert "\x1b" not in result.stderr
    assert result.answer == {"answers": [{"id": "n", "selected": [], "custom": "ab"}]}


@pytest.mark.parametrize(
    ("redirect", "what"),
    [("<&-", "stdin"), ("2>&-", "stderr"), ("0>/dev/null", "stdin")],
)
def test_closed_or_odd_streams_give_a_coded_error(tmp_path, redirect, what):
    """With stdin or stderr closed, or stdin the null device open only for writing (and no
    controlling terminal), ask() raises NOT_INTERACTIVE naming the stream instead of an uncoded
    exception."""
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"questions": [question()]}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_USER_QUESTIONS_")}
    command = f"exec {shlex.quote(sys.executable)} {shlex.quote(str(DRIVER))} request.json"
    process = subprocess.run(
        ["setsid", "sh", "-c", f"{command} {redirect}"],
        cwd=tmp_path,
        # stderr's case: stdin a pipe with an answer, so only the closed stderr is in the way.
        input="1\n" if what == "stderr" else None,
        stdin=None if what == "stderr" else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT,
        check=False,
    )
    assert "ERROR NOT_INTERACTIVE" in process.stdout, process.stdout + process.stderr
    assert what in process.stdout
    assert "Traceback" not in process.stderr


def test_a_timeout_while_waiting_for_a_line(tmp_path):
    """A timeout while line mode waits on stdin ends the ask with ASK_TIMED_OUT."""
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"questions": [question()]}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_USER_QUESTIONS_")}
    with subprocess.Popen(
        [sys.executable, str(DRIVER), str(path), "--timeout=1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as process:
        assert process.stdout is not None
        out = process.stdout.read()  # stdin stays open: only the timeout can end the ask
        assert process.wait(timeout=TIMEOUT) == 0
        assert process.stdin is not None
        process.stdin.close()
    assert "ERROR ASK_TIMED_OUT" in out


class TestNoOwnWords:
    """Line mode on a question with ``allow_other`` false takes only its options."""

    def test_own_words_are_refused_and_asked_again(self, piped):
        """Text that is no option is refused with the way to answer; the next line answers,
        and the prompt never offers "your own text"."""
        result = piped({"questions": [question(allow_other=False)]}, "bun please\n2\n")
        assert "'bun please' is not one of the options: type a number 1-3 or a label" in (
            result.stderr
        )
        assert "Answer: a number 1-3; an empty line skips." in result.stderr
        assert "own text" not in result.stderr
        assert result.answer == {"answers": [{"id": "pkg", "selected": ["npm"]}]}

    def test_a_multi_select_says_numbers_only(self, piped):
        """A multi-select's prompt offers numbers only; an empty line still skips."""
        result = piped({"questions": [question(multiSelect=True, allow_other=False)]}, "\n")
        assert "Answer: numbers 1-3 separated by commas (e.g. 1,3); an empty line skips." in (
            result.stderr
        )
        assert result.answer == {"answers": [{"id": "pkg", "selected": []}]}
