"""Markdown (a question's ``detail``, a plan, a preview) drawn as terminal lines.

The core parses markdown once for every surface (``QuestionView.detail`` and an option's
``preview``: a safe element tree whose every text is inert); this module only draws that tree
as prompt_toolkit style-and-text fragments. It never produces an escape sequence:
prompt_toolkit draws the styles, and every text goes through :func:`inert_text` once more on its
way to a fragment.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dsh_user_questions.rules import inert_text
from dsh_user_questions.view import Node
from prompt_toolkit.utils import get_cwidth

__all__ = ["Fragment", "Line", "lines_to_plain", "render_nodes"]

Fragment = tuple[str, str]
Line = list[Fragment]

_INLINE_STYLES = {"strong": "bold", "em": "italic", "s": "strike", "a": "underline"}
_INLINE = {*_INLINE_STYLES, "code", "br"}
_RULE = "\u2500" * 40


def _attrs(node: list[Any]) -> dict[str, Any]:
    return node[1] if len(node) > 1 and isinstance(node[1], dict) else {}


def _plain(nodes: Sequence[Node]) -> str:
    """The text of ``nodes`` without their tags."""
    return "".join(node if isinstance(node, str) else _plain(node[2:]) for node in nodes)


class _Renderer:
    def __init__(self) -> None:
        self.lines: list[Line] = []
        self.current: Line | None = None
        self.indent: list[str] = []
        self.marker: str | None = None
        self.gap = False
        self.block_style = ""
        # The next number of each open list (``None``: a bullet list).
        self.list_counters: list[int | None] = []
        self.cell: Line | None = None  # a table cell being collected

    def _prefix(self) -> Line:
        text = "".join(self.indent)
        if self.marker is not None:
            text = "".join(self.indent[:-1]) + self.marker
            self.marker = None
        return [("class:md.prefix", text)] if text else []

    def open_line(self) -> Line:
        self.flush_gap()
        self.current = self._prefix()
        self.lines.append(self.current)
        return self.current

    def flush_gap(self) -> None:
        """Emit a pending blank line before a container adds its own prefix."""
        if self.gap and self.lines:
            bare = "".join(self.indent).rstrip()
            self.lines.append([("class:md.prefix", bare)] if bare else [])
        self.gap = False

    def end_line(self) -> None:
        self.current = None

    def write(self, style: str, text: str) -> None:
        text = inert_text(text)
        if not text:
            return
        full = " ".join(part for part in (self.block_style, style) if part)
        if self.cell is not None:
            self.cell.append((full, text))
            return
        line = self.current if self.current is not None else self.open_line()
        line.append((full, text))

    def new_line(self) -> None:
        """A line break inside a paragraph (a soft or a hard break)."""
        if self.cell is not None:
            self.cell.append(("", " "))
            return
        self.end_line()
        self.open_line()

    def inline(self, nodes: Sequence[Node], styles: tuple[str, ...] = ()) -> None:
        target: str | None = None  # the text the core puts after a link: its address
        for node in nodes:
            if isinstance(node, str):
                style = "class:md.url" if node == target else " ".join(styles)
                for number, piece in enumerate(node.split("\n")):
                    if number:
                        self.new_line()
                    self.write(style, piece)
                target = None
                continue
            target = None
            tag = node[0]
            if tag == "code":
                self.write(" ".join([*styles, "class:md.code"]), _plain(node[2:]))
            elif tag == "br":
                self.new_line()
            elif tag in _INLINE_STYLES:
                self.inline(node[2:], (*styles, _INLINE_STYLES[tag]))
                if tag == "a":
                    target = inert_text(f" ({_attrs(node).get('href', '')})")
            else:  # a block where words were expected: its words
                self.inline(node[2:], styles)

    def blocks(self, nodes: Sequence[Node]) -> None:
        """Block nodes; a run of inline ones (a tight list item's words) is one paragraph
        without the blank line after it."""
        run: list[Node] = []
        for node in nodes:
            if isinstance(node, str) or node[0] in _INLINE:
                run.append(node)
                continue
            self.words(run)
            run = []
            self.block(str(node[0]), node)
        self.words(run)

    def words(self, run: Sequence[Node]) -> None:
        if run:
            self.inline(run)
            self.end_line()

    def block(self, tag: str, node: list[Any]) -> None:
        children: list[Node] = node[2:]
        if tag == "p":
            self.inline(children)
            self.end_line()
            self.gap = True
        elif len(tag) == 2 and tag[0] == "h" and tag[1].isdigit():
            # The core moves headings two levels down (under a web card's own heading).
            self.block_style = "bold underline" if int(tag[1]) <= 3 else "bold"
            self.inline(children)
            self.block_style = ""
            self.end_line()
            self.gap = True
        elif tag in ("ul", "ol"):
            if self.current is not None:
                self.end_line()
            self.list_counters.append(int(_attrs(node).get("start", 1)) if tag == "ol" else None)
            self.blocks(children)
            self.list_counters.pop()
            if not self.list_counters:
                self.gap = True
        elif tag == "li":
            self.list_item(node)
        elif tag == "blockquote":
            self.end_line()
            self.flush_gap()
            self.indent.append("\u2502 ")
            self.blocks(children)
            self.end_line()
            self.indent.pop()
            self.gap = True
        elif tag == "pre":
            self.end_line()
            self.code(_plain(children))
        elif tag == "hr":
            self.open_line()
            self.write("class:md.rule", _RULE)
            self.end_line()
            self.gap = True
        elif tag == "table":
            self.end_line()
            self.table(children)
            self.gap = True
        else:  # a tag this module does not know: its contents
            self.blocks(children)

    def list_item(self, node: list[Any]) -> None:
        counter = self.list_counters[-1] if self.list_counters else None
        if counter is None:
            marker = "\u2022 "
        else:
            number = int(_attrs(node).get("value", counter))  # the number as written
            marker = f"{number}. "
            self.list_counters[-1] = number + 1
        self.indent.append(" " * len(marker))
        self.marker = marker
        self.blocks(node[2:])
        self.end_line()
        self.indent.pop()
        self.marker = None

    def code(self, content: str) -> None:
        self.indent.append("  ")
        for text in content.rstrip("\n").split("\n"):
            self.open_line()
            self.write("class:md.code", text)
            self.end_line()
        self.indent.pop()
        self.gap = True

    def table(self, sections: Sequence[Node]) -> None:
        """Each column padded to its widest cell (aligned as the table says), ``│`` between
        columns and a rule under the header."""
        rows: list[list[Line]] = []
        align: list[str] = []
        header_rows = 0
        for section in sections:
            if isinstance(section, str):
                continue
            for tr in section[2:]:
                if isinstance(tr, str):
                    continue
                row: list[Line] = []
                for cell in tr[2:]:
                    if isinstance(cell, str):
                        continue
                    self.cell = []
                    self.block_style = "bold" if cell[0] == "th" else ""
                    self.inline(cell[2:])
                    row.append(self.cell)
                    if not rows:
                        align.append(str(_attrs(cell).get("data-align", "")))
                self.cell = None
                self.block_style = ""
                rows.append(row)
            if section[0] == "thead":
                header_rows = len(rows)
        self.draw_table(rows, align, header_rows)

    def draw_table(self, rows: list[list[Line]], align: list[str], header_rows: int) -> None:
        columns = max((len(row) for row in rows), default=0)
        widths = [0] * columns
        for row in rows:
            for index, cell in enumerate(row):
                widths[index] = max(widths[index], _cells(cell))
        bar = ("class:md.prefix", " \u2502 ")
        for number, row in enumerate(rows):
            line = self.open_line()
            for index in range(columns):
                cell = row[index] if index < len(row) else []
                room = widths[index] - _cells(cell)
                how = align[index] if index < len(align) else ""
                left = room if how == "right" else room // 2 if how == "center" else 0
                if index:
                    line.append(bar)
                line.append(("", " " * left))
                line.extend(cell)
                if index + 1 < columns or room - left:
                    line.append(("", " " * (room - left)))
            self.end_line()
            if number + 1 == header_rows:
                rule = "\u2500\u253c\u2500".join("\u2500" * width for width in widths)
                self.open_line().append(("class:md.prefix", rule))
                self.end_line()


def _cells(line: Line) -> int:
    return sum(get_cwidth(text) for _, text in line)


def render_nodes(nodes: Sequence[Node]) -> list[Line]:
    """Draw the core's markdown tree ``nodes`` as lines of prompt_toolkit ``(style, text)``
    fragments.

    Every text fragment is inert (see :func:`inert_text`) and contains no line break.
    """
    renderer = _Renderer()
    renderer.blocks(nodes)
    while renderer.lines and not "".join(text for _, text in renderer.lines[-1]).strip():
        renderer.lines.pop()
    return renderer.lines


def lines_to_plain(lines: Sequence[Line]) -> list[str]:
    """The text of rendered lines, styles dropped (for line mode)."""
    return ["".join(text for _, text in line).rstrip() for line in lines]
