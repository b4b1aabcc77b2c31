"""The ``inbox`` provider plugin, declared under the ``dsh`` entry points.

Installed (and chosen with ``DSH_USER_QUESTIONS_PROVIDER=inbox`` when other providers are
installed too), every ask of a harness that loads the entry points goes to the store named by
``DSH_USER_QUESTIONS_INBOX``. One `InboxProvider` per process, made on first use; late answers
for this harness are handed to the ``dsh_user_questions_late_answer`` hook of every context
that registered this plugin.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import TYPE_CHECKING

from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest, hookimpl

from ._record import QuestionRecord
from .provider import InboxProvider

if TYPE_CHECKING:
    from dsh_user_questions.harness import AbortSignal, HarnessContext

__all__ = [
    "dsh_context_closing",
    "dsh_context_services",
    "dsh_user_questions_ask",
    "dsh_user_questions_resume",
    "get_provider",
]

_log = logging.getLogger(__name__)
_provider: InboxProvider | None = None
_opening = threading.Lock()  # two first asks at once open one provider
_contexts: list[HarnessContext] = []


def get_provider() -> InboxProvider:
    """The provider this plugin asks through (opened from the environment on first use)."""
    global _provider
    with _opening:
        if _provider is None:
            _provider = InboxProvider(on_late_answer=_late_answer)
        return _provider


def _late_answer(record: QuestionRecord) -> None:
    for ctx in list(_contexts):
        hook = getattr(ctx.plugin_manager.hook, "dsh_user_questions_late_answer", None)
        if hook is None:
            continue
        try:
            hook(record=record)
        except Exception:
            _log.exception("a dsh_user_questions_late_answer hook failed for %s", record.id)


@hookimpl
def dsh_context_services(ctx: HarnessContext) -> None:
    """Remember the context, whose late-answer hook hears of this harness's late answers."""
    if all(known is not ctx for known in _contexts):
        _contexts.append(ctx)


async def _provider_soon() -> InboxProvider:
    # The first use opens the store (and, for PostgreSQL, waits out an unreachable server):
    # done in a thread so the harness's loop never stalls on it.
    return _provider if _provider is not None else await asyncio.to_thread(get_provider)


@hookimpl
async def dsh_user_questions_ask(request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
    """Record the question in the inbox and wait for its final state."""
    return await (await _provider_soon()).ask(request)


@hookimpl
async def dsh_user_questions_resume(
    question_id: str, signal: AbortSignal | None
) -> AskUserQuestionAnswer:
    """Wait again for a question this or an earlier process asked."""
    return await (await _provider_soon()).resume(question_id, signal=signal)


@hookimpl
def dsh_context_closing(ctx: HarnessContext) -> None:
    """Forget the context; the last one to close stops the provider's listener."""
    global _provider
    _contexts[:] = [known for known in _contexts if known is not ctx]
    if not _contexts and _provider is not None:
        _provider.close()
        _provider = None
