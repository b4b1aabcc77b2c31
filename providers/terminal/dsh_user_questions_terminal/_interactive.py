"""Interactive mode: a prompt_toolkit form drawn below the cursor, one question a page (its keys
are in `_keys`).

The form is laid out by hand for the terminal's size at every render (see `_viewport`): the
highlighted row is always drawn, hidden rows are announced, a long detail shows a window of its
lines and its position. A key acts only on what the last render showed: a pick of a row that was
never drawn moves the pointer there instead, and a plan can be approved only once each of its
lines has been drawn.

When a page appears while the human is typing (a key within `TYPING_SECONDS` before it, or keys
dropped as type-ahead when the prompt showed), keys are ignored for `GUARD_SECONDS` and the key
hint is drawn only when they count again: the Enter typed after a ``2`` for the previous
question cannot answer a question the human has not seen. Keys: see the provider's README.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, InvalidOperation
from typing import Any, Literal, TextIO

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionRequest,
    AskUserQuestionUpload,
    UserQuestionError,
)
from dsh_user_questions._i18n import review_text
from dsh_user_questions._input_text import value_from_text
from dsh_user_questions._uploads import UploadRefused, copy_file, discard_upload
from dsh_user_questions.rules import inert_text
from prompt_toolkit.application import Application, create_app_session
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import DynamicCompleter, PathCompleter
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import create_input
from prompt_toolkit.layout import (
    AnyContainer,
    ConditionalContainer,
    Dimension,
    FormattedTextControl,
    HSplit,
    Layout,
    Window,
)
from prompt_toolkit.layout.processors import ConditionalProcessor, PasswordProcessor
from prompt_toolkit.output import create_output
from prompt_toolkit.shortcuts import print_formatted_text
from prompt_toolkit.utils import get_cwidth
from prompt_toolkit.widgets import TextArea

from ._abort import AbortRelay
from ._drawing import SEP, STYLE, boxed, continuation, join, mark_cut, recap, wrap_parts
from ._i18n import N_, _
from ._keys import DISCARD, LAST_KEY, TALK, form_bindings
from ._markdown import Line
from ._page import FILES_SHOWN, RECOMMENDED, Page, TextPurpose
from ._questions import (
    SECRET_GIVEN,
    answer_problem,
    describe_answer,
    describe_value,
    one_line,
    title,
    unusable_stream,
)
from ._screen_guard import drop_type_ahead, output_above, restore_on_signals
from ._turns import TERMINAL_TURNS
from ._viewport import RowWindow, fit_rows, share_height
from ._wrap import wrap_line

__all__ = ["GUARD_SECONDS", "ask_interactive"]

GUARD_SECONDS = 0.25
"""How long keys are ignored after a page appears while the human is typing (its key hint is
drawn when keys count again)."""

TYPING_SECONDS = 1.0
"""A key this recent when a page appears means the human was typing (for the previous page)."""


TOO_SMALL = N_("Window too small: make it larger to answer")

_PREVIEW_SOURCE = -1_000_000  # the source number of a preview's lines (never a review card's)

_DIGIT_PAUSE = 1.0  # seconds within which a second digit continues a number (1 then 2: row 12)

# The field a typed answer is entered in, by the kind of input (a number, date or time: "value").
_INPUT_PURPOSE: dict[str, TextPurpose] = {"files": "filter", "upload": "path"}
_PATHS = PathCompleter(expanduser=True)


class _Frame:
    """One render's layout: the lines of the body and of the hint, and what they show."""

    __slots__ = ("body", "detail_height", "hint", "rows", "scrolls", "shown", "too_small")

    def __init__(self) -> None:
        self.shown: tuple[int, int] | None = None  # the detail's lines this frame draws
        self.too_small = False  # the form does not fit: nothing is drawn, no key answers
        self.body: list[Line] = []
        self.hint: list[Line] = []
        self.rows: RowWindow | None = None
        self.detail_height = 0
        self.scrolls = False


