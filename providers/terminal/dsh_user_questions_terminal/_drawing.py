"""Drawing helpers of the interactive form: styles, frames, hint lines, the scrollback record."""

from __future__ import annotations

from collections.abc import Sequence

from prompt_toolkit.formatted_text import FormattedText, StyleAndTextTuples
from prompt_toolkit.styles import Style
from prompt_toolkit.utils import get_cwidth

from ._diff import GUTTER_STYLE
from ._markdown import Fragment, Line, lines_to_plain
from ._page import Page
from ._questions import describe_answer, one_line
from ._wrap import wrap_line

__all__ = ["SEP", "STYLE", "boxed", "continuation", "join", "mark_cut", "recap", "wrap_parts"]

STYLE = Style.from_dict(
    {
        "chip": "reverse bold",
        "progress": "fg:ansibrightblack",
        "question": "bold",
        "pointer": "fg:ansicyan bold",
        "current": "bold",
        "number": "fg:ansibrightblack",
        "checkbox": "fg:ansicyan",
        "description": "fg:ansibrightblack",
        "extra": "italic",
        "hint": "fg:ansibrightblack",
        "more": "fg:ansiyellow",
        "notice": "fg:ansiyellow bold",
        "frame.border": "fg:ansicyan",
        "frame.label": "bold",
        "md.code": "fg:ansiyellow",
        "preview.title": "fg:ansicyan bold",
        "md.prefix": "fg:ansibrightblack",
        "md.url": "fg:ansibrightblack",
        "md.rule": "fg:ansibrightblack",
        "recap": "fg:ansibrightblack",
        "recap.mark": "fg:ansigreen",
        "recommended": "fg:ansigreen",
        "diff.gutter": "fg:ansibrightblack",
        "diff.file": "bold",
        "diff.hunk": "fg:ansicyan",
        "diff.added": "fg:ansigreen",
        "diff.removed": "fg:ansired",
        "diff.meta": "fg:ansibrightblack",
    }
)

SEP = " \u00b7 "


def wrap_parts(parts: list[str], width: int, style: str) -> list[Line]:
    """Join ``parts`` with middle dots, breaking lines between parts (a part is cut only when
    it is wider than a line on its own)."""
    lines: list[str] = []
    for part in parts:
        if lines and get_cwidth(lines[-1] + SEP + part) <= width:
            lines[-1] += SEP + part
        else:
            lines.append(part)
    out: list[Line] = []
    for text in lines:
        out += wrap_line([(style, text)], width)
    return out


def boxed(lines: list[Line], width: int, label: str, position: str) -> list[Line]:
    """``lines`` in a frame ``width`` cells wide, ``label`` on top, ``position`` at the bottom."""
    inner = max(1, width - 2)

    def border(left: str, text: str, right: str) -> Line:
        text = f"| {text} |" if text else ""
        room = max(0, inner - get_cwidth(text))
        before = room // 2
        return [
            ("class:frame.border", left + "\u2500" * before),
            ("class:frame.label", text),
            ("class:frame.border", "\u2500" * (room - before) + right),
        ]

    out = [border("\u250c", label, "\u2510")]
    for line in lines:
        used = sum(get_cwidth(text) for _, text in line)
        pad = max(0, width - 4 - used)
        out.append(
            [
                ("class:frame.border", "\u2502 "),
                *line,
                ("", " " * pad),
                ("class:frame.border", " \u2502"),
            ]
        )
    out.append(border("\u2514", position, "\u2518"))
    return out


def mark_cut(line: Line, width: int) -> Line:
    """``line`` ending in `` …`` within ``width`` cells: the row goes on below the screen."""
    mark = " \u2026"
    room = width - get_cwidth(mark)
    kept: Line = []
    used = 0
    for style, text in line:
        cells = get_cwidth(text)
        if used + cells > room:
            text = text[: max(0, room - used)]
            kept.append((style, text))
            break
        kept.append((style, text))
        used += cells
    return [*kept, ("class:more", mark)]


def join(lines: Sequence[Line]) -> StyleAndTextTuples:
    fragments: StyleAndTextTuples = []
    for number, line in enumerate(lines):
        if number:
            fragments.append(("", "\n"))
        fragments.extend(line)
    return fragments


def continuation(line: Line) -> Fragment | None:
    """How a wrapped markdown line continues: its quote bars kept, list markers blanked."""
    if line and line[0][0] in ("class:md.prefix", GUTTER_STYLE):
        style, text = line[0]
        kept = "".join(char if char == "\u2502" else " " for char in text)
        return (style, kept)
    return None


def recap(pages: Sequence[Page], width: int) -> FormattedText:
    """What stays in the scrollback: each question, a reviewed plan's or diff's text, and the
    answer given (labels as the form showed them; a secret answer only as "(secret given)")."""
    lines: list[Line] = []
    for page in pages:
        head = f"{page.view.header}: " if page.view.header else ""
        lines += wrap_line(
            [
                ("class:recap.mark", "\u2714 "),
                ("class:recap", head + one_line(page.view.question)),
            ],
            width,
            2,
        )
        if page.plan:
            bar: Fragment = ("class:md.prefix", "  \u2502 ")
            for text in lines_to_plain(page.detail):
                # Wrapped at spaces here: the terminal would cut a long line mid-word.
                lines += wrap_line([bar, ("", text)], width, lead=bar)
        answer = describe_answer(page.answer, secret=page.secret, shown=page.shown_labels)
        lines += wrap_line([("class:recap", "  \u2192 "), ("", answer)], width, 4)
    return FormattedText(join(lines))
