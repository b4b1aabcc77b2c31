"""Checking an elicitation answer against its field's schema, with real validators.

`jsonschema` (Draft 2020-12) checks every keyword of the field: type, ``minimum`` and
``maximum``, ``minLength`` and ``maxLength``, ``enum``, ``minItems`` and ``maxItems``, and
``format`` through a format checker. For the four string formats MCP names, a value passes
only when it passes every validator a server is known to use, so both kinds of server accept
it: a TypeScript SDK server (ajv with ajv-formats) and a Python SDK server (pydantic):

- ``email``: jsonschema's check, ``email-validator`` (syntax only, no DNS; RFC 5321, so an
  ASCII address) and plain ASCII text;
- ``uri``: jsonschema's check (``rfc3986-validator``: an absolute URI), pydantic's ``AnyUrl``,
  and an address after the scheme (``urllib.parse``: ajv-formats refuses ``a:?q``);
- ``date``: jsonschema's check (a real calendar day, ``YYYY-MM-DD``) and pydantic's ``date``;
- ``date-time``: jsonschema's check (``rfc3339-validator``: with a time zone) and pydantic's
  ``datetime``.
"""

from __future__ import annotations

import datetime
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any, Final

import email_validator
import jsonschema
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import best_match
from pydantic import AnyUrl, TypeAdapter, ValidationError

__all__ = ["FORMAT_RULES", "MCP_FORMATS", "check_schema", "number_rule", "problem_with"]

MCP_FORMATS: Final = ("email", "uri", "date", "date-time")
"""The string formats the MCP specification names for elicitation fields."""

FORMAT_RULES: Final[dict[str, str]] = {
    "email": "an email address, like name@example.com",
    "uri": "a full address with its scheme, like https://example.com/page",
    "date": "a date as YYYY-MM-DD, like 2025-03-31",
    "date-time": (
        "a date and time with its time zone, as YYYY-MM-DDTHH:MM:SS and Z or an offset,"
        " like 2025-03-31T14:30:00Z or 2025-03-31T14:30:00+02:00"
    ),
}
"""What a value of each MCP format looks like, in words the human reads when one is refused."""


class _FormatRefused(ValueError):
    """A value the validators refuse for a format; the message, if any, says why in words."""


def _email(text: str) -> None:
    if not text.isascii():
        raise _FormatRefused("use plain ASCII letters (RFC 5321)")
    try:
        email_validator.validate_email(text, check_deliverability=False, allow_smtputf8=False)
    except email_validator.EmailNotValidError as err:
        raise _FormatRefused(str(err)) from None


def _pydantic(kind: Any) -> Callable[[str], None]:
    adapter: TypeAdapter[Any] = TypeAdapter(kind)

    def check(text: str) -> None:
        try:
            adapter.validate_python(text)
        except ValidationError:
            raise _FormatRefused() from None

    return check


_any_url = _pydantic(AnyUrl)


def _uri(text: str) -> None:
    _any_url(text)
    parts = urllib.parse.urlsplit(text)
    if not parts.netloc and not parts.path:  # "a:?q" is RFC 3986, yet ajv-formats refuses it
        raise _FormatRefused("there must be an address after the scheme")


_EXTRA: Final[dict[str, Callable[[str], None]]] = {
    "email": _email,
    "uri": _uri,
    "date": _pydantic(datetime.date),
    "date-time": _pydantic(datetime.datetime),
}


def _format_checker() -> FormatChecker:
    base = Draft202012Validator.FORMAT_CHECKER
    missing = [name for name in MCP_FORMATS if name not in base.checkers]
    if missing:  # jsonschema leaves a format unchecked when its package is missing
        raise ImportError(
            "jsonschema cannot check the format(s) " + ", ".join(missing) + ": pip install"
            " 'dsh-user-questions[mcp]' (it brings jsonschema[format-nongpl])"
        )
    checker = FormatChecker(formats=())
    checker.checkers = dict(base.checkers)
    for name, extra in _EXTRA.items():
        first, raises = base.checkers[name]
        base_raises = raises if isinstance(raises, tuple) else (raises,)

        def both(
            value: object,
            first: Callable[[object], bool] = first,
            extra: Callable[[str], None] = extra,
        ) -> bool:
            if not first(value):
                return False
            if isinstance(value, str):
                extra(value)
            return True

        checker.checkers[name] = (both, (_FormatRefused, *base_raises))
    return checker


_CHECKER: Final = _format_checker()


def check_schema(schema: Mapping[str, Any]) -> str | None:
    """Why ``schema`` (one field's) is not a valid JSON Schema, or None when it is."""
    try:
        Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as err:
        return err.message
    return None


def problem_with(schema: Mapping[str, Any], value: object) -> str | None:
    """Why ``value`` does not fit the field ``schema``, in words for the human; None if it fits.

    ``schema`` passed `check_schema`. The words name the rule (``it must be a whole number from
    1 to 8``, ``it must be an email address, like name@example.com: <why>``); the validator's
    own message only for a rule that has no words here (a keyword MCP does not name).
    """
    validator = Draft202012Validator(schema, format_checker=_CHECKER)
    error: jsonschema.ValidationError | None = best_match(validator.iter_errors(value))
    if error is None:
        return None
    if error.validator == "format" and isinstance(error.validator_value, str):
        rule = FORMAT_RULES.get(
            error.validator_value, f"text in the format {error.validator_value}"
        )
        reason = str(error.cause) if error.cause is not None and str(error.cause) else None
        return f"it must be {rule}: {reason}" if reason else f"it must be {rule}"
    words = _RULES.get(str(error.validator))
    said = words(schema, value) if words is not None else None
    return said if said is not None else str(error.message)


def _count(low: object, high: object) -> str | None:
    if isinstance(low, int) and isinstance(high, int):
        return f"{low} to {high}"
    if isinstance(low, int):
        return f"at least {low}"
    return f"at most {high}" if isinstance(high, int) else None


def _length(schema: Mapping[str, Any], value: object) -> str | None:
    span = _count(schema.get("minLength"), schema.get("maxLength"))
    got = len(value) if isinstance(value, str) else 0
    return f"it must be {span} characters (you gave {got})" if span else None


def _items(schema: Mapping[str, Any], value: object) -> str | None:
    span = _count(schema.get("minItems"), schema.get("maxItems"))
    got = len(value) if isinstance(value, list) else 0
    return f"it must be {span} of the options (you chose {got})" if span else None


def number_rule(schema: Mapping[str, Any]) -> str:
    """``A whole number from 1 to 8``: a number field's kind and range, in words."""
    what = "A whole number" if schema.get("type") == "integer" else "A number"
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        return f"{what} from {low:g} to {high:g}"
    if low is not None:
        return f"{what}, at least {low:g}"
    return f"{what}, at most {high:g}" if high is not None else what


def _number(schema: Mapping[str, Any], _value: object) -> str | None:
    if schema.get("type") not in ("number", "integer"):
        return None
    rule = number_rule(schema)
    return f"it must be {rule[0].lower()}{rule[1:]}"


_RULES: Final[dict[str, Callable[[Mapping[str, Any], object], str | None]]] = {
    "minLength": _length,
    "maxLength": _length,
    "minItems": _items,
    "maxItems": _items,
    "minimum": _number,
    "maximum": _number,
    "type": _number,
    "enum": lambda _s, _v: "it must be one of the options",
}