class Form:
    """The state machine and the drawing of the prompt."""

    def __init__(self, request: AskUserQuestionRequest) -> None:
        self.pages = [Page(item) for item in request.questions]
        self.page = 0
        self.summary_cursor = 0
        self.summary_top = 0
        self.text_purpose: TextPurpose | None = None
        self.feedback_label = ""
        self.confirming = False
        # What a pending confirmation asks ("y" does it, any other key keeps the form).
        self.confirm_prompt = DISCARD
        self.notice = ""
        self.read_first = False  # Enter on Approve before the whole plan was drawn
        self.digits = ""
        self.digit_time = 0.0
        self.shown_at: float | None = None
        self.typed_ahead = False  # keys were dropped as type-ahead when the prompt showed
        self.visible: range = range(0)
        self._frame_cache: tuple[tuple[int, int, int], _Frame] | None = None
        self.last = _Frame()
        self.text = TextArea(
            multiline=True,
            accept_handler=self._guarded_accept,
            # Tab completes a path (no completion while typing: Tab's own would be dropped
            # while one runs).
            complete_while_typing=False,
            completer=DynamicCompleter(lambda: _PATHS if self.text_purpose == "path" else None),
            wrap_lines=True,
            height=self._field_height,
            read_only=Condition(lambda: not self.armed),
            # A secret answer is typed masked: one dot a character, never the text.
            input_processors=[
                ConditionalProcessor(
                    PasswordProcessor("\u2022"),
                    filter=Condition(lambda: not self.summary and self.current.secret),
                )
            ],
        )
        self.text.buffer.on_text_changed += self._typed
        self.body_control = FormattedTextControl(self._body, focusable=True, show_cursor=False)
        self.app: Application[AskUserQuestionAnswer] = Application(
            layout=Layout(self._container(), focused_element=self.body_control),
            key_bindings=form_bindings(self),
            style=STYLE,
            full_screen=False,
            erase_when_done=True,
            mouse_support=False,
        )
        self.app.ttimeoutlen = 0.05
        self.enter_page(0)

    # --- state -------------------------------------------------------------------------------

    @property
    def summary(self) -> bool:
        return self.page >= len(self.pages)

    @property
    def current(self) -> Page:
        return self.pages[min(self.page, len(self.pages) - 1)]

    @property
    def armed(self) -> bool:
        """Whether keys count: the page is on screen, and, if it appeared while the human was
        typing, has been for `GUARD_SECONDS`."""
        return (
            self.shown_at is not None
            and not self.last.too_small
            and time.monotonic() - self.shown_at >= GUARD_SECONDS
        )

    def enter_page(self, index: int) -> None:
        self.page = index
        self.text_purpose = None
        self.notice = ""
        self.read_first = False
        self.digits = ""
        self.shown_at = None
        self.visible = range(0)
        if self.summary:
            return
        page = self.current
        if page.input is not None:
            self._start_text(_INPUT_PURPOSE.get(page.input_type or "", "value"))
        elif not page.view.options and page.answer is None:
            self._start_text("free")
        else:
            self.stop_text()

    def _start_text(self, purpose: TextPurpose, label: str = "") -> None:
        self.text_purpose = purpose
        self.feedback_label = label
        page = self.current
        if purpose == "filter":
            self.text.text = page.filter_text
        elif purpose == "path":
            self.text.text = ""
        else:
            self.text.text = page.custom if purpose != "feedback" else ""
        self.text.buffer.cursor_position = len(self.text.text)
        self.app.layout.focus(self.text)

    def stop_text(self) -> None:
        self.text_purpose = None
        self.app.layout.focus(self.body_control)

    def _record(self, answer: AskUserQuestionAnswerItem) -> None:
        self.current.answer = answer
        self.stop_text()
        if len(self.pages) == 1:
            self.submit()
        elif self.page + 1 < len(self.pages) and not all(p.answer for p in self.pages):
            self.enter_page(self.page + 1)
        else:  # every question answered (also after changing one): the summary
            self.enter_page(len(self.pages))

    def submit(self) -> None:
        answers = [p.answer for p in self.pages if p.answer is not None]
        self.app.exit(result=AskUserQuestionAnswer(answers))

    def has_answers(self) -> bool:
        return any(p.answer or p.checked or p.other_checked or p.custom for p in self.pages)

    def _plan_unread(self, page: Page) -> bool:
        return page.plan and not page.read

    def activate(self, row_index: int) -> None:
        page = self.current
        if row_index not in self.visible:  # never drawn: show it first
            page.cursor = row_index
            return
        page.cursor = row_index
        row = page.rows[row_index]
        item = page.item
        if row.kind == "talk":  # it closes the question: asked first, as the page asks
            self.confirm(TALK)
        elif row.kind == "skip":
            page.checked.clear()
            page.other_checked = False
            self._record(AskUserQuestionAnswerItem(id=item.id))
        elif row.kind == "other" and page.input is not None:
            self._start_text(_INPUT_PURPOSE.get(page.input_type or "", "value"))
        elif row.kind == "other":
            self._start_text("free" if not page.view.options else "other")
        elif page.input_type == "files":
            if not page.chosen:
                self.toggle(row_index)
            self.confirm_files()
        elif page.plan and row.approves:
            if self._plan_unread(page):
                self.show_unread()
                self.read_first = True  # said until the whole plan has been drawn
                return
            self._record(AskUserQuestionAnswerItem(id=item.id, selected=(row.label,)))
        elif page.plan:
            self._start_text("feedback", row.label)
        elif page.view.multi_select:
            if not page.touched and not page.checked and not page.other_checked:
                page.checked.add(row.index)
            self.confirm_multi()
        else:
            self._record(AskUserQuestionAnswerItem(id=item.id, selected=(row.label,)))

    def toggle(self, row_index: int) -> None:
        page = self.current
        if row_index not in self.visible:
            page.cursor = row_index
            return
        page.cursor = row_index
        row = page.rows[row_index]
        if row.kind == "option" and page.input_type == "files":
            self.toggle_file(row.label)
        elif row.kind == "option":
            page.checked ^= {row.index}
            page.touched = True
        elif row.kind == "other":
            page.touched = True
            if page.other_checked:
                page.other_checked = False
            else:
                self._start_text("other")
        else:
            self.activate(row_index)

    def toggle_all(self) -> None:
        page = self.current
        everything = set(range(len(page.view.options)))
        page.checked = set() if page.checked == everything else everything
        page.touched = True

    def toggle_file(self, path: str) -> None:
        """Tick or untick a file of a file question (at most its ``max_count``)."""
        page = self.current
        if path in page.chosen:
            page.chosen.remove(path)
            self.notice = ""
            return
        assert page.input is not None, "a file question has its input"
        limit = page.input.max_count
        if limit is not None and len(page.chosen) >= limit:
            self.notice = (
                _("At most one file: untick it first.")
                if limit == 1
                else _("At most {count} files: untick one first.").format(count=limit)
            )
            return
        page.chosen.append(path)
        self.notice = ""

    def confirm_files(self) -> None:
        """Send the ticked files of a file question (the rules judge them first)."""
        page = self.current
        if not page.chosen:
            self.notice = _("Tick at least one file (Space), or choose Skip.")
            return
        self._record_value(list(page.chosen))

    def _record_value(self, value: Any) -> bool:
        """Record ``value`` for the current question if the core's rules take it; else say
        why (the notice) and keep the field as typed."""
        page = self.current
        item = page.item
        answer = AskUserQuestionAnswerItem(id=item.id, value=value)
        problem = answer_problem(item, answer)
        if problem is not None:
            self.notice = _("Not taken: {problem}").format(problem=problem)
            return False
        self.notice = ""
        self._record(answer)
        return True

    def step_number(self, direction: int) -> None:
        """Up/Down in a number field: one ``step`` (else 1) up or down, kept within range."""
        page = self.current
        field = page.input
        assert field is not None, "a number question has its input"
        step = Decimal(str(field.step)) if field.step is not None else Decimal(1)
        low = None if field.min is None else Decimal(str(field.min))
        high = None if field.max is None else Decimal(str(field.max))
        try:
            now = Decimal(self.text.text.strip())
        except InvalidOperation:
            now = None
        if now is None or not now.is_finite():
            new = low if low is not None else Decimal(0)
        else:
            # To the next point of the grid (counted from min, else 0) that way.
            base = low if low is not None else Decimal(0)
            steps = (now - base) / step
            if direction > 0:
                new = base + (steps.to_integral_value(rounding=ROUND_FLOOR) + 1) * step
            else:
                new = base + (steps.to_integral_value(rounding=ROUND_CEILING) - 1) * step
        if low is not None and new < low:
            new = low
        if high is not None and new > high:
            new = high
        text = format(new.normalize(), "f") if new != 0 else "0"
        self.text.text = text
        self.text.buffer.cursor_position = len(text)

    def _typed(self, _buffer: Buffer) -> None:
        """As the field changes: a file question's rows follow the filter; a typed value is
        checked by the rules, and their objection shown at once (nothing is recorded)."""
        if self.summary:
            return
        page = self.current
        if self.text_purpose == "filter":
            page.refilter(self.text.text)
            self.visible = range(0)
        elif self.text_purpose == "value":
            words = self.text.text.strip()
            if not words:
                self.notice = ""
                return
            value = value_from_text(page.input, words)
            problem = answer_problem(
                page.item, AskUserQuestionAnswerItem(id=page.item.id, value=value)
            )
            self.notice = "" if problem is None else _("Not yet: {problem}").format(problem=problem)

    def confirm_multi(self) -> None:
        page = self.current
        item = page.item
        selected = [r.label for r in page.rows if r.kind == "option" and r.index in page.checked]
        custom = page.custom.strip() if page.other_checked and page.custom.strip() else None
        self._record(AskUserQuestionAnswerItem(id=item.id, selected=tuple(selected), custom=custom))

    def _guarded_accept(self, buffer: Buffer) -> bool:
        try:
            return self._accept_text(buffer)
        except Exception as error:
            if not self.app.is_done:
                self.app.exit(exception=error)
            return True

    def _accept_text(self, buffer: Buffer) -> bool:
        page = self.current
        value = buffer.text.strip()
        item = page.item
        purpose = self.text_purpose
        if purpose == "value":
            page.custom = value
            if not value:
                self.notice = _("Type an answer, or press Esc and choose Skip.")
                return True
            self._record_value(value_from_text(page.input, value))
            return True
        if purpose == "filter":
            self.confirm_files()
            return True
        if purpose == "path":
            self._take_path(value)
            return True
        if value:
            # What the core's answer rules would refuse (too long, control characters pasted)
            # is not taken: the text stays in the field to be edited.
            problem = answer_problem(item, AskUserQuestionAnswerItem(id=item.id, custom=value))
            if problem is not None:
                self.notice = _("Not taken: {problem}. Edit it and press Enter again.").format(
                    problem=problem
                )
                return True
        self.notice = ""
        if purpose == "feedback":
            if value:
                self._record(AskUserQuestionAnswerItem(id=item.id, custom=value))
            else:
                self._record(AskUserQuestionAnswerItem(id=item.id, selected=(self.feedback_label,)))
        elif purpose == "free":
            page.custom = value
            self._record(
                AskUserQuestionAnswerItem(id=item.id, custom=value)
                if value
                else AskUserQuestionAnswerItem(id=item.id)
            )
        elif page.view.multi_select:
            page.custom = value
            page.other_checked = bool(value)
            self.stop_text()
        elif value:
            page.custom = value
            self._record(AskUserQuestionAnswerItem(id=item.id, custom=value))
        else:
            self.stop_text()
        return True

    def _take_path(self, typed: str) -> None:
        """Enter on an upload question's path: copy that file into the uploads folder (its
        size, type and name checked as it goes); Enter on an empty path sends the files taken."""
        page = self.current
        field = page.input
        assert field is not None, "an upload question has its input"
        if not typed:
            if page.uploads:
                if not self._record_value(list(page.uploads)):
                    return
            else:
                self.notice = _("Type the path of a file (Tab completes), or press Esc and Skip.")
            return
        limit = field.max_count
        if limit is not None and len(page.uploads) >= limit:
            self.notice = (
                _("At most one file: press Enter to send.")
                if limit == 1
                else _("At most {count} files: press Enter to send.").format(count=limit)
            )
            return
        try:
            record = copy_file(typed, max_bytes=field.max_bytes, accept=field.accept)
        except UploadRefused as refused:
            why = inert_text(refused.shown)
            self.notice = _("Not taken: {problem}").format(problem=why)
            return
        except OSError as error:
            why = inert_text(error.strerror or str(error))
            self.notice = _("Not taken: {problem}").format(problem=why)
            return
        page.uploads.append(AskUserQuestionUpload.from_dict(record))
        self.text.text = ""
        taken = describe_value(page.uploads)
        if limit == 1:
            if not self._record_value(list(page.uploads)):
                discard_upload(page.uploads.pop().to_dict())
            return
        self.notice = _("Taken: {files}. Another path, or Enter to send.").format(files=taken)

    def confirm(self, prompt: str) -> None:
        """Ask ``prompt`` before cancelling: ``y`` cancels, any other key keeps the form."""
        self.confirm_prompt = prompt
        self.confirming = True

    def cancel(self) -> None:
        if not self.app.is_done:
            self.app.exit(exception=UserQuestionError.cancelled())

    def move(self, delta: int, *, wrap: bool = True) -> None:
        if self.summary:
            count = len(self.pages)
            self.summary_cursor = max(0, min(count - 1, self.summary_cursor + delta))
            return
        page = self.current
        count = len(page.rows)
        if wrap:
            page.cursor = (page.cursor + delta) % count
        else:
            page.cursor = max(0, min(count - 1, page.cursor + delta))

    def scroll_detail(self, pages: int) -> None:
        """Scroll the detail by ``pages`` times the height it was drawn in (a box of 3 lines
        moves 3 lines a page)."""
        page = self.current
        step = max(1, self.last.detail_height)
        # The next render clamps to the last full window (its height may differ from this one).
        limit = max(0, len(page.wrapped) - 1)
        page.detail_top = max(0, min(page.detail_top + pages * step, limit))

    def show_unread(self) -> None:
        """Scroll the detail to its first line never drawn (Enter on an Approve not earned yet):
        the next page when the plan was read in order, the lines jumped over after End or a
        burst of PgDn, so that Enter alone reads a plan through and then approves it."""
        page = self.current
        first = page.seen.find(0)
        if first >= 0:  # the next render clamps to the last full window
            page.detail_top = first

    def number(self, digit: str) -> None:
        """A digit key: with ten rows or more, 1 then 2 typed quickly is row 12."""
        count = len(self.pages) if self.summary else len(self.current.rows)
        now = time.monotonic()
        number = digit
        if (
            self.digits
            and now - self.digit_time < _DIGIT_PAUSE
            and int(self.digits + digit) <= count
        ):
            number = self.digits + digit
        self.digit_time = now
        value = int(number)
        if not 1 <= value <= count:
            self.digits = ""
            return
        self.digits = number
        longer = value * 10 <= count  # more digits could follow: only move the pointer
        if self.summary:
            if longer:
                self.summary_cursor = value - 1
            else:
                self.digits = ""
                self.enter_page(value - 1)
            return
        page = self.current
        if longer:
            page.cursor = value - 1
            return
        self.digits = ""
        if page.view.multi_select:
            self.toggle(value - 1)
        else:
            self.activate(value - 1)

    # --- layout ------------------------------------------------------------------------------

    def _container(self) -> AnyContainer:
        # The last frame: the body, laid out first in each render, has just computed it (and
        # before the first render this must not lay one out: focusing the field asks too).
        typing = Condition(lambda: self.text_purpose is not None and not self.last.too_small)
        return HSplit(
            [
                Window(self.body_control, height=lambda: Dimension.exact(len(self._frame().body))),
                ConditionalContainer(
                    HSplit(
                        [
                            Window(FormattedTextControl(self._text_label), height=1),
                            self.text,
                        ]
                    ),
                    filter=typing,
                ),
                Window(
                    FormattedTextControl(lambda: join(self._frame().hint)),
                    height=lambda: Dimension.exact(len(self._frame().hint)),
                ),
            ]
        )

    def _size(self) -> tuple[int, int]:
        size = self.app.output.get_size()
        return max(size.columns, 10), max(size.rows, 4)

    def _field_height(self) -> Dimension:
        width, _ = self._size()
        lines = sum(
            max(1, -(-get_cwidth(line) // max(1, width - 1))) for line in self.text.text.split("\n")
        )
        return Dimension.exact(min(3, max(1, lines)))

    def page_rows(self) -> int:
        """How many rows the last render showed: PgUp/PgDn move the pointer that far."""
        window = self.last.rows
        return max(1, window.end - window.start) if window is not None else 1

    def _frame(self) -> _Frame:
        """This render's layout (computed once per render, for the terminal's current size)."""
        width, height = self._size()
        key = (self.app.render_counter, width, height)
        if self._frame_cache is not None and self._frame_cache[0] == key:
            return self._frame_cache[1]
        if self.shown_at is None:  # the page's first render: start its guard if need be
            self._start_guard()
        unread = not self.summary and self._plan_unread(self.current)
        frame = self._layout(width, height)
        if frame.shown is not None:  # drawn now: these lines of the detail count as read
            self.current.mark_seen(*frame.shown)
            if unread and not self._plan_unread(self.current):
                # This render shows the plan's last unread lines: lay out again so the Approve
                # row drawn with them no longer asks to read on.
                frame = self._layout(width, height)
                if frame.shown is not None:
                    self.current.mark_seen(*frame.shown)
        self._frame_cache = (key, frame)
        self.last = frame
        return frame

    def _layout(self, width: int, height: int, *, notice: bool = True) -> _Frame:
        frame = _Frame()
        heading = wrap_line(self._heading(), width)
        hint = self._hint_lines(width, scrolls=False, notice=notice)
        field = (1 + self._field_height().preferred) if self.text_purpose else 0
        question = self._question_lines(width)
        cap = max(1, (height - len(heading) - len(hint) - field) // 3)
        overflow = question[cap:]
        question = question[:cap]
        detail = self._detail_lines(width, overflow)
        page = self.current
        plan = not self.summary and page.plan
        # While the feedback on a review card is typed, its rows give their room to the text
        # (Esc brings them back): the box keeps its three lines at 40x12.
        row_lines = [] if plan and self.text_purpose is not None else self._row_lines(width)
        heights = [len(lines) for lines in row_lines]
        available = height - len(heading) - len(hint) - field - len(question)
        chrome = 2 if plan else 1
        if detail and sum(heights) + len(detail) + chrome > available:
            chrome = 2  # the frame (plan) or a blank line and the position line
            frame.scrolls = True
            hint = self._hint_lines(width, scrolls=True, notice=notice)
            available = height - len(heading) - len(hint) - field - len(question)
        rows_room, detail_height = share_height(available, sum(heights), len(detail), chrome)
        if detail_height < min(3, len(detail)):
            # A detail (a plan's box) keeps three lines: a notice gives up its room first, else
            # the window is too small (a one-line window on a plan cannot be read).
            if notice and self._notice_text():
                return self._layout(width, height, notice=False)
            return self._too_small(width, height)
        frame.detail_height = detail_height
        frame.hint = hint
        frame.body = heading + question
        if detail:
            frame.body += self._detail_window(page, detail, frame, width)
        cursor = self.summary_cursor if self.summary else page.cursor
        top = self.summary_top if self.summary else page.row_top
        window = fit_rows(heights, cursor, top, rows_room)
        frame.rows = window
        frame.body += self._rows_window(row_lines, window, width)
        if len(frame.body) + field + len(frame.hint) > height:
            return self._too_small(width, height)
        return frame

    def _too_small(self, width: int, height: int) -> _Frame:
        """The form does not fit: say so, and draw no row (no key can answer meanwhile)."""
        frame = _Frame()
        frame.too_small = True
        frame.body = wrap_line([("class:notice", _(TOO_SMALL))], width)[:height]
        frame.rows = RowWindow(0, 0, 0)
        return frame

    def _start_guard(self) -> None:
        now = time.monotonic()
        typing = self.typed_ahead or now - LAST_KEY[0] < TYPING_SECONDS
        self.typed_ahead = False
        # Not typing: keys count at once (the page counts as shown long enough ago).
        self.shown_at = now if typing else now - GUARD_SECONDS
        loop = self.app.loop
        if typing and loop is not None:  # draw the key hint once keys count
            loop.call_later(GUARD_SECONDS * 1.05, self.app.invalidate)

    def _commit(self, frame: _Frame) -> None:
        """What this render shows: the rows a key may act on."""
        window = frame.rows
        if window is not None:
            if self.summary:
                self.summary_top = window.start
            else:
                self.current.row_top = window.start
            self.visible = range(window.start, window.end)

    # --- drawing -----------------------------------------------------------------------------

    def _body(self) -> StyleAndTextTuples:
        frame = self._frame()
        self._commit(frame)
        return join(frame.body)

    def _heading(self) -> Line:
        fragments: Line = []
        total = len(self.pages)
        waiting = TERMINAL_TURNS.waiting
        more = " \u00b7 " + _("{count} more waiting").format(count=waiting) if waiting else ""
        if self.summary:
            return [
                ("class:chip", " " + _("Summary") + " "),
                ("class:progress", "  " + _("check your answers") + more),
            ]
        view = self.current.view
        if view.header:
            fragments += [("class:chip", f" {review_text(view.kind, view.header)} "), ("", "  ")]
        progress = (
            _("question {number} of {total}").format(number=self.page + 1, total=total)
            if total > 1
            else ""
        )
        if progress or more:
            fragments.append(("class:progress", (progress + more).lstrip(" \u00b7")))
        return fragments

    def _question_lines(self, width: int) -> list[Line]:
        view = self.current.view
        text = (
            _("Submit these answers?")
            if self.summary
            else one_line(review_text(view.kind, view.question))
        )
        return wrap_line([("class:question", text)], width)

    def _detail_lines(self, width: int, overflow: list[Line]) -> list[Line]:
        """The question's overflow and the detail, wrapped to the width they are drawn in."""
        if self.summary:
            return []
        page = self.current
        inner = width - (4 if page.plan else 2)
        # The focused option's preview follows the detail (none while text is typed).
        focused = page.cursor if self.text_purpose is None else -1
        preview = page.preview(focused)
        key = (inner, len(overflow), focused if preview else -1)
        if page.wrapped_key != key:
            wrapped = [list(line) for line in overflow]
            sources = [-1 - number for number in range(len(overflow))]
            if overflow and page.detail:
                wrapped.append([])
                sources.append(-1 - len(overflow))
            for number, line in enumerate(page.detail):
                pieces = wrap_line(line, inner, lead=continuation(line))
                wrapped += pieces
                sources += [number] * len(pieces)
            preview_start = len(wrapped)
            if preview:
                preview_start = self._add_preview(page, focused, preview, inner, wrapped, sources)
            page.set_wrapped(wrapped, sources)
            if preview and page.wrapped_key[2:] != key[2:]:
                page.detail_top = preview_start  # another option's preview: show its start
            page.wrapped_key = key
            page.detail_top = min(page.detail_top, max(0, len(wrapped) - 1))
        return page.wrapped

    def _add_preview(
        self,
        page: Page,
        row_index: int,
        preview: list[Line],
        inner: int,
        wrapped: list[Line],
        sources: list[int],
    ) -> int:
        """Append the focused option's preview (a title line, then its markdown behind a bar)
        to ``wrapped``; the index of its first line."""
        if wrapped:
            wrapped.append([])
            sources.append(_PREVIEW_SOURCE)
        start = len(wrapped)
        label = page.rows[row_index].shown
        title: Line = [("class:preview.title", _("Preview") + f" \u00b7 {label}")]
        lines = wrap_line(title, inner)
        for line in preview:
            barred: Line = [("class:md.prefix", "\u2502 "), *line]
            lines += wrap_line(barred, inner, lead=continuation(barred))
        wrapped += lines
        sources += [_PREVIEW_SOURCE] * len(lines)
        return start

    def _detail_window(
        self, page: Page, lines: list[Line], frame: _Frame, width: int
    ) -> list[Line]:
        """The detail's lines that fit in ``frame.detail_height`` (their range kept in
        ``frame.shown``: they count as read once the frame is drawn)."""
        height = frame.detail_height
        scrolls = frame.scrolls
        top = max(0, min(page.detail_top, len(lines) - height))
        page.detail_top = top
        shown = lines[top : top + height]
        frame.shown = (top, top + len(shown))
        position = (
            _("lines {first}-{last} of {total}").format(
                first=top + 1, last=top + len(shown), total=len(lines)
            )
            if scrolls
            else ""
        )
        if page.plan:
            return boxed(shown, width, _("Diff") if page.what == "diff" else _("Plan"), position)
        out: list[Line] = [[("", "  "), *line] for line in shown]
        if scrolls:
            out.append([("class:more", f"  \u2195 {position} \u00b7 PgUp/PgDn")])
        out.append([])
        return out

    def _row_lines(self, width: int) -> list[list[Line]]:
        if self.summary:
            return self._summary_lines(width)
        page = self.current
        files = page.input_type == "files"
        multi = page.view.multi_select or files
        digits = len(str(len(page.rows)))
        out: list[list[Line]] = []
        for i, row in enumerate(page.rows):
            here = i == page.cursor and self.text_purpose in (None, "filter")
            fragments: Line = [
                ("class:pointer", "\u276f " if here else "  "),
                ("class:number", f"{i + 1:>{digits}}. "),
            ]
            if multi and row.kind in ("option", "other"):
                if files:
                    on = row.label in page.chosen
                elif row.kind == "option":
                    on = row.index in page.checked
                else:
                    on = page.other_checked
                fragments.append(("class:checkbox", "[x] " if on else "[ ] "))
            indent = sum(get_cwidth(text) for _, text in fragments)
            fragments.append(("class:current" if here else "", row.shown))
            description = row.description
            if row.recommended:
                fragments.append(("class:recommended", f" {_(RECOMMENDED)}"))
            if page.plan and row.approves and self._plan_unread(page):
                description = (
                    _("read the whole diff first (PgDn)")
                    if page.what == "diff"
                    else _("read the whole plan first (PgDn)")
                )
            if row.kind == "other" and page.custom and (page.other_checked or not multi):
                shown = _(SECRET_GIVEN) if page.secret else inert_text(page.custom)
                fragments.append(("class:extra", f": {shown}"))
            elif description:
                fragments.append(("class:description", f" \u2014 {description}"))
            out.append(wrap_line(fragments, width, indent))
        return out

    def _summary_lines(self, width: int) -> list[list[Line]]:
        out: list[list[Line]] = []
        digits = len(str(len(self.pages)))
        for i, page in enumerate(self.pages):
            here = i == self.summary_cursor
            fragments: Line = [
                ("class:pointer", "\u276f " if here else "  "),
                ("class:number", f"{i + 1:>{digits}}. "),
                ("", f"{title(page.view)}: "),
                (
                    "class:current",
                    describe_answer(page.answer, secret=page.secret, shown=page.shown_labels),
                ),
            ]
            out.append(wrap_line(fragments, width, 4 + digits))
        return out

    def _rows_window(self, rows: list[list[Line]], window: RowWindow, width: int) -> list[Line]:
        out: list[Line] = []
        if window.above:
            out.append(
                [("class:more", "  \u2191 " + _("{count} more above").format(count=window.above))]
            )
        for lines in rows[window.start : window.end]:
            out += lines
        if window.clip is not None:  # the row alone is taller than the room: its head, marked
            out = out[: (1 if window.above else 0) + window.clip]
            out[-1] = mark_cut(out[-1], width)
        if window.below:
            out.append(
                [("class:more", "  \u2193 " + _("{count} more below").format(count=window.below))]
            )
        return out

    def _text_label(self) -> StyleAndTextTuples:
        page = self.current
        if self.text_purpose == "filter":
            shown = min(page.matches, FILES_SHOWN)
            counts = {
                "matches": f"{page.matches:,}",
                "count": f"{len(page.files):,}",
                "shown": f"{shown:,}",
                "ticked": f"{len(page.chosen):,}",
            }
            said = (
                _("{matches} of {count} files match, first {shown} shown; {ticked} ticked")
                if page.matches > shown
                else _("{matches} of {count} files match; {ticked} ticked")
            )
            return [
                ("class:question", "  " + _("Filter:")),
                ("class:hint", " " + said.format(**counts)),
            ]
        if self.text_purpose == "path":
            return [
                ("class:question", "  " + _("Path of the file:")),
                ("class:hint", f" {page.input_words}"),
            ]
        if self.text_purpose == "value":
            return [
                ("class:question", "  " + _("Your answer:")),
                ("class:hint", f" {page.input_words}"),
            ]
        if self.text_purpose == "feedback":
            return [("class:question", "  " + _("What should change?"))]
        if not self.summary and self.current.secret:
            return [
                ("class:question", "  " + _("Your answer:")),
                ("class:hint", " " + _("secret: hidden as you type, kept out of the record")),
            ]
        return [("class:question", "  " + _("Your answer:"))]

    def _notice_text(self) -> str:
        """The notice above the key hint, while it is true."""
        if self.notice:
            return self.notice
        if self.read_first and not self.summary and self._plan_unread(self.current):
            if self.current.what == "diff":
                return _("Read the whole diff first: PgDn shows the rest.")
            return _("Read the whole plan first: PgDn shows the rest.")
        return ""

    def _hint_lines(self, width: int, *, scrolls: bool, notice: bool = True) -> list[Line]:
        lines = wrap_parts(self._hint_text(scrolls).split(SEP), width, "class:hint")
        text = self._notice_text() if notice else ""
        if text:
            lines = wrap_line([("class:notice", text)], width) + lines
        if self.confirming:
            return wrap_line([("class:notice", _(self.confirm_prompt))], width)
        if not self.armed:  # keys do not count yet: the hint shows once they do
            return [[] for _ in lines]
        return lines

    def _hint_text(self, scrolls: bool) -> str:
        back = " \u00b7 \u2190 " + _("back") if self.page > 0 else ""
        page = self.current
        if self.summary:
            text = _("Enter submit \u00b7 1-{count} change an answer").format(count=len(self.pages))
            text += back
        elif self.text_purpose == "feedback":
            label = page.shown_labels.get(self.feedback_label, "")
            text = _("Enter send (empty: {label} without feedback) \u00b7 Esc back to choices")
            text = text.format(label=label)
        elif self.text_purpose == "value":
            steps = " \u00b7 \u2191\u2193 " + _("step") if page.input_type == "number" else ""
            text = _("Enter send") + steps + " \u00b7 " + _("Esc more choices")
        elif self.text_purpose == "filter":
            text = _(
                "type to filter \u00b7 \u2191\u2193 move \u00b7 Space tick"
                " \u00b7 Enter send the ticked files \u00b7 Esc more choices"
            )
        elif self.text_purpose == "path":
            text = _(
                "Tab completes \u00b7 Enter take the file (empty: send) \u00b7 Esc more choices"
            )
        elif self.text_purpose == "free" and not page.view.options:
            text = _("Enter send (empty: skip) \u00b7 Esc more choices")
        elif self.text_purpose is not None:
            text = _("Enter send \u00b7 Esc back to the choices")
        elif page.view.multi_select:
            text = _(
                "\u2191\u2193 move \u00b7 Space or 1-{count} toggle \u00b7 a all"
                " \u00b7 Enter confirm"
            ).format(count=len(page.rows))
            text += back
        else:
            text = _("\u2191\u2193 move \u00b7 1-{count} or Enter choose").format(
                count=len(page.rows)
            )
            text += back
        if scrolls and not self.summary and self.text_purpose is None:
            text += " \u00b7 " + _("PgUp/PgDn scroll")
        if self.text_purpose is None:
            text += " \u00b7 " + _("Esc cancel")
        return text


async def ask_interactive(
    request: AskUserQuestionRequest,
    relay: AbortRelay,
    *,
    input_on_tty: bool = False,
    bell: bool = False,
) -> AskUserQuestionAnswer:
    """Ask every question of ``request`` with the interactive form on the terminal.

    When stdout is not the terminal (``answer=$(dsh-ask q.json)``), the form is drawn on
    ``/dev/tty`` so that stdout keeps only what the caller prints; with ``input_on_tty`` (stdin
    is nothing a person types into: ``dsh-ask mcp``, whose stdin is the protocol) the keys are
    read from ``/dev/tty`` too. ``bell`` rings the terminal's bell when the form appears.
    """
    opened: list[TextIO] = []
    output = None
    input_ = None
    draws_on_stdout = not input_on_tty
    if draws_on_stdout:
        try:
            draws_on_stdout = sys.stdout is not None and sys.stdout.isatty()
        except (ValueError, OSError):
            draws_on_stdout = False
    try:
        if not draws_on_stdout:
            # Opening the terminal device does not block; it is closed below.
            opened.append(_open_tty("w"))
            output = create_output(stdout=opened[-1])
        if input_on_tty:
            opened.append(_open_tty("r"))
            input_ = create_input(stdin=opened[-1])
        session = (
            create_app_session(input=input_, output=output)
            if output is not None or input_ is not None
            else _no_session()
        )
        with session:
            return await _run_form(Form(request), relay, draws_on_stdout, bell)
    finally:
        for stream in opened:
            stream.close()


def _open_tty(mode: Literal["r", "w"]) -> TextIO:
    try:
        stream: TextIO = open("/dev/tty", mode, encoding="utf-8")  # noqa: SIM115
    except OSError as error:
        raise unusable_stream("/dev/tty", error.strerror or str(error)) from error
    return stream


class _no_session:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _fresh_line(app: Application[AskUserQuestionAnswer]) -> None:
    """Move the cursor to the start of a line of its own, below whatever the cursor's line holds
    (an agent's last sentence streamed without a newline): the form is drawn from there and
    erased back to there, so that text stays on the screen and in the scrollback.

    A line's worth of spaces, then a carriage return: from the first column they fill the line
    and the cursor waits at its end (the terminal wraps only at the next character), so the
    return goes back to the start of that same, empty line; from any other column they wrap to
    the next line, and the return goes to its start. No question to the terminal is needed.
    """
    output = app.output
    with contextlib.suppress(OSError, ValueError):
        columns = output.get_size().columns
        output.enable_autowrap()
        output.write_raw(" " * max(1, columns) + "\r")
        output.flush()


async def _run_form(
    form: Form, relay: AbortRelay, draws_on_stdout: bool, bell: bool
) -> AskUserQuestionAnswer:
    loop = asyncio.get_running_loop()
    app = form.app

    def on_abort() -> None:
        if app.is_running and not app.is_done and relay.signal is not None:
            app.exit(exception=UserQuestionError.aborted_by(relay.signal))

    def started() -> None:
        _fresh_line(app)
        form.typed_ahead = drop_type_ahead(app)
        relay.connect(loop, on_abort)
        if bell:  # DSH_USER_QUESTIONS_TERMINAL_BELL: a question is waiting
            with contextlib.suppress(OSError, ValueError):
                app.output.bell()

    def queue_changed() -> None:
        app.invalidate()

    stop_watching = TERMINAL_TURNS.watch(queue_changed)
    try:
        fd = app.input.fileno()
    except (OSError, ValueError, NotImplementedError):
        fd = None
    try:
        with restore_on_signals(app, fd), output_above(app, draws_on_stdout):
            try:
                answer = await app.run_async(
                    pre_run=started, set_exception_handler=False, handle_sigint=False
                )
            except EOFError as error:  # prompt_toolkit's word for "the input was closed"
                raise unusable_stream("the terminal", "its input was closed") from error
            except OSError as error:  # the terminal went away (EIO after a hangup, ...)
                raise unusable_stream("the terminal", error.strerror or str(error)) from error
            if relay.signal is not None and relay.signal.aborted:
                # Withdrawn as the human answered: the answer is not taken, so no record of it
                # (from here to handing the answer back there is no await).
                raise UserQuestionError.aborted_by(relay.signal)
            width = app.output.get_size().columns
            print_formatted_text(recap(form.pages, width), style=STYLE, output=app.output)
    finally:
        stop_watching()
    return answer
