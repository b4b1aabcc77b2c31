"""Model-written text is made inert: nothing a terminal acts on survives."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_user_questions_terminal import inert_text
from dsh_user_questions_terminal._markdown import render_markdown

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
CONTROLS = ["\x1b", "\x1b[", "[31m", "\x1b]0;", "\x07", "\x9b", "\x9d", "\x85", "\r", "\n", "\t"]
OTHERS = ["\u2028", "\u2029", "\x7f", "\x00", "\ud800", "&#x1b;", "&#155;", "`", "*", "# ", "- "]
HOSTILE = st.sampled_from([*CONTROLS, *BIDI, *OTHERS])
TEXT = st.lists(st.one_of(st.text(), HOSTILE), max_size=30).map("".join)


def _acts_on_terminal(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Cs") or char in BIDI or char in "\u2028\u2029"


@given(TEXT)
def test_single_line_output_has_no_control_bidi_or_surrogate(text):
    """Single-line output holds no control, bidi, separator or surrogate character at all."""
    assert not any(_acts_on_terminal(char) for char in inert_text(text))


@given(TEXT)
def test_multiline_output_keeps_only_newlines(text):
    """Multi-line output holds no such character except plain newlines."""
    assert not any(
        _acts_on_terminal(char) for char in inert_text(text, multiline=True) if char != "\n"
    )


@given(TEXT, st.booleans())
def test_inert_is_idempotent(text, multiline):
    """Making inert text inert again changes nothing."""
    once = inert_text(text, multiline=multiline)
    assert inert_text(once, multiline=multiline) == once


@given(TEXT)
def test_output_encodes_as_utf8(text):
    """The output can always be written to a UTF-8 terminal (lone surrogates are replaced)."""
    inert_text(text, multiline=True).encode("utf-8")


@given(
    st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters=BIDI))
)
def test_printable_text_passes_unchanged(text):
    """Text without control, bidi, separator or surrogate characters is returned as it was."""
    assert inert_text(text) == text


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[31mred\x1b[0m", "\u241b[31mred\u241b[0m"),
        ("\x1b]0;title\x07", "\u241b]0;title\u2407"),
        ("a\x9bb", "a<U+009B>b"),
        ("\u202eevil", "<U+202E>evil"),
        ("tab\there", "tab    here"),
        ("del\x7f", "del\u2421"),
        ("one\r\ntwo\rthree\u2028four", "one two three four"),
        ("bad \ud800 half", "bad \ufffd half"),
    ],
)
def test_examples(raw, shown):
    """Each kind of dangerous character has a visible stand-in."""
    assert inert_text(raw) == shown


def test_multiline_normalises_line_breaks():
    """With ``multiline`` every kind of line break becomes one newline."""
    assert inert_text("a\r\nb\rc\u2029d\x85e", multiline=True) == "a\nb\nc\nd\ne"


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
