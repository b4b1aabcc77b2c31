"""The one setting that picks the store: ``DSH_USER_QUESTIONS_INBOX``, a URL."""

from __future__ import annotations

import os
import re
from pathlib import Path

import attrs

__all__ = ["ENV_INBOX", "InboxURL", "default_sqlite_path", "parse_url", "redact"]

ENV_INBOX = "DSH_USER_QUESTIONS_INBOX"


@attrs.frozen
class InboxURL:
    """A parsed store URL: the engine and where its data lives."""

    engine: str  # "sqlite" or "postgresql"
    target: str  # the database file for SQLite, the libpq connection string for PostgreSQL

    def __str__(self) -> str:
        return f"sqlite:///{self.target}" if self.engine == "sqlite" else redact(self.target)

    @property
    def shown(self) -> str:
        """Where the data lives, for messages: the file, or the URL without its password."""
        return self.target if self.engine == "sqlite" else redact(self.target)


_USERINFO = re.compile(r"(?P<head>://[^:/?#@]*):[^@/?#]*@")
_PASSWORD_OPTION = re.compile(r"(?P<head>[?&;\s]password=)[^&\s]*", re.IGNORECASE)


def redact(url: str) -> str:
    """``url`` with any password (``user:PASSWORD@`` or ``password=``) shown as ``***``."""
    url = _USERINFO.sub(r"\g<head>:***@", url)
    return _PASSWORD_OPTION.sub(r"\g<head>***", url)


def default_sqlite_path() -> Path:
    """``$XDG_STATE_HOME/dsh-user-questions/inbox.db`` (``~/.local/state`` when unset)."""
    state = os.environ.get("XDG_STATE_HOME", "").strip()
    base = Path(state) if state and Path(state).is_absolute() else Path.home() / ".local" / "state"
    return base / "dsh-user-questions" / "inbox.db"


def parse_url(url: str | None = None) -> InboxURL:
    """Parse a store URL; ``None`` reads ``DSH_USER_QUESTIONS_INBOX``, then the default file.

    ``sqlite:////abs/path.db`` (SQLAlchemy style: three slashes, then the path; a relative path
    after three slashes is relative to the working directory) or ``postgresql://...`` (also
    ``postgres://`` and ``postgresql+psycopg://``). Anything else is a `ValueError` saying what
    is accepted.
    """
    if url is None:
        url = os.environ.get(ENV_INBOX, "").strip()
        if not url:
            return InboxURL("sqlite", str(default_sqlite_path()))
        where = f"{ENV_INBOX}={redact(url)!r}"
    else:
        where = f"inbox URL {redact(url)!r}"
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if sep and scheme == "sqlite":
        if not rest.startswith("/") or rest == "/":
            raise ValueError(
                f"{where}: a SQLite URL names a file after three slashes,"
                " e.g. sqlite:////home/me/inbox.db (an in-memory database cannot be shared)"
            )
        path = rest[1:]
        if "?" in path:
            raise ValueError(f"{where}: SQLite URLs take no query options")
        return InboxURL("sqlite", path)
    if sep and scheme in ("postgresql", "postgres", "postgresql+psycopg"):
        return InboxURL("postgresql", f"postgresql://{rest}")
    raise ValueError(
        f"{where}: expected sqlite:////absolute/path.db or postgresql://user@host/dbname"
    )
