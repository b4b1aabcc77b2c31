"""SIGTERM and SIGHUP restore the terminal before the process does what the signal says.

Each test sets the disposition it needs in the child before the driver starts: a child inherits
an ignored signal, and a test run started under ``nohup`` ignores SIGHUP (the provider then
rightly leaves it ignored).
"""

from __future__ import annotations

import signal
import termios
from collections.abc import Callable

import pytest
from conftest import question

HINT = "Esc cancel"


def disposition(signum: int, handler: signal.Handlers) -> Callable[[], None]:
    """What the child runs before the driver: ``signum`` set to ``handler``."""

    def set_it() -> None:
        signal.signal(signum, handler)

    return set_it


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_terminating_signal_restores_the_terminal_then_terminates(terminal, signum):
    """The prompt is up in raw mode with the cursor hidden; the signal restores echo, line
    editing and the cursor, and the process still ends by that signal."""
    term = terminal({"questions": [question()]}, preexec_fn=disposition(signum, signal.SIG_DFL))
    term.wait_for(HINT)
    assert not termios.tcgetattr(term.child.child_fd)[3] & termios.ECHO
    term.child.kill(signum)
    term.wait_until(lambda s: not term.child.isalive(), "the process end")
    term.settle(1.0)  # what it wrote before it ended
    modes = termios.tcgetattr(term.child.child_fd)
    assert modes[3] & termios.ECHO
    assert modes[3] & termios.ICANON
    assert term.screen.cursor.hidden is False
    term.child.close()
    assert term.child.signalstatus == signum


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_terminating_signal_erases_the_form(terminal, signum):
    """After SIGTERM or SIGHUP the form is gone from the screen: whatever the shell prints next
    is not drawn under a question nobody can answer any more."""
    term = terminal(
        {"questions": [question(detail="Pick one for the monorepo.")]},
        preexec_fn=disposition(signum, signal.SIG_DFL),
    )
    term.wait_for(HINT, "Pick one for the monorepo.")
    term.child.kill(signum)
    screen = term.ended_by_signal()
    assert "Which package manager" not in screen, screen
    assert "pnpm" not in screen, screen
    assert HINT not in screen, screen
    assert term.child.signalstatus == signum


def test_an_ignored_sighup_stays_ignored(terminal):
    """Started with SIGHUP ignored (under nohup), the form stays up after a SIGHUP and still
    takes an answer: the provider never turns an ignored signal back on."""
    term = terminal(
        {"questions": [question()]}, preexec_fn=disposition(signal.SIGHUP, signal.SIG_IGN)
    )
    term.wait_for(HINT)
    term.child.kill(signal.SIGHUP)
    term.settle(1.0)
    assert term.child.isalive()
    assert HINT in term.text, term.text
    term.press("enter")
    assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
