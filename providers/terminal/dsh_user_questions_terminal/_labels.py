"""Option labels as the human must read them: different labels never look the same.

A model can offer ``npm``, ``npm`` followed by a zero-width space, and ``npm`` spelt with a
Cyrillic er (U+0440) for its ``p``: drawn as they are, the three rows look identical and the
human cannot tell which one they pick. In a label, invisible characters (format characters
such as U+200B, and spaces other than the plain one) are shown as ``<U+XXXX>``. Letters that
look like ASCII letters but are not (Unicode's confusables data, through
``confusable_homoglyphs``) are shown the same way when they are mixed with ASCII letters in the
label, or when the label would otherwise look like another label of the same question. A label
written wholly in another script that collides with nothing is shown as written.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from confusable_homoglyphs import confusables  # type: ignore[import-untyped]
from dsh_user_questions.rules import inert_text

__all__ = ["visible_labels"]


def _escape(char: str) -> str:
    return f"<U+{ord(char):04X}>"


def _invisible(char: str) -> bool:
    category = unicodedata.category(char)
    # Cf: zero-width spaces and joiners, word joiner, BOM, soft hyphen...; Zs: no-break and other
    # odd spaces that pass for a plain space.
    return category == "Cf" or (category == "Zs" and char != " ")


def _look_alikes(label: str) -> dict[int, str]:
    """Positions of non-ASCII characters that look like an ASCII character, with that one."""
    found: dict[int, str] = {}
    for index, char in enumerate(label):
        if char.isascii() or not char.isalpha():
            continue
        hits = confusables.is_confusable(char, greedy=True, preferred_aliases=["latin"]) or []
        for hit in hits:
            ascii_twins = [glyph["c"] for glyph in hit["homoglyphs"] if glyph["c"].isascii()]
            if ascii_twins:
                found[index] = ascii_twins[0]
                break
    return found


def _skeleton(label: str, twins: dict[int, str]) -> str:
    """The label as it looks: look-alikes replaced by their ASCII twin, invisibles dropped."""
    out = []
    for index, char in enumerate(label):
        if _invisible(char):
            continue
        out.append(twins.get(index, char))
    return unicodedata.normalize("NFKC", "".join(out)).casefold()


def _mixed_with_latin(label: str) -> bool:
    has_ascii_letter = any(char.isascii() and char.isalpha() for char in label)
    has_other_letter = any(not char.isascii() and char.isalpha() for char in label)
    return has_ascii_letter and has_other_letter


def visible_labels(labels: Sequence[str]) -> list[str]:
    """``labels`` made inert (see `inert_text`) with invisible and look-alike characters shown."""
    twins = [_look_alikes(label) for label in labels]
    skeletons = [_skeleton(label, found) for label, found in zip(labels, twins, strict=True)]
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
                text.append(_escape(char))
            else:
                text.append(char)
        out.append(inert_text("".join(text)))
    return out
