"""The message catalogs of every distribution: extract, update the translations, compile.

    python scripts/i18n.py            # extract .pot, update each .po, compile each .mo
    python scripts/i18n.py --check    # exit 1 when a catalog is stale or incomplete

Each distribution has one gettext domain (its package name) and its catalogs in
``<package>/locale/``: ``<package>.pot`` (the extracted English messages), and per language
``<language>/LC_MESSAGES/<package>.po`` (the translator's source) and ``.mo`` (compiled, shipped
in the wheel). Python is read for ``_()`` and ``N_()``; the web page's app.js for ``t()``.
Needs Babel (a development dependency: the installed package reads .mo with stdlib gettext).
tests/i18n/test_catalogs.py runs the same checks.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir, extract_from_file
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]

# (package directory relative to the repository, the domain).
DOMAINS = (
    ("dsh_user_questions", "dsh_user_questions"),
    ("providers/terminal/dsh_user_questions_terminal", "dsh_user_questions_terminal"),
    ("providers/web/dsh_user_questions_web", "dsh_user_questions_web"),
    ("providers/inbox/dsh_user_questions_inbox", "dsh_user_questions_inbox"),
)
LANGUAGES = ("zh_CN",)
# Catalogs of messages another package marks, kept by hand here: the standard library's
# argparse words (usage, options, its errors; read from the current text domain while our
# command lines parse, `dsh_user_questions._i18n.speaking_argparse`). Each .po holds every
# supported Python's messages (3.10 to 3.13); the check asks that the running Python's are all
# translated, so a tox run on each version checks that version's.
FOREIGN = (("dsh_user_questions", "argparse"),)
# Domains whose messages a page's script reads as JSON (beside the .mo).
JSON_DOMAINS = ("dsh_user_questions_web",)

_METHODS = [("**/locale/**", "ignore"), ("**.py", "python"), ("**.js", "javascript")]
_KEYWORDS = {"_": None, "N_": None, "tr": None, "t": None}
# A fixed date: the template changes only when a message does.
_DATE = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def present() -> Iterator[tuple[Path, str]]:
    """Each distribution's package directory found in this tree (an sdist holds only its own)."""
    for relative, domain in DOMAINS:
        package = ROOT / relative
        if package.is_dir():
            yield package, domain


def _wanted(path: str) -> bool:
    # The package's own folders (the web page's _static too), not caches or tests.
    name = os.path.basename(path)
    return not name.startswith(".") and name not in ("__pycache__", "tests", "locale")


def extract(package: Path, domain: str) -> Catalog:
    """The messages of ``package`` as the template, sorted, without source locations."""
    catalog = Catalog(project=domain, domain=domain, creation_date=_DATE, revision_date=_DATE)
    catalog.fuzzy = False
    for filename, lineno, message, comments, context in extract_from_dir(
        package,
        _METHODS,
        keywords=_KEYWORDS,
        comment_tags=("Translators:",),
        directory_filter=_wanted,
    ):
        catalog.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    return catalog


def po_bytes(catalog: Catalog) -> bytes:
    out = io.BytesIO()
    write_po(out, catalog, width=100, no_location=True, sort_output=True, omit_header=False)
    return out.getvalue()


def mo_bytes(catalog: Catalog) -> bytes:
    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=False)
    return out.getvalue()


def json_bytes(catalog: Catalog) -> bytes:
    messages = {m.id: m.string for m in catalog if m.id and m.string and not m.fuzzy}
    return (json.dumps(messages, ensure_ascii=False, indent=0, sort_keys=True) + "\n").encode()


def paths(package: Path, domain: str, language: str) -> tuple[Path, Path]:
    folder = package / "locale" / language / "LC_MESSAGES"
    return folder / f"{domain}.po", folder / f"{domain}.mo"


def read(path: Path, language: str | None = None) -> Catalog:
    with path.open("rb") as stream:
        return read_po(stream, locale=language)


