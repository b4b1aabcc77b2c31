"""Helpers for provider authors: receipts ("a receipt means taken") and shared providers.

`receipt` tells a provider whether the answer it returned reached the asker, so a surface says
"accepted" only then. A provider that keeps questions (an inbox) also files each one on its
receipt (`Receipt.file` with a `Filing`: the question's id, a link, the command that answers
it), so an asker waiting on it (``dsh-ask``) can tell its human at once where to answer.
`SharedProvider` is the base of a provider plugin that one process registers in many harness
contexts (an inbox, a web page): it tracks those contexts weakly, hears when each opens and
closes, and releases what it shares when the last one closes.

Example: a page that confirms an answer only once the harness has it::

    from dsh_user_questions.providing import SharedProvider, receipt

    class PagePlugin(SharedProvider):
        @hookimpl
        async def dsh_user_questions_ask(self, request):
            taken = receipt(request)  # take it first, while the ask is in flight
            answer = await self.page.wait_for_answer(request)
            self.page.confirm_when(taken)  # shows "accepted" once `await taken` is True
            return answer

        async def last_context_closed(self):
            await self.page.stop()

    plugin = PagePlugin()  # the entry point names this object: "web = my_pkg.plugin:plugin"
"""

from __future__ import annotations

import itertools
import weakref
from typing import TYPE_CHECKING, overload

from ._markers import hookimpl
from ._waiting import Filing, Receipt, flight_of, receipt_for

if TYPE_CHECKING:
    from ._payloads import AskUserQuestionRequest
    from .harness import HarnessContext

__all__ = ["Filing", "Receipt", "SharedProvider", "receipt"]


@overload
def receipt(request: AskUserQuestionRequest) -> Receipt: ...
@overload
def receipt(request: AskUserQuestionRequest, *, make: bool) -> Receipt | None: ...


def receipt(request: AskUserQuestionRequest, *, make: bool = True) -> Receipt | None:
    """The `Receipt` of the ask whose provider was given ``request``.

    Call it from the provider while it answers (best: first thing in its ``ask``), with the
    very request object it was given. ``await receipt(request)`` is ``True`` only once
    ``ask()`` has returned that provider's answer to its caller; ``False`` when the caller was
    cancelled as the answer landed, the answer was refused (``BAD_ANSWER``), or the ask was
    aborted, timed out or withdrawn by ``aclose()``. For a request that is not in flight in any
    service of this process (a provider driven without the service) it is already ``False``.

    ``make=False``: the receipt only if someone (the asker, through a hook wrapper of
    ``dsh_user_questions_ask``, or the provider) has already taken it, else ``None``; a
    provider that files its questions (`Receipt.file`) asks so, and spends nothing on a
    filing nobody waits for.
    """
    if make:
        return receipt_for(request)
    flight = flight_of(request, make=False)
    return None if flight is None else flight.receipt


class SharedProvider:
    """Base of a provider plugin object shared by every harness context of a process.

    Register one instance in each context (or name it in the ``"dsh"`` entry points). It hears
    of each context through the ``dsh_context_opened`` and ``dsh_context_closed`` hooks and
    holds them weakly: a context dropped without ``aclose()`` is forgotten, never kept alive.
    Subclasses implement the provider hook (``dsh_user_questions_ask``) and override the
    ``context_opened``, ``context_closed`` and ``last_context_closed`` callbacks as needed.
    Unregistering the plugin from an open context does not count as that context closing.
    """

    def __init__(self) -> None:
        self._order = itertools.count()
        self._open: weakref.WeakValueDictionary[int, HarnessContext] = weakref.WeakValueDictionary()

    @property
    def contexts(self) -> list[HarnessContext]:
        """The open contexts (not closed, still alive) it is registered in, oldest first."""
        return [ctx for _, ctx in sorted(self._open.items())]

    def context_opened(self, ctx: HarnessContext) -> None:
        """Called once per context: when it opens, or when this plugin joins an open one."""

    async def context_closed(self, ctx: HarnessContext) -> None:
        """Called once when ``ctx`` closes (its asks are settled); ``ctx`` is already forgotten."""

    async def last_context_closed(self) -> None:
        """Called when the last open context closes: release what the contexts shared."""

    @hookimpl
    def dsh_context_opened(self, ctx: HarnessContext) -> None:
        """Track ``ctx`` (weakly), then `context_opened`."""
        if all(known is not ctx for known in self._open.values()):
            self._open[next(self._order)] = ctx
            self.context_opened(ctx)

    @hookimpl
    async def dsh_context_closed(self, ctx: HarnessContext) -> None:
        """Forget ``ctx``, then `context_closed`, then `last_context_closed` if it was the last."""
        keys = [key for key, known in self._open.items() if known is ctx]
        if not keys:
            return
        for key in keys:
            del self._open[key]
        await self.context_closed(ctx)
        if not self._open:
            await self.last_context_closed()
