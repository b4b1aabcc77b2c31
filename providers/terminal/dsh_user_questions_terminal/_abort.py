"""Hearing the request's abort signal from the moment the provider is called."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable

from dsh_user_questions import UserQuestionError
from dsh_user_questions.harness import AbortSignal

__all__ = ["AbortRelay", "aborted_error"]


def aborted_error(signal: AbortSignal) -> UserQuestionError:
    """``ASK_ABORTED`` (``ASK_TIMED_OUT`` for an ask's timeout), caused by the signal's reason."""
    return UserQuestionError.aborted_by(signal)


class AbortRelay:
    """Listens to a signal as soon as it is built; the prompt connects to it once it runs.

    The provider builds the relay synchronously when it is called, before the service starts
    waiting, so on an abort the prompt hears first and is gone from the screen before the
    service's ``ASK_ABORTED`` reaches the caller.
    """

    def __init__(self, signal: AbortSignal | None) -> None:
        self.signal = signal
        self._lock = threading.Lock()
        self._fired = False
        self._callback: Callable[[], None] | None = None
        self._remove: Callable[[], None] = (
            signal.add_listener(self._on_abort) if signal is not None else _noop
        )

    @property
    def aborted(self) -> bool:
        """Whether the signal has aborted."""
        return self.signal is not None and self.signal.aborted

    def _on_abort(self) -> None:
        with self._lock:
            self._fired = True
            callback = self._callback
        if callback is not None:
            callback()

    def connect(self, loop: asyncio.AbstractEventLoop, handler: Callable[[], None]) -> None:
        """Run ``handler()`` in ``loop`` when the signal aborts (at once if it already has)."""

        def callback() -> None:
            if _running_loop() is loop:
                # Aborted on the loop's own thread: act now, so the prompt's cleanup is queued
                # before the service wakes its caller.
                handler()
                return
            # A closed loop raises RuntimeError: nobody is waiting any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(handler)

        with self._lock:
            self._callback = callback
            fired = self._fired
        if fired:
            callback()

    def close(self) -> None:
        """Stop listening (idempotent)."""
        with self._lock:
            self._callback = None
        self._remove()


def _noop() -> None:
    pass


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
