"""One-question answer links: signed, expiring, good for one question only."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_user_questions._links import LinkError, make_link_token, verify_link_token

SECRET = b"s" * 32


def test_a_token_opens_its_question_until_it_expires() -> None:
    """verify returns the question id before the expiry and refuses it as expired after."""
    token = make_link_token(SECRET, "q-1", expires_at=1_000)
    assert verify_link_token(SECRET, token, now=999) == "q-1"
    with pytest.raises(LinkError) as info:
        verify_link_token(SECRET, token, now=1_000)
    assert info.value.reason == "expired"


def test_another_servers_secret_is_refused() -> None:
    """A token signed by another secret is tampered."""
    token = make_link_token(SECRET, "q-1", expires_at=10**10)
    with pytest.raises(LinkError) as info:
        verify_link_token(b"t" * 32, token)
    assert info.value.reason == "tampered"


@given(st.integers(min_value=0), st.characters(codec="ascii"))
def test_any_changed_character_is_refused(position: int, char: str) -> None:
    """Changing any one character of a token makes it refused (never another question)."""
    token = make_link_token(SECRET, "q-1", expires_at=10**10)
    at = position % len(token)
    changed = token[:at] + char + token[at + 1 :]
    if changed == token:
        return
    with pytest.raises(LinkError):
        verify_link_token(SECRET, changed)


def test_a_short_secret_is_refused() -> None:
    """Secrets under 16 bytes are refused when making a token."""
    with pytest.raises(ValueError, match="at least 16 bytes"):
        make_link_token(b"short", "q", expires_at=1)
