"""The language a person reads: one place picks it, gettext catalogs translate the frame.

Only the words around the model's text are translated, and only where a person reads them (the
terminal form, the pages, notifications, `dsh-ask`'s and `dsh-inbox`'s messages at the shell).
What the model reads (the tool's schema and description, the answer JSON, ``Error: ...`` texts),
error codes, event names and log records stay English whatever the language.

The language: `LANG_ENV` when set, else the locale variables (``LC_ALL``, ``LC_MESSAGES``,
``LANG``, read as POSIX does, first non-empty wins, without ``setlocale``) for the terminal and
the command lines, or the ``Accept-Language`` header for a page; else English. A tag is matched
to a shipped catalog: ``zh``, ``zh-Hans``, ``zh-CN`` and ``zh_CN.UTF-8`` all read ``zh_CN``.

Each distribution of this repository has its own gettext domain (its package name) and ships
``<package>/locale/<language>/LC_MESSAGES/<package>.mo`` compiled from the ``.po`` beside it.
`CATALOG_DIR_ENV` names a directory of extra catalogs tried first, laid out the same way: a
translator tries a new language with it before it ships (docs/i18n.md).
"""

from __future__ import annotations

import contextlib
import functools
import gettext
import os
import re
import shutil
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

__all__ = [
    "ARGPARSE_DOMAIN",
    "CATALOG_DIR_ENV",
    "ENGLISH",
    "HELP_COLUMN",
    "LANG_ENV",
    "N_",
    "OTHER",
    "SKIP",
    "TALK_INSTEAD",
    "Translate",
    "available_languages",
    "help_width",
    "html_lang",
    "language_from_accept",
    "language_from_env",
    "load",
    "locale_dir",
    "match_language",
    "review_text",
    "review_texts",
    "shipped_translations",
    "speaking_argparse",
    "translator",
    "wrap_cells",
]

LANG_ENV = "DSH_USER_QUESTIONS_LANG"
"""The language of every human-facing word (``zh_CN``, ``en``), over the locale and the browser."""

CATALOG_DIR_ENV = "DSH_USER_QUESTIONS_LOCALEDIR"
"""A directory of extra catalogs (``<language>/LC_MESSAGES/<domain>.mo``), tried first."""

ENGLISH = "en"
"""The source language: the message ids are the English text, so English needs no catalog."""

# Tags a browser or a shell may send for a shipped catalog.
_ALIASES = {"zh": "zh_CN", "zh_hans": "zh_CN", "zh_hans_cn": "zh_CN", "zh_cn": "zh_CN"}
_LOCALE_VARS = ("LC_ALL", "LC_MESSAGES", "LANG")


def N_(message: str) -> str:
    """``message`` unchanged, marked for extraction: it is translated where a person reads it."""
    return message


OTHER = N_("Other")
"""The choice every UI adds for the person's own text; shown translated, answered as ``custom``."""
SKIP = N_("Skip")
"""The choice every UI adds to leave a question unanswered; shown translated."""
TALK_INSTEAD = N_("Talk instead")
"""A review card's choice to cancel the question and discuss it; shown translated."""

Translate = Callable[[str], str]
"""A gettext function: the English message in, the chosen language's text out."""


def locale_dir(package_file: str) -> Path:
    """The ``locale`` directory beside a package's ``__init__.py`` (pass ``__file__``)."""
    return Path(package_file).resolve().parent / "locale"


_CORE_LOCALE = locale_dir(__file__)


def _catalog_dirs() -> list[Path]:
    extra = os.environ.get(CATALOG_DIR_ENV, "").strip()
    return [Path(extra)] if extra else []


def available_languages() -> tuple[str, ...]:
    """English and every language with a core catalog, shipped or in `CATALOG_DIR_ENV`."""
    found = {ENGLISH}
    for root in [*_catalog_dirs(), _CORE_LOCALE]:
        if root.is_dir():
            found.update(p.parent.parent.name for p in root.glob("*/LC_MESSAGES/*.mo"))
    return tuple(sorted(found))


def match_language(tag: str) -> str | None:
    """The available language a locale name or language tag reads, or ``None`` for none.

    ``zh-Hans``, ``zh-CN``, ``zh_CN.UTF-8`` and ``zh`` read ``zh_CN``; ``en-GB`` and ``C`` read
    English; a language without a catalog (``fr``) reads ``None``.
    """
    tag = tag.strip().split(".")[0].split("@")[0].replace("-", "_")
    if not tag:
        return None
    if tag in ("C", "POSIX"):
        return ENGLISH
    known = {language.lower(): language for language in available_languages()}
    lowered = tag.lower()
    candidates = [lowered, _ALIASES.get(lowered, "").lower()]
    base = lowered.split("_")[0]
    if base != "zh":  # Chinese only by script or region: zh-TW, zh-Hant are not zh_CN
        candidates += [base, _ALIASES.get(base, "").lower()]
    for candidate in candidates:
        if candidate and candidate in known:
            return known[candidate]
    return None


