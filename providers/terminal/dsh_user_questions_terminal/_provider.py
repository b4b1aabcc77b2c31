"""`TerminalProvider`: chooses interactive or line mode (or says no person can be reached)
and asks."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable
from typing import Literal, TextIO

from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest, UserQuestionError
from dsh_user_questions._identity import login_name
from dsh_user_questions.rules import inert_text
from dsh_user_questions.team import may_answer, tally

from ._abort import AbortRelay
from ._i18n import _
from ._questions import unusable_stream
from ._turns import TERMINAL_TURNS

__all__ = ["BELL_ENV", "PLAIN_ENV", "TerminalProvider", "wants_plain"]

PLAIN_ENV = "DSH_USER_QUESTIONS_PLAIN"
BELL_ENV = "DSH_USER_QUESTIONS_TERMINAL_BELL"
_TRUE = frozenset({"1", "true", "yes", "on"})

StdinKind = Literal["tty", "lines", "none"]


def _env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def wants_plain() -> bool:
    """Line mode is wanted: ``DSH_USER_QUESTIONS_PLAIN`` is set, ``TERM`` is ``dumb``, stdin is
    not a terminal, or neither stdout nor ``/dev/tty`` is one to draw the form on."""
    if _forced_plain():
        return True
    if _stdin_kind() != "tty":
        return True
    return not (_is_tty(sys.stdout) or _tty_opens())


def _forced_plain() -> bool:
    # TERM=dumb: no cursor movement, so a drawn form would be garbage.
    return _env_true(PLAIN_ENV) or os.environ.get("TERM") == "dumb"


def _stdin_kind() -> StdinKind:
    """What stdin is: a terminal, something that gives lines (a pipe, a file, a socket), or
    nothing a person can answer through (missing, closed, or the null device)."""
    stdin = sys.stdin
    if stdin is None:
        return "none"
    try:
        fd = stdin.fileno()
        status = os.fstat(fd)
    except (AttributeError, ValueError, OSError):
        return "none"
    if _is_tty(stdin):
        return "tty"
    try:
        if os.path.samestat(status, os.stat(os.devnull)):
            return "none"
    except OSError:
        pass
    return "lines"


def _tty_opens() -> bool:
    """Whether this process has a controlling terminal it can open (``/dev/tty``)."""
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
    except OSError:
        return False
    return True


def _is_tty(stream: object) -> bool:
    """Whether ``stream`` is an open terminal (a closed or odd stand-in is not)."""
    try:
        return bool(stream is not None and stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def bell_wanted() -> bool:
    """``DSH_USER_QUESTIONS_TERMINAL_BELL`` asks for the bell when a form appears."""
    return _env_true(BELL_ENV)


class TerminalProvider:
    """A user-questions provider that asks the human in this process's terminal.

    ``plain=None`` (the default) picks the mode at each ask: the interactive form when stdin is
    a terminal (drawn on stdout, or on ``/dev/tty`` when stdout is captured), line mode when
    stdin is a pipe or a file (or ``DSH_USER_QUESTIONS_PLAIN`` is set, or ``TERM`` is ``dumb``),
    and the form on ``/dev/tty`` when stdin is missing, closed or the null device. With no way
    to reach a person at all (no such stdin and no ``/dev/tty``: ``dsh-ask mcp`` started by a
    client without a terminal), the ask raises ``NOT_INTERACTIVE`` at once. ``True`` forces line
    mode and ``False`` interactive mode. Usable directly with
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
        return self._ask_as_login(request, AbortRelay(request.signal))

    async def _ask_as_login(
        self, request: AskUserQuestionRequest, relay: AbortRelay
    ) -> AskUserQuestionAnswer:
        """The answer, with ``answered_by`` the login name of whoever sits at this terminal.

        The login name is the person (`team.may_answer`): outside the request's audience the
        terminal shows the refusal and asks nothing; the question stays open until it is
        withdrawn (an abort, its timeout). A review that needs several approvals is counted
        with `team.tally`: an approval that does not settle it is shown with the count and the
        question is asked again (the same login approving again still counts once); the answer
        that settles it is returned.
        """
        try:
            person = login_name()
            refusal = may_answer(request, person)
            if refusal is not None:
                _tell(refusal, _("The question stays open for them; nothing was answered here."))
                await _withdrawn(relay)
            answers: list[AskUserQuestionAnswer] = []
            while True:
                answer = await self._ask(request, relay)
                answers.append(AskUserQuestionAnswer(answer.answers, answered_by=person))
                settlement = tally(request, answers)
                if settlement.settled is not None:
                    return settlement.settled
                _tell(
                    _("Approved by {people} ({have} of {needed}).").format(
                        people=", ".join(inert_text(name) for name in settlement.approvers),
                        have=settlement.have,
                        needed=settlement.needed,
                    ),
                    _("Another person must approve too; you may still change your answer."),
                )
        finally:
            relay.close()

    async def _ask(
        self, request: AskUserQuestionRequest, relay: AbortRelay
    ) -> AskUserQuestionAnswer:
        try:
            # One terminal, one prompt at a time, in first-come order: concurrent asks (two
            # agents, on one event loop or on several in different threads) wait their turn.
            async with TERMINAL_TURNS.turn():
                if relay.signal is not None and relay.aborted:
                    raise UserQuestionError.aborted_by(relay.signal)
                kind = _stdin_kind()
                on_tty = False  # ask on /dev/tty: stdin is nothing a person can answer through
                if kind == "none":
                    if not _tty_opens():
                        raise unusable_stream(
                            "stdin",
                            "it is missing, closed or the null device, and there is no"
                            " controlling terminal (/dev/tty)",
                        )
                    on_tty = True
                plain = (
                    (_forced_plain() or (kind == "lines") or not _form_drawable(on_tty))
                    if self.plain is None
                    else self.plain
                )
                if plain:
                    from ._lines import ask_in_lines

                    if on_tty:
                        return await _lines_on_tty(request)
                    return await ask_in_lines(request, request.signal, bell=bell_wanted())
                from ._interactive import ask_interactive

                return await ask_interactive(
                    request, relay, input_on_tty=on_tty, bell=bell_wanted()
                )
        finally:
            relay.disconnect()


