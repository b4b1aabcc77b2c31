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
