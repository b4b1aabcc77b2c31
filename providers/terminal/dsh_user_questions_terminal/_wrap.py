"""Word wrap for styled text, measured in terminal cells."""

from __future__ import annotations

import re
from collections.abc import Sequence

from prompt_toolkit.utils import get_cwidth

from ._markdown import Fragment, Line

__all__ = ["wrap_line"]

_TOKENS = re.compile(r"\s+|\S+")


def wrap_line(
    line: Sequence[Fragment], width: int, indent: int = 0, lead: Fragment | None = None
) -> list[Line]:
    """Split one line of fragments into lines of at most ``width`` cells, breaking at spaces.

    Continuation lines start with ``indent`` spaces (a hanging indent), or with the fragment
    ``lead`` when given (``indent`` is then its width). Spaces at a break are dropped; a word
    longer than a whole line is cut.
    """
    if lead is not None:
        indent = get_cwidth(lead[1])
    start: Line = [lead] if lead is not None else [("", " " * indent)] if indent else []
    width = max(width, indent + 1, 1)
    lines: list[Line] = [[]]
    column = 0
    for style, text in line:
        for token in _TOKENS.findall(text):
            cells = get_cwidth(token)
            if token.isspace():
                if column + cells <= width:
                    lines[-1].append((style, token))
                    column += cells
                continue
            if column + cells > width and column > indent:
                while lines[-1] and lines[-1][-1][1].isspace():
                    lines[-1].pop()
                lines.append(list(start))
                column = indent
            while column + cells > width:
                head, token = _cut(token, width - column)
                lines[-1].append((style, head))
                lines.append(list(start))
                column = indent
                cells = get_cwidth(token)
            lines[-1].append((style, token))
            column += cells
    return lines


def _cut(token: str, room: int) -> tuple[str, str]:
    """The longest head of ``token`` that fits in ``room`` cells (at least one character)."""
    used = 0
    for index, char in enumerate(token):
        used += get_cwidth(char)
        if used > room:
            return token[: max(index, 1)], token[max(index, 1) :]
    return token, ""
