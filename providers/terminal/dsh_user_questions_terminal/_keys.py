"""The interactive form's keys: what each does, and the guard every handler runs behind."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

from ._i18n import N_

if TYPE_CHECKING:
    from ._interactive import Form

__all__ = ["DISCARD", "LAST_KEY", "TALK", "form_bindings"]

DISCARD = N_("Discard your answers and cancel? y discard \u00b7 n keep")
"""What Esc asks once something is answered."""
TALK = N_("Talk instead? This closes the question. y talk \u00b7 n keep")
"""What Talk instead asks: it closes the question (``ASK_CANCELLED``), as a page's close does."""

LAST_KEY = [float("-inf")]
"""When any form of the process last saw a key (monotonic): a recent one means the human is
typing when a new page appears."""


def form_bindings(form: Form) -> KeyBindings:
    """The form's keys (see the provider's README), each one guarded by `_guarded`."""
    kb = KeyBindings()
    typing = Condition(lambda: form.text_purpose is not None)
    confirming = Condition(lambda: form.confirming)
    listing = ~typing & ~confirming
    on_summary = Condition(lambda: form.summary)
    on_question = listing & ~on_summary
    multi = Condition(lambda: not form.summary and form.current.view.multi_select)

    @kb.add("c-c")
    def _(event: KeyPressEvent) -> None:
        form.cancel()

    @kb.add("y", filter=confirming)
    def _(event: KeyPressEvent) -> None:
        form.cancel()

    @kb.add(Keys.Any, filter=confirming)
    @kb.add("escape", filter=confirming, eager=True)
    @kb.add("enter", filter=confirming)
    def _(event: KeyPressEvent) -> None:
        form.confirming = False

    @kb.add("escape", filter=listing, eager=True)
    def _(event: KeyPressEvent) -> None:
        if form.has_answers():
            form.confirm(DISCARD)
        else:
            form.cancel()

    @kb.add("escape", filter=typing, eager=True)
    def _(event: KeyPressEvent) -> None:
        form.stop_text()

    def typing_for(kind: str) -> Condition:
        return Condition(lambda: form.text_purpose is not None and _input(form) == kind)

    stepping = Condition(lambda: form.text_purpose == "value") & typing_for("number")
    filtering = Condition(lambda: form.text_purpose == "filter")

    @kb.add("up", filter=stepping)
    def _(event: KeyPressEvent) -> None:
        form.step_number(+1)

    @kb.add("down", filter=stepping)
    def _(event: KeyPressEvent) -> None:
        form.step_number(-1)

    @kb.add("up", filter=filtering)
    def _(event: KeyPressEvent) -> None:
        form.move(-1)

    @kb.add("down", filter=filtering)
    def _(event: KeyPressEvent) -> None:
        form.move(+1)

    @kb.add("pagedown", filter=filtering)
    def _(event: KeyPressEvent) -> None:
        form.move(form.page_rows(), wrap=False)

    @kb.add("pageup", filter=filtering)
    def _(event: KeyPressEvent) -> None:
        form.move(-form.page_rows(), wrap=False)

    @kb.add("space", filter=filtering)
    def _(event: KeyPressEvent) -> None:
        form.toggle(form.current.cursor)

    @kb.add("tab", filter=Condition(lambda: form.text_purpose == "path"))
    def _(event: KeyPressEvent) -> None:
        buffer = form.text.buffer
        if buffer.complete_state:
            buffer.complete_next()
        else:
            buffer.start_completion(select_first=True)

    @kb.add("enter", filter=typing)
    def _(event: KeyPressEvent) -> None:
        form.text.buffer.validate_and_handle()

    @kb.add("up", filter=listing)
    @kb.add("c-p", filter=listing)
    @kb.add("k", filter=listing)
    @kb.add("s-tab", filter=listing)
    def _(event: KeyPressEvent) -> None:
        form.move(-1)

    @kb.add("down", filter=listing)
    @kb.add("c-n", filter=listing)
    @kb.add("j", filter=listing)
    @kb.add("tab", filter=listing)
    def _(event: KeyPressEvent) -> None:
        form.move(+1)

    # With a detail taller than its room, Home and End go to its start and its end and leave
    # the pointer where it is (End never lands on a row such as Talk instead); otherwise they
    # go to the first and the last row.
    @kb.add("home", filter=listing)
    def _(event: KeyPressEvent) -> None:
        if form.last.scrolls:
            form.scroll_detail(-(10**6))
        else:
            form.move(-(10**6), wrap=False)

    @kb.add("end", filter=listing)
    def _(event: KeyPressEvent) -> None:
        if form.last.scrolls:
            form.scroll_detail(10**6)
        else:
            form.move(10**6, wrap=False)

    @kb.add("pagedown", filter=listing)
    def _(event: KeyPressEvent) -> None:
        if form.last.scrolls:
            form.scroll_detail(+1)
        else:
            form.move(form.page_rows(), wrap=False)

    @kb.add("pageup", filter=listing)
    def _(event: KeyPressEvent) -> None:
        if form.last.scrolls:
            form.scroll_detail(-1)
        else:
            form.move(-form.page_rows(), wrap=False)

    @kb.add("enter", filter=on_question)
    def _(event: KeyPressEvent) -> None:
        page = form.current
        row = page.rows[page.cursor]
        chosen = page.checked or page.other_checked or page.touched
        if (
            page.view.multi_select
            and chosen
            and row.kind in ("option", "other")
            and page.cursor in form.visible
        ):
            form.confirm_multi()
        else:
            form.activate(page.cursor)

    @kb.add("space", filter=on_question)
    def _(event: KeyPressEvent) -> None:
        page = form.current
        if page.view.multi_select:
            form.toggle(page.cursor)
        else:
            form.activate(page.cursor)

    @kb.add("a", filter=on_question & multi)
    def _(event: KeyPressEvent) -> None:
        form.toggle_all()

    for digit in "0123456789":

        @kb.add(digit, filter=listing)
        def _(event: KeyPressEvent) -> None:
            form.number(event.data)

    @kb.add("left", filter=listing)
    @kb.add("backspace", filter=listing)
    def _(event: KeyPressEvent) -> None:
        if form.page > 0:
            form.enter_page(form.page - 1)

    @kb.add("enter", filter=listing & on_summary)
    def _(event: KeyPressEvent) -> None:
        form.submit()

    for binding in kb.bindings:
        binding.handler = _guarded(form, binding.handler, binding.keys)
    return kb


def _input(form: Form) -> str | None:
    return None if form.summary else form.current.input_type


def _guarded(
    form: Form, handler: Callable[[KeyPressEvent], object], keys: Sequence[object]
) -> Callable[[KeyPressEvent], None]:
    """A key handler that ignores keys before the page is armed (Ctrl-C always counts) and
    whose failure ends the prompt with that error instead of hanging it."""
    always = tuple(keys) == (Keys.ControlC,)

    def run(event: KeyPressEvent) -> None:
        LAST_KEY[0] = time.monotonic()
        if not always and not form.armed:
            return
        if tuple(keys) != (Keys.Any,) and event.data not in "0123456789":
            form.digits = ""
        try:
            handler(event)
        except Exception as error:
            if not form.app.is_done:
                form.app.exit(exception=error)

    return run
