"""The settings: the store URL, the default file, and the retention."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_user_questions_inbox import default_sqlite_path, parse_url
from dsh_user_questions_inbox._retention import parse_duration, retention_seconds


@pytest.mark.parametrize(
    ("url", "engine", "target"),
    [
        ("sqlite:////abs/inbox.db", "sqlite", "/abs/inbox.db"),
        ("sqlite:///rel/inbox.db", "sqlite", "rel/inbox.db"),
        ("postgresql://u@h/db", "postgresql", "postgresql://u@h/db"),
        ("postgres://u@h/db", "postgresql", "postgresql://u@h/db"),
        (
            "postgresql+psycopg://u@h/db?sslmode=require",
            "postgresql",
            "postgresql://u@h/db?sslmode=require",
        ),
    ],
)
def test_urls_pick_the_engine(url: str, engine: str, target: str) -> None:
    """SQLAlchemy-style SQLite URLs and libpq URLs are read as documented."""
    parsed = parse_url(url)
    assert (parsed.engine, parsed.target) == (engine, target)


@pytest.mark.parametrize(
    "url", ["mysql://x/y", "sqlite://", "sqlite:///", "inbox.db", "sqlite:////a.db?mode=ro"]
)
def test_a_bad_url_says_what_is_accepted(url: str) -> None:
    """Anything else is a ValueError naming the URL."""
    with pytest.raises(ValueError, match="inbox URL"):
        parse_url(url)


def test_the_setting_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """DSH_USER_QUESTIONS_INBOX picks the store; unset, the file under XDG_STATE_HOME; a bad
    value is an error naming the variable."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    monkeypatch.delenv("DSH_USER_QUESTIONS_INBOX", raising=False)
    assert parse_url().target == str(tmp_path / "dsh-user-questions" / "inbox.db")
    assert default_sqlite_path() == tmp_path / "dsh-user-questions" / "inbox.db"
    monkeypatch.setenv("DSH_USER_QUESTIONS_INBOX", "sqlite:////x/y.db")
    assert parse_url().target == "/x/y.db"
    monkeypatch.setenv("DSH_USER_QUESTIONS_INBOX", "nope")
    with pytest.raises(ValueError, match="DSH_USER_QUESTIONS_INBOX='nope'"):
        parse_url()


def test_durations_and_retention(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retention reads seconds or s/m/h/d, or never; default 30 days; bad text names the setting."""
    assert [parse_duration(t, where="x") for t in ("90", "90s", "15m", "12h", "30d", "never")] == [
        90,
        90,
        900,
        43_200,
        2_592_000,
        None,
    ]
    monkeypatch.delenv("DSH_USER_QUESTIONS_INBOX_RETENTION", raising=False)
    assert retention_seconds() == 30 * 86_400
    monkeypatch.setenv("DSH_USER_QUESTIONS_INBOX_RETENTION", "a while")
    with pytest.raises(
        ValueError, match="DSH_USER_QUESTIONS_INBOX_RETENTION: 'a while' is not a duration"
    ):
        retention_seconds()
