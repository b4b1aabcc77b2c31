"""How long final records are kept: ``DSH_USER_QUESTIONS_INBOX_RETENTION``."""

from __future__ import annotations

import os
import re

__all__ = ["DEFAULT_RETENTION", "ENV_RETENTION", "parse_duration", "retention_seconds"]

ENV_RETENTION = "DSH_USER_QUESTIONS_INBOX_RETENTION"
DEFAULT_RETENTION = 30 * 86_400.0  # a month of history, then final records go
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86_400}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd]?)")


def parse_duration(text: str, *, where: str) -> float | None:
    """Seconds from ``90``, ``90s``, ``15m``, ``12h`` or ``30d``; ``None`` for ``never``."""
    value = text.strip().lower()
    if value in ("never", "off", "forever"):
        return None
    match = _DURATION.fullmatch(value)
    if match is None:
        raise ValueError(
            f"{where}: {text!r} is not a duration; write e.g. 3600, 90m, 12h, 30d, or never"
        )
    return float(match.group(1)) * _UNITS[match.group(2)]


def retention_seconds() -> float | None:
    """The retention from the environment (default 30 days); ``None`` keeps records forever."""
    text = os.environ.get(ENV_RETENTION, "").strip()
    if not text:
        return DEFAULT_RETENTION
    return parse_duration(text, where=ENV_RETENTION)