def _shown(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def problems() -> list[str]:
    """Every stale or incomplete catalog, in words; empty when all are fresh and complete."""
    found: list[str] = []
    for package, domain in present():
        template = package / "locale" / f"{domain}.pot"
        extracted = po_bytes(extract(package, domain))
        if not template.is_file() or template.read_bytes() != extracted:
            found.append(f"{_shown(template)} is stale: run python scripts/i18n.py")
            continue
        ids = {m.id for m in read(template) if m.id}
        for language in LANGUAGES:
            po, mo = paths(package, domain, language)
            if not po.is_file():
                found.append(f"{_shown(po)} is missing")
                continue
            catalog = read(po, language)
            have = {m.id for m in catalog if m.id}
            for missing in sorted(ids - have):
                found.append(f"{_shown(po)}: {missing!r} is not in the catalog")
            for extra in sorted(have - ids):
                found.append(f"{_shown(po)}: {extra!r} is no longer used")
            found += _translation_problems(po, mo, catalog)
            page = mo.with_suffix(".json")
            if domain in JSON_DOMAINS and (
                not page.is_file() or page.read_bytes() != json_bytes(catalog)
            ):
                found.append(f"{_shown(page)} is stale: run python scripts/i18n.py")
    return found + _foreign_problems()


def _translation_problems(po: Path, mo: Path, catalog: Catalog) -> list[str]:
    """A read catalog's untranslated or fuzzy messages, Babel's own findings, a stale ``.mo``."""
    found = [
        f"{_shown(po)}: {message.id!r} is untranslated"
        for message in catalog
        if message.id and (not message.string or message.fuzzy)
    ]
    found += [f"{_shown(po)}: {error[0].id!r}: {error[1]}" for error in catalog.check()]
    if not mo.is_file() or mo.read_bytes() != mo_bytes(catalog):
        found.append(f"{_shown(mo)} is stale: run python scripts/i18n.py")
    return found


def foreign_messages(domain: str) -> set[str | tuple[str, ...]]:
    """The messages the running Python's ``domain`` module (argparse) marks."""
    module = __import__(domain)
    return {
        message
        for _line, message, _comments, _context in extract_from_file("python", module.__file__)
    }


def _foreign_problems() -> list[str]:
    found: list[str] = []
    for relative, domain in FOREIGN:
        package = ROOT / relative
        if not package.is_dir():
            continue
        wanted = foreign_messages(domain)
        for language in LANGUAGES:
            po, mo = paths(package, domain, language)
            if not po.is_file():
                found.append(f"{_shown(po)} is missing")
                continue
            catalog = read(po, language)
            have = {m.id for m in catalog if m.id}
            for missing in sorted(wanted - have, key=str):
                found.append(f"{_shown(po)}: {missing!r} is not in the catalog")
            found += _translation_problems(po, mo, catalog)
    return found


def update() -> None:
    """Extract each template, merge it into each language's .po, compile each .mo."""
    for package, domain in present():
        template_catalog = extract(package, domain)
        template = package / "locale" / f"{domain}.pot"
        template.parent.mkdir(parents=True, exist_ok=True)
        template.write_bytes(po_bytes(template_catalog))
        for language in LANGUAGES:
            po, mo = paths(package, domain, language)
            po.parent.mkdir(parents=True, exist_ok=True)
            if po.is_file():
                catalog = read(po, language)
            else:
                catalog = Catalog(locale=language, domain=domain, project=domain)
            catalog.fuzzy = False
            catalog.creation_date = _DATE
            catalog.revision_date = _DATE
            catalog.update(template_catalog, no_fuzzy_matching=True)
            catalog.obsolete.clear()
            po.write_bytes(po_bytes(catalog))
            mo.write_bytes(mo_bytes(read(po, language)))
            if domain in JSON_DOMAINS:
                mo.with_suffix(".json").write_bytes(json_bytes(read(po, language)))
    for relative, domain in FOREIGN:  # kept by hand: only compiled
        for language in LANGUAGES:
            po, mo = paths(ROOT / relative, domain, language)
            if po.is_file():
                mo.write_bytes(mo_bytes(read(po, language)))


def main(argv: list[str]) -> int:
    if argv[1:] == ["--check"]:
        found = problems()
        print("\n".join(found) or "every catalog is fresh and complete")
        return 1 if found else 0
    update()
    for package, domain in present():
        for language in LANGUAGES:
            catalog = read(paths(package, domain, language)[0], language)
            done = sum(1 for m in catalog if m.id and m.string)
            print(f"{domain} {language}: {done}/{len(catalog)} translated")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
