"""Who answered: the names the shipped surfaces record as ``answered_by``.

Private to this repository's distributions (the terminal, web and inbox providers import it);
released with the core. A surface a person uses as themselves (a terminal, a command line)
records their login name; a page that knows no people records `TOKEN_HOLDER`. Whoever can run
such a surface, or write the inbox's store, is trusted to be who it says: these are names, not
checks (docs/team.md).
"""

from __future__ import annotations

import getpass

__all__ = ["TOKEN_HOLDER", "login_name"]

TOKEN_HOLDER = "token"
"""``answered_by`` of an answer given on a page that knows no people: whoever held its token."""


def login_name() -> str | None:
    """The login name of this process's user (`getpass.getuser`), or ``None`` when unknown."""
    try:
        return getpass.getuser() or None
    except (OSError, KeyError, ImportError):
        return None
