"""Which part of a list or a long text fits on the screen, so nothing is cut silently.

The form is laid out by hand, line by line, for the terminal's size at each render: the rows
of a list scroll so the highlighted one is always drawn, with "n more above/below" markers for
the rest; a long text shows a window of its lines with the position ("lines 1-14 of 62").
Only the visible lines are ever handed to the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["RowWindow", "fit_rows", "share_height"]


class RowWindow:
    """The rows ``start`` to ``end`` (exclusive) are drawn; ``above``/``below`` are hidden."""

    __slots__ = ("above", "below", "clip", "end", "start")

    def __init__(self, start: int, end: int, count: int, clip: int | None = None) -> None:
        self.start = start
        self.end = end
        self.above = start
        self.below = count - end
        # When one row alone is taller than the room: how many of its lines are drawn.
        self.clip = clip

    def lines_used(self, heights: Sequence[int]) -> int:
        """Lines this window takes, markers included."""
        body = self.clip if self.clip is not None else sum(heights[self.start : self.end])
        return body + (1 if self.above else 0) + (1 if self.below else 0)


def fit_rows(heights: Sequence[int], cursor: int, top: int, room: int) -> RowWindow:
    """The rows to draw in ``room`` lines so that row ``cursor`` is among them.

    ``heights`` are the rows' wrapped heights; ``top`` is the first row drawn last time (the
    window moves only as far as needed to keep the cursor in view). A marker line is reserved
    above when rows are hidden above, and below when rows are hidden below.
    """
    count = len(heights)
    room = max(room, 1)
    if sum(heights) <= room:
        return RowWindow(0, count, count)
    top = max(0, min(top, cursor))
    while True:
        used = 1 if top else 0
        end = top
        while end < count:
            marker = 1 if end + 1 < count else 0
            if used + heights[end] + marker > room:
                break
            used += heights[end]
            end += 1
        if end > cursor or top >= cursor:
            break
        top += 1
    if end <= cursor:  # the cursor's row alone is taller than the room: draw its head
        marker_lines = (1 if cursor else 0) + (1 if cursor + 1 < count else 0)
        return RowWindow(cursor, cursor + 1, count, clip=max(1, room - marker_lines))
    # At the end of the list, pull earlier rows into any room left over.
    while top > 0:
        used = sum(heights[top - 1 : end]) + (1 if top - 1 else 0) + (1 if end < count else 0)
        if used > room:
            break
        top -= 1
    return RowWindow(top, end, count)


def share_height(available: int, rows: int, text: int, text_chrome: int) -> tuple[int, int]:
    """Split ``available`` lines between a list (needing ``rows``) and a text (``text`` lines
    plus ``text_chrome`` lines of frame and position when it must scroll).

    Returns ``(rows_height, text_height)``. The list is never squeezed below three lines (the
    highlighted row and its two markers) nor the text below three lines when the list is long.
    """
    if not text:
        return available, 0
    if rows + text + text_chrome <= available:
        return rows, text
    least_text = min(text, 3)
    room_for_rows = available - text_chrome - least_text
    if rows <= room_for_rows:
        return rows, available - text_chrome - rows
    rows_height = max(room_for_rows, min(rows, 3))
    return rows_height, max(1, available - text_chrome - rows_height)