def _tell(*lines: str) -> None:
    """Show ``lines`` to the person, where the questions are asked: on stderr (line mode's
    prompts), or on ``/dev/tty`` when the person types there and stderr is no terminal (stdin
    is nothing a person answers through, or a terminal while stderr is captured)."""
    text = "".join(f"{line}\n" for line in lines)
    kind = _stdin_kind()
    if kind == "none" or (kind == "tty" and not _is_tty(sys.stderr)):
        try:
            with open("/dev/tty", "w", encoding="utf-8", errors="replace") as tty:
                tty.write(text)
            return
        except OSError:
            pass  # no controlling terminal
    try:
        if sys.stderr is not None:
            sys.stderr.write(text)
            sys.stderr.flush()
    except (OSError, ValueError):
        pass  # a closed stderr: nobody to tell


async def _withdrawn(relay: AbortRelay) -> None:
    """Wait until the request is withdrawn (its signal aborts: an abort or its timeout), then
    raise its error; without a signal, until the ask is cancelled."""
    loop = asyncio.get_running_loop()
    gone = loop.create_future()

    def withdraw() -> None:
        if not gone.done():
            gone.set_result(None)

    relay.connect(loop, withdraw)
    try:
        await gone
    finally:
        relay.disconnect()
    assert relay.signal is not None  # only a signal's abort sets it
    raise UserQuestionError.aborted_by(relay.signal)


def _form_drawable(on_tty: bool) -> bool:
    return on_tty or _is_tty(sys.stdout) or _tty_opens()


_TTY_LINES: list[tuple[int, TextIO]] = []  # /dev/tty opened once for line mode, kept open


async def _lines_on_tty(request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
    """Line mode on ``/dev/tty`` (stdin is nothing a person can answer through).

    The terminal is opened once and kept: its line reader's thread may still be blocked in a
    read of it when an ask ends, and the next ask reads the same lines on.
    """
    from ._lines import ask_in_lines

    if not _TTY_LINES:
        try:
            fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
        except OSError as error:
            raise unusable_stream("/dev/tty", error.strerror or str(error)) from error
        _TTY_LINES.append((fd, os.fdopen(os.dup(fd), "w", encoding="utf-8", errors="replace")))
    tty, out = _TTY_LINES[0]
    return await ask_in_lines(request, request.signal, fd=tty, out=out, bell=bell_wanted())
