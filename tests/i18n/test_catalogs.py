"""The catalogs are complete and fresh: extraction matches the committed .pot, every message of
every .po is translated, each .mo (and the page's .json) is compiled from its .po."""

from __future__ import annotations

import gettext
from pathlib import Path

import pytest
from catalogs import ROOT, tool

pytest.importorskip("babel")


def test_every_catalog_is_fresh_and_complete() -> None:
    """scripts/i18n.py --check finds nothing: run `python scripts/i18n.py` after a change."""
    assert tool().problems() == []


def test_a_new_message_makes_the_catalogs_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    """A string wrapped in the code but not yet extracted is reported (the check can fail)."""
    i18n = tool()
    extract = i18n.extract

    def with_one_more(package: Path, domain: str):  # type: ignore[no-untyped-def]
        catalog = extract(package, domain)
        catalog.add("A message nobody translated yet")
        return catalog

    monkeypatch.setattr(i18n, "extract", with_one_more)
    assert any("is stale" in problem for problem in i18n.problems())


def test_an_untranslated_message_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A .po with an empty translation fails the check, naming the message."""
    i18n = tool()
    package, domain = next(iter(i18n.present()))
    po, _mo = i18n.paths(package, domain, "zh_CN")
    catalog = i18n.read(po, "zh_CN")
    catalog["Skip"].string = ""
    broken = tmp_path / po.name
    broken.write_bytes(i18n.po_bytes(catalog))
    real_paths = i18n.paths
    monkeypatch.setattr(
        i18n,
        "paths",
        lambda p, d, lang: (
            (broken, real_paths(p, d, lang)[1]) if d == domain else real_paths(p, d, lang)
        ),
    )
    assert any("'Skip' is untranslated" in problem for problem in i18n.problems())


def test_the_shipped_mo_files_translate_what_the_po_files_say() -> None:
    """Read by the stdlib as the installed package reads it, each .mo gives each .po's text."""
    i18n = tool()
    checked = 0
    for package, domain in i18n.present():
        po, mo = i18n.paths(package, domain, "zh_CN")
        with mo.open("rb") as stream:
            shipped = gettext.GNUTranslations(stream)
        for message in i18n.read(po, "zh_CN"):
            if message.id:
                assert shipped.gettext(message.id) == message.string
                checked += 1
    assert checked > 100


def test_catalog_sizes() -> None:
    """Every distribution of this tree has a catalog with messages (the counts are reported)."""
    i18n = tool()
    sizes = {
        domain: len(i18n.read(package / "locale" / f"{domain}.pot"))
        for package, domain in i18n.present()
    }
    assert sizes["dsh_user_questions"] >= 40
    assert (ROOT / "dsh_user_questions" / "locale").is_dir()
