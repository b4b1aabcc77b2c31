"""What a text looks like: the skeleton of Unicode's confusables (UTS #39, section 4).

Two texts with one skeleton look the same to a reader: ``pop`` and ``pop`` in Cyrillic letters
(U+0440 U+043E U+0440), ``cluster-l`` and ``cluster-I``, ``backup-0`` and ``backup-O``. The
skeleton is the text in NFD, without default-ignorable characters (format characters, variation
selectors, fillers), each character replaced by its prototype, in NFD again.

The prototypes come from Unicode's ``confusables.txt`` as the ``confusable_homoglyphs`` package
ships it (its public ``is_confusable``). Its data lists each source character with its one
prototype, and each prototype with all its sources: a character with several homoglyphs is a
prototype; one with a single homoglyph is that one's source, unless the two list only each
other (a prototype with one source), where the smaller code point stands for both; the
classes, and so which texts collide, are those of UTS #39. A text of ASCII only never loads the
data (about a megabyte of JSON): the few ASCII confusables are `ASCII_PROTOTYPES`, which a test
keeps equal to the data.
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Final

__all__ = ["ASCII_PROTOTYPES", "skeleton"]

ASCII_PROTOTYPES: Final = {
    "`": "'",
    '"': "''",
    "|": "l",
    "1": "l",
    "I": "l",
    "0": "O",
    "m": "rn",
}
"""The ASCII characters whose prototype is another ASCII text, with that text."""

_ASCII_TABLE: Final = str.maketrans(ASCII_PROTOTYPES)
# Marks the data wraps right-to-left glyphs in, never part of a glyph.
_DIRECTION_MARKS: Final = str.maketrans("", "", "\u200e\u200f")


def skeleton(text: str) -> str:
    """The UTS #39 skeleton of ``text``: equal for two texts that look the same."""
    if text.isascii():
        return text.translate(_ASCII_TABLE)
    out = [_prototype(char) for char in unicodedata.normalize("NFD", text) if not _ignorable(char)]
    return unicodedata.normalize("NFD", "".join(out))


def _ignorable(char: str) -> bool:
    # Default_Ignorable_Code_Point, as far as Python's unicodedata can tell it: the format
    # characters, and the invisible marks and fillers of other categories.
    if unicodedata.category(char) == "Cf":
        return True
    code = ord(char)
    return (
        code in (0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0)
        or 0x180B <= code <= 0x180F
        or 0xFE00 <= code <= 0xFE0F
        or 0xE0000 <= code <= 0xE0FFF
    )


@functools.lru_cache(maxsize=4096)
def _prototype(char: str) -> str:
    if char.isascii():
        return ASCII_PROTOTYPES.get(char, char)
    glyphs = _homoglyphs(char)
    if len(glyphs) != 1:
        return char  # no confusable, or a prototype with several sources
    (twin,) = glyphs
    if len(twin) != 1:
        return twin  # a sequence is always a prototype
    if _homoglyphs(twin) == (char,):
        return min(char, twin)  # a prototype and its only source
    return twin


@functools.lru_cache(maxsize=4096)
def _homoglyphs(char: str) -> tuple[str, ...]:
    from confusable_homoglyphs import confusables  # type: ignore[import-untyped]

    found = confusables.is_confusable(char, greedy=True) or ()
    return tuple(
        glyph["c"].translate(_DIRECTION_MARKS)
        for hit in found
        if hit["character"] == char
        for glyph in hit["homoglyphs"]
    )
