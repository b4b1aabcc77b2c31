"""A unified diff (a diff-review question's ``detail``) rendered as terminal lines.

Each line of the diff becomes one line of style-and-text fragments: file headers (``diff``,
``---``, ``+++``, ``index``, renames, modes) bold, hunk headers (``@@ -1,3 +1,4 @@``) in cyan,
added lines green and removed lines red, each under a gutter with the old and the new line
number (the numbers the hunk headers give). Everything from the diff passes through the core's
`inert_text`, so a diff of a file that holds escape sequences shows them as stand-ins.
"""

from __future__ import annotations

import re

from dsh_user_questions.rules import inert_text

from ._markdown import Line

__all__ = ["GUTTER_STYLE", "render_diff"]

GUTTER_STYLE = "class:diff.gutter"
"""The style of a diff line's line-number gutter (a wrapped diff line continues under blanks)."""

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_FILE_HEADS = (
    "diff ",
    "--- ",
    "+++ ",
    "index ",
    "new file mode",
    "deleted file mode",
    "old mode",
    "new mode",
    "similarity index",
    "dissimilarity index",
    "rename from",
    "rename to",
    "copy from",
    "copy to",
    "Binary files",
)


def render_diff(source: str) -> list[Line]:
    """The lines of ``source`` (a unified diff), styled, each with its line-number gutter."""
    rows: list[tuple[int | None, int | None, str, str]] = []
    old = new = 0
    old_left = new_left = 0
    text = inert_text(source, multiline=True)
    for raw in (text[:-1] if text.endswith("\n") else text).split("\n"):
        in_hunk = old_left > 0 or new_left > 0
        hunk = _HUNK.match(raw)
        if hunk is not None and not in_hunk:
            old, new = int(hunk.group(1)), int(hunk.group(3))
            old_left = int(hunk.group(2)) if hunk.group(2) is not None else 1
            new_left = int(hunk.group(4)) if hunk.group(4) is not None else 1
            rows.append((None, None, "class:diff.hunk", raw))
        elif in_hunk and raw.startswith("-"):
            rows.append((old, None, "class:diff.removed", raw))
            old += 1
            old_left -= 1
        elif in_hunk and raw.startswith("+"):
            rows.append((None, new, "class:diff.added", raw))
            new += 1
            new_left -= 1
        elif in_hunk and (raw.startswith(" ") or raw == ""):
            rows.append((old, new, "", raw))
            old += 1
            new += 1
            old_left -= 1
            new_left -= 1
        elif raw.startswith("\\"):  # "\ No newline at end of file"
            rows.append((None, None, "class:diff.meta", raw))
        elif raw.startswith(_FILE_HEADS):
            rows.append((None, None, "class:diff.file", raw))
        else:
            rows.append((None, None, "class:diff.meta", raw))
    digits = max((len(str(n)) for o, nw, _, _ in rows for n in (o, nw) if n is not None), default=1)
    lines: list[Line] = []
    for old_number, new_number, style, text in rows:
        gutter = (
            f"{'' if old_number is None else old_number:>{digits}}"
            f" {'' if new_number is None else new_number:>{digits}} \u2502 "
        )
        line: Line = [(GUTTER_STYLE, gutter)]
        if text:
            line.append((style, text))
        lines.append(line)
    return lines
