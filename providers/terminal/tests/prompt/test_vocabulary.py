"""Recommended options, secret answers and diff review (issue 21), in a real pty and in pipes."""

from __future__ import annotations

import re

import pytest
from conftest import question

HINT = "Esc cancel"
SECRET = "hunter2-s3cret"


def recommending(index: int = 1, **fields) -> dict:
    item = question(**fields)
    item["options"][index]["recommended"] = True
    return {"questions": [item]}


def secret_question() -> dict:
    return {"questions": [{"id": "token", "question": "Your API token?", "secret": True}]}


DIFF = """\
diff --git a/app.py b/app.py
index 3b18e51..a9c2f0d 100644
--- a/app.py
+++ b/app.py
@@ -10,3 +10,4 @@ def main():
     setup()
-    run(debug=True)
+    run(debug=False)
+    report()
     teardown()
"""


def diff_review(diff: str = DIFF) -> dict:
    return {
        "questions": [
            {
                "id": "edit",
                "header": "Edit",
                "question": "Apply this change to app.py?",
                "detail": diff,
                "options": [
                    {"label": "Apply", "description": "write the change"},
                    {"label": "Keep editing", "description": "say what to change"},
                ],
                "intent": {"kind": "diff-review", "approve": "Apply"},
            }
        ]
    }


# --- recommended ---------------------------------------------------------------------------


def test_the_recommended_option_is_marked_and_focused_never_picked(terminal):
    """The recommended option carries "(recommended)" and the pointer starts on it; nothing is
    checked or answered until a key is pressed: Enter then picks it."""
    term = terminal(recommending(1))
    screen = term.wait_for(HINT)
    assert "2. npm (recommended) \u2014 comes with node" in screen
    assert term.pointer_line() is not None
    assert term.pointer_line().startswith("\u276f 2. npm")
    assert "ANSWER" not in term.settle(0.5)
    term.press("enter")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["npm"]}]}


@pytest.mark.flaky(reruns=2)
def test_a_timeout_never_picks_the_recommended_option(terminal):
    """With the pointer on the recommended option, the ask's timeout is ASK_TIMED_OUT."""
    term = terminal(recommending(1), "--timeout=1")
    term.wait_for(HINT)
    result = term.outcome()
    assert result["error"] == "ASK_TIMED_OUT"
    assert "answer" not in result


def test_multi_select_recommended_is_focused_not_checked(terminal):
    """On a multi-select the recommended option is focused but its box stays empty."""
    term = terminal(recommending(2, multiSelect=True))
    screen = term.wait_for(HINT)
    assert "[ ] yarn (recommended)" in screen
    assert term.pointer_line().startswith("\u276f 3. [ ] yarn")
    term.press("1", "enter")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}


def test_line_mode_marks_the_recommended_option_and_an_empty_line_skips(piped):
    """In line mode the option is marked; an empty line skips rather than picking it."""
    result = piped(recommending(1), "\n")
    assert "  2. npm (recommended) - comes with node" in result.stderr
    assert result.answer == {"answers": [{"id": "pkg", "selected": []}]}


# --- secret ----------------------------------------------------------------------------------


def _before_the_outcome(transcript: str) -> str:
    """What the provider wrote (the driver prints the answer itself afterwards)."""
    return transcript.split("ANSWER", 1)[0]


def test_a_secret_is_typed_masked_and_kept_out_of_the_record(terminal):
    """A secret question's text field shows one dot a character; the secret never reaches the
    terminal (no echo, no summary, no record: "(secret given)") but is the answer's custom."""
    term = terminal(secret_question())
    term.wait_for("Your answer:", "Enter send")
    term.press(SECRET)
    screen = term.wait_for("\u2022" * len(SECRET))
    assert SECRET not in screen
    term.press("enter")
    result = term.outcome()
    assert result["answer"] == {"answers": [{"id": "token", "selected": [], "custom": SECRET}]}
    written = _before_the_outcome(term.transcript)
    assert SECRET not in written
    assert "hunter2" not in written
    assert "\u2192 (secret given)" in result["screen"]


