"""Asking from synchronous code: each service's own question loop, in a thread of its own.

`UserQuestionService.ask_sync` and the adapters of frameworks whose tools are plain functions
(or whose sync chain runs an ``async def`` tool with ``asyncio.run()``) run the ask here:

- on the service's **question loop**, an event loop in a daemon thread the service starts on
  the first synchronous ask and keeps while it lives (stopped and closed once the service is
  garbage-collected), so every synchronous ask of a context runs on one loop, whichever thread
  asked. The caller's thread waits; a thread that runs an event loop is refused with a
  `RuntimeError` (as ``asyncio.run()`` refuses it), since waiting would stop that loop until
  the human answers: it awaits ``ask()`` instead. No adapter asks from such a thread;
- from the question loop's own thread (a provider or tool running there asking synchronously),
  which must not block itself: on a fresh loop in a helper thread, which the caller waits for.

An abort of the request's signal (from any thread) and the timeout end the ask as in ``ask()``;
an interruption of the waiting thread (``KeyboardInterrupt``) cancels the ask, so its provider
withdraws the question.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

from ._loops import close_loop

if TYPE_CHECKING:
    from .tool import ToolResult

__all__ = [
    "QuestionLoop",
    "arun_tool",
    "close_sync",
    "owner_of",
    "question_loop",
    "run_sync",
    "run_tool",
]

T = TypeVar("T")

_loops: weakref.WeakKeyDictionary[object, QuestionLoop] = weakref.WeakKeyDictionary()
_loops_lock = threading.Lock()


class QuestionLoop:
    """An event loop running forever in a daemon thread of its own, until `stop`."""

    def __init__(self, name: str = "dsh-user-questions") -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        loop = self._loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            close_loop(loop)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop the asks run on."""
        return self._loop

    @property
    def thread(self) -> threading.Thread:
        """The thread the loop runs in."""
        return self._thread

    def in_own_thread(self) -> bool:
        """Whether the calling thread is this loop's own."""
        return threading.current_thread() is self._thread

    def submit(self, make: Callable[[], Coroutine[Any, Any, T]]) -> Future[T]:
        """Start ``make()`` on the loop; its concurrent future (cancelling it cancels the task)."""
        return asyncio.run_coroutine_threadsafe(_call(make), self._loop)

    def run(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run ``make()`` to its end and return its result, blocking the calling thread.

        From the loop's own thread, ``make()`` runs on a fresh loop in a helper thread instead
        (the question loop cannot wait for itself).
        """
        if self.in_own_thread():
            return _run_in_helper_thread(make)
        _refuse_a_running_loop()
        return _wait(self.submit(make))

    async def arun(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Await ``make()`` run on the question loop, from a coroutine on any other loop.

        Cancelling the awaiting task cancels it there. On the question loop itself it is simply
        awaited.
        """
        if self.in_own_thread():
            return await make()
        return await asyncio.wrap_future(self.submit(make))

    def stop(self) -> None:
        """Cancel what still runs on the loop, then close it (idempotent, from any thread)."""
        if not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # closed meanwhile
                self._loop.call_soon_threadsafe(self._loop.stop)


def _refuse_a_running_loop() -> None:
    """As ``asyncio.run()`` does: a thread running an event loop must not wait here, or that
    loop (its other tasks, its servers, a web provider it runs) stands still until the human
    answers."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop runs in this thread: waiting blocks nothing else
        return
    raise RuntimeError(
        "ask_sync() cannot be called from a running event loop's thread: it would block that"
        " loop until the human answers; use `await service.ask(request)` there (or call"
        " ask_sync from another thread, e.g. `await asyncio.to_thread(service.ask_sync, request)`)"
    )


async def _call(make: Callable[[], Awaitable[T]]) -> T:
    return await make()


def _wait(future: Future[T]) -> T:
    try:
        return future.result()
    except BaseException:
        # The waiting thread was interrupted (or the ask failed: then cancelling does nothing).
        future.cancel()
        raise


def _run_in_helper_thread(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    outcome: Future[T] = Future()

    def helper() -> None:
        try:
            outcome.set_result(asyncio.run(make()))
        except BaseException as error:
            outcome.set_exception(error)

    thread = threading.Thread(target=helper, name="dsh-user-questions-helper", daemon=True)
    thread.start()
    result = outcome.result()
    thread.join()
    return result


def question_loop(owner: object) -> QuestionLoop:
    """``owner``'s question loop (a service's, or a context's), started on first use.

    It stops once ``owner`` is garbage-collected, or at exit after every exit callback
    registered since this module was imported (`_stop_at_exit`), so an exit callback closing
    a context (`close_sync`) still finds its loop running.
    """
    with _loops_lock:
        found = _loops.get(owner)
        if found is None:
            found = _loops[owner] = QuestionLoop()
            # Not at exit: a finalizer's exit hook may be registered after a caller's
            # close_sync, and exit callbacks run last registered first.
            weakref.finalize(owner, found.stop).atexit = False
        return found


@atexit.register
def _stop_at_exit() -> None:
    """Stop every question loop still running: registered at import, so it runs after the
    exit callbacks registered later (``atexit.register(close_sync, ctx)``)."""
    with _loops_lock:
        running = list(_loops.values())
    for found in running:
        found.stop()


def run_sync(owner: object, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``make()`` on ``owner``'s question loop from synchronous code in any thread."""
    return question_loop(owner).run(make)


def owner_of(ctx: Any) -> object:
    """Whose question loop ``ctx``'s asks run on: its user-questions service (or ``ctx``)."""
    service = ctx.get("user_questions")
    return ctx if service is None else service


def run_tool(ctx: Any, arguments: object, **options: Any) -> ToolResult:
    """`tool.run` from synchronous code in any thread, on the service's question loop."""
    from . import tool

    return question_loop(owner_of(ctx)).run(lambda: tool.run(ctx, arguments, **options))


async def arun_tool(ctx: Any, arguments: object, **options: Any) -> ToolResult:
    """`tool.run` awaited from any loop, run on the service's question loop.

    For a framework that may run the tool on a throwaway loop (``asyncio.run()`` per call):
    the provider still sees one loop for every ask.
    """
    from . import tool

    return await question_loop(owner_of(ctx)).arun(lambda: tool.run(ctx, arguments, **options))


def close_sync(ctx: Any) -> None:
    """``ctx.aclose()`` from synchronous code (at exit too, when no thread can start)."""
    with _loops_lock:
        found = _loops.get(owner_of(ctx))
    if found is None:
        asyncio.run(ctx.aclose())
    else:
        found.run(ctx.aclose)
