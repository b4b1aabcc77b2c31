"""The look-alike marks of the view: an option's shown label never looks like another's."""

from __future__ import annotations

import unicodedata

from hypothesis import assume, given
from hypothesis import strategies as st

from dsh_user_questions import AskUserQuestionItem, AskUserQuestionOption
from dsh_user_questions.view import question_view


def shown(*labels: str) -> list[str]:
    options = [AskUserQuestionOption(label) for label in labels]
    item = AskUserQuestionItem(id="q", question="?", options=options)
    return [option.shown for option in question_view(item).options]


class TestLookAlikeMarks:
    """`OptionView.shown` shows invisible and look-alike characters as ``<U+XXXX>``."""

    def test_invisible_characters_and_odd_spaces_are_stand_ins(self) -> None:
        """A zero-width space and a no-break space in a label are shown as stand-ins."""
        assert shown("npm\u200b", "a\u00a0b") == ["npm<U+200B>", "a<U+00A0>b"]

    def test_a_foreign_label_that_looks_like_another_is_marked(self) -> None:
        """A label wholly in Cyrillic that reads like a Latin label of the same question is
        shown with stand-ins; the Latin one as written."""
        assert shown("\u0430\u0441", "ac") == ["<U+0430><U+0441>", "ac"]

    def test_a_foreign_label_alone_is_shown_as_written(self) -> None:
        """Cyrillic labels that collide with no other label are left alone."""
        assert shown("\u0434\u0430", "\u043d\u0435\u0442") == ["\u0434\u0430", "\u043d\u0435\u0442"]

    def test_the_wire_label_is_kept(self) -> None:
        """What an answer names is the label as written, whatever is shown."""
        item = AskUserQuestionItem(
            id="q", question="?", options=[AskUserQuestionOption("a\u00a0b")]
        )
        assert question_view(item).options[0].label == "a\u00a0b"

    @given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=5, unique=True))
    def test_shown_labels_hold_no_invisible_or_control_character(self, labels: list[str]) -> None:
        """No format character, odd space or control character of a label survives."""
        for text in shown(*labels):
            for char in text:
                category = unicodedata.category(char)
                assert category not in ("Cf", "Cc", "Cs")
                assert category != "Zs" or char == " "

    @given(st.lists(st.sampled_from(["n", "p", "m", "\u0440", "\u200b", "\u00a0", "o", "\u043e"])))
    def test_labels_that_look_the_same_are_shown_differently(self, chars: list[str]) -> None:
        """A label and a copy with a look-alike or invisible character put in are never shown
        the same."""
        plain = "npm" + "".join(c for c in chars if c in "npmo")
        sneaky = "npm" + "".join(chars)
        assume(plain != sneaky)
        first, second = shown(plain, sneaky)
        assert first != second
