"""Word wrap of styled text in terminal cells."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from prompt_toolkit.utils import get_cwidth

from dsh_user_questions_terminal._wrap import wrap_line

WORDS = st.lists(
    st.text(st.sampled_from("abc\u4e2d\u00e9"), min_size=1, max_size=6), min_size=1, max_size=40
)


def _text(line):
    return "".join(text for _style, text in line)


@given(WORDS, st.integers(min_value=20, max_value=80), st.integers(min_value=0, max_value=6))
def test_lines_fit_and_no_character_is_lost(words, width, indent):
    """Wrapped lines fit the width, and the words come out whole, in order, none lost."""
    lines = wrap_line([("s", " ".join(words))], width, indent)
    assert all(get_cwidth(_text(line)) <= width for line in lines)
    assert " ".join(_text(line).strip() for line in lines).split() == words
    assert all(_text(line).startswith(" " * indent) for line in lines[1:])


def test_styles_stay_with_their_words():
    """Each word keeps the style of the fragment it came from."""
    lines = wrap_line([("a", "one two"), ("b", " three four")], 9)
    assert [_text(line) for line in lines] == ["one two", "three", "four"]
    assert ("b", "three") in lines[1]


def test_a_word_longer_than_the_line_is_cut():
    """A word wider than the line is split across lines rather than overflowing."""
    lines = wrap_line([("", "x" * 25)], 10, lead=("p", "> "))
    assert [_text(line) for line in lines] == ["x" * 10, "> " + "x" * 8, "> " + "x" * 7]
