"""One place picks the language: DSH_USER_QUESTIONS_LANG, else the locale or Accept-Language."""

from __future__ import annotations

import pytest

from dsh_user_questions import _i18n
from dsh_user_questions._i18n import (
    LANG_ENV,
    html_lang,
    language_from_accept,
    language_from_env,
    match_language,
)


@pytest.mark.parametrize(
    "tag", ["zh_CN", "zh-CN", "zh", "zh-Hans", "zh_Hans", "zh-Hans-CN", "zh_CN.UTF-8", "ZH-cn"]
)
def test_every_simplified_chinese_tag_reads_zh_cn(tag: str) -> None:
    """zh, zh-Hans, zh-CN and a locale name with its encoding all read the zh_CN catalog."""
    assert match_language(tag) == "zh_CN"


@pytest.mark.parametrize("tag", ["en", "en_US.UTF-8", "en-GB", "C", "POSIX", "C.UTF-8"])
def test_english_tags_read_english(tag: str) -> None:
    """English in any region, and the C locale, read English."""
    assert match_language(tag) == "en"


@pytest.mark.parametrize("tag", ["fr_FR.UTF-8", "zh-TW", "zh-Hant", "", "  "])
def test_a_language_without_a_catalog_matches_none(tag: str) -> None:
    """No catalog, no match: traditional Chinese is not served the simplified catalog."""
    assert match_language(tag) is None


def test_the_setting_wins_over_the_locale_and_the_browser() -> None:
    """DSH_USER_QUESTIONS_LANG decides for the terminal and the page alike."""
    env = {LANG_ENV: "zh", "LC_ALL": "en_US.UTF-8", "LANG": "en_US.UTF-8"}
    assert language_from_env(env) == "zh_CN"
    assert language_from_accept("en-US,en;q=0.9", env) == "zh_CN"
    assert language_from_env({LANG_ENV: "en", "LANG": "zh_CN.UTF-8"}) == "en"


def test_the_locale_variables_are_read_as_posix_orders_them() -> None:
    """LC_ALL, then LC_MESSAGES, then LANG: the first one set decides, an empty one is unset."""
    assert language_from_env({"LANG": "zh_CN.UTF-8"}) == "zh_CN"
    assert language_from_env({"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}) == "zh_CN"
    assert language_from_env({"LC_ALL": "C.UTF-8", "LANG": "zh_CN.UTF-8"}) == "en"
    assert language_from_env({"LC_ALL": "", "LANG": "zh_CN.UTF-8"}) == "zh_CN"
    assert language_from_env({"LC_ALL": "fr_FR.UTF-8", "LANG": "zh_CN.UTF-8"}) == "en"
    assert language_from_env({}) == "en"


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("zh-CN,zh;q=0.9,en;q=0.8", "zh_CN"),
        ("fr-FR, zh-Hans;q=0.7, en;q=0.5", "zh_CN"),
        ("en;q=0.9, zh;q=0.8", "en"),
        ("zh;q=0.5, en;q=0.9", "en"),
        ("zh;q=0", "en"),
        ("*", "en"),
        ("", "en"),
        (None, "en"),
        ("zh-TW,zh-Hant;q=0.9", "en"),
        ("de;q=abc, zh-CN;q=0.1", "zh_CN"),
    ],
)
def test_accept_language_picks_the_best_weighted_catalog(header: str | None, expected: str) -> None:
    """The highest-weighted tag with a catalog wins; nothing usable reads English."""
    assert language_from_accept(header, {}) == expected


def test_html_lang_is_a_bcp47_tag() -> None:
    """The page's lang attribute: zh_CN is zh-CN."""
    assert html_lang("zh_CN") == "zh-CN"
    assert html_lang("en") == "en"


def test_the_core_gettext_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same call reads English, then Chinese once the locale says so (no setlocale)."""
    for name in ("LC_ALL", "LC_MESSAGES", LANG_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    assert _i18n._("Skip") == "Skip"
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert _i18n._("Skip") == "跳过"


def test_review_cards_own_words_are_translated_and_a_models_are_not() -> None:
    """A review card's labels are the core's words (translated for display); the same word in a
    model's question is the model's text and stays as written."""
    assert _i18n.review_text("plan-review", "Approve", "zh_CN") == "批准"
    assert _i18n.review_text("diff-review", "Don't apply", "zh_CN") == "不应用"
    assert _i18n.review_text("question", "Approve", "zh_CN") == "Approve"
    assert _i18n.review_text("plan-review", "Approve", "en") == "Approve"
    assert _i18n.review_text("plan-review", "a label of the model's", "zh_CN") == (
        "a label of the model's"
    )
