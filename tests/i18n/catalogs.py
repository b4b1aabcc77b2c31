"""The repository's catalog tool (scripts/i18n.py), and a pseudo-locale made from its templates."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
PSEUDO = "qps"  # a language code no one speaks: every message wrapped and lengthened
OPEN, CLOSE = "\u27e6", "\u27e7"


def tool() -> ModuleType:
    """scripts/i18n.py, imported (it needs Babel, a test dependency)."""
    path = ROOT / "scripts" / "i18n.py"
    spec = importlib.util.spec_from_file_location("dsh_i18n_tool", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def pseudo(message: str) -> str:
    """``message`` wrapped in ⟦ ⟧ and a third longer; its {placeholders} kept as they are."""
    return f"{OPEN}{message}{'~' * (len(message) // 3 + 1)}{CLOSE}"


def write_pseudo_locale(directory: Path) -> None:
    """The pseudo-locale's .mo (and the page's .json) for every domain, under ``directory``."""
    from babel.messages.catalog import Catalog

    i18n = tool()
    for package, domain in i18n.present():
        catalog = i18n.extract(package, domain)
        catalog.locale = None
        for message in catalog:
            if message.id:
                message.string = pseudo(message.id)
        folder = directory / PSEUDO / "LC_MESSAGES"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{domain}.mo").write_bytes(i18n.mo_bytes(catalog))
        (folder / f"{domain}.json").write_bytes(i18n.json_bytes(catalog))
    for _relative, domain in i18n.FOREIGN:  # argparse's own words, as this Python marks them
        catalog = Catalog(domain=domain)
        for message in i18n.foreign_messages(domain):
            if isinstance(message, tuple):
                catalog.add(message, tuple(pseudo(form) for form in message))
            else:
                catalog.add(message, pseudo(message))
        folder = directory / PSEUDO / "LC_MESSAGES"
        (folder / f"{domain}.mo").write_bytes(i18n.mo_bytes(catalog))


_WRAPPED = re.compile(f"{OPEN}[^{OPEN}{CLOSE}]*{CLOSE}")  # an innermost message
_WORD = re.compile(r"[A-Za-z]{3,}")


def english_outside(text: str, allowed: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    """The English words of ``text`` outside the pseudo-locale's brackets (``allowed`` aside)."""
    while True:  # a message may hold another (a placeholder filled with a message)
        inner = _WRAPPED.sub(" ", text)
        if inner == text:
            break
        text = inner
    return [w for w in _WORD.findall(text) if w not in allowed]
