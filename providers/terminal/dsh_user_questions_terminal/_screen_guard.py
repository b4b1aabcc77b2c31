"""What keeps the terminal sane around a prompt: other output above it, type-ahead dropped, the
terminal restored on SIGTERM and SIGHUP.

- **Output above the prompt.** While the form is up, ``sys.stdout`` and ``sys.stderr`` (those
  that are the terminal) are streams that write above the form: whatever the harness prints,
  from any thread, appears above it, line by line, and the form redraws whole. Logging handlers that
  write to those streams (``logging.basicConfig()`` keeps the stream it found) are pointed at the
  proxy for the same time. The harness's text is passed through raw: it is the harness's own
  output, which would have reached the terminal unchanged without the prompt. Writes straight to
  file descriptor 1 or 2 (``os.write``, child processes) cannot be caught.
- **Type-ahead.** Keys typed before the prompt is drawn (or left over from the previous prompt)
  are discarded when it shows: prompt_toolkit's stored type-ahead and the terminal's input queue.
- **Signals.** SIGTERM and SIGHUP while the form is up (when it runs in the main thread) erase
  the form and restore the terminal's modes and the cursor first, then do what the signal would
  have done: the previous Python handler is called, or the default action (ending the process)
  happens.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import io
import logging
import os
import signal
import sys
import termios
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any, TextIO

from prompt_toolkit.application import Application
from prompt_toolkit.input.typeahead import clear_typeahead, get_typeahead

__all__ = ["drop_type_ahead", "output_above", "restore_on_signals"]

_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def drop_type_ahead(app: Application[Any]) -> bool:
    """Forget every key typed before now, prompt_toolkit's stored ones and the terminal's input
    queue; whether there were any (the human was typing as the prompt appeared)."""
    dropped = bool(get_typeahead(app.input))
    clear_typeahead(app.input)
    with contextlib.suppress(OSError, ValueError, termios.error):
        fd = app.input.fileno()
        waiting = array.array("i", [0])
        fcntl.ioctl(fd, termios.FIONREAD, waiting)
        dropped = dropped or waiting[0] > 0
        termios.tcflush(fd, termios.TCIFLUSH)
    return dropped


def _is_tty(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (ValueError, OSError):
        return False


def _stream_handlers() -> list[logging.StreamHandler[Any]]:
    """Every handler that writes to a stream it was given (file handlers opened their own)."""
    loggers: list[logging.Logger] = [logging.getLogger()]
    loggers += [
        logger
        for logger in list(logging.Logger.manager.loggerDict.values())
        if isinstance(logger, logging.Logger)
    ]
    return [
        handler
        for logger in loggers
        for handler in list(logger.handlers)
        if isinstance(handler, logging.StreamHandler)
        and not isinstance(handler, logging.FileHandler)
    ]


class _AboveThePrompt(io.TextIOBase):
    """A text stream that writes above the running prompt, which then redraws whole.

    Complete lines are written at once when written on the prompt's event loop, else in the
    next turn of that loop; `finish` writes whatever is left, so nothing is lost when the
    harness prints just as the prompt ends (prompt_toolkit's ``StdoutProxy`` hands text to a
    thread and a task, which the loop may never run once the ask has returned).
    """

    def __init__(self, app: Application[Any], original: TextIO) -> None:
        super().__init__()
        self._app = app
        self._original = original
        self._lock = threading.Lock()
        self._pending: list[str] = []

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._original, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self._original, "errors", None)

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._original.fileno()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            self._pending.append(text)
        if "\n" in text:
            self._schedule()
        return len(text)

    def flush(self) -> None:
        self._schedule()

    def _schedule(self) -> None:
        app = self._app
        loop = app.loop
        if not app.is_running or loop is None or loop.is_closed():
            self.finish()
        elif threading.current_thread() is getattr(app, "_loop_thread", None):
            self._write_above()
        else:
            with contextlib.suppress(RuntimeError):  # closed meanwhile: finish() writes it
                loop.call_soon_threadsafe(self._write_above)

    def _take(self, whole_lines: bool) -> str:
        with self._lock:
            text = "".join(self._pending)
            self._pending.clear()
            if whole_lines and not text.endswith("\n"):
                cut = text.rfind("\n") + 1
                text, rest = text[:cut], text[cut:]
                if rest:
                    self._pending.append(rest)
            return text

    def _write_above(self) -> None:
        app = self._app
        if not app.is_running or app.is_done:
            self.finish()
            return
        text = self._take(whole_lines=True)
        if not text:
            return
        redraw = getattr(app, "_redraw", None)
        if not callable(redraw):  # not the prompt_toolkit this was written for: the slow way
            app.renderer.erase()
            self._write(text)
            app.invalidate()
            return
        # The prompt goes, the text takes its place and the prompt is drawn again below it, all
        # in one write to the terminal (the erase's own flush held back), so the terminal never
        # shows the form half drawn.
        output = app.output
        flush = output.flush
        output.flush = _no_flush  # type: ignore[method-assign]
        try:
            app.renderer.erase()
            output.enable_autowrap()
            output.write_raw(text)
        finally:
            output.flush = flush  # type: ignore[method-assign]
        redraw()

    def finish(self) -> None:
        """Write everything still pending to the stream this one stands in for (also what a
        handler made during the prompt, and so still holding this stream, writes later)."""
        text = self._take(whole_lines=False)
        if text:
            with contextlib.suppress(ValueError, OSError):  # closed: nowhere left to write
                self._original.write(text)
                self._original.flush()

    def _write(self, text: str) -> None:
        output = self._app.output
        output.enable_autowrap()
        # Raw: the harness's own output, as it would have reached the terminal without us.
        output.write_raw(text)
        output.flush()


def _no_flush() -> None:
    pass


@contextlib.contextmanager
def output_above(app: Application[Any], draws_on_stdout: bool) -> Iterator[None]:
    """While inside, harness output to the terminal's stdout and stderr goes above ``app``.

    ``draws_on_stdout`` is false when the form is drawn on ``/dev/tty`` because stdout is
    captured: stdout is then left alone (it is not the screen).
    """
    stdout, stderr = sys.stdout, sys.stderr
    patch_out = draws_on_stdout and _is_tty(stdout)
    patch_err = _is_tty(stderr)
    if not (patch_out or patch_err):
        yield
        return
    proxies: dict[int, _AboveThePrompt] = {}
    if patch_out:
        proxies[id(stdout)] = _AboveThePrompt(app, stdout)
        if sys.__stdout__ is not None:
            proxies.setdefault(id(sys.__stdout__), proxies[id(stdout)])
    if patch_err:
        proxies[id(stderr)] = _AboveThePrompt(app, stderr)
        if sys.__stderr__ is not None:
            proxies.setdefault(id(sys.__stderr__), proxies[id(stderr)])
    moved: list[tuple[logging.StreamHandler[Any], Any]] = []
    for handler in _stream_handlers():
        proxy = proxies.get(id(handler.stream))
        if proxy is not None:
            moved.append((handler, handler.setStream(proxy)))
    if patch_out:
        sys.stdout = proxies[id(stdout)]
    if patch_err:
        sys.stderr = proxies[id(stderr)]
    try:
        yield
    finally:
        if patch_out:
            sys.stdout = stdout
        if patch_err:
            sys.stderr = stderr
        for handler, old in moved:
            handler.setStream(old)
        for proxy in set(proxies.values()):
            proxy.finish()


@contextlib.contextmanager
def restore_on_signals(app: Application[Any], fd: int | None) -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP erase the form and restore the terminal, then act as
    they would have (when the process goes on, the form is drawn again).

    Only in the main thread (Python runs signal handlers there); signals that were ignored stay
    ignored.
    """
    output = app.output
    if threading.current_thread() is not threading.main_thread() or fd is None:
        yield
        return
    try:
        cooked = termios.tcgetattr(fd)
    except (termios.error, OSError):
        yield
        return
    previous: dict[int, Any] = {}

    def put_back() -> None:
        for number, handler in previous.items():
            signal.signal(number, handler)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        try:
            raw = termios.tcgetattr(fd)
            termios.tcsetattr(fd, termios.TCSANOW, cooked)
        except (termios.error, OSError):
            raw = None
        with contextlib.suppress(Exception):
            # The form goes first, so the shell's prompt (or whatever follows) is not drawn
            # under a question nobody can answer any more.
            app.renderer.erase()
        with contextlib.suppress(Exception):
            output.show_cursor()
            output.disable_bracketed_paste()
            output.reset_cursor_key_mode()
            output.flush()
        handler = previous[signum]
        put_back()
        if handler in (signal.SIG_DFL, None):
            os.kill(os.getpid(), signum)  # the default action: the process ends by this signal
            return
        if callable(handler):
            handler(signum, frame)
        # The process goes on (the previous handler returned): the prompt is still up.
        if raw is not None:
            with contextlib.suppress(termios.error, OSError):
                termios.tcsetattr(fd, termios.TCSANOW, raw)
        for again in previous:
            signal.signal(again, on_signal)
        with contextlib.suppress(Exception):
            app.invalidate()

    for wanted in _SIGNALS:
        handler = signal.getsignal(wanted)
        if handler == signal.SIG_IGN:
            continue
        previous[wanted] = handler
    for number in previous:
        signal.signal(number, on_signal)
    try:
        yield
    finally:
        put_back()
