"""Labels that differ only by invisible or look-alike characters look different."""

from __future__ import annotations

from conftest import question

HINT = "Esc cancel"
# No two of them look alike (ask() refuses such a pair); each is suspect alone.
SNEAKY = [{"label": "pnpm"}, {"label": "npm\u200b"}, {"label": "n\u0440m-cli"}]


def test_invisible_and_look_alike_characters_in_labels_are_shown(terminal):
    """``npm`` plus a zero-width space and ``npm-cli`` with a Cyrillic letter are drawn with
    stand-ins; picking the third answers its exact label."""
    term = terminal({"questions": [question(options=SNEAKY)]})
    screen = term.wait_for(HINT)
    assert "1. pnpm" in screen
    assert "2. npm<U+200B>" in screen
    assert "3. n<U+0440>m-cli" in screen
    term.press("3")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["n\u0440m-cli"]}]}


def test_line_mode_shows_them_too(piped):
    """Line mode lists the same visible stand-ins."""
    result = piped({"questions": [question(options=SNEAKY)]}, "2\n")
    assert "2. npm<U+200B>" in result.stderr
    assert "3. n<U+0440>m-cli" in result.stderr
    assert result.answer == {"answers": [{"id": "pkg", "selected": ["npm\u200b"]}]}


def test_a_label_wholly_in_another_script_is_left_alone(piped):
    """Cyrillic labels that collide with no other label are shown as written."""
    options = [{"label": "\u0434\u0430"}, {"label": "\u043d\u0435\u0442"}]
    result = piped({"questions": [question(options=options)]}, "1\n")
    assert "1. \u0434\u0430" in result.stderr
    assert "2. \u043d\u0435\u0442" in result.stderr
