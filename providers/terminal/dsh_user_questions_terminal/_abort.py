"""Hearing the request's abort signal from the moment the provider is called.

The core's `AbortSignal.wait` is how the provider waits for an abort (line mode races it against
the next line). The interactive form needs one thing more: the service wakes the ask's caller
from its own listener on the signal, so the prompt must hear the abort before that listener
runs, to be erased and the terminal's modes restored before the caller sees ``ASK_ABORTED``.
`AbortRelay` therefore listens from the provider's synchronous call (before the service starts
waiting) and hands the abort to the prompt once it runs. The error itself is always the core's
`UserQuestionError.aborted_by` (``ASK_TIMED_OUT`` when the ask's own timeout withdrew it).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable

from dsh_user_questions.harness import AbortSignal

__all__ = ["AbortRelay"]


class AbortRelay:
    """Listens to a signal as soon as it is built; the prompt connects to it once it runs."""

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

    def disconnect(self) -> None:
        """Forget the handler `connect` gave (the prompt that ran has ended); keep listening,
        for the next prompt of the same ask."""
        with self._lock:
            self._callback = None

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
