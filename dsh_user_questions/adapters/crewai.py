"""CrewAI's human input answered through ``ctx.user_questions``.

- ``Task(..., human_input=True)``: after ``set_provider(human_input_provider(ctx))`` (from
  ``crewai.core.providers.human_input``), each feedback round asks the human about the agent's
  result: a free-text question whose detail is the result (markdown). Skipping it accepts the
  result, as pressing Enter does at CrewAI's own prompt; any text is fed back to the agent,
  which answers again. Sync (``crew.kickoff()``) and async (``kickoff_async()``) runs alike.
- ``Flow.ask(message)``: a flow whose ``input_provider = input_provider(ctx)`` asks ``message``
  as a free-text question; a skipped question is ``None``, as when no input is available.

A failed ask (aborted, timed out, no provider) raises its `UserQuestionError` in the run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._payloads import AskUserQuestionAnswer, AskUserQuestionItem, AskUserQuestionRequest
from ._common import missing_framework

try:
    from crewai.agents.parser import AgentFinish
    from crewai.core.providers.human_input import (
        AsyncExecutorContext,
        ExecutorContext,
        SyncHumanInputProvider,
    )
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise missing_framework("crewai", "crewai", err) from err

__all__ = ["human_input_provider", "input_provider"]

FEEDBACK = "Any feedback on this result? Skip to accept it."
"""The question each feedback round asks (the result is its detail)."""


def _request(
    question: str, detail: str | None, agent: object, signal: Any, audience: tuple[str, ...]
) -> AskUserQuestionRequest:
    item = AskUserQuestionItem(id="feedback", question=question, detail=detail)
    return AskUserQuestionRequest(questions=(item,), agent=agent, signal=signal, audience=audience)


def _text(answer: AskUserQuestionAnswer) -> str | None:
    return answer.answers[0].custom if answer.answers else None


class AskingHumanInputProvider(SyncHumanInputProvider):
    """CrewAI's ``HumanInputProvider`` asking through ``ctx.user_questions``."""

    def __init__(
        self,
        ctx: Any,
        *,
        agent: object | None = None,
        signal: Any | None = None,
        audience: Iterable[str] = (),
    ):
        self._ctx, self._agent, self._signal = ctx, agent, signal
        self._audience = tuple(audience)

    def _feedback_request(self, answer: AgentFinish) -> AskUserQuestionRequest:
        output = self._get_output_string(answer)
        return _request(FEEDBACK, output, self._agent, self._signal, self._audience)

    def handle_feedback(
        self, formatted_answer: AgentFinish, context: ExecutorContext
    ) -> AgentFinish:
        answer = formatted_answer
        while context.ask_for_human_input:
            feedback = _text(self._ctx.user_questions.ask_sync(self._feedback_request(answer)))
            if context._is_training_mode():
                return self._handle_training_feedback(answer, feedback or "", context)
            if not feedback:
                context.ask_for_human_input = False
                break
            context.messages.append(context._format_feedback_message(feedback))
            answer = context._invoke_loop()
        return answer

    async def handle_feedback_async(
        self, formatted_answer: AgentFinish, context: AsyncExecutorContext
    ) -> AgentFinish:
        answer = formatted_answer
        while context.ask_for_human_input:
            feedback = _text(await self._ctx.user_questions.ask(self._feedback_request(answer)))
            if context._is_training_mode():
                return await self._handle_training_feedback_async(answer, feedback or "", context)
            if not feedback:
                context.ask_for_human_input = False
                break
            context.messages.append(context._format_feedback_message(feedback))
            answer = await context._ainvoke_loop()
        return answer


def human_input_provider(
    ctx: Any,
    *,
    agent: object | None = None,
    signal: Any | None = None,
    audience: Iterable[str] = (),
) -> AskingHumanInputProvider:
    """The provider for ``crewai.core.providers.human_input.set_provider``.

    ``audience`` (person ids and ``group:NAME``) is who may answer, set by the harness.
    """
    return AskingHumanInputProvider(ctx, agent=agent, signal=signal, audience=audience)


class AskingInputProvider:
    """A flow's ``input_provider`` asking through ``ctx.user_questions``."""

    def __init__(
        self,
        ctx: Any,
        *,
        agent: object | None = None,
        signal: Any | None = None,
        audience: Iterable[str] = (),
    ):
        self._ctx, self._agent, self._signal = ctx, agent, signal
        self._audience = tuple(audience)

    def __deepcopy__(self, memo: dict[int, object]) -> AskingInputProvider:
        return self  # a handle on the context: a flow copies its defaults, not the context

    def request_input(self, message: str, flow: Any, metadata: Any = None) -> str | None:
        request = _request(message, None, self._agent, self._signal, self._audience)
        return _text(self._ctx.user_questions.ask_sync(request))


def input_provider(
    ctx: Any,
    *,
    agent: object | None = None,
    signal: Any | None = None,
    audience: Iterable[str] = (),
) -> AskingInputProvider:
    """The ``input_provider`` of a CrewAI ``Flow`` (for ``Flow.ask``).

    ``audience`` (person ids and ``group:NAME``) is who may answer, set by the harness.
    """
    return AskingInputProvider(ctx, agent=agent, signal=signal, audience=audience)
