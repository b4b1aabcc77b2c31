"""The terminal's words in the person's language (the core's `_i18n` picks it from the locale)."""

from __future__ import annotations

from dsh_user_questions._i18n import locale_dir, translator

__all__ = ["N_", "_"]

_for_language = translator("dsh_user_questions_terminal", locale_dir(__file__))


def _(message: str) -> str:
    """``message`` in the language of the environment (`DSH_USER_QUESTIONS_LANG`, the locale)."""
    return _for_language(None)(message)


def N_(message: str) -> str:
    """``message`` unchanged, marked for extraction: translated where it is shown."""
    return message
