"""The page's words in the reader's language: `Accept-Language` (or DSH_USER_QUESTIONS_LANG).

The page's HTML is translated on the server (`PAGE_TEXTS`, replaced in index.html); app.js
reads its own messages from a JSON data block the server puts in the page (``t("...")`` in
app.js, extracted like ``_()`` here), so the script stays one static file.
"""

from __future__ import annotations

import functools
import html
import json
import os
from pathlib import Path

from dsh_user_questions._i18n import (
    CATALOG_DIR_ENV,
    ENGLISH,
    N_,
    html_lang,
    locale_dir,
    review_text,
    review_texts,
    translator,
)

__all__ = ["DOMAIN", "PAGE_TEXTS", "localize_page", "page_messages"]

DOMAIN = "dsh_user_questions_web"
_LOCALE = locale_dir(__file__)
for_language = translator(DOMAIN, _LOCALE)

PAGE_TEXTS = (
    N_("Questions from your agent"),
    N_("Skip to the question"),
    N_("Connecting\u2026"),
    N_("Notify me of new questions"),
    N_("Fetching the questions waiting for you from your harness."),
    N_("No questions right now"),
    N_(
        "When your agent needs you, its question appears here. Keep this page open; it updates"
        " by itself."
    ),
    N_("Waiting for you"),
    N_("This page needs JavaScript to show questions."),
)
"""The texts of index.html, each found there as written (escaped HTML) and replaced."""


def page_messages(language: str) -> dict[str, str]:
    """Every translated message of the web catalog in ``language`` (app.js reads them), and the
    core's words of the review cards (their header and question, shown translated)."""
    if language == ENGLISH:
        return {}
    messages: dict[str, str] = {
        text: review_text("plan-review", text, language) for text in review_texts()
    }
    extra = os.environ.get(CATALOG_DIR_ENV, "").strip()
    for root in ([Path(extra)] if extra else []) + [_LOCALE]:
        path = root / language / "LC_MESSAGES" / f"{DOMAIN}.json"
        if path.is_file():
            messages.update(json.loads(path.read_text("utf-8")))
            break
    return messages


@functools.lru_cache(maxsize=16)
def _localized(page: bytes, language: str, extra: str) -> bytes:
    del extra  # part of the cache key: a translator's catalog directory
    text = page.decode("utf-8")
    tr = for_language(language)
    for message in PAGE_TEXTS:
        text = text.replace(html.escape(message, quote=False), html.escape(tr(message)))
    text = text.replace('<html lang="en"', f'<html lang="{html_lang(language)}"', 1)
    # A data block, never run (the page's CSP allows only app.js): "<" escaped, so no text in
    # it can end the element.
    data = json.dumps(page_messages(language), ensure_ascii=False).replace("<", "\\u003c")
    block = f'<script type="application/json" id="dsh-messages">{data}</script>\n</head>'
    return text.replace("</head>", block, 1).encode("utf-8")


def localize_page(page: bytes, language: str) -> bytes:
    """index.html in ``language``: its ``lang``, its texts and app.js's messages."""
    return _localized(page, language, os.environ.get(CATALOG_DIR_ENV, "").strip())
