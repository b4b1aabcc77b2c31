"""Interactive mode: a prompt_toolkit form drawn below the cursor, one question a page.

Keys: Up/Down move; 1-9 pick (toggle on a multi-select); Space toggles; Enter chooses or
confirms; Left or Backspace goes back a page; PgUp/PgDn scroll a long detail; Esc or Ctrl-C
cancels (Esc in a text field goes back to the list). With several questions a summary page
comes before the answer is submitted.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from typing import Literal

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    UserQuestionError,
)
from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import FormattedText, StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import (
    AnyContainer,
    ConditionalContainer,
    Dimension,
    DynamicContainer,
    FormattedTextControl,
    HSplit,
    Layout,
    VSplit,
    Window,
)
from prompt_toolkit.output import Output, create_output
from prompt_toolkit.shortcuts import print_formatted_text
from prompt_toolkit.styles import Style
from prompt_toolkit.utils import get_cwidth
from prompt_toolkit.widgets import Frame, TextArea

from ._abort import AbortRelay, aborted_error
from ._inert import inert_text
from ._markdown import Fragment, Line, render_markdown
from ._questions import describe_answer, is_plan_review, title
from ._wrap import wrap_line

__all__ = ["STYLE", "ask_interactive"]

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
        "frame.border": "fg:ansicyan",
        "frame.label": "bold",
        "md.code": "fg:ansiyellow",
        "md.prefix": "fg:ansibrightblack",
        "md.url": "fg:ansibrightblack",
        "md.rule": "fg:ansibrightblack",
        "recap": "fg:ansibrightblack",
        "recap.mark": "fg:ansigreen",
    }
)

RowKind = Literal["option", "other", "skip", "talk"]
TextPurpose = Literal["other", "feedback", "free"]


class _Row:
    __slots__ = ("description", "index", "kind", "label")

    def __init__(
        self, kind: RowKind, label: str, description: str | None = None, index: int = -1
    ) -> None:
        self.kind = kind
        self.index = index
        self.label = label
        self.description = description


class _Page:
    """One question and what the human has done with it so far."""

    def __init__(self, item: AskUserQuestionItem) -> None:
        self.item = item
        self.plan = is_plan_review(item)
        self.rows: list[_Row] = [
            _Row("option", inert_text(o.label), inert_text(o.description or "") or None, i)
            for i, o in enumerate(item.options)
        ]
        if self.plan:
            self.rows.append(
                _Row("talk", "Talk instead", "cancel this question and discuss the plan first")
            )
        else:
            if item.options:
                self.rows.append(_Row("other", "Other", "type your own answer"))
            else:
                self.rows.append(_Row("other", "Type your answer"))
            self.rows.append(_Row("skip", "Skip", "leave this question unanswered"))
        self.cursor = 0
        self.checked: set[int] = set()
        self.other_checked = False
        self.custom = ""
        self.answer: AskUserQuestionAnswerItem | None = None
        self.detail: list[Line] = (
            render_markdown(item.detail) if item.detail is not None and item.detail.strip() else []
        )
        self.detail_top = 0
        self.wrapped: list[Line] = []
        self.wrapped_width = -1

    @property
    def approve(self) -> str | None:
        return self.item.intent.approve if self.plan and self.item.intent else None


class _Form:
    """The state machine and the drawing of the prompt."""

    def __init__(self, request: AskUserQuestionRequest, output: Output | None = None) -> None:
        self.pages = [_Page(item) for item in request.questions]
        self.page = 0
        self.text_purpose: TextPurpose | None = None
        self.feedback_label = ""
        self.text = TextArea(
            multiline=False,
            prompt=self._text_prompt,
            accept_handler=self._guarded_accept,
            wrap_lines=True,
        )
        self.rows_control = FormattedTextControl(self._rows, focusable=True, show_cursor=False)
        self._detail_windows: dict[int, AnyContainer] = {}
        self.app: Application[AskUserQuestionAnswer] = Application(
            layout=Layout(self._container(), focused_element=self.rows_control),
            key_bindings=self._bindings(),
            style=STYLE,
            full_screen=False,
            erase_when_done=True,
            mouse_support=False,
            output=output,
        )
        self.app.ttimeoutlen = 0.05
        self._enter_page(0)

    # --- state -------------------------------------------------------------------------------

    @property
    def summary(self) -> bool:
        return self.page >= len(self.pages)

    @property
    def current(self) -> _Page:
        return self.pages[min(self.page, len(self.pages) - 1)]

    def _enter_page(self, index: int) -> None:
        self.page = index
        self.text_purpose = None
        if self.summary:
            return
        page = self.current
        if not page.item.options and page.answer is None:
            self._start_text("free")

    def _start_text(self, purpose: TextPurpose, label: str = "") -> None:
        self.text_purpose = purpose
        self.feedback_label = label
        page = self.current
        self.text.text = page.custom if purpose != "feedback" else ""
        self.text.buffer.cursor_position = len(self.text.text)
        self.app.layout.focus(self.text)

    def _stop_text(self) -> None:
        self.text_purpose = None
        self.app.layout.focus(self.rows_control)

    def _record(self, answer: AskUserQuestionAnswerItem) -> None:
        self.current.answer = answer
        self._stop_text()
        if len(self.pages) == 1:
            self._submit()
        elif self.page + 1 < len(self.pages) and not all(p.answer for p in self.pages):
            self._enter_page(self.page + 1)
        else:  # every question answered (also after changing one): the summary
            self._enter_page(len(self.pages))

    def _submit(self) -> None:
        answers = [p.answer for p in self.pages if p.answer is not None]
        self.app.exit(result=AskUserQuestionAnswer(answers))

    def _activate(self, row_index: int) -> None:
        page = self.current
        page.cursor = row_index
        row = page.rows[row_index]
        item = page.item
        if row.kind == "talk":
            self.app.exit(exception=UserQuestionError.cancelled())
        elif row.kind == "skip":
            page.checked.clear()
            page.other_checked = False
            self._record(AskUserQuestionAnswerItem(id=item.id))
        elif row.kind == "other":
            self._start_text("free" if not item.options else "other")
        elif page.plan and item.options[row.index].label != page.approve:
            self._start_text("feedback", item.options[row.index].label)
        elif item.multi_select:
            if not page.checked and not page.other_checked:
                page.checked.add(row.index)
            self._confirm_multi()
        else:
            self._record(
                AskUserQuestionAnswerItem(id=item.id, selected=[item.options[row.index].label])
            )

    def _toggle(self, row_index: int) -> None:
        page = self.current
        page.cursor = row_index
        row = page.rows[row_index]
        if row.kind == "option":
            page.checked ^= {row.index}
        elif row.kind == "other":
            if page.other_checked:
                page.other_checked = False
            else:
                self._start_text("other")
        else:
            self._activate(row_index)

    def _confirm_multi(self) -> None:
        page = self.current
        item = page.item
        selected = [o.label for i, o in enumerate(item.options) if i in page.checked]
        custom = page.custom.strip() if page.other_checked and page.custom.strip() else None
        self._record(AskUserQuestionAnswerItem(id=item.id, selected=selected, custom=custom))

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
        if purpose == "feedback":
            if value:
                self._record(AskUserQuestionAnswerItem(id=item.id, custom=value))
            else:
                self._record(AskUserQuestionAnswerItem(id=item.id, selected=[self.feedback_label]))
        elif purpose == "free":
            page.custom = value
            self._record(
                AskUserQuestionAnswerItem(id=item.id, custom=value)
                if value
                else AskUserQuestionAnswerItem(id=item.id)
            )
        elif item.multi_select:
            page.custom = value
            page.other_checked = bool(value)
            self._stop_text()
        elif value:
            page.custom = value
            self._record(AskUserQuestionAnswerItem(id=item.id, custom=value))
        else:
            self._stop_text()
        return True

    def _cancel(self) -> None:
        if not self.app.is_done:
            self.app.exit(exception=UserQuestionError.cancelled())

    # --- keys --------------------------------------------------------------------------------

    def _bindings(self) -> KeyBindings:
        kb = KeyBindings()
        typing = Condition(lambda: self.text_purpose is not None)
        listing = ~typing
        on_summary = Condition(lambda: self.summary)
        on_question = listing & ~on_summary

        @kb.add("c-c")
        def _(event: KeyPressEvent) -> None:
            self._cancel()

        @kb.add("escape", filter=listing, eager=True)
        def _(event: KeyPressEvent) -> None:
            self._cancel()

        @kb.add("escape", filter=typing, eager=True)
        def _(event: KeyPressEvent) -> None:
            self._stop_text()

        @kb.add("up", filter=on_question)
        @kb.add("c-p", filter=on_question)
        def _(event: KeyPressEvent) -> None:
            page = self.current
            page.cursor = (page.cursor - 1) % len(page.rows)

        @kb.add("down", filter=on_question)
        @kb.add("c-n", filter=on_question)
        @kb.add("tab", filter=on_question)
        def _(event: KeyPressEvent) -> None:
            page = self.current
            page.cursor = (page.cursor + 1) % len(page.rows)

        @kb.add("enter", filter=on_question)
        def _(event: KeyPressEvent) -> None:
            page = self.current
            row = page.rows[page.cursor]
            chosen = page.checked or page.other_checked
            if page.item.multi_select and chosen and row.kind in ("option", "other"):
                self._confirm_multi()
            else:
                self._activate(page.cursor)

        @kb.add("space", filter=on_question)
        def _(event: KeyPressEvent) -> None:
            page = self.current
            if page.item.multi_select:
                self._toggle(page.cursor)
            else:
                self._activate(page.cursor)

        for digit in "123456789":

            @kb.add(digit, filter=on_question)
            def _(event: KeyPressEvent) -> None:
                index = int(event.data) - 1
                page = self.current
                if index < len(page.rows):
                    if page.item.multi_select:
                        self._toggle(index)
                    else:
                        self._activate(index)

            @kb.add(digit, filter=listing & on_summary)
            def _(event: KeyPressEvent) -> None:
                index = int(event.data) - 1
                if index < len(self.pages):
                    self._enter_page(index)

        @kb.add("left", filter=listing)
        @kb.add("backspace", filter=listing)
        def _(event: KeyPressEvent) -> None:
            if self.page > 0:
                self._enter_page(self.page - 1)

        @kb.add("enter", filter=listing & on_summary)
        def _(event: KeyPressEvent) -> None:
            self._submit()

        @kb.add("pagedown", filter=~on_summary)
        def _(event: KeyPressEvent) -> None:
            page = self.current
            limit = max(0, len(self._detail_lines(page)) - self._detail_step() - 1)
            page.detail_top = min(page.detail_top + self._detail_step(), limit)

        @kb.add("pageup", filter=~on_summary)
        def _(event: KeyPressEvent) -> None:
            page = self.current
            page.detail_top = max(0, page.detail_top - self._detail_step())

        for binding in kb.bindings:
            binding.handler = self._guarded(binding.handler)
        return kb

    def _guarded(
        self, handler: Callable[[KeyPressEvent], object]
    ) -> Callable[[KeyPressEvent], None]:
        """A key handler whose failure ends the prompt with that error instead of hanging it."""

        def run(event: KeyPressEvent) -> None:
            try:
                handler(event)
            except Exception as error:
                if not self.app.is_done:
                    self.app.exit(exception=error)

        return run

    # --- drawing -----------------------------------------------------------------------------

    def _container(self) -> AnyContainer:
        typing = Condition(lambda: self.text_purpose is not None)
        return HSplit(
            [
                Window(FormattedTextControl(self._heading), dont_extend_height=True),
                Window(
                    FormattedTextControl(self._question),
                    wrap_lines=True,
                    dont_extend_height=True,
                ),
                DynamicContainer(self._detail_container),
                Window(self.rows_control, wrap_lines=True, dont_extend_height=True),
                ConditionalContainer(self.text, filter=typing),
                Window(FormattedTextControl(self._hint), wrap_lines=True, dont_extend_height=True),
            ]
        )

    def _heading(self) -> StyleAndTextTuples:
        fragments: StyleAndTextTuples = []
        total = len(self.pages)
        if self.summary:
            return [("class:chip", " Summary "), ("class:progress", "  check your answers")]
        item = self.current.item
        if item.header:
            fragments += [("class:chip", f" {inert_text(item.header)} "), ("", "  ")]
        if total > 1:
            fragments.append(("class:progress", f"question {self.page + 1} of {total}"))
        return fragments

    def _columns(self) -> int:
        return self.app.output.get_size().columns

    def _question(self) -> StyleAndTextTuples:
        return _join(self._question_lines())

    def _question_lines(self) -> list[Line]:
        text = "Submit these answers?" if self.summary else inert_text(self.current.item.question)
        return wrap_line([("class:question", text)], self._columns())

    def _detail_height(self) -> Dimension:
        page = self.current
        chrome = (
            1
            + len(self._question_lines())
            + len(self._row_lines())
            + (1 if self.text_purpose else 0)
            + len(self._hint_lines(with_scroll=True))
            + (2 if page.plan else 1)
        )
        return Dimension(max=max(3, self.app.output.get_size().rows - chrome))

    def _detail_step(self) -> int:
        return max(1, (self._detail_height().max or 3) - 1)

    def _detail_container(self) -> AnyContainer:
        if self.summary or not self.current.detail:
            return Window(height=0)
        key = self.page
        container = self._detail_windows.get(key)
        if container is None:
            page = self.current
            window = Window(
                FormattedTextControl(lambda: self._detail_text(page)),
                wrap_lines=True,
                height=self._detail_height,
                dont_extend_height=True,
            )
            if page.plan:
                container = Frame(VSplit([Window(width=1), window, Window(width=1)]), title="Plan")
            else:
                container = HSplit([VSplit([Window(width=2), window]), Window(height=1)])
            self._detail_windows[key] = container
        return container

    def _detail_lines(self, page: _Page) -> list[Line]:
        """The detail wrapped to the width it is drawn in (list items get a hanging indent)."""
        width = self._columns() - (4 if page.plan else 2)
        if page.wrapped_width != width:
            page.wrapped = [
                wrapped
                for line in page.detail
                for wrapped in wrap_line(line, width, lead=_continuation(line))
            ]
            page.wrapped_width = width
        return page.wrapped

    def _detail_text(self, page: _Page) -> StyleAndTextTuples:
        return _join(self._detail_lines(page)[page.detail_top :])

    def _rows(self) -> StyleAndTextTuples:
        return _join(self._row_lines())

    def _row_lines(self) -> list[Line]:
        if self.summary:
            return self._summary_lines()
        page = self.current
        multi = page.item.multi_select
        width = self._columns()
        lines: list[Line] = []
        for i, row in enumerate(page.rows):
            here = i == page.cursor and self.text_purpose is None
            fragments: Line = [
                ("class:pointer", "\u276f " if here else "  "),
                ("class:number", f"{i + 1}. " if i < 9 else "   "),
            ]
            if multi and row.kind in ("option", "other"):
                on = row.index in page.checked if row.kind == "option" else page.other_checked
                fragments.append(("class:checkbox", "[x] " if on else "[ ] "))
            indent = sum(get_cwidth(text) for _, text in fragments)
            fragments.append(("class:current" if here else "", row.label))
            if row.kind == "other" and page.custom and (page.other_checked or not multi):
                fragments.append(("class:extra", f": {inert_text(page.custom)}"))
            elif row.description:
                fragments.append(("class:description", f" \u2014 {row.description}"))
            lines += wrap_line(fragments, width, indent)
        return lines

    def _summary_lines(self) -> list[Line]:
        lines: list[Line] = []
        for i, page in enumerate(self.pages):
            fragments: Line = [
                ("class:number", f"  {i + 1}. "),
                ("", f"{title(page.item)}: "),
                ("class:current", describe_answer(page.answer)),
            ]
            lines += wrap_line(fragments, self._columns(), 5)
        return lines

    def _text_prompt(self) -> StyleAndTextTuples:
        if self.text_purpose == "feedback":
            return [("class:question", "  What should change? ")]
        return [("class:question", "  Your answer: ")]

    def _hint(self) -> StyleAndTextTuples:
        return _join(self._hint_lines(with_scroll=self._detail_scrolls()))

    def _hint_lines(self, *, with_scroll: bool) -> list[Line]:
        back = " \u00b7 \u2190 back" if self.page > 0 else ""
        page = self.current
        if self.summary:
            text = f"Enter submit \u00b7 1-{len(self.pages)} change an answer{back}"
        elif self.text_purpose == "feedback":
            text = (
                "Enter send (empty: keep planning without feedback) \u00b7 Esc back to the choices"
            )
        elif self.text_purpose == "free" and not page.item.options:
            text = "Enter send (empty: skip) \u00b7 Esc more choices"
        elif self.text_purpose is not None:
            text = "Enter send \u00b7 Esc back to the choices"
        elif page.item.multi_select:
            text = f"\u2191\u2193 move \u00b7 Space or 1-9 toggle \u00b7 Enter confirm{back}"
        else:
            choose = f"1-{min(9, len(page.rows))} or Enter choose"
            text = f"\u2191\u2193 move \u00b7 {choose}{back}"
        if self.text_purpose is None:
            text += " \u00b7 Esc cancel"
        fragments: Line = [("class:hint", text)]
        if with_scroll and not self.summary:
            fragments.append(("class:more", " \u00b7 PgUp/PgDn scroll"))
        return wrap_line(fragments, self._columns())

    def _detail_scrolls(self) -> bool:
        """Whether the detail is taller than its window (or already scrolled)."""
        if self.summary or not self.current.detail:
            return False
        page = self.current
        limit = self._detail_height().max or 0
        return page.detail_top > 0 or len(self._detail_lines(page)) - page.detail_top > limit


def _join(lines: Sequence[Line]) -> StyleAndTextTuples:
    fragments: StyleAndTextTuples = []
    for number, line in enumerate(lines):
        if number:
            fragments.append(("", "\n"))
        fragments.extend(line)
    return fragments


def _continuation(line: Line) -> Fragment | None:
    """How a wrapped markdown line continues: its quote bars kept, list markers blanked."""
    if line and line[0][0] == "class:md.prefix":
        text = line[0][1]
        kept = "".join(char if char == "\u2502" else " " for char in text)
        return ("class:md.prefix", kept)
    return None


def _recap(pages: Sequence[_Page]) -> FormattedText:
    fragments: StyleAndTextTuples = []
    for page in pages:
        fragments += [
            ("class:recap.mark", "\u2714 "),
            ("class:recap", f"{title(page.item)}: "),
            ("", describe_answer(page.answer)),
            ("", "\n"),
        ]
    return FormattedText(fragments[:-1])


async def ask_interactive(
    request: AskUserQuestionRequest, relay: AbortRelay
) -> AskUserQuestionAnswer:
    """Ask every question of ``request`` with the interactive form on the terminal.

    When stdout is not the terminal (``answer=$(dsh-ask q.json)``), the form is drawn on
    ``/dev/tty`` so that stdout keeps only what the caller prints.
    """
    tty = None
    output = None
    if sys.stdout is None or not sys.stdout.isatty():
        # Opening the terminal device does not block; it is closed below.
        tty = open("/dev/tty", "w", encoding="utf-8")  # noqa: ASYNC230, SIM115
        output = create_output(stdout=tty)
    try:
        return await _run_form(_Form(request, output), relay)
    finally:
        if tty is not None:
            tty.close()


async def _run_form(form: _Form, relay: AbortRelay) -> AskUserQuestionAnswer:
    loop = asyncio.get_running_loop()
    app = form.app

    def on_abort() -> None:
        if app.is_running and not app.is_done and relay.signal is not None:
            app.exit(exception=aborted_error(relay.signal))

    started: Callable[[], None] = lambda: relay.connect(loop, on_abort)  # noqa: E731
    answer = await app.run_async(pre_run=started, set_exception_handler=False, handle_sigint=False)
    print_formatted_text(_recap(form.pages), style=STYLE, output=app.output)
    return answer
