"""Markdown (a question's ``detail``, a plan) rendered as terminal lines.

markdown-it-py parses (CommonMark plus tables and strikethrough, raw HTML disabled so it stays
text); this module turns its tokens into prompt_toolkit style-and-text fragments. It never
produces an escape sequence: prompt_toolkit draws the styles, and every piece of text from the
source passes through :func:`inert_text`, also after parsing, because entities such as
``&#x1b;`` only become control characters there.
"""

from __future__ import annotations

from collections.abc import Sequence

from dsh_user_questions.rules import inert_text
from markdown_it import MarkdownIt
from markdown_it.token import Token
from prompt_toolkit.utils import get_cwidth

__all__ = ["Fragment", "Line", "lines_to_plain", "render_markdown"]

Fragment = tuple[str, str]
Line = list[Fragment]

_PARSER = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])

_INLINE_STYLES = {
    "strong_open": "bold",
    "em_open": "italic",
    "s_open": "strike",
    "link_open": "underline",
}
_RULE = "\u2500" * 40


class _Renderer:
    def __init__(self) -> None:
        self.lines: list[Line] = []
        self.current: Line | None = None
        self.indent: list[str] = []
        self.marker: str | None = None
        self.gap = False
        self.block_style = ""
        self.list_counters: list[int | None] = []
        # A table is collected cell by cell, then drawn with its columns padded to one width.
        self.table: list[list[Line]] | None = None
        self.table_align: list[str] = []
        self.header_rows = 0
        self.cell: Line | None = None

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
        if self.cell is not None:
            self.cell.append((" ".join(p for p in (self.block_style, style) if p), text))
            return
        line = self.current if self.current is not None else self.open_line()
        full = " ".join(part for part in (self.block_style, style) if part)
        line.append((full, text))

    def inline(self, children: Sequence[Token]) -> None:
        styles: list[str] = []
        links: list[tuple[str, list[str]]] = []
        for child in children:
            kind = child.type
            if kind == "text":
                self.write(" ".join(styles), child.content)
                if links:
                    links[-1][1].append(child.content)
            elif kind == "code_inline":
                self.write(" ".join([*styles, "class:md.code"]), child.content)
            elif kind in ("softbreak", "hardbreak"):
                self.end_line()
                self.open_line()
            elif kind in _INLINE_STYLES:
                styles.append(_INLINE_STYLES[kind])
                if kind == "link_open":
                    links.append((str(child.attrs.get("href", "")), []))
            elif kind.endswith("_close") and kind.replace("_close", "_open") in _INLINE_STYLES:
                if styles:
                    styles.pop()
                if kind == "link_close" and links:
                    href, text = links.pop()
                    if href and "".join(text) != href:
                        self.write("class:md.url", f" <{href}>")
            elif kind == "image":
                alt = child.content or "image"
                self.write("class:md.url", f"[{alt}] <{child.attrs.get('src', '')}>")
            else:
                self.write(" ".join(styles), child.content)

    def code(self, content: str) -> None:
        self.indent.append("  ")
        for text in inert_text(content.rstrip("\n"), multiline=True).split("\n"):
            self.open_line()
            self.write("class:md.code", text)
            self.end_line()
        self.indent.pop()
        self.gap = True

    def block(self, tokens: Sequence[Token]) -> None:
        for token in tokens:
            kind = token.type
            if kind == "inline":
                self.inline(token.children or [])
            elif kind == "paragraph_close":
                self.end_line()
                if not token.hidden:
                    self.gap = True
            elif kind == "heading_open":
                self.block_style = "bold underline" if token.tag == "h1" else "bold"
            elif kind == "heading_close":
                self.block_style = ""
                self.end_line()
                self.gap = True
            elif kind in ("bullet_list_open", "ordered_list_open"):
                if self.current is not None:
                    self.end_line()
                start = token.attrs.get("start", 1) if kind == "ordered_list_open" else None
                self.list_counters.append(None if start is None else int(start))
            elif kind in ("bullet_list_close", "ordered_list_close"):
                self.list_counters.pop()
                if not self.list_counters:
                    self.gap = True
            elif kind == "list_item_open":
                counter = self.list_counters[-1] if self.list_counters else None
                if counter is None:
                    marker = "\u2022 "
                else:
                    marker = f"{counter}. "
                    self.list_counters[-1] = counter + 1
                self.indent.append(" " * len(marker))
                self.marker = marker
            elif kind == "list_item_close":
                self.end_line()
                self.indent.pop()
                self.marker = None
            elif kind == "blockquote_open":
                self.end_line()
                self.flush_gap()
                self.indent.append("\u2502 ")
            elif kind == "blockquote_close":
                self.end_line()
                self.indent.pop()
                self.gap = True
            elif kind in ("fence", "code_block"):
                self.end_line()
                self.code(token.content)
            elif kind == "hr":
                self.open_line()
                self.write("class:md.rule", _RULE)
                self.end_line()
                self.gap = True
            elif kind == "table_open":
                self.end_line()
                self.table, self.table_align, self.header_rows = [], [], 0
            elif kind == "tr_open" and self.table is not None:
                self.table.append([])
            elif kind in ("th_open", "td_open") and self.table is not None:
                self.cell = []
                self.table[-1].append(self.cell)
                style = str(token.attrs.get("style", ""))
                if len(self.table) == 1:
                    self.table_align.append(style.removeprefix("text-align:"))
                self.block_style = "bold" if kind == "th_open" else ""
            elif kind in ("th_close", "td_close"):
                self.cell = None
                self.block_style = ""
            elif kind == "thead_close" and self.table is not None:
                self.header_rows = len(self.table)
            elif kind == "table_close" and self.table is not None:
                self.draw_table(self.table)
                self.table = None
                self.gap = True
            elif kind in ("html_block", "html_inline"):
                self.write("", token.content)

    def draw_table(self, rows: list[list[Line]]) -> None:
        """Each column padded to its widest cell (aligned as the table says), ``│`` between
        columns and a rule under the header."""
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
                align = self.table_align[index] if index < len(self.table_align) else ""
                left = room if align == "right" else room // 2 if align == "center" else 0
                if index:
                    line.append(bar)
                line.append(("", " " * left))
                line.extend(cell)
                if index + 1 < columns or room - left:
                    line.append(("", " " * (room - left)))
            self.end_line()
            if number + 1 == self.header_rows:
                rule = "\u2500\u253c\u2500".join("\u2500" * width for width in widths)
                self.open_line().append(("class:md.prefix", rule))
                self.end_line()


def _cells(line: Line) -> int:
    return sum(get_cwidth(text) for _, text in line)


def render_markdown(source: str) -> list[Line]:
    """Render markdown ``source`` as lines of prompt_toolkit ``(style, text)`` fragments.

    Every text fragment is inert (see :func:`inert_text`) and contains no line break.
    """
    renderer = _Renderer()
    renderer.block(_PARSER.parse(inert_text(source, multiline=True)))
    while renderer.lines and not "".join(text for _, text in renderer.lines[-1]).strip():
        renderer.lines.pop()
    return renderer.lines


def lines_to_plain(lines: Sequence[Line]) -> list[str]:
    """The text of rendered lines, styles dropped (for line mode)."""
    return ["".join(text for _, text in line).rstrip() for line in lines]
