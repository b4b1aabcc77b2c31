"""`Limits`: how much of the harness's process a page server may take, whoever connects.

Light on purpose (no server import), so a provider can be configured without loading uvicorn.
"""

from __future__ import annotations

from typing import Any

import attrs

__all__ = ["Limits"]


def _positive(_instance: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if not value > 0:
        raise ValueError(f"{attribute.name} must be positive, got {value!r}")


@attrs.frozen(kw_only=True)
class Limits:
    """Bounds of the page server; the defaults suit one person with a few tabs open.

    - ``max_connections``: open connections at once. A new connection beyond it closes the
      oldest one that has no request in progress (an idle or half-sent one), so connections
      that never send a whole request cannot lock out the page; only when every connection is
      busy is the new one refused.
    - ``max_streams``: event streams at once (further ones get ``503``; the page retries).
    - ``header_timeout``: seconds a connection may take to send a whole request head, counted
      from when it opened or finished its last response (then it is closed).
    - ``body_timeout``: seconds to send a post's body (then ``408``).
    - ``write_timeout``: seconds one event may wait to be written to a page; a page that reads
      no further is dropped and gets a fresh snapshot when it reconnects.
    - ``stream_buffer_bytes``: events waiting for one page; beyond it the page is dropped
      (and re-snapshots when it reconnects).
    - ``max_body_bytes``: the largest post (``413``).
    - ``ping_seconds``: seconds between the ``ping`` events that let a page see the server is
      alive.
    """

    max_connections: int = attrs.field(default=64, validator=_positive)
    max_streams: int = attrs.field(default=16, validator=_positive)
    header_timeout: float = attrs.field(default=10.0, validator=_positive)
    body_timeout: float = attrs.field(default=10.0, validator=_positive)
    write_timeout: float = attrs.field(default=10.0, validator=_positive)
    stream_buffer_bytes: int = attrs.field(default=1024 * 1024, validator=_positive)
    max_body_bytes: int = attrs.field(default=256 * 1024, validator=_positive)
    ping_seconds: float = attrs.field(default=15.0, validator=_positive)

    def __attrs_post_init__(self) -> None:
        if self.max_streams >= self.max_connections:
            raise ValueError(
                f"max_streams ({self.max_streams}) must be below max_connections"
                f" ({self.max_connections}), so posts always find a connection"
            )
        if self.max_body_bytes < 1024:
            raise ValueError(f"max_body_bytes must be at least 1024, got {self.max_body_bytes}")
