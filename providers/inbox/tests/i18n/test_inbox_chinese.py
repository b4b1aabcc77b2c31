# ruff: noqa: RUF001 (the Chinese texts use fullwidth punctuation, as Chinese does)
"""``dsh-inbox`` speaks the shell's language to the person; --json and exit statuses do not
change with it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from _requests import PKG, pick

from dsh_user_questions_inbox import Inbox

DSH_INBOX = str(Path(sys.executable).parent / "dsh-inbox")


def run(
    url: str, *args: str, lang: str, stdin: str = "", extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DSH_USER_QUESTIONS_", "LC_")) and k != "LANG"
    }
    return subprocess.run(
        [DSH_INBOX, "--inbox", url, *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**env, "LANG": lang, **(extra or {})},
        timeout=120,
        check=False,
    )


def test_messages_at_the_shell_follow_the_locale(inbox: Inbox, inbox_url: str) -> None:
    """LANG=zh_CN.UTF-8: the person reads Chinese; the statuses are the English run's."""
    first = inbox.add(PKG, harness="h")
    second = inbox.add(PKG, harness="h")
    chinese = run(inbox_url, "answer", first.id, lang="zh_CN.UTF-8", stdin=json.dumps(pick("npm")))
    english = run(inbox_url, "answer", second.id, lang="C.UTF-8", stdin=json.dumps(pick("npm")))
    assert chinese.returncode == english.returncode
    assert chinese.stdout.startswith(f"已回答问题 {first.id}"), chinese.stdout
    assert english.stdout.startswith(f"answered question {second.id}"), english.stdout
    empty = run(inbox_url, "list", lang="zh_CN.UTF-8")
    assert empty.stdout.strip() == "没有待回答的问题，也没有迟到的回答"


def test_json_output_is_the_same_in_every_language(inbox: Inbox, inbox_url: str) -> None:
    """list --json is for programs: byte for byte the same under a Chinese locale."""
    inbox.add(PKG, harness="h", agent="a1")
    chinese = run(inbox_url, "list", "--json", "--all", lang="zh_CN.UTF-8")
    english = run(inbox_url, "list", "--json", "--all", lang="en_US.UTF-8")
    assert chinese.stdout == english.stdout
    assert json.loads(chinese.stdout)


TYPED = {
    "questions": [
        {
            "id": "n",
            "question": "何個?",
            "input": {"type": "number", "min": 1, "max": 9, "unit": "個"},
        },
        {
            "id": "f",
            "question": "どれ?",
            "input": {"type": "files", "root": "/w", "candidates": ["あ.md"]},
        },
    ]
}


def test_show_of_a_typed_question_speaks_the_locale(inbox: Inbox, inbox_url: str) -> None:
    """show's state, "asked by", what a typed question asks for, and a failure, in Chinese."""
    record = inbox.add(TYPED, harness="機械")
    shown = run(inbox_url, "show", record.id, lang="zh_CN.UTF-8")
    assert shown.stdout.startswith(f"问题 {record.id}：待回答，提问者 機械"), shown.stdout
    assert "要求：1 到 9 之间的数字 (個)" in shown.stdout
    assert "可选的 1 个文件：" in shown.stdout
    listed = run(inbox_url, "list", lang="zh_CN.UTF-8")
    assert "待回答" in listed.stdout, listed.stdout
    assert " 前 " in listed.stdout, listed.stdout
    missing = run(inbox_url, "show", "nope", lang="zh_CN.UTF-8")
    english = run(inbox_url, "show", "nope", lang="C.UTF-8")
    assert missing.returncode == english.returncode != 0
    assert missing.stderr.strip() == "dsh-inbox: 收件箱中没有问题 'nope'"


def test_nothing_in_show_and_list_is_left_hard_coded(
    inbox: Inbox, inbox_url: str, tmp_path: Path
) -> None:
    """In the pseudo-locale, show and list of a typed question have no English word outside ⟦ ⟧
    but the command names the person types (the model's text here is Japanese)."""
    import importlib.util

    import pytest

    helper_path = Path(__file__).resolve().parents[4] / "tests" / "i18n" / "catalogs.py"
    if not helper_path.is_file():
        pytest.skip("the repository's pseudo-locale helper is not here (an sdist)")
    pytest.importorskip("babel")
    spec = importlib.util.spec_from_file_location("catalogs", helper_path)
    assert spec is not None
    assert spec.loader is not None
    helper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helper)
    helper.write_pseudo_locale(tmp_path)
    record = inbox.add(TYPED, harness="機械")
    extra = {
        "DSH_USER_QUESTIONS_LOCALEDIR": str(tmp_path),
        "DSH_USER_QUESTIONS_LANG": helper.PSEUDO,
    }
    shown = run(inbox_url, "show", record.id, lang="C.UTF-8", extra=extra).stdout
    listed = run(inbox_url, "list", lang="C.UTF-8", extra=extra).stdout
    commands = {"dsh", "inbox", "answer", "question", "value", "PATH"}
    for text in (shown, listed):
        assert helper.english_outside(text.replace(record.id, ""), commands) == [], text
