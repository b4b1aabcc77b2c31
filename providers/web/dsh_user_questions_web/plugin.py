"""The ``dsh`` entry point of dsh-user-questions-web: installing the distribution is enough.

The harness loads this module through the ``dsh`` entry-point group (name ``web``); its hook
implementations hand every ask to one `WebProvider` configured from the environment (see
`WebProvider.from_env`), created on the first ask. The provider lives as long as the harness
contexts using it: each context this plugin is registered in counts, and the page stops when
the last of them closes (``await ctx.aclose()``), not when the first does.

Importing this module loads no more than the core: the provider loads with the first ask, and
uvicorn, Starlette and markdown-it-py when the server starts.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable
from typing import TYPE_CHECKING

from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest, hookimpl

if TYPE_CHECKING:
    from dsh_user_questions.harness import HarnessContext

    from .provider import WebProvider

__all__ = ["dsh_context_closing", "dsh_context_services", "dsh_user_questions_ask", "get_provider"]

_provider: WebProvider | None = None
# The open contexts this plugin is registered in (weakly: a context dropped without aclose()
# must not keep the page alive for ever).
_contexts: weakref.WeakSet[HarnessContext] = weakref.WeakSet()


def get_provider() -> WebProvider:
    """The provider this plugin asks through (made from the environment on first use)."""
    global _provider
    if _provider is None:
        from .provider import WebProvider  # loaded with the first ask, not with the plugin

        _provider = WebProvider.from_env()
    return _provider


@hookimpl
def dsh_context_services(ctx: HarnessContext) -> None:
    """Count ``ctx`` among the contexts the page serves (this plugin adds no service)."""
    _contexts.add(ctx)


@hookimpl
def dsh_user_questions_ask(request: AskUserQuestionRequest) -> Awaitable[AskUserQuestionAnswer]:
    """Ask through the page of this process's `WebProvider`."""
    return get_provider().ask(request)


@hookimpl
async def dsh_context_closing(ctx: HarnessContext) -> None:
    """Stop the page once the last context using it closes; pending asks get ``ASK_ABORTED``."""
    _contexts.discard(ctx)
    if _provider is not None and not _contexts:
        await _provider.stop("the harness is closing")
