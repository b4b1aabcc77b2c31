"""Option labels as the human must read them: different labels never look the same.

The look-alike marks of every surface: `dsh_user_questions.view.question_view` shows each
option's label (`OptionView.shown`) through `visible_labels`.

A model can offer ``npm``, ``npm`` followed by a zero-width space, and ``npm`` spelt with a
Cyrillic er (U+0440) for its ``p``: drawn as they are, the three rows look identical and the
human cannot tell which one they pick. In a label, invisible characters (format characters
such as U+200B, and spaces other than the plain one) are shown as ``<U+XXXX>``. Letters that
look like ASCII letters but are not (the core's look-alike rule, `rules.label_skeleton`) are
shown the same way when they are mixed with ASCII letters in the label, or when the label would
otherwise look like another label of the same question (``ask()`` refuses such a pair, so only a
provider called directly sees one). A label written wholly in another script that collides with
nothing is shown as written.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from .rules import foreign_letter, inert_text, label_skeleton, stand_in

__all__ = ["visible_labels"]


def _invisible(char: str) -> bool:
    category = unicodedata.category(char)
    # Cf: zero-width spaces and joiners, word joiner, BOM, soft hyphen...; Zs: no-break and other
    # odd spaces that pass for a plain space.
    return category == "Cf" or (category == "Zs" and char != " ")


def _look_alikes(label: str) -> set[int]:
    """Positions of letters of another script than Latin that look like ASCII letters."""
    return {
        index
        for index, char in enumerate(label)
        if foreign_letter(char) and label_skeleton(char).isascii()
    }


def _mixed_with_latin(label: str) -> bool:
    has_ascii_letter = any(char.isascii() and char.isalpha() for char in label)
    has_other_letter = any(not char.isascii() and char.isalpha() for char in label)
    return has_ascii_letter and has_other_letter


def visible_labels(labels: Sequence[str]) -> list[str]:
    """``labels`` made inert (see `inert_text`) with invisible and look-alike characters shown."""
    twins = [_look_alikes(label) for label in labels]
    skeletons = [label_skeleton(label) for label in labels]
    out: list[str] = []
    for index, label in enumerate(labels):
        found = twins[index]
        collides = any(
            other != index and skeletons[other] == skeletons[index] for other in range(len(labels))
        )
        suspicious = bool(found) and (collides or _mixed_with_latin(label))
        text = []
        for position, char in enumerate(label):
            if _invisible(char) or (suspicious and position in found):
                text.append(stand_in(char))
            else:
                text.append(char)
        out.append(inert_text("".join(text)))
    return out
