"""The ``terminal`` provider plugin, declared under the ``dsh`` entry points.

A harness that loads that group (``ctx.load_entrypoints()``), or ``dsh-ask``, asks its questions
in the terminal with nothing more to do.
"""

from __future__ import annotations

from collections.abc import Awaitable

from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest, hookimpl

from ._provider import TerminalProvider

__all__ = ["dsh_user_questions_ask"]

_PROVIDER = TerminalProvider()


@hookimpl
def dsh_user_questions_ask(request: AskUserQuestionRequest) -> Awaitable[AskUserQuestionAnswer]:
    """Ask ``request`` in the terminal (interactive, or line mode without a TTY)."""
    return _PROVIDER.ask(request)
