"""The ``inbox`` provider plugin, declared under the ``dsh`` entry points (``plugin``).

Installed (and chosen with ``DSH_USER_QUESTIONS_PROVIDER=inbox`` when other providers are
installed too), every ask of a harness that loads the entry points goes to the store named by
``DSH_USER_QUESTIONS_INBOX``. One `InboxPlugin` per process, shared by its harness contexts
through the core's `SharedProvider` (contexts held weakly, told when each opens and closes);
one `InboxProvider`, made on first use and closed with the last open context. Late answers for
this harness are handed to the ``dsh_user_questions_late_answer`` hook of every open context.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import TYPE_CHECKING

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    UserQuestionError,
    hookimpl,
)
from dsh_user_questions.providing import SharedProvider

from ._record import QuestionRecord
from ._url import parse_url
from .provider import InboxProvider

if TYPE_CHECKING:
    from dsh_user_questions.harness import AbortSignal

__all__ = ["InboxPlugin", "get_provider", "plugin"]

_log = logging.getLogger(__name__)


class InboxPlugin(SharedProvider):
    """The inbox as a provider plugin: one per process, registered in every context."""

    def __init__(self) -> None:
        super().__init__()
        _check_setting()
        self._provider: InboxProvider | None = None
        self._opening = threading.Lock()  # two first asks at once open one provider

    def get_provider(self) -> InboxProvider:
        """The provider this plugin asks through (opened from the environment on first use)."""
        with self._opening:
            if self._provider is None:
                self._provider = InboxProvider(on_late_answer=self._late_answer)
            return self._provider

    def _late_answer(self, record: QuestionRecord) -> None:
        for ctx in self.contexts:
            hook = getattr(ctx.plugin_manager.hook, "dsh_user_questions_late_answer", None)
            if hook is None:
                continue
            try:
                hook(record=record)
            except Exception:
                _log.exception("a dsh_user_questions_late_answer hook failed for %s", record.id)

    async def _provider_soon(self) -> InboxProvider:
        # The first use opens the store: done in a thread so the harness's loop never stalls.
        provider = self._provider
        return provider if provider is not None else await asyncio.to_thread(self.get_provider)

    @hookimpl
    async def dsh_user_questions_ask(
        self, request: AskUserQuestionRequest
    ) -> AskUserQuestionAnswer:
        """Record the question in the inbox and wait for its final state."""
        return await (await self._provider_soon()).ask(request)

    @hookimpl
    async def dsh_user_questions_resume(
        self, question_id: str, signal: AbortSignal | None
    ) -> AskUserQuestionAnswer:
        """Wait again for a question this or an earlier process asked."""
        return await (await self._provider_soon()).resume(question_id, signal=signal)

    async def last_context_closed(self) -> None:
        """The last open context closed (its asks settled first): close the provider."""
        with self._opening:
            provider, self._provider = self._provider, None
        if provider is not None:
            await asyncio.to_thread(provider.close)


def _check_setting() -> None:
    """``DSH_USER_QUESTIONS_INBOX`` is checked as the provider loads (the entry point), not at
    the first ask: a malformed URL is ``STORE_UNUSABLE`` naming the variable and what it takes."""
    try:
        parse_url()
    except ValueError as err:
        raise UserQuestionError.store_unusable(
            f"{err} (or unset: the default SQLite file)"
        ) from None


plugin = InboxPlugin()


def get_provider() -> InboxProvider:
    """The provider of the process's inbox plugin (opened from the environment on first use)."""
    return plugin.get_provider()
