# ruff: noqa: RUF001 (the Chinese texts use fullwidth punctuation, as Chinese does)
"""The form in Chinese in a real pseudo-terminal (LANG=zh_CN.UTF-8, no zh_CN locale generated):
the frame's words translated, the answer's labels as the model wrote them, double-width cells
laid out right at 80x24 and 40x12."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import plan_review, question
from dsh_user_questions import AskUserQuestionInput
from wcwidth import wcswidth

CHINESE = {"LC_ALL": "", "LANG": "zh_CN.UTF-8"}
SMALL = (12, 40)
NORMAL = (24, 80)


def chinese_question(**fields: Any) -> dict[str, Any]:
    """A question whose model-written text is Chinese too."""
    return question(
        header="包管理器",
        question="这个项目应该用哪个包管理器？它会决定锁文件和持续集成的安装命令。",
        options=[
            {"label": "pnpm", "description": "快速，节省磁盘空间"},
            {"label": "npm", "description": "随 node 一起安装"},
            {"label": "yarn"},
        ],
        **fields,
    )


def cells(term: Any) -> list[str]:
    """Each screen row cell by cell: a wide character's second cell is "" in pyte's buffer."""
    screen = term.screen
    return [
        "".join(screen.buffer[y][x].data or "\0" for x in range(screen.columns))
        for y in range(screen.lines)
    ]


@pytest.mark.parametrize("size", [NORMAL, SMALL])
def test_the_form_speaks_chinese_and_the_answer_keeps_the_labels(terminal, size) -> None:
    """Hints, Other and Skip are Chinese; picking a row answers with the model's label."""
    term = terminal({"questions": [chinese_question()]}, size=size, **CHINESE)
    screen = term.wait_for("Esc 取消")
    assert "其他" in screen
    assert "跳过" in screen
    assert "Esc cancel" not in screen
    for line in screen.splitlines():
        assert wcswidth(line) <= size[1], line
    term.press("2")
    outcome = term.outcome()
    assert outcome["answer"] == {"answers": [{"id": "pkg", "selected": ["npm"]}]}


def test_the_cursor_follows_double_width_characters(terminal) -> None:
    """Typed Chinese moves the cursor two cells a character, as the terminal draws it."""
    term = terminal({"questions": [chinese_question()]}, size=NORMAL, **CHINESE)
    term.wait_for("Esc 取消")
    term.press("4")  # the Other row: its text field opens
    term.wait_for("你的回答：")
    term.settle(0.3)
    before = term.screen.cursor.x
    term.press("汉字")
    term.wait_for("汉字")
    row = term.screen.cursor.y
    line = cells(term)[row]
    assert term.screen.cursor.x == before + 4, line
    term.press("enter")
    outcome = term.outcome()
    assert outcome["answer"] == {"answers": [{"id": "pkg", "selected": [], "custom": "汉字"}]}


def test_a_chinese_plan_keeps_its_box_square_on_a_small_terminal(terminal) -> None:
    """At 40x12 a Chinese plan's box has its right border in the last column on every row, and
    the card's own words (the header, Approve, Keep planning) are Chinese; Approve still
    answers "Approve"."""
    item = plan_review()
    item["detail"] = "# 迁移到 pnpm\n\n" + "\n".join(
        f"{n}. 第 {n} 步：把持续集成的安装命令换成 pnpm install，并更新锁文件。"
        for n in range(1, 4)
    )
    term = terminal({"questions": [item]}, size=SMALL, **CHINESE)
    screen = term.wait_for("计划审阅")
    rows = cells(term)
    boxed = [row for row in rows if row.startswith("\u2502")]
    assert boxed, screen
    for row in boxed:
        assert row[SMALL[1] - 1] == "\u2502", "\n".join(rows)
    assert "批准" in screen or "继续规划" in screen


def pseudo_locale(tmp_path) -> dict[str, str]:
    """The environment of the pseudo-locale (every message wrapped in ⟦ ⟧ and lengthened),
    built from the repository's templates by its catalog tool."""
    pytest.importorskip("babel")
    import importlib.util
    from pathlib import Path

    helper = Path(__file__).resolve().parents[4] / "tests" / "i18n" / "catalogs.py"
    if not helper.is_file():
        pytest.skip("the repository's catalog tool is not in this tree (an sdist)")
    spec = importlib.util.spec_from_file_location("dsh_i18n_catalogs", helper)
    assert spec is not None
    assert spec.loader is not None
    catalogs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(catalogs)
    catalogs.write_pseudo_locale(tmp_path / "locale")
    pseudo_locale.english_outside = catalogs.english_outside  # type: ignore[attr-defined]
    return {
        "DSH_USER_QUESTIONS_LOCALEDIR": str(tmp_path / "locale"),
        "DSH_USER_QUESTIONS_LANG": catalogs.PSEUDO,
    }


