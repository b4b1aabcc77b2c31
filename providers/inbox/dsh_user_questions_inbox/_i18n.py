"""The inbox's words at the shell in the person's language (the core picks it from the locale)."""

from __future__ import annotations

from dsh_user_questions._i18n import locale_dir, translator

__all__ = ["_"]

_for_language = translator("dsh_user_questions_inbox", locale_dir(__file__))


def _(message: str) -> str:
    """``message`` in the language of the environment (`DSH_USER_QUESTIONS_LANG`, the locale)."""
    return _for_language(None)(message)
