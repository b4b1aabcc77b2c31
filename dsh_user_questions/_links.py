"""One-question answer links: a capability for one question, signed by a server's secret.

A notification carries a link that opens one question and nothing else (no list, no other
question, no stream of others), so it may be pasted into a chat without handing over a page
server's global token. The token in the link names the question and when it expires, and is
signed with HMAC-SHA256 under the server's secret; `verify_link_token` refuses a tampered,
foreign or expired token with a `LinkError` that says which.

The page servers that serve links (the web provider, ``dsh-inbox serve``) decide here which
``Host`` and ``Origin`` headers reach them (`host_allowed`, `origin_allowed`): one rule for the
page, its posts and the links, behind a reverse proxy or not.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import urllib.parse
from collections.abc import Collection

__all__ = [
    "LinkError",
    "host_allowed",
    "make_link_token",
    "origin_allowed",
    "public_host",
    "public_prefix",
    "verify_link_token",
]


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


def _split_host(host: str) -> tuple[str, str | None]:
    """``name`` and ``port`` of a ``Host`` value (``[::1]:80``, ``box:80``, ``box``), lowered."""
    host = host.strip().lower()
    if host.startswith("["):
        name, _, rest = host.partition("]")
        port = rest[1:] if rest.startswith(":") else None
        return f"{name}]", port or None
    name, colon, port = host.rpartition(":")
    if colon and port.isdigit() and ":" not in name:
        return name, port
    return host, None


def host_allowed(host: str, allowed: Collection[str]) -> bool:
    """Whether a ``Host`` header value names this server.

    ``allowed`` holds ``name:port`` entries (that port only) and bare ``name`` entries (that
    name with any port or none: a reverse proxy may send ``Host: name`` or ``name:443``). The
    port is no protection against DNS rebinding; the name is.
    """
    name, port = _split_host(host)
    if not name:
        return False
    return name in allowed or (port is not None and f"{name}:{port}" in allowed)


def origin_allowed(origin: str, allowed: Collection[str]) -> bool:
    """Whether an ``Origin`` header is this server's own page: ``http`` or ``https`` (a TLS
    proxy in front), on a host `host_allowed` accepts. ``null`` and other schemes are not."""
    scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or scheme not in ("http", "https") or not rest or "/" in rest:
        return False
    return host_allowed(rest, allowed)


def public_host(public_url: str) -> str:
    """The host name of ``public_url`` (no port), as an entry of `host_allowed`'s set.

    The address people reach a server by (a reverse proxy, a tunnel) is allowed by name: the
    proxy may pass ``Host`` with or without a port. Raises `ValueError` for a URL that is not
    ``http(s)://host[:port][/prefix]``.
    """
    parts = urllib.parse.urlsplit(public_url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
        raise ValueError(
            f"a public URL must be http(s)://host[:port][/prefix] without a query,"
            f" got {public_url!r}"
        )
    name = parts.hostname.lower()
    return f"[{name}]" if ":" in name else name


def public_prefix(public_url: str) -> str:
    """The path ``public_url`` puts before every route (``""``, or ``/prefix`` without a
    trailing slash)."""
    return urllib.parse.urlsplit(public_url.strip()).path.rstrip("/")
