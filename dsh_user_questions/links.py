"""One-question answer links: a capability for one question, signed by a server's secret.

A notification carries a link that opens one question and nothing else (no list, no other
question, no stream of others), so it may be pasted into a chat without handing over a page
server's global token. The token in the link names the question and when it expires, and is
signed with HMAC-SHA256 under the server's secret; `verify_link_token` refuses a tampered,
foreign or expired token with a `LinkError` that says which.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

__all__ = ["LinkError", "make_link_token", "verify_link_token"]


class LinkError(ValueError):
    """A link token that does not open its question; ``reason`` is ``tampered`` or ``expired``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(secret: bytes, body: str) -> str:
    return _b64(hmac.new(secret, b"dsh-question-link\0" + body.encode(), hashlib.sha256).digest())


def make_link_token(secret: bytes, question_id: str, *, expires_at: float) -> str:
    """A URL-safe token good for question ``question_id`` until ``expires_at`` (Unix time)."""
    if len(secret) < 16:
        raise ValueError("a link secret must be at least 16 bytes")
    body = _b64(json.dumps([question_id, int(expires_at)], separators=(",", ":")).encode())
    return f"{body}.{_sign(secret, body)}"


def verify_link_token(secret: bytes, token: str, *, now: float | None = None) -> str:
    """The question id ``token`` opens; raises `LinkError` when tampered with or expired."""
    body, _, signature = token.partition(".")
    if not body or not signature or not hmac.compare_digest(_sign(secret, body), signature):
        raise LinkError(
            "tampered", "this link is not valid: it was changed or is for another server"
        )
    try:
        question_id, expires_at = json.loads(_unb64(body))
    except ValueError:  # pragma: no cover - only a forged body that still matches its signature
        raise LinkError("tampered", "this link is not valid") from None
    if not isinstance(question_id, str) or not isinstance(expires_at, int):
        raise LinkError("tampered", "this link is not valid")  # pragma: no cover
    if (time.time() if now is None else now) >= expires_at:
        raise LinkError("expired", "this link has expired")
    return question_id
