"""One-question answer links: a capability for one question, signed by a server's secret.

A notification carries a link that opens one question and nothing else (no list, no other
question, no stream of others), so it may be pasted into a chat without handing over a page
server's global token. The token in the link names the question and when it expires, and is
signed with HMAC-SHA256 under the server's secret; `verify_link_token` refuses a tampered,
foreign or expired token with a `LinkError` that says which.

The page servers that serve links (the web provider, ``dsh-inbox serve``) decide here which
``Host`` and ``Origin`` headers reach them (`host_allowed`, `origin_allowed`, and
`cross_origin_refusal` for a request as a whole): one rule for the page, its posts and the
links, behind a reverse proxy or not.
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
    "cross_origin_refusal",
    "host_allowed",
    "link_recipient",
    "make_link_token",
    "origin_allowed",
    "public_host",
    "public_origin",
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


def make_link_token(
    secret: bytes, question_id: str, *, expires_at: float, recipient: str | None = None
) -> str:
    """A URL-safe token good for question ``question_id`` until ``expires_at`` (Unix time).

    ``recipient`` (a person id) names whom the link was sent to, signed with the rest: the
    link page records it as who answered, unless a logging-in proxy names the person.
    """
    if len(secret) < 16:
        raise ValueError("a link secret must be at least 16 bytes")
    fields: list[object] = [question_id, int(expires_at)]
    if recipient is not None:
        fields.append(recipient)
    body = _b64(json.dumps(fields, separators=(",", ":")).encode())
    return f"{body}.{_sign(secret, body)}"


def link_recipient(token: str) -> str | None:
    """The recipient a link token names, or ``None``; read it only from a token that
    `verify_link_token` accepted (this does not check the signature)."""
    try:
        fields = json.loads(_unb64(token.partition(".")[0]))
    except ValueError:
        return None
    recipient = fields[2] if isinstance(fields, list) and len(fields) > 2 else None
    return recipient if isinstance(recipient, str) else None


def verify_link_token(secret: bytes, token: str, *, now: float | None = None) -> str:
    """The question id ``token`` opens; raises `LinkError` when tampered with or expired."""
    body, _, signature = token.partition(".")
    if not body or not signature or not hmac.compare_digest(_sign(secret, body), signature):
        raise LinkError(
            "tampered", "this link is not valid: it was changed or is for another server"
        )
    try:
        question_id, expires_at, *_recipient = json.loads(_unb64(body))
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


_DEFAULT_PORTS = {"http": "80", "https": "443"}


def _origin(scheme: str, name: str, port: str | None) -> str:
    """An origin as browsers write it: lower case, without its scheme's default port."""
    shown = "" if port is None or port == _DEFAULT_PORTS.get(scheme) else f":{port}"
    return f"{scheme}://{name}{shown}"


def origin_allowed(origin: str, allowed: Collection[str]) -> bool:
    """Whether an ``Origin`` header is this server's own page.

    ``allowed`` is `host_allowed`'s set, where an origin entry (`public_origin`'s
    ``https://name``) pins its name: that name is then this server's only over that origin
    (an ``http://`` origin of it, or another port of it, is not). Another name is ``http`` or
    ``https`` (a TLS proxy in front) on a host `host_allowed` accepts; a ``name:port`` entry
    (the address the server is bound to, loopback) admits both schemes on that port. ``null``
    and other schemes are not.
    """
    scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or scheme not in ("http", "https") or not rest or "/" in rest:
        return False
    if not host_allowed(rest, allowed):
        return False
    name, port = _split_host(rest)
    if port is not None and f"{name}:{port}" in allowed:
        return True
    pins = {
        entry
        for entry in allowed
        if "://" in entry and _split_host(entry.partition("://")[2])[0] == name
    }
    return not pins or _origin(scheme, name, port) in pins


def cross_origin_refusal(
    method: str, origin: str | None, fetch_site: str, allowed: Collection[str]
) -> str | None:
    """Why a request from a browser must be refused (403), or ``None``: the one check of both
    page servers (the page's guard and the one-question link page).

    ``origin`` is the ``Origin`` header (``None`` when absent: not a browser's cross-origin
    request), checked by `origin_allowed`; ``fetch_site`` the ``Sec-Fetch-Site`` header
    (``""`` when absent), which must say the request is the page's own unless it is a ``GET``.
    """
    if origin is not None and not origin_allowed(origin, allowed):
        return "forbidden: cross-origin request"
    if method != "GET" and fetch_site not in ("", "same-origin", "none"):
        return "forbidden: cross-site request"
    return None


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


def public_origin(public_url: str) -> str:
    """The origin of ``public_url`` (``https://name`` or ``https://name:8443``), as an entry of
    `host_allowed`'s set: its name then answers a browser only over that origin (see
    `origin_allowed`). Raises `ValueError` like `public_host`."""
    name = public_host(public_url)
    parts = urllib.parse.urlsplit(public_url.strip())
    port = None if parts.port is None else str(parts.port)
    return _origin(parts.scheme.lower(), name, port)


def public_prefix(public_url: str) -> str:
    """The path ``public_url`` puts before every route (``""``, or ``/prefix`` without a
    trailing slash)."""
    return urllib.parse.urlsplit(public_url.strip()).path.rstrip("/")
