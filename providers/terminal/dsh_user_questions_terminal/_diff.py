"""A unified diff (a diff-review question's ``detail``) drawn as terminal lines.

The core reads the diff once for every surface (``QuestionView.diff``: files,
hunks, and lines with their kind and their old and new line numbers, every text inert); this
module only draws it. A file's header lines (``diff``, ``index``, modes, renames, then its
``---``/``+++`` paths) are bold, hunk headers (``@@ -1,3 +1,4 @@``) cyan, added lines green,
removed lines red (a removed ``--- x`` too: the hunk's counts say what it is), each under a
gutter with its old and its new line number. Lines outside any hunk come first in their file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_user_questions.rules import inert_text
from dsh_user_questions.view import diff_lines

from ._markdown import Line

__all__ = ["GUTTER_STYLE", "render_diff"]

GUTTER_STYLE = "class:diff.gutter"
"""The style of a diff line's line-number gutter (a wrapped diff line continues under blanks)."""

# The style of each kind of line `diff_lines` gives.
_STYLES = {
    "meta": "class:diff.file",
    "file": "class:diff.file",
    "hunk": "class:diff.hunk",
    "add": "class:diff.added",
    "del": "class:diff.removed",
    "ctx": "",
    "note": "class:diff.meta",
}


def render_diff(diff: Mapping[str, Any]) -> list[Line]:
    """The lines of ``diff`` (``QuestionView.diff``), styled, each under its gutter."""
    rows = [(old, new, _STYLES[kind], text) for kind, old, new, text in diff_lines(diff)]
    digits = max((len(str(n)) for o, nw, _, _ in rows for n in (o, nw) if n is not None), default=1)
    lines: list[Line] = []
    for old_number, new_number, style, text in rows:
        gutter = (
            f"{'' if old_number is None else old_number:>{digits}}"
            f" {'' if new_number is None else new_number:>{digits}} \u2502 "
        )
        line: Line = [(GUTTER_STYLE, gutter)]
        if text:
            line.append((style, inert_text(text)))
        lines.append(line)
    return lines
