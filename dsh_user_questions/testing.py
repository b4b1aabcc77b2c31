"""A testing kit for harness and provider authors: a scripted provider and request builders.

``ScriptedProvider`` records every request and answers each from the next step of its script.
Register it with ``ctx.user_questions.register_provider(provider)`` or as a plugin with
``ctx.register(provider)``. The pytest plugin of this package offers it as the
``scripted_provider`` fixture.

`make_question`, `make_plan_question` and `make_request` build the requests tests ask (the
core's tests and both shipped providers' tests use them); ``.to_dict()`` gives their wire form.
"""

from __future__ import annotations

import collections
import contextlib
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final, TypeAlias, cast

import attrs

from ._markers import hookimpl
from ._payloads import (
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
)
from .errors import UserQuestionError
from .plan_review import plan_review_question

__all__ = [
    "WAIT_FOR_ABORT",
    "ScriptExhausted",
    "ScriptedProvider",
    "json_receiver",
    "make_plan_question",
    "make_question",
    "make_request",
]

PLAN: Final = "# Plan\n\n1. Do it"
"""The plan `make_plan_question` reviews unless told otherwise."""


def make_question(**changes: Any) -> AskUserQuestionItem:
    """A single-select question with two options: id ``pkg``, "Which package manager?".

    Options ``pnpm`` ("Fast, disk-efficient") and ``npm`` ("The default"), header ``Tooling``;
    ``changes`` override any field (e.g. ``id="other"``, ``multi_select=True``).
    """
    fields: dict[str, Any] = {
        "id": "pkg",
        "question": "Which package manager?",
        "header": "Tooling",
        "options": (
            AskUserQuestionOption("pnpm", "Fast, disk-efficient"),
            AskUserQuestionOption("npm", "The default"),
        ),
    }
    fields.update(changes)
    return AskUserQuestionItem(**fields)


def make_plan_question(plan: str = PLAN, **changes: Any) -> AskUserQuestionItem:
    """The plan-review question `plan_review_question` builds for ``plan``, with ``changes``.

    Built by the core itself, so it never drifts from what an agent asks. ``changes`` may make
    it invalid on purpose (e.g. ``detail=None``), to test the ``BAD_INTENT`` checks.
    """
    return attrs.evolve(plan_review_question(plan), **changes)


def make_request(*questions: AskUserQuestionItem, **fields: Any) -> AskUserQuestionRequest:
    """A request of ``questions`` (``make_question()`` when none); ``fields`` as keywords.

    E.g. ``make_request(signal=controller.signal, agent=root, timeout=30)``.
    """
    return AskUserQuestionRequest(questions=questions or (make_question(),), **fields)


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
            signal = request.signal
            if signal is None:
                await _forever()
                raise AssertionError("unreachable")  # pragma: no cover
            await signal.wait()
            raise UserQuestionError.aborted_by(signal)
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


async def _forever() -> None:
    import asyncio

    await asyncio.get_running_loop().create_future()  # only cancellation ends this wait


@contextlib.contextmanager
def json_receiver() -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """An HTTP server on 127.0.0.1 that keeps the JSON bodies posted to it: a notification
    target for tests (Apprise's ``json://127.0.0.1:<port>/``).

    Yields its port and the list of bodies, which grows as they come (from the server's own
    thread); the server stops when the block ends.
    """
    import http.server
    import json
    import threading

    got: list[dict[str, Any]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            got.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], got
    finally:
        server.shutdown()
        server.server_close()
