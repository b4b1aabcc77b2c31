"""A terminal provider for dsh-user-questions: ask the human in the terminal.

Installed, it registers under the ``dsh`` entry points as the provider ``terminal``; a harness
that loads them, or ``dsh-ask``, then asks in the terminal. Interactive on a TTY, line mode
(prompts on stderr, answers on stdin) otherwise or with ``DSH_USER_QUESTIONS_PLAIN=1``.
"""

from __future__ import annotations

from ._provider import BELL_ENV, PLAIN_ENV, TerminalProvider, wants_plain

__all__ = ["BELL_ENV", "PLAIN_ENV", "TerminalProvider", "__version__", "wants_plain"]

__version__ = "0.1.0.dev0"
"""This distribution's version (setup.cfg reads it from here: the one place it is written)."""
