"""What the adapters share: running a live or a durable call, telling invalid arguments apart."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeVar

import attrs

from .. import tool
from ..errors import OUTCOMES, UserQuestionError

T = TypeVar("T")

OnSecrets = Callable[[str, Mapping[str, str]], object]
"""The harness's hook for secret answers: called with the call's name (its durable key, or the
tool call id of a live call) and the clear texts by question id. The model gets the
placeholder; this is the only way out of the adapter for the clear text."""

KEEP_PENDING: tuple[type[UserQuestionError], ...] = tuple(
    dict.fromkeys(row.family for row in OUTCOMES.values() if row.keeps_pending)
)
"""The families of the table's "keeps pending" rows (`errors.OUTCOMES`; a family's codes all
agree on it), for ``except KEEP_PENDING:``: the failures that leave a durable call pending (the
harness's own abort, no usable provider or store, a caller that may not ask). The durable
adapters raise them, and a later call asks again with the same keys. Every other failure is the
call's result, for the model."""


def hand_secrets(result: tool.ToolResult, name: str | None, on_secrets: OnSecrets | None) -> None:
    """Give ``result``'s secret answers to the harness's hook (nothing without one)."""
    if on_secrets is not None and result.secrets:
        on_secrets(name or "", result.secrets)


def missing_framework(adapter: str, extra: str, err: ImportError) -> ImportError:
    """The error of importing an adapter whose framework is not installed."""
    return ImportError(
        f"dsh_user_questions.adapters.{adapter} needs its framework:"
        f" pip install 'dsh-user-questions[{extra}]' ({err})"
    )


def context_of(deps: Any, how: str) -> Any:
    """The harness context in a framework's run dependencies.

    ``deps`` is the harness context itself (anything with ``get("user_questions")``) or holds
    it as ``deps.harness``. ``how`` is the framework's own way of passing it, for the error.
    """
    if callable(getattr(deps, "get", None)):
        return deps
    harness = getattr(deps, "harness", None)
    if harness is not None and callable(getattr(harness, "get", None)):
        return harness
    raise TypeError(
        "ask_user_question has no harness context: pass one to ask_user_question_tool(ctx), or"
        f" {how} (got {type(deps).__name__})"
    )


@attrs.frozen
class Live:
    """What a live tool was made with; ``None`` takes the run's own (the harness, agent, signal).

    ``how`` says, for the error of a run with no harness context, how the framework passes one.
    """

    ctx: Any
    agent: object | None
    signal: Any | None
    on_secrets: OnSecrets | None
    how: str
    workspace: Any = None  # the root of a model's files questions (tool.run's workspace)
    audience: Iterable[str] = ()  # who may answer (tool.run's audience), set by the harness

    async def run(
        self,
        arguments: object,
        call_id: str | None,
        harness: Any,
        given: Callable[[str], Any] | None = None,
    ) -> tool.ToolResult:
        """Run one call through `tool.run`, its secrets handed to ``on_secrets``.

        ``harness`` is the run's harness context (or what holds it, see `context_of`), taken
        when the tool was made without one; ``given(name)`` is the run's own ``"agent"`` or
        ``"signal"`` (default: that attribute of ``harness``, or ``None``).
        """
        ctx = self.ctx if self.ctx is not None else context_of(harness, self.how)
        value = given if given is not None else lambda name: getattr(harness, name, None)
        result = await tool.run(
            ctx,
            arguments,
            agent=self.agent if self.agent is not None else value("agent"),
            signal=self.signal if self.signal is not None else value("signal"),
            workspace=self.workspace,
            audience=self.audience,
        )
        hand_secrets(result, call_id, self.on_secrets)
        return result


async def run_durable(
    ctx: Any,
    arguments: object,
    key: str | None,
    *,
    agent: object | None,
    signal: Any | None,
    on_secrets: OnSecrets | None,
    timeout: float | None = None,
    workspace: Any = None,
    audience: Iterable[str] = (),
) -> tool.ToolResult:
    """Ask one durable call through `tool.run` with its ``key``; its secrets to ``on_secrets``.

    The failures of `KEEP_PENDING` raise (the call stays pending); every other one is the
    call's result, for the model.
    """
    result = await tool.run(
        ctx,
        arguments,
        agent=agent,
        signal=signal,
        key=key,
        timeout=timeout,
        raise_for=KEEP_PENDING,
        workspace=workspace,
        audience=audience,
    )
    hand_secrets(result, key, on_secrets)
    return result


async def gather_all(awaitables: Iterable[Awaitable[T]]) -> list[T]:
    """The results of all, in order; the first failure cancels the others and is raised."""
    tasks = [asyncio.ensure_future(each) for each in awaitables]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            task.cancel()