def test_a_secret_in_line_mode_at_a_terminal_is_not_echoed(terminal):
    """Line mode at a terminal reads a secret with echo off (as getpass does)."""
    term = terminal(secret_question(), DSH_USER_QUESTIONS_PLAIN="1")
    # Typed as soon as the prompt shows (echo is already off then; before, a loaded machine
    # could echo the keys and the no-echo switch's flush drop them).
    term.wait_until(lambda screen: screen.rstrip().endswith(">"), "the answer prompt")
    term.press(SECRET + "\r")
    result = term.outcome()
    assert result["answer"] == {"answers": [{"id": "token", "selected": [], "custom": SECRET}]}
    assert SECRET not in _before_the_outcome(term.transcript)


def test_a_secret_through_pipes_is_not_echoed_to_stderr(piped):
    """Through pipes, the transcript on stderr says "(secret given)", never the text."""
    result = piped(secret_question(), SECRET + "\n")
    assert result.answer == {"answers": [{"id": "token", "selected": [], "custom": SECRET}]}
    assert SECRET not in result.stderr
    assert "> (secret given)" in result.stderr


# --- diff review -----------------------------------------------------------------------------


def _colour_of(term, text: str) -> str:
    for row in range(term.screen.lines):
        line = "".join(term.screen.buffer[row][x].data for x in range(term.screen.columns))
        at = line.find(text)
        if at >= 0:
            return str(term.screen.buffer[row][at].fg)
    raise AssertionError(f"{text!r} is not on screen:\n{term.text}")


def test_a_diff_review_shows_the_diff_with_line_numbers_and_colours(terminal):
    """The diff is drawn in a "Diff" box: file and hunk headers, each line under its old and
    new line number, added lines green and removed lines red."""
    term = terminal(diff_review())
    screen = term.wait_for("Apply this change", HINT)
    assert "| Diff |" in screen
    assert "+++ b/app.py" in screen
    assert "@@ -10,3 +10,4 @@ def main():" in screen
    assert re.search(r"11\s+\u2502 -    run\(debug=True\)", screen), screen
    assert re.search(r"11 \u2502 \+    run\(debug=False\)", screen), screen
    assert re.search(r"10\s+10 \u2502      setup\(\)", screen), screen
    assert re.search(r"12\s+13 \u2502      teardown\(\)", screen), screen
    assert not re.search(r"13\s+14 \u2502", screen), screen  # no line after the diff's end
    assert _colour_of(term, "+    report()") == "green"
    assert _colour_of(term, "-    run(debug=True)") == "red"
    assert _colour_of(term, "@@ -10,3") == "cyan"
    term.press("1")
    assert term.outcome()["answer"] == {"answers": [{"id": "edit", "selected": ["Apply"]}]}


def test_a_long_diff_is_approved_only_after_every_line_was_shown(terminal):
    """A diff longer than the box: Enter on Apply scrolls instead of applying until every line
    has been drawn; then it applies."""
    body = "".join(f"+line {n}\n" for n in range(1, 61))
    diff = f"--- a/big.txt\n+++ b/big.txt\n@@ -0,0 +1,60 @@\n{body}"
    term = terminal(diff_review(diff))
    screen = term.wait_for("Talk instead", HINT)
    assert "read the whole diff first (PgDn)" in screen
    term.press("enter")
    screen = term.wait_for("Read the whole diff first")
    assert "ANSWER" not in term.settle(0.3)
    while "+line 60" not in screen:
        found = re.search(r"lines \d+-\d+ of \d+", screen)
        assert found is not None, screen
        position = found.group(0)
        term.press("pagedown")
        screen = term.wait_until(lambda s, p=position: p not in s, "the diff scrolled")
    term.wait_until(lambda s: "read the whole diff first" not in s, "Apply unlocked")
    term.press("1")
    assert term.outcome()["answer"] == {"answers": [{"id": "edit", "selected": ["Apply"]}]}


def test_a_diff_review_in_line_mode(piped):
    """Line mode prints the diff with its line numbers; ``approve`` applies, text is feedback."""
    applied = piped(diff_review(), "approve\n")
    assert applied.answer == {"answers": [{"id": "edit", "selected": ["Apply"]}]}
    assert re.search(r"11 \u2502 \+    run\(debug=False\)", applied.stderr), applied.stderr
    assert "keeps editing" in applied.stderr
    feedback = piped(diff_review(), "keep debug on\n")
    assert feedback.answer == {
        "answers": [{"id": "edit", "selected": [], "custom": "keep debug on"}]
    }
