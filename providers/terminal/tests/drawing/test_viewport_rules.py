"""The viewport's arithmetic, for any list and any room (Hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dsh_user_questions_terminal._viewport import fit_rows, share_height

heights = st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=40)


@given(heights, st.data(), st.integers(min_value=3, max_value=40))
def test_the_cursor_row_is_always_drawn_and_the_window_fits(rows, data, room):
    """Whatever the row heights, cursor and previous top (and a room of three lines or more, as
    the layout always gives), the cursor's row is in the window, the window with its markers
    fits the room, and the markers count every hidden row."""
    cursor = data.draw(st.integers(min_value=0, max_value=len(rows) - 1))
    top = data.draw(st.integers(min_value=0, max_value=len(rows) - 1))
    window = fit_rows(rows, cursor, top, room)
    assert window.start <= cursor < window.end
    assert window.above == window.start
    assert window.below == len(rows) - window.end
    assert window.lines_used(rows) <= room
    if window.clip is not None:  # one row taller than the room: its head, marked as cut
        assert (window.start, window.end) == (cursor, cursor + 1)
        assert window.clip < rows[cursor]


@given(heights, st.integers(min_value=3, max_value=40))
def test_every_row_is_reachable_by_moving_down(rows, room):
    """Moving the cursor down from the top brings every row into the window in turn."""
    top = 0
    for cursor in range(len(rows)):
        window = fit_rows(rows, cursor, top, room)
        assert window.start <= cursor < window.end
        top = window.start


@given(
    st.integers(min_value=4, max_value=60),
    st.integers(min_value=0, max_value=80),
    st.integers(min_value=0, max_value=5000),
)
def test_a_list_and_a_text_share_the_height(available, rows, text):
    """The split never gives more lines than asked for, keeps the list at three lines or what it
    needs, and uses no more than the available lines when the list is not cut below three."""
    rows_height, text_height = share_height(available, rows, text, 2)
    assert rows_height >= min(rows, 3)
    assert text_height <= text
    if text and rows + text + 2 > available:
        assert text_height >= 1
        assert rows_height + text_height + 2 <= max(available, 3 + 1 + 2)
