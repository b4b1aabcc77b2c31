"""A testing kit for harness authors: a provider that answers from a script.

``ScriptedProvider`` records every request and answers each from the next step of its script.
Register it with ``ctx.user_questions.register_provider(provider)`` or as a plugin with
``ctx.register(provider)``. The pytest plugin of this package offers it as the
``scripted_provider`` fixture.
"""

from __future__ import annotations

import asyncio
import collections
import inspect
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeAlias, cast

from ._markers import hookimpl
from .errors import UserQuestionError
from .payloads import AskUserQuestionAnswer, AskUserQuestionRequest

__all__ = ["WAIT_FOR_ABORT", "ScriptExhausted", "ScriptStep", "ScriptedProvider"]


class _WaitForAbort:
    def __repr__(self) -> str:
        return "WAIT_FOR_ABORT"


WAIT_FOR_ABORT: Final = _WaitForAbort()
"""A script step: wait until the request's signal aborts (forever without one), then raise
``ASK_ABORTED``, like a human who never answers."""

ScriptStep: TypeAlias = (
    AskUserQuestionAnswer
    | Mapping[str, Any]
    | BaseException
    | type[BaseException]
    | Callable[[AskUserQuestionRequest], Any]
    | _WaitForAbort
)


class ScriptExhausted(AssertionError):
    """The provider was asked more often than its script has steps."""


class ScriptedProvider:
    """A provider that answers each request from the next step of a script.

    A step is an answer (an `AskUserQuestionAnswer` or a mapping in wire form, returned as
    given, so a test can also script a bad answer), an exception (instance or class) to raise,
    a callable ``step(request)`` whose result (awaited if need be) is the answer, or
    `WAIT_FOR_ABORT`. ``requests`` holds every request received, in order.
    """

    def __init__(self, *script: ScriptStep) -> None:
        self._script: collections.deque[ScriptStep] = collections.deque(script)
        self.requests: list[AskUserQuestionRequest] = []

    def push(self, *steps: ScriptStep) -> None:
        """Append steps to the script."""
        self._script.extend(steps)

    @property
    def remaining(self) -> int:
        """How many steps are left."""
        return len(self._script)

    async def ask(self, request: AskUserQuestionRequest) -> Any:
        """Record the request and play the next step."""
        self.requests.append(request)
        if not self._script:
            raise ScriptExhausted(
                f"ScriptedProvider was asked {len(self.requests)} times but scripted"
                f" {len(self.requests) - 1} steps; questions: "
                + ", ".join(question.id for question in request.questions)
            )
        step = self._script.popleft()
        if isinstance(step, _WaitForAbort):
            await _until_aborted(request)
            raise UserQuestionError.aborted()
        if isinstance(step, BaseException) or (
            isinstance(step, type) and issubclass(step, BaseException)
        ):
            raise step
        if callable(step):
            result = cast(Callable[[AskUserQuestionRequest], Any], step)(request)
            return await result if inspect.isawaitable(result) else result
        return step

    @hookimpl
    def dsh_user_questions_ask(self, request: AskUserQuestionRequest) -> Any:
        """The provider hook, so the provider can be registered as a plugin too."""
        return self.ask(request)


async def _until_aborted(request: AskUserQuestionRequest) -> None:
    signal = request.signal
    loop = asyncio.get_running_loop()
    aborted = loop.create_future()
    if signal is None:
        await aborted  # only cancellation ends this wait
        return

    def wake() -> None:
        if not aborted.done():
            aborted.set_result(None)

    remove = signal.add_listener(lambda: loop.call_soon_threadsafe(wake))
    try:
        await aborted
    finally:
        remove()
