# ruff: noqa: RUF001 (the Chinese texts use fullwidth punctuation, as Chinese does)
"""``dsh-inbox`` speaks the shell's language to the person; --json and exit statuses do not
change with it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
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


def help_of(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DSH_USER_QUESTIONS_", "LC_")) and k not in ("LANG", "LANGUAGE")
    }
    return subprocess.run(
        [DSH_INBOX, *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**clean, "COLUMNS": "80", **env},
        timeout=120,
        check=False,
    )


CHINESE = [{"LANG": "zh_CN.UTF-8"}, {"LANG": "en_US.UTF-8", "DSH_USER_QUESTIONS_LANG": "zh_CN"}]


def cells(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


@pytest.mark.parametrize("env", CHINESE, ids=["LANG", "DSH_USER_QUESTIONS_LANG"])
def test_help_and_each_commands_help_are_chinese(env: dict[str, str]) -> None:
    """argparse's words and ours: the usage, the titles, every command's and option's help."""
    top = help_of("--help", env=env)
    assert top.returncode == 0
    assert top.stdout.startswith("用法: dsh-inbox [-h] [--inbox URL] COMMAND ...")
    # The help column is argparse's to choose (3.13 counts the commands' rows too).
    assert re.search(r"\n选项:\n  -h, --help +显示此帮助信息并退出\n", top.stdout), top.stdout
    joined = "".join(top.stdout.split())  # as read across the wrapped lines
    assert "查看并回答你的智能体通过收件箱提出的问题。" in joined
    assert "list待回答的问题和迟到的回答（--all：全部历史）" in joined
    assert "prune删除超过保留期限的已结束记录" in joined
    for command, said in [
        ("list", "输出一个记录的JSON数组"),
        ("show", "以JSON输出记录"),
        ("cancel", "关闭者，记录中将这样写（默认：cli）"),
        ("answer", "--value或--attach回答哪个问题（默认：需要它的那个问题）"),
        ("serve", "监听的端口（8765；0表示选一个空闲端口）"),
        ("init", "如果还没有存储则创建它"),
        ("notify-test", "向$DSH_USER_QUESTIONS_NOTIFY（AppriseURL）发送一条测试通知"),
        ("log", "只显示最近DURATION内的事件（例如12h、7d）"),
        ("prune", "例如30d、12h、3600（默认：$DSH_USER_QUESTIONS_INBOX_RETENTION，否则30d）"),
    ]:
        shown = help_of(command, "--help", env=env)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.startswith(f"用法: dsh-inbox {command} [-h]")
        assert said in "".join(shown.stdout.split()), command
        assert "usage" not in shown.stdout
        assert max(cells(line) for line in shown.stdout.splitlines()) <= 80


# Python 3.10's argparse does not mark "argument %(argument_name)s: %(message)s" for gettext.
ARGUMENT = "参数" if sys.version_info >= (3, 11) else "argument"


def test_a_usage_error_is_chinese_with_the_english_status() -> None:
    """An unknown command: argparse's error in Chinese, exit 2 as in English."""
    chinese = help_of("frob", env={"LANG": "zh_CN.UTF-8"})
    english = help_of("frob", env={"LANG": "C.UTF-8"})
    assert chinese.returncode == english.returncode == 2
    assert chinese.stderr.splitlines()[-1].startswith(
        f"dsh-inbox: 错误: {ARGUMENT} COMMAND: 无效的选择: 'frob'（可选: 'list',"
    )
    assert english.stderr.splitlines()[-1].startswith(
        "dsh-inbox: error: argument COMMAND: invalid choice: 'frob'"
    )


def test_answer_value_failures_are_chinese_with_the_english_status(
    inbox: Inbox, inbox_url: str
) -> None:
    """Each ``answer --value``/``--attach`` refusal in Chinese, exit 2 as in English."""
    record = inbox.add(TYPED, harness="h")
    cases = [
        (("--value", "3"), "有多个问题需要值（--value）（n, f）：用 --question 指定一个"),
        (("--question", "n", "--value", "3", "--value", "4"), "n 只接受一个 --value"),
        (("--attach", "x.txt"), f"问题 {record.id} 中没有需要上传文件（--attach）的问题"),
        (("--question", "zz", "--value", "3"), f"问题 {record.id} 中没有需要值（--value）的问题"),
    ]
    for args, said in cases:
        chinese = run(inbox_url, "answer", record.id, *args, lang="zh_CN.UTF-8")
        english = run(inbox_url, "answer", record.id, *args, lang="C.UTF-8")
        assert chinese.returncode == english.returncode == 2, (args, english.stderr)
        assert chinese.stderr.strip() == f"dsh-inbox: {said}", args
        assert english.stderr.startswith("dsh-inbox: ")
        assert english.stderr != chinese.stderr
    assert inbox.get(record.id).state.value == "pending"  # type: ignore[union-attr]


def test_log_words_are_chinese_the_event_names_are_not(inbox: Inbox, inbox_url: str) -> None:
    """``log``: "by", "on", "from" are the person's words; the event's name stays as stored
    (a script greps it), and --json is the same bytes in every language."""
    record = inbox.add(PKG, harness="h")
    inbox.answer(record.id, pick("npm"), surface="web", by="ana")
    chinese = run(inbox_url, "log", record.id, lang="zh_CN.UTF-8")
    english = run(inbox_url, "log", record.id, lang="C.UTF-8")
    assert chinese.returncode == english.returncode == 0
    assert f"{record.id}  answered 由 ana 经由 web" in chinese.stdout, chinese.stdout
    assert f"{record.id}  answered by ana on web" in english.stdout, english.stdout
    as_json = [
        run(inbox_url, "log", record.id, "--json", lang=lang).stdout
        for lang in ("zh_CN.UTF-8", "C.UTF-8")
    ]
    assert as_json[0] == as_json[1]


def test_a_refused_value_says_the_rules_problem_in_chinese(inbox: Inbox, inbox_url: str) -> None:
    """``answer --value 12`` on a question of 1 to 9: the rules' problem in the person's
    language, exit 2 in both; nothing is answered."""
    record = inbox.add(TYPED, harness="h")
    args = ("answer", record.id, "--question", "n", "--value", "12")
    chinese = run(inbox_url, *args, lang="zh_CN.UTF-8")
    english = run(inbox_url, *args, lang="C.UTF-8")
    assert chinese.returncode == english.returncode == 2
    assert 'answers[0]（问题 "n"）：值 12 大于最大值 9' in chinese.stderr, chinese.stderr
    assert 'answers[0] (question "n") has value 12 above the maximum 9' in english.stderr
    assert inbox.get(record.id).state.value == "pending"  # type: ignore[union-attr]
