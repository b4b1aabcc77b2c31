"""The README and the docs show the prompt as it really looks."""

from __future__ import annotations

import pytest
from capture_screen import IMAGES, README, pictures, readme_block, screens, svg


def test_readme_screens_match_a_fresh_capture() -> None:
    """README.md shows the screens the prompt draws today (refresh: capture_screen.py --write)."""
    assert readme_block(README.read_text(encoding="utf-8")) == screens()


class _Cell:
    def __init__(self, data: str, **look: object) -> None:
        self.data = data
        self.fg, self.bg = look.get("fg", "default"), look.get("bg", "default")
        self.bold = look.get("bold", False)
        self.italics = self.underscore = False
        self.reverse = look.get("reverse", False)


class _FakeScreen:
    """Just what `svg` reads of a pyte screen."""

    def __init__(self, rows: list[list[_Cell]], columns: int, lines: int) -> None:
        blank = _Cell(" ")
        self.columns, self.lines = columns, lines
        self.buffer = [row + [blank] * (columns - len(row)) for row in rows]
        self.buffer += [[blank] * columns] * (lines - len(rows))
        self.display = ["".join(c.data for c in row) for row in self.buffer]


class TestTheTerminalPictures:
    def test_svg_keeps_spaces_colours_and_escapes_text(self) -> None:
        """A run of cells becomes one text element at its column: spaces kept (no-break),
        markup escaped, a named colour and reverse video drawn, blank rows below left out."""
        rows = [
            [_Cell(c) for c in " a<b"] + [_Cell(c, fg="cyan", bold=True) for c in "ok"],
            [_Cell(c, reverse=True) for c in "hi"],
        ]
        drawn = svg(_FakeScreen(rows, 10, 5), "A & B")
        assert 'aria-label="A &amp; B"' in drawn
        assert ">\u00a0a&lt;b</text>" in drawn
        assert 'x="45.6" y="26" fill="#11a8cd" font-weight="bold">ok</text>' in drawn
        assert '<rect x="12" y="30" width="16.8" height="18" fill="#d4d4d4"/>' in drawn
        assert 'height="60"' in drawn  # two rows and the padding, not five

    def test_committed_pictures_match_a_fresh_capture(self) -> None:
        """docs/img's terminal-form pictures are what a real pty run draws today (refresh:
        capture_screen.py --write)."""
        if not IMAGES.is_dir():
            pytest.skip("not in the repository: docs/img is not here (an unpacked sdist)")
        for name, drawing in pictures().items():
            committed = (IMAGES / name).read_text(encoding="utf-8")
            assert committed == drawing, f"docs/img/{name} is stale: run capture_screen.py --write"