@pytest.mark.parametrize("kind", ["question", "multi", "free", "plan"])
def test_nothing_on_the_form_is_left_hard_coded(terminal, tmp_path, kind) -> None:
    """In the pseudo-locale no English word is on the screen outside ⟦ ⟧: the model's text here
    is Chinese, so any English word left is a hard-coded one."""
    env = pseudo_locale(tmp_path)
    labels = [{"label": "甲", "description": "第一"}, {"label": "乙"}]
    if kind == "plan":
        item = plan_review()
        item["detail"] = "# 计划\n\n" + "\n".join(f"{n}. 第 {n} 步" for n in range(1, 30))
    elif kind == "free":
        item = question(header="名字", question="叫什么？", options=[])
    else:
        item = question(
            header="选择", question="哪一个？", options=labels, multiSelect=kind == "multi"
        )
    term = terminal(
        {"questions": [item, question("two", header="二", question="再问？", options=labels)]},
        **env,
    )
    screen = term.wait_until(lambda s: "\u27e7" in s and "Esc" in s, "the pseudo-locale's hint")
    term.settle(0.3)
    screen = term.text
    assert pseudo_locale.english_outside(screen) == [], screen  # type: ignore[attr-defined]


def test_line_mode_speaks_chinese_and_refuses_in_chinese(piped) -> None:
    """Asked line by line (a pipe), the instructions and the refusal are Chinese; the answer
    names the model's label."""
    done = piped(
        {"questions": [chinese_question()]},
        "9\n2\n",
        LC_ALL="",
        LC_MESSAGES="",
        LANG="zh_CN.UTF-8",
    )
    assert "回答：输入数字 1-3" in done.stderr, done.stderr
    assert "请重试。" in done.stderr, done.stderr
    assert done.answer == {"answers": [{"id": "pkg", "selected": ["npm"]}]}


def test_line_mode_has_nothing_hard_coded(piped, tmp_path) -> None:
    """In the pseudo-locale, line mode's own words are all wrapped (the model's are Chinese)."""
    env = pseudo_locale(tmp_path)
    item = question(header="选择", question="哪一个？", options=[{"label": "甲"}, {"label": "乙"}])
    done = piped(
        {"questions": [item, {**item, "id": "two", "multiSelect": True}]}, "1\n1,2\n", **env
    )
    assert done.answer is not None
    assert pseudo_locale.english_outside(done.stderr) == [], done.stderr  # type: ignore[attr-defined]


TYPED = {
    "questions": [
        {"id": "n", "question": "几个？", "input": {"type": "number", "min": 1, "max": 9}},
        {"id": "d", "question": "哪天？", "input": {"type": "date"}},
    ]
}


def test_line_mode_typed_hints_and_the_rules_refusals_are_chinese(piped) -> None:
    """A typed question's hint, and the answer rules' refusal of a value, in Chinese; the value
    answered is the one typed."""
    done = piped(TYPED, "12\n5\n2026-13-01\n2026-12-07\n", LC_ALL="", LANG="zh_CN.UTF-8")
    assert "回答：1 到 9 之间的数字；空行表示跳过。" in done.stderr, done.stderr
    assert "你输入的文字未被采用：值 12 大于最大值 9；请重试。" in done.stderr, done.stderr
    assert '你输入的文字未被采用：值 "2026-13-01" 不是日期 YYYY-MM-DD；请重试。' in done.stderr
    assert "Answer" not in done.stderr
    assert "maximum" not in done.stderr
    assert done.answer == {
        "answers": [
            {"id": "n", "selected": [], "value": 5},
            {"id": "d", "selected": [], "value": "2026-12-07"},
        ]
    }


def test_line_mode_refusals_of_a_pick_are_chinese(piped) -> None:
    """Each way a line is refused on a question of options, in Chinese, then answered."""
    done = piped(
        {"questions": [chinese_question(allow_other=False)]},
        "1,2\n=zzz\n4.\nhello\n2\n",
        LC_ALL="",
        LANG="zh_CN.UTF-8",
    )
    for said in (
        "只能选一个选项：输入一个数字；请重试。",
        '没有标签为 "zzz" 的选项（=LABEL 按标签选择）；请重试。',
        "'4.' 不是选项之一：请输入数字 1-3 或一个标签；请重试。",
        "'hello' 不是选项之一：请输入数字 1-3 或一个标签；请重试。",
    ):
        assert said in done.stderr, done.stderr
    assert "option" not in done.stderr
    assert done.answer == {"answers": [{"id": "pkg", "selected": ["npm"]}]}