def language_from_env(environ: Mapping[str, str] | None = None) -> str:
    """The language for the terminal and the command lines: `LANG_ENV`, else the locale."""
    env = os.environ if environ is None else environ
    chosen = env.get(LANG_ENV, "").strip()
    if chosen:
        return match_language(chosen) or ENGLISH
    for name in _LOCALE_VARS:
        value = env.get(name, "").strip()
        if value:  # POSIX: the first one set decides, even when it names no catalog
            return match_language(value) or ENGLISH
    return ENGLISH


_ACCEPT_ITEM = re.compile(
    r"^\s*([A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*|\*)\s*(?:;\s*q\s*=\s*([0-9.]+))?"
)


def language_from_accept(header: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The language for a page: `LANG_ENV`, else the best ``Accept-Language`` match."""
    env = os.environ if environ is None else environ
    chosen = env.get(LANG_ENV, "").strip()
    if chosen:
        return match_language(chosen) or ENGLISH
    ranked: list[tuple[float, int, str]] = []
    for position, item in enumerate((header or "")[:1000].split(",")):
        found = _ACCEPT_ITEM.match(item)
        if not found or found.group(1) == "*":
            continue
        try:
            weight = float(found.group(2)) if found.group(2) else 1.0
        except ValueError:
            continue
        if weight > 0:
            ranked.append((-weight, position, found.group(1)))
    for _weight, _position, tag in sorted(ranked):
        language = match_language(tag)
        if language is not None:
            return language
    return ENGLISH


def html_lang(language: str) -> str:
    """The BCP 47 tag for a page's ``<html lang>``: ``zh_CN`` is ``zh-CN``."""
    return language.replace("_", "-")


@functools.lru_cache(maxsize=64)
def _load(domain: str, root: str, language: str, extra: str) -> gettext.NullTranslations:
    if language == ENGLISH:
        return gettext.NullTranslations()
    for directory in ([extra] if extra else []) + [root]:
        found = gettext.find(domain, directory, [language])
        if found:
            with open(found, "rb") as stream:
                return gettext.GNUTranslations(stream)
    return gettext.NullTranslations()


def load(domain: str, directory: Path, language: str) -> gettext.NullTranslations:
    """The catalog of ``domain`` in ``language`` (untranslated messages read as English)."""
    return _load(domain, str(directory), language, os.environ.get(CATALOG_DIR_ENV, "").strip())


def translator(domain: str, directory: Path) -> Callable[[str | None], Translate]:
    """A distribution's ``for_language(language)``: its gettext for one language.

    ``None`` picks the language from the environment (`language_from_env`) at each call, so a
    process that changes its locale variables (a test) reads the new one.
    """

    def for_language(language: str | None = None) -> Translate:
        return load(domain, directory, language or language_from_env()).gettext

    return for_language


for_language = translator("dsh_user_questions", _CORE_LOCALE)


def _(message: str) -> str:
    """The core's gettext in the environment's language (the extraction keyword)."""
    return for_language(None)(message)


def shipped_translations(message: str, domain: str = "dsh_user_questions") -> frozenset[str]:
    """``message`` and every translation of it in ``domain``'s shipped catalogs.

    `rules.check_request` refuses a model's label equal to any of these for Other and Skip, so
    the model's errors never depend on the human's language.
    """
    found = {message}
    for path in _CORE_LOCALE.glob(f"*/LC_MESSAGES/{domain}.mo"):
        with open(path, "rb") as stream:
            found.add(gettext.GNUTranslations(stream).gettext(message))
    return frozenset(found)


@functools.lru_cache(maxsize=1)
def review_texts() -> frozenset[str]:
    """The review cards' own words, in English: what `review_text` translates."""
    return _review_texts()


@functools.lru_cache(maxsize=1)
def _review_texts() -> frozenset[str]:
    # The review cards' own words (written by the core, never by the model).
    from . import diff_review, plan_review

    return frozenset(
        value
        for module in (plan_review, diff_review)
        for name, value in vars(module).items()
        if name.lstrip("_") in _REVIEW_NAMES
    )


_REVIEW_NAMES = frozenset(
    (
        "APPROVE",
        "KEEP_PLANNING",
        "APPLY",
        "DONT_APPLY",
        "HEADER",
        "QUESTION",
        "APPROVE_DESCRIPTION",
        "KEEP_PLANNING_DESCRIPTION",
        "APPLY_DESCRIPTION",
        "DONT_APPLY_DESCRIPTION",
    )
)


def review_text(kind: str, text: str, language: str | None = None) -> str:
    """A review card's own header, question, label or description in ``language`` (display only).

    ``kind`` is the view's kind: a plain question (``"question"``) is the model's text and is
    returned as it is; so is any text a review card did not get from the core. The answer keeps
    the English label.
    """
    if kind == "question" or text not in _review_texts():
        return text
    return for_language(language)(text)


ARGPARSE_DOMAIN = "argparse"
"""The gettext domain of the standard library's argparse words (``usage:``, ``options``, its
errors), shipped beside the core's catalog: argparse reads them through the global gettext
functions, from the current text domain."""


@contextlib.contextmanager
def speaking_argparse(language: str | None = None) -> Iterator[None]:
    """While inside, argparse's own words (usage, section titles, its errors) in ``language``.

    ``None`` picks the language as the command lines do (`language_from_env`). argparse calls
    the module-level ``gettext.gettext``, which reads the current text domain in the languages
    of ``LANGUAGE`` and the locale variables: inside, the domain is `ARGPARSE_DOMAIN` bound to
    the catalog directory that has it (`CATALOG_DIR_ENV` first) and ``LANGUAGE`` names the
    chosen language; both are put back on the way out (``--help`` and a usage error leave by
    ``SystemExit``). Build the parser inside too: its ``options`` title is translated then.
    """
    chosen = language or language_from_env()
    directory = _CORE_LOCALE
    for extra in _catalog_dirs():
        if gettext.find(ARGPARSE_DOMAIN, str(extra), [chosen]):
            directory = extra
    previous_domain = gettext.textdomain()
    previous_directory = gettext.bindtextdomain(ARGPARSE_DOMAIN)
    previous_language = os.environ.get("LANGUAGE")
    gettext.bindtextdomain(ARGPARSE_DOMAIN, str(directory))
    gettext.textdomain(ARGPARSE_DOMAIN)
    os.environ["LANGUAGE"] = chosen
    try:
        yield
    finally:
        if previous_language is None:
            os.environ.pop("LANGUAGE", None)
        else:
            os.environ["LANGUAGE"] = previous_language
        gettext.textdomain(previous_domain)
        gettext.bindtextdomain(ARGPARSE_DOMAIN, previous_directory)


HELP_COLUMN = 24
"""Where argparse starts an option's help text at most (its ``max_help_position``)."""


def help_width(indent: int = 0) -> int:
    """The cells a command line's help text may fill after ``indent``: the terminal's width
    less 2, as argparse measures it (``COLUMNS`` first), never under 20."""
    return max(20, shutil.get_terminal_size().columns - 2 - indent)


def wrap_cells(text: str, width: int) -> str:
    """``text`` wrapped to ``width`` terminal cells, a Chinese character taking two.

    Lines break at spaces and between any two wide characters (as Chinese text breaks), never
    inside an English word; a line already broken in ``text`` stays broken. For help text given
    to argparse's ``RawTextHelpFormatter``, whose own wrapping counts characters, not cells.
    """
    return "\n".join(_wrap_line(line, width) for line in text.split("\n"))


def _wrap_line(text: str, width: int) -> str:
    lines: list[str] = []
    line = ""
    for piece in _breakable(text):
        if line.strip() and _cells(line + piece.rstrip()) > width:
            lines.append(line.rstrip())
            line = piece.lstrip()
        else:
            line += piece
    lines.append(line.rstrip())
    return "\n".join(lines)


def _breakable(text: str) -> list[str]:
    # Words with their leading spaces, and each wide character on its own; a closing mark (a
    # full-width comma, a full stop) stays with what it closes, an opening one with what it
    # opens, so neither ends up alone at a line's start or end.
    pieces: list[str] = []
    for word in re.findall(r" *[^ ]+| +", text):
        run = ""
        for char in word:
            if char in _CLOSING and (run or pieces):
                if run:
                    pieces.append(run + char)
                    run = ""
                else:
                    pieces[-1] += char
                continue
            wide = _cells(char) == 2
            if (wide or char in _OPENING) and run.strip() and run[-1] not in _OPENING:
                pieces.append(run)
                run = ""
            run += char
            if wide and char not in _OPENING:
                pieces.append(run)
                run = ""
        if run:
            pieces.append(run)
    return pieces


_OPENING = frozenset("\uff08\u300c\u300e\u300a")
_CLOSING = frozenset("\uff0c\u3002\u3001\uff1b\uff1a\uff01\uff1f\uff09\u300d\u300f\u300b")


def _cells(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)
