"""Model-written text is made inert: nothing a terminal acts on survives."""

from __future__ import annotations

import importlib
import unicodedata
from pathlib import Path

import pytest
from dsh_user_questions import rules
from dsh_user_questions._markdown import render as markdown
from dsh_user_questions.rules import inert_text
from hypothesis import given
from hypothesis import strategies as st

import dsh_user_questions_terminal
from dsh_user_questions_terminal._markdown import render_nodes


def render_markdown(source: str):
    return render_nodes(markdown(source))


BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
CONTROLS = ["\x1b", "\x1b[", "[31m", "\x1b]0;", "\x07", "\x9b", "\x9d", "\x85", "\r", "\n", "\t"]
OTHERS = ["\u2028", "\u2029", "\x7f", "\x00", "\ud800", "&#x1b;", "&#155;", "`", "*", "# ", "- "]
HOSTILE = st.sampled_from([*CONTROLS, *BIDI, *OTHERS])
TEXT = st.lists(st.one_of(st.text(), HOSTILE), max_size=30).map("".join)


def _acts_on_terminal(char: str) -> bool:
    return (
        # (a zero-width joiner between two emoji is kept, as the core's inert_text keeps it)
        (unicodedata.category(char) in ("Cc", "Cs", "Cf") and char != "\u200d")
        or char in BIDI
        or char in "\u2028\u2029"
    )


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[31mred\x1b[0m", "<U+001B>[31mred<U+001B>[0m"),
        ("\x1b]0;title\x07", "<U+001B>]0;title<U+0007>"),
        ("a\x9bb", "a<U+009B>b"),
        ("\u202eevil", "<U+202E>evil"),
        ("tab\there", "tab    here"),
        ("del\x7f", "del<U+007F>"),
        ("n\u200bpm", "n<U+200B>pm"),
        ("n\u0440m", "n<U+0440>m"),
    ],
)
def test_markdown_shows_the_cores_stand_ins(raw, shown):
    """The detail's text shows each dangerous character as the core's ``<U+XXXX>`` stand-in
    (ESC is ``<U+001B>``, no longer the terminal's own ``\u241b``)."""
    text = "".join(t for line in render_markdown(raw) for _, t in line)
    assert text == inert_text(raw) == shown


def test_the_terminal_has_no_inert_text_of_its_own():
    """Every module of the provider that makes text inert (the human's typed text; a markdown or
    diff fragment once more) uses ``rules.inert_text``: the provider's own copy (``_inert``) is
    gone."""
    package = Path(dsh_user_questions_terminal.__file__).parent
    assert not (package / "_inert.py").exists()
    with pytest.raises(ImportError):
        importlib.import_module("dsh_user_questions_terminal._inert")
    for name in ("_diff", "_interactive", "_lines", "_markdown", "_questions"):
        module = importlib.import_module(f"dsh_user_questions_terminal.{name}")
        assert module.inert_text is rules.inert_text, name


@given(TEXT)
def test_rendered_markdown_is_inert(text):
    """Markdown rendering yields inert, single-line fragments, even after entity decoding."""
    for line in render_markdown(text):
        for _style, fragment in line:
            assert "\n" not in fragment
            assert not any(_acts_on_terminal(char) for char in fragment)


def test_markdown_entities_cannot_smuggle_controls():
    """A character reference to ESC or a bidi override renders as something harmless."""
    shown = "".join(t for line in render_markdown("&#x1b;[2J &#8238;x") for _, t in line)
    assert "\x1b" not in shown
    assert "\u202e" not in shown
    assert "[2J" in shown
