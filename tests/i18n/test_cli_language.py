# ruff: noqa: RUF001 (the Chinese texts use fullwidth punctuation, as Chinese does)
"""``dsh-ask --help`` and argparse's own words (usage, section titles, its errors) in the
person's language; the exit statuses do not change with it, and the process's gettext state is
left as it was found."""

from __future__ import annotations

import gettext
import os
import sys
import unicodedata

import pytest
from catalogs import PSEUDO, english_outside, write_pseudo_locale

from dsh_user_questions._cli import main
from dsh_user_questions._i18n import CATALOG_DIR_ENV, LANG_ENV, speaking_argparse, wrap_cells

CHINESE = [{LANG_ENV: "zh_CN"}, {"LANG": "zh_CN.UTF-8"}]
# Python 3.10's argparse does not mark "argument %(argument_name)s: %(message)s" for gettext.
ARGUMENT = "参数" if sys.version_info >= (3, 11) else "argument"


def cells(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


@pytest.fixture
def shell(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No language chosen by the test runner's environment; an 80-column terminal."""
    for name in (LANG_ENV, CATALOG_DIR_ENV, "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    return monkeypatch


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[object, str, str]:
    with pytest.raises(SystemExit) as ended:
        main(argv)
    out, err = capsys.readouterr()
    return ended.value.code, out, err


@pytest.mark.parametrize("env", CHINESE, ids=["DSH_USER_QUESTIONS_LANG", "LANG"])
def test_dsh_ask_help_is_chinese(
    env: dict[str, str], shell: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse's words (usage, the section titles, -h's help) and ours (the description, each
    option's help, the exit statuses) are Chinese; every line fits 80 cells."""
    for name, value in env.items():
        shell.setenv(name, value)
    status, out, _err = run(["--help"], capsys)
    assert status == 0
    assert out.startswith("用法: dsh-ask [-h] [--timeout SECONDS]")
    for said in (
        "\n位置参数:\n",
        "\n选项:\n",
        "显示此帮助信息并退出",
        "通过已安装的 user-questions 提供者向人提出结构化问题",
        "列出已安装的提供者并退出",
        "退出状态：0 已回答",
        "示例：",
    ):
        assert said in out
    assert "usage" not in out
    assert "options:" not in out
    assert max(cells(line) for line in out.splitlines()) <= 80


def test_dsh_ask_help_stays_english_without_a_chinese_locale(
    shell: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """LANG=C (and no language at all) read English: the words a script or a doc quotes."""
    shell.setenv("LANG", "C.UTF-8")
    status, out, _err = run(["--help"], capsys)
    assert status == 0
    assert out.startswith("usage: dsh-ask [-h]")
    assert "\noptions:\n" in out
    flat = " ".join(out.split())
    assert "3 nobody can be asked from here (NOT_INTERACTIVE)" in flat
    assert "list the installed providers and exit" in flat


@pytest.mark.parametrize(
    ("argv", "chinese", "english"),
    [
        (
            ["--timeout", "x"],
            f"dsh-ask: 错误: {ARGUMENT} --timeout: 不是秒数：'x'",
            "dsh-ask: error: argument --timeout: not a number of seconds: 'x'",
        ),
        (
            ["--timeout", "-1"],
            f"dsh-ask: 错误: {ARGUMENT} --timeout: 必须是正数的秒数：'-1'",
            "dsh-ask: error: argument --timeout: must be a positive number of seconds: '-1'",
        ),
        (["--bogus"], "dsh-ask: 错误: 无法识别的参数: --bogus", None),
        (
            ["mcp", "--http", "x:99999"],
            f"dsh-ask mcp: 错误: {ARGUMENT} --http: "
            "不是 [HOST:]PORT 形式（PORT 为 0 到 65535）：'x:99999'",
            None,
        ),
    ],
)
def test_usage_errors_are_chinese_with_the_same_status(
    argv: list[str],
    chinese: str,
    english: str | None,
    shell: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A usage error says what is wrong in the person's language; exit 2 in every language."""
    shell.setenv("LANG", "en_US.UTF-8")
    english_status, _out, english_err = run(argv, capsys)
    shell.setenv("LANG", "zh_CN.UTF-8")
    status, _out, err = run(argv, capsys)
    assert status == english_status == 2
    assert err.startswith("用法: dsh-ask")
    assert err.splitlines()[-1] == chinese
    if english is not None:
        assert english_err.splitlines()[-1] == english


def test_dsh_ask_mcp_help_is_chinese(
    shell: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.setenv(LANG_ENV, "zh-Hans")
    status, out, _err = run(["mcp", "--help"], capsys)
    assert status == 0
    assert out.startswith("用法: dsh-ask mcp [-h]")
    joined = "".join(out.split())  # as read across the wrapped lines
    assert "通过已安装的提供者以MCP提供ask_user_question和review_plan" in joined
    assert "使用已安装的提供者NAME（设置DSH_USER_QUESTIONS_PROVIDER）" in joined


def test_the_process_gettext_state_is_put_back(
    shell: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The text domain, the argparse domain's directory and LANGUAGE are as they were after
    --help (left by SystemExit): a host calling main() keeps its own gettext setup."""
    shell.setenv("LANGUAGE", "fr")
    shell.setenv("LANG", "zh_CN.UTF-8")
    domain, directory = gettext.textdomain(), gettext.bindtextdomain("argparse")
    run(["--help"], capsys)
    with speaking_argparse("zh_CN"):
        assert gettext.gettext("options") == "选项"
    assert gettext.textdomain() == domain
    assert gettext.bindtextdomain("argparse") == directory
    assert os.environ["LANGUAGE"] == "fr"
    assert gettext.gettext("options") == "options"


def test_no_english_is_left_in_the_help_of_a_pseudo_locale(
    tmp_path: object, shell: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every message wrapped in ⟦ ⟧: what is left outside is option names, metavars, the
    program's name and the example's JSON, never a sentence someone forgot to mark."""
    pytest.importorskip("babel")
    write_pseudo_locale(tmp_path)  # type: ignore[arg-type]
    shell.setenv(CATALOG_DIR_ENV, str(tmp_path))
    shell.setenv(LANG_ENV, PSEUDO)
    names = "dsh ask mcp timeout SECONDS provider NAME plain workspace DIR list providers demo"
    example = "echo questions pkg question Which package manager options label pnpm true npm"
    allowed = set(f"{names} FILE help http HOST PORT recommended {example}".split())
    for argv in (["--help"], ["mcp", "--help"]):
        status, out, _err = run(argv, capsys)
        assert status == 0
        assert english_outside(out, allowed) == []
    assert english_outside("usage: x", allowed) == ["usage"]  # the check can fail


@pytest.mark.parametrize("width", [24, 40, 78])
def test_wrapping_counts_cells_and_keeps_punctuation_with_its_words(width: int) -> None:
    text = (
        "退出状态：0 已回答；2 输入无效（也包括 EMPTY_QUESTIONS、BAD_INTENT、BAD_QUESTION）；"
        "3 在这里无法向任何人提问（NOT_INTERACTIVE）；1 其他任何失败（例如没有安装提供者）。"
    )
    lines = wrap_cells(text, width).splitlines()
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert all(cells(line) <= width for line in lines)
    assert not any(line[0] in "，。、；：）" or line[-1] == "（" for line in lines)
    english = wrap_cells("give up (exit 124) when the human has not answered", 20)
    assert english.splitlines() == ["give up (exit 124)", "when the human has", "not answered"]


@pytest.mark.parametrize(
    ("argv", "chinese", "status"),
    [
        (["--demo", "x.json"], "Error: --demo 不接受 FILE\n", 2),
        (["missing.json"], "Error: 无法读取 missing.json：", 2),
    ],
)
def test_dsh_asks_own_failures_are_chinese(
    argv: list[str],
    chinese: str,
    status: int,
    shell: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: object,
) -> None:
    """dsh-ask's own failures (not an error of the core, whose message is the model's) are the
    person's words; the "Error:" prefix and the exit status stay."""
    shell.chdir(tmp_path)  # type: ignore[arg-type]
    shell.setenv("LANG", "zh_CN.UTF-8")
    assert main(argv) == status
    assert capsys.readouterr().err.startswith(chinese)
    shell.setenv("LANG", "C.UTF-8")
    assert main(argv) == status
    assert capsys.readouterr().err.startswith("Error: ")
