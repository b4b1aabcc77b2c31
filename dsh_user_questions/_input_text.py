"""A typed input in words, and typed words as a value: what the plain-text surfaces share.

The terminal, ``dsh-inbox show/answer``, the link page and notifications say what a question
with ``input`` asks for in the same words (`describe_input`: "a number between 1 and 10",
"pick files") and read what a person types into a value the same way (`value_from_text`); the
value is then judged by the core's rules (`dsh_user_questions.rules.check_answer`), never
here.
"""

from __future__ import annotations

import re
from typing import Any

from ._i18n import for_language

__all__ = ["describe_input", "size_text", "value_from_text"]


def size_text(count: int, language: str | None = None) -> str:
    """``count`` bytes for people: ``512 bytes``, ``1.5 KB``, ``20 MB`` (``bytes`` in
    ``language``; default: the environment's)."""
    _ = for_language(language)
    if count < 1024:
        return _("{count} bytes").format(count=count)
    value = float(count)
    for unit in ("KB", "MB", "GB", "TB"):
        value /= 1024
        if value < 1024 or unit == "TB":
            shown = f"{value:.1f}".rstrip("0").rstrip(".") if value < 10 else f"{value:.0f}"
            return f"{shown} {unit}"
    return f"{count} bytes"  # pragma: no cover


def _number(value: Any) -> str:
    return format(value, "g") if isinstance(value, float) else str(value)


def describe_input(field: Any, language: str | None = None) -> str:
    """What ``field`` (a `QuestionView.input`) asks for, in a few plain words, in ``language``
    (default: `DSH_USER_QUESTIONS_LANG`, else the locale). A person reads these words; the
    model never does."""
    _ = for_language(language)
    kind = getattr(field, "type", None)
    if kind == "number":
        low, high = getattr(field, "min", None), getattr(field, "max", None)
        if low is not None and high is not None:
            text = _("a number between {low} and {high}").format(
                low=_number(low), high=_number(high)
            )
        elif low is not None:
            text = _("a number of at least {low}").format(low=_number(low))
        elif high is not None:
            text = _("a number of at most {high}").format(high=_number(high))
        else:
            text = _("a number")
        step = getattr(field, "step", None)
        if step is not None:
            text = _("{number} in steps of {step}").format(number=text, step=_number(step))
        unit = getattr(field, "unit", None)
        return f"{text} ({unit})" if unit else text
    if kind == "date":
        return _("a date (YYYY-MM-DD)")
    if kind == "time":
        return _("a time of day (HH:MM)")
    if kind == "datetime":
        return _("a date and time with its UTC offset (YYYY-MM-DDTHH:MM+HH:MM)")
    count = getattr(field, "max_count", None)
    details = []
    if count is not None and count != 1:
        details.append(_("up to {count}").format(count=count))
    if kind == "files":
        text = _("pick a file") if count == 1 else _("pick files")
        pattern = getattr(field, "pattern", None)
        if pattern:
            details.append(_("matching {pattern}").format(pattern=pattern))
        return f"{text} ({', '.join(details)})" if details else text
    if kind == "upload":
        text = _("upload a file") if count == 1 else _("upload files")
        limit = getattr(field, "max_bytes", None)
        if limit is not None:
            details.append(_("each at most {size}").format(size=size_text(limit, language)))
        accept = getattr(field, "accept", None)
        if accept:
            details.append(_("of type {types}").format(types=", ".join(accept)))
        return f"{text} ({', '.join(details)})" if details else text
    return _("an answer of a kind this surface does not know ({kind})").format(kind=kind)


_SEPARATORS = re.compile(r"[\n,]+")


def value_from_text(field: Any, text: str) -> Any:
    """The value a person typed for ``field``: a JSON number for ``number`` (an integer when
    written as one; the text itself when it is no number, for the rules to refuse), the
    trimmed text for ``date``/``time``/``datetime``, a list of paths (one a line or comma
    separated) for ``files``. ``upload`` takes files, not text: `ValueError`."""
    kind = getattr(field, "type", None)
    words = text.strip()
    if kind == "number":
        try:
            return int(words)
        except ValueError:
            pass
        try:
            return float(words)
        except ValueError:
            return words
    if kind == "files":
        return [part.strip() for part in _SEPARATORS.split(words) if part.strip()]
    if kind == "upload":
        raise ValueError("an upload question takes files (attach them), not text")
    return words
