# ruff: noqa: RUF001 (the Chinese texts use fullwidth punctuation, as Chinese does)
"""A Chinese locale changes no byte the model receives: the tool's description and schemas in
every API's shape, the answer JSON, the ``Error: ...`` texts and their codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).with_name("model_bytes.py")


def run(**env: str) -> dict[str, Any]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DSH_USER_QUESTIONS_", "LC_")) and k != "LANG"
    }
    done = subprocess.run(
        [sys.executable, str(SCRIPT)],
        env={**clean, **env},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_a_chinese_locale_changes_no_byte_the_model_receives() -> None:
    """Under LANG=zh_CN.UTF-8 (and the setting) the human's words are Chinese, the model's
    bytes are those of the English run."""
    english = run(LANG="en_US.UTF-8")
    chinese = run(LANG="zh_CN.UTF-8")
    chosen = run(LANG="C.UTF-8", DSH_USER_QUESTIONS_LANG="zh-Hans")
    assert english["skip_shown_as"] == "Skip"
    assert chinese["skip_shown_as"] == chosen["skip_shown_as"] == "跳过"
    assert json.dumps(chinese["model"]) == json.dumps(english["model"])
    assert json.dumps(chosen["model"]) == json.dumps(english["model"])


def test_an_answers_problems_are_the_readers_words_and_the_models_bytes() -> None:
    """A bad answer's problems: Chinese for a person reading Chinese, the English run's bytes in
    the tool's result and the error's message and problems (what code and the model read)."""
    english = run(LANG="en_US.UTF-8")
    chinese = run(LANG="zh_CN.UTF-8")
    assert english["problems_shown_as"] == english["model"]["error"][1]
    assert english["problems_shown_as"] == [
        'answers[0] (question "n") has value 12 above the maximum 9',
        'answers[1] (question "d") has value "2026-13-01", which is not a date YYYY-MM-DD',
        'answers[2] (question "f") picks "../b.md", which is not a plain relative path'
        " (no '.', '..' or empty parts)",
    ]
    assert chinese["problems_shown_as"] == [
        'answers[0]（问题 "n"）：值 12 大于最大值 9',
        'answers[1]（问题 "d"）：值 "2026-13-01" 不是日期 YYYY-MM-DD',
        'answers[2]（问题 "f"）：选了 "../b.md"，'
        "它不是普通的相对路径（不能有 '.'、'..' 或空的部分）",
    ]
    bad = english["model"]["results"][2]  # the tool's result of the typed call
    assert bad[1] is True
    assert "has value 12 above the maximum 9" in bad[0]
