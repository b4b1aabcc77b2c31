"""The ``dsh`` entry point of dsh-user-questions-web: installing the distribution is enough.

The harness loads `plugin` (this module's one `WebPlugin`) through the ``dsh`` entry-point
group (name ``web``); it hands every ask to one `WebProvider` configured from the environment
(see `WebProvider.from_env`), created on the first ask. The provider lives as long as the
harness contexts using it: the core's `dsh_user_questions.providing.SharedProvider` tracks
them (weakly: a context dropped without ``aclose()`` does not keep the page alive), and the
page stops when the last of them closes (``await ctx.aclose()``), not when the first does.

Importing this module loads no more than the core: the provider loads with the first ask, and
uvicorn, Starlette and markdown-it-py when the server starts.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest, hookimpl
from dsh_user_questions.providing import SharedProvider

if TYPE_CHECKING:
    from ._provider import WebProvider

__all__ = ["WebPlugin", "get_provider", "plugin"]

_provider: WebProvider | None = None


def get_provider() -> WebProvider:
    """The provider this plugin asks through (made from the environment on first use)."""
    global _provider
    if _provider is None:
        from ._provider import WebProvider  # loaded with the first ask, not with the plugin

        _provider = WebProvider.from_env()
    return _provider


class WebPlugin(SharedProvider):
    """The plugin object: every context it is registered in asks through `get_provider`."""

    @hookimpl
    def dsh_user_questions_ask(
        self, request: AskUserQuestionRequest
    ) -> Awaitable[AskUserQuestionAnswer]:
        """Ask through the page of this process's `WebProvider`."""
        return get_provider().ask(request)

    async def last_context_closed(self) -> None:
        """Stop the page once the last context using it closes; pending asks get ``ASK_ABORTED``."""
        if _provider is not None:
            await _provider.stop("the harness is closing")


plugin = WebPlugin()
"""The instance the ``web`` entry point names (``dsh_user_questions_web.plugin:plugin``)."""
