"""A unified diff (the ``detail`` of a ``diff-review`` question) parsed on the server for the page.

The page shows a diff view built from this structure: files with their headers, hunks with
their ``@@`` header, and each line with its kind and its line numbers in the old and the new
file. A hunk takes exactly the lines its header counts, so a removed line that reads
``--- x`` stays a removed line. Every text is `dsh_user_questions.rules.inert_text` (one line
each), so a diff shows controls, bidi and look-alike characters as the same stand-ins as every
other surface. Lines outside any hunk (``diff --git``, ``index``, a preamble) are kept as meta
lines of their file: nothing of the diff is left out of the view.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .rules import inert_text

__all__ = ["DiffLine", "diff_lines", "parse_diff"]

DiffLine = tuple[str, int | None, int | None, str]
"""One line of a diff as a surface shows it: ``(kind, old_number, new_number, text)``."""

_MARKS = {"add": "+", "del": "-", "ctx": " ", "note": ""}

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_diff(text: str) -> dict[str, Any]:
    """``{"files": [{"old", "new", "meta", "hunks"}], "lines": n}`` of a unified diff.

    A hunk is ``{"header", "lines"}``, each line ``[kind, old_number, new_number, text]`` with
    kind ``"add"``, ``"del"``, ``"ctx"`` or ``"note"`` (``\\ No newline at end of file``); a
    number is ``None`` where the line has none. ``old``/``new`` are the paths of the ``---`` and
    ``+++`` headers (``None`` when absent); ``meta`` the file's other lines; ``lines`` counts
    every line of the diff.
    """
    files: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    hunk: list[list[Any]] | None = None
    old_left = new_left = old_no = new_no = 0
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for raw in lines:
        if hunk is not None and (old_left > 0 or new_left > 0 or raw.startswith("\\")):
            kind, body = raw[:1], inert_text(raw[1:])
            if kind == "+" and new_left > 0:
                hunk.append(["add", None, new_no, body])
                new_no, new_left = new_no + 1, new_left - 1
                continue
            if kind == "-" and old_left > 0:
                hunk.append(["del", old_no, None, body])
                old_no, old_left = old_no + 1, old_left - 1
                continue
            if kind in (" ", "") and old_left > 0 and new_left > 0:
                hunk.append(["ctx", old_no, new_no, body])
                old_no, new_no = old_no + 1, new_no + 1
                old_left, new_left = old_left - 1, new_left - 1
                continue
            if kind == "\\":
                hunk.append(["note", None, None, inert_text(raw)])
                continue
            hunk = None  # a hunk shorter than its header said: read on as headers
        if current is None or _starts_file(raw, current):
            current = {"old": None, "new": None, "meta": [], "hunks": []}
            files.append(current)
        match = _HUNK.match(raw)
        if match is not None:
            old_no, new_no = int(match.group(1)), int(match.group(3))
            old_left = int(match.group(2)) if match.group(2) is not None else 1
            new_left = int(match.group(4)) if match.group(4) is not None else 1
            hunk = []
            current["hunks"].append({"header": inert_text(raw), "lines": hunk})
        elif raw.startswith("--- ") and current["old"] is None:
            current["old"] = inert_text(raw[4:].split("\t", 1)[0])
        elif raw.startswith("+++ ") and current["new"] is None:
            current["new"] = inert_text(raw[4:].split("\t", 1)[0])
        else:
            current["meta"].append(inert_text(raw))
    return {"files": files, "lines": len(lines)}


def _starts_file(raw: str, current: dict[str, Any]) -> bool:
    # "diff ..." opens a file unless the current one is still empty; a "---" header opens one
    # after a file that already has its own "---" or hunks (a diff without "diff" lines).
    if raw.startswith("diff "):
        return bool(current["hunks"] or current["meta"] or current["old"] is not None)
    if raw.startswith("--- "):
        return bool(current["hunks"] or current["old"] is not None)
    return False


def diff_lines(diff: Mapping[str, Any]) -> list[DiffLine]:
    """The lines of ``diff`` (`parse_diff`'s structure) in the order a unified diff shows them.

    Per file: its meta lines (kind ``"meta"``), its ``--- old`` and ``+++ new`` headers
    (``"file"``), then each hunk's ``@@`` header (``"hunk"``) and lines (``"add"``, ``"del"``,
    ``"ctx"``, ``"note"``), each with its mark (``+``, ``-``, a space) before its text and its
    old and new line numbers (``None`` where it has none, as on every line but a hunk's). A
    surface only styles them, by kind: the kind comes from the hunk's counts, never from how a
    line starts (a removed ``--- x`` is ``"del"``).
    """
    lines: list[DiffLine] = []
    for file in diff["files"]:
        lines += [("meta", None, None, text) for text in file["meta"]]
        for sign, path in (("---", file["old"]), ("+++", file["new"])):
            if path is not None:
                lines.append(("file", None, None, f"{sign} {path}"))
        for hunk in file["hunks"]:
            lines.append(("hunk", None, None, hunk["header"]))
            lines += [
                (kind, old, new, _MARKS[kind] + text) for kind, old, new, text in hunk["lines"]
            ]
    return lines
