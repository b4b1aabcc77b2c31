"""One check's world: a fresh harness context, the provider installed on it, its driver."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from .._payloads import AskUserQuestionAnswer, AskUserQuestionRequest
from .._service import UserQuestionService
from ..errors import UserQuestionError
from ..harness import HarnessContext
from ._driver import ProviderDriver

__all__ = ["ErrorLog", "Session", "expect_code", "outcome"]

_POLL_SECONDS = 0.05


class ErrorLog(logging.Handler):
    """Collects the records logged at ERROR or above while a check runs."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def describe(self) -> str:
        return "; ".join(f"{r.name}: {r.getMessage()}" for r in self.records)


class Session:
    """The service, the driver and the waits a check needs, each failing with a clear message."""

    def __init__(self, ctx: HarnessContext, driver: ProviderDriver, timeout: float) -> None:
        self.ctx = ctx
        self.driver = driver
        self.timeout = timeout
        self.closed = False
        self._tasks: list[asyncio.Task[AskUserQuestionAnswer]] = []

    def ask(
        self, request: AskUserQuestionRequest, timeout: float | None = None
    ) -> asyncio.Task[AskUserQuestionAnswer]:
        """Start ``ctx.user_questions.ask(request, timeout)`` as the caller's own task."""
        service: UserQuestionService = self.ctx.user_questions
        task = asyncio.ensure_future(service.ask(request, timeout))
        self._tasks.append(task)
        return task

    async def screen(self) -> str:
        try:
            return await asyncio.wait_for(self.driver.screen(), self.timeout)
        except asyncio.TimeoutError:
            raise AssertionError(
                f"the driver's screen() did not return within {self.timeout:g} s"
            ) from None

    async def until(self, holds: Callable[[str], bool]) -> tuple[bool, str]:
        """Poll the screen until ``holds(screen)``; whether it did, and the last screen."""
        deadline = asyncio.get_running_loop().time() + self.timeout
        while True:
            screen = await self.screen()
            if holds(screen):
                return True, screen
            if asyncio.get_running_loop().time() > deadline:
                return False, screen
            await asyncio.sleep(_POLL_SECONDS)

    async def shown(
        self, text: str, task: asyncio.Task[AskUserQuestionAnswer] | None = None
    ) -> str:
        """Wait until ``text`` is on the screen; fail if it never is or the ask ended first."""

        def holds(screen: str) -> bool:
            return text in screen or (task is not None and task.done())

        ok, screen = await self.until(holds)
        if task is not None and task.done() and text not in screen:
            raise AssertionError(
                f"ask() ended with {outcome(task)} before {text!r} was shown; the screen:\n{screen}"
            )
        if not ok:
            raise AssertionError(
                f"{text!r} was never shown within {self.timeout:g} s; the screen:\n{screen}"
            )
        return screen

    async def gone(self, text: str, after: str) -> None:
        """Wait until ``text`` has left the screen; fail if it stays."""
        ok, screen = await self.until(lambda screen: text not in screen)
        if not ok:
            raise AssertionError(
                f"{text!r} was still shown {self.timeout:g} s after {after}; the screen:\n{screen}"
            )

    async def answer_of(
        self, task: asyncio.Task[AskUserQuestionAnswer], after: str
    ) -> AskUserQuestionAnswer:
        """The answer ``ask()`` returned; fail if it raised or did not return."""
        await self._settle(task, after)
        if task.cancelled() or task.exception() is not None:
            raise AssertionError(
                f"ask() should have returned an answer after {after}, but it"
                f" ended with {outcome(task)}"
            )
        return task.result()

    async def error_of(
        self, task: asyncio.Task[AskUserQuestionAnswer], after: str
    ) -> BaseException:
        """What ``ask()`` raised (``CancelledError`` included); fail if it returned."""
        await self._settle(task, after)
        if task.cancelled():
            return asyncio.CancelledError()
        error = task.exception()
        if error is None:
            raise AssertionError(
                f"ask() should have failed after {after}, but it returned {task.result().to_dict()}"
            )
        return error

    async def _settle(self, task: asyncio.Task[AskUserQuestionAnswer], after: str) -> None:
        done, _ = await asyncio.wait({task}, timeout=self.timeout)
        if not done:
            screen = await self.screen()
            raise AssertionError(
                f"ask() did not return within {self.timeout:g} s after {after}; the screen:\n"
                f"{screen}"
            )

    async def finish(self) -> None:
        """Cancel the asks a failed check left behind, and retrieve their outcomes."""
        for task in self._tasks:
            if not task.done():
                task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=self.timeout)
        for task in self._tasks:
            if task.done() and not task.cancelled():
                task.exception()


def expect_code(error: BaseException, code: str, after: str) -> None:
    """Fail unless ``error`` is a `UserQuestionError` with ``code``."""
    if not isinstance(error, UserQuestionError) or error.code != code:
        raise AssertionError(
            f"after {after} ask() should raise UserQuestionError {code}, but it raised"
            f" {_describe(error)}"
        )


def outcome(task: asyncio.Task[AskUserQuestionAnswer]) -> str:
    """How a finished ask ended, for a message."""
    if task.cancelled():
        return "CancelledError"
    error = task.exception()
    if error is None:
        return f"the answer {task.result().to_dict()}"
    return _describe(error)


def _describe(error: BaseException) -> str:
    if isinstance(error, UserQuestionError):
        return f"UserQuestionError {error.code} ({error.message})"
    return f"{type(error).__name__}: {error}"
