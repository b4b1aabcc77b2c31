"""The ``dsh`` entry point of dsh-user-questions-web: installing the distribution is enough.

The harness loads this module through the ``dsh`` entry-point group (name ``web``); its one
hook implementation hands every ask to a module-wide `WebProvider` configured from the
environment (see `WebProvider.from_env`), created on the first ask.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest, hookimpl

if TYPE_CHECKING:
    from dsh_user_questions.harness import HarnessContext

from .provider import WebProvider

__all__ = ["dsh_context_closing", "dsh_user_questions_ask", "get_provider"]

_provider: WebProvider | None = None


def get_provider() -> WebProvider:
    """The provider this plugin asks through (made from the environment on first use)."""
    global _provider
    if _provider is None:
        _provider = WebProvider.from_env()
    return _provider


@hookimpl
def dsh_user_questions_ask(request: AskUserQuestionRequest) -> Awaitable[AskUserQuestionAnswer]:
    """Ask through the page of this process's `WebProvider`."""
    return get_provider().ask(request)


@hookimpl
async def dsh_context_closing(ctx: HarnessContext) -> None:
    """Stop the page's server when the harness closes; pending asks fail with ``ASK_ABORTED``."""
    if _provider is not None:
        await _provider.stop("the harness is closing")