def test_line_mode_in_a_real_terminal_speaks_chinese(terminal) -> None:
    """DSH_USER_QUESTIONS_PLAIN=1 in a pty with LANG=zh_CN.UTF-8: the typed hint and a refusal
    of the rules are Chinese on the screen; the value typed next answers."""
    term = terminal({"questions": [TYPED["questions"][0]]}, DSH_USER_QUESTIONS_PLAIN="1", **CHINESE)
    term.wait_for("回答：1 到 9 之间的数字")
    term.press("0\r")
    term.wait_for("值 0 小于最小值 1")
    term.press("3\r")
    assert term.outcome()["answer"] == {"answers": [{"id": "n", "selected": [], "value": 3}]}


def test_the_forms_typed_notices_and_refusals_are_chinese(terminal) -> None:
    """The form's notices for a typed answer in a pty: as typed (还不行), refused on Enter
    (未被采用), both naming the rule in Chinese; then the good value answers."""
    term = terminal({"questions": [TYPED["questions"][0]]}, **CHINESE)
    term.wait_for("1 到 9 之间的数字")
    term.press("1", "2")
    term.wait_for("还不行：值 12 大于最大值 9")
    term.press("enter")
    screen = term.wait_for("未被采用：值 12 大于最大值 9")
    assert "Not taken" not in screen
    term.press("backspace", "backspace", "7", "enter")
    assert term.outcome()["answer"] == {"answers": [{"id": "n", "selected": [], "value": 7}]}


def test_a_refused_upload_says_why_in_chinese(terminal, tmp_path) -> None:
    """An upload of a type the question does not take, and one too large: the refusal is the
    person's language (the rule's English stays in the error the code sees); nothing kept."""
    (tmp_path / "tool.exe").write_bytes(b"MZ")
    (tmp_path / "big.txt").write_bytes(b"x" * 5000)
    (tmp_path / "ok.txt").write_bytes(b"ok")
    uploads = tmp_path / "uploads"
    upload = {"type": "upload", "max_count": 1, "accept": [".txt"], "max_bytes": 1000}
    term = terminal(
        {"questions": [{"id": "u", "question": "发过来", "input": upload}]},
        DSH_USER_QUESTIONS_UPLOADS=str(uploads),
        **CHINESE,
    )
    screen = term.wait_for("文件路径：")
    assert "跳过 — 不回答这个问题" in screen, screen
    term.press(*f"{tmp_path}/tool.exe", "enter")
    term.wait_for("未被采用：'tool.exe'", "不是这个问题接受的类型")
    term.press(*(["backspace"] * 200), *f"{tmp_path}/big.txt", "enter")
    term.wait_for("超过了这个问题接受的大小（1000 字节）")
    assert not uploads.exists() or not [p for p in uploads.rglob("*") if p.is_file()]
    term.press(*(["backspace"] * 200), *f"{tmp_path}/ok.txt", "enter")
    assert term.outcome()["answer"]["answers"][0]["value"][0]["name"] == "ok.txt"


def test_a_file_questions_filter_line_is_chinese(terminal, tmp_path) -> None:
    """A file question: the filter's label and counts, Skip's row and the limit's notice."""
    root = tmp_path / "repo"
    for name in ("a.md", "b.md", "c.md"):
        root.mkdir(exist_ok=True)
        (root / name).write_text(name)
    field = AskUserQuestionInput.files(root, max_count=1).to_dict()
    term = terminal({"questions": [{"id": "f", "question": "哪个？", "input": field}]}, **CHINESE)
    screen = term.wait_for("筛选：", "3 个文件中有 3 个匹配；已勾选 0 个")
    assert "跳过 — 不回答这个问题" in screen, screen
    term.press("space", "down", "space")
    term.wait_for("最多一个文件：请先取消勾选它。")
    term.press("enter")
    assert term.outcome()["answer"]["answers"][0]["value"] == ["a.md"]


@pytest.mark.parametrize("kind", ["number", "date", "files", "upload"])
def test_nothing_on_a_typed_form_is_left_hard_coded(terminal, tmp_path, kind) -> None:
    """A typed question's form in the pseudo-locale: its field's label, hint, filter line and
    Skip row, and the notice for a value the rules refuse, are all wrapped in ⟦ ⟧."""
    env = pseudo_locale(tmp_path)
    root = tmp_path / "甲"
    root.mkdir()
    (root / "乙.md").write_text("x")
    fields = {
        "number": {"type": "number", "min": 1, "max": 9},
        "date": {"type": "date"},
        "files": AskUserQuestionInput.files(root, max_count=1).to_dict(),
        "upload": {"type": "upload", "max_count": 1},
    }
    item = {"id": "q", "question": "哪一个？", "input": fields[kind]}
    term = terminal({"questions": [item]}, **env)
    term.wait_until(lambda s: "\u27e7" in s and "Esc" in s, "the pseudo-locale's hint")
    if kind == "number":
        term.press("0")  # below the minimum: the notice names the rule
        term.wait_for("\u27e6", "0")
    term.settle(0.3)
    screen = term.text.replace(str(tmp_path), "")
    assert pseudo_locale.english_outside(screen) == [], screen  # type: ignore[attr-defined]
