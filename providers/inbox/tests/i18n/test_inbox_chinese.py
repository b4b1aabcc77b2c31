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


def run(url: str, *args: str, lang: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
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
        env={**env, "LANG": lang},
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
