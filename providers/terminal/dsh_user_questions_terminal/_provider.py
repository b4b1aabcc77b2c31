"""`TerminalProvider`: chooses interactive or line mode and asks."""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable

from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest, UserQuestionError

from ._abort import AbortRelay
from ._turns import TERMINAL_TURNS

__all__ = ["PLAIN_ENV", "TerminalProvider", "wants_plain"]

PLAIN_ENV = "DSH_USER_QUESTIONS_PLAIN"
_TRUE = frozenset({"1", "true", "yes", "on"})


def wants_plain() -> bool:
    """Line mode is wanted: ``DSH_USER_QUESTIONS_PLAIN`` is set, ``TERM`` is ``dumb``, stdin is
    not a terminal, or neither stdout nor ``/dev/tty`` is one to draw the form on."""
    if os.environ.get(PLAIN_ENV, "").strip().lower() in _TRUE:
        return True
    if os.environ.get("TERM") == "dumb":  # no cursor movement: a drawn form would be garbage
        return True
    if not _is_tty(sys.stdin):
        return True
    if _is_tty(sys.stdout):
        return False
    # stdout is captured (answer=$(dsh-ask q.json)): draw on the controlling terminal instead.
    try:
        os.close(os.open("/dev/tty", os.O_WRONLY))
    except OSError:
        return True
    return False


def _is_tty(stream: object) -> bool:
    """Whether ``stream`` is an open terminal (a closed or odd stand-in is not)."""
    try:
        return bool(stream is not None and stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


class TerminalProvider:
    """A user-questions provider that asks the human in this process's terminal.

    ``plain=None`` (the default) picks the mode at each ask with `wants_plain`; ``True`` forces
    line mode and ``False`` interactive mode. Usable directly with
    ``ctx.user_questions.register_provider(TerminalProvider())``; the ``terminal`` entry point
    registers one through the provider hook.
    """

    def __init__(self, *, plain: bool | None = None) -> None:
        self.plain = plain

    def ask(self, request: AskUserQuestionRequest) -> Awaitable[AskUserQuestionAnswer]:
        """Start asking; the returned awaitable gives the answer.

        Not ``async def`` on purpose: the abort listener is added now, before the service
        starts waiting, so an abort closes the prompt before the caller hears ``ASK_ABORTED``.
        """
        return self._ask(request, AbortRelay(request.signal))

    async def _ask(
        self, request: AskUserQuestionRequest, relay: AbortRelay
    ) -> AskUserQuestionAnswer:
        try:
            # One terminal, one prompt at a time, in first-come order: concurrent asks (two
            # agents, on one event loop or on several in different threads) wait their turn.
            async with TERMINAL_TURNS.turn():
                if relay.signal is not None and relay.aborted:
                    raise UserQuestionError.aborted_by(relay.signal)
                plain = wants_plain() if self.plain is None else self.plain
                if plain:
                    from ._lines import ask_in_lines

                    return await ask_in_lines(request, request.signal)
                from ._interactive import ask_interactive

                return await ask_interactive(request, relay)
        finally:
            relay.close()
