"""Typed answers in a real pty (issue 36): a number with its range and step keys, dates and
times checked as they are typed, a filterable file list with checkboxes, a path entry with
completion for uploads; and the same questions answered through pipes (line mode)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from dsh_user_questions import AskUserQuestionInput


def typed(kind: str, question: str = "How many workers?", **fields: Any) -> dict[str, Any]:
    field = AskUserQuestionInput(type=kind, **fields).to_dict()
    return {"questions": [{"id": "q", "question": question, "input": field}]}


def files_question(root: Path, **fields: Any) -> dict[str, Any]:
    field = AskUserQuestionInput.files(root, **fields).to_dict()
    return {"questions": [{"id": "q", "question": "Which files should I read?", "input": field}]}


def value_of(result: dict[str, Any]) -> Any:
    assert "answer" in result, result
    return result["answer"]["answers"][0]["value"]


def test_a_number_steps_with_up_and_down_within_its_range(terminal):
    """The field says the range; Up/Down step from min on the grid and stop at max."""
    term = terminal(typed("number", min=1, max=4, step=1.5, unit="GB"))
    screen = term.wait_for("a number between 1 and 4 in steps of 1.5 (GB)")
    assert "\u2191\u2193 step" in screen
    term.press("up")  # empty: min
    term.wait_for("Your answer: a number")
    term.press("up")  # 2.5
    term.press("up")  # 4 (the top of the range)
    term.press("up")  # stays 4
    term.press("enter")
    assert value_of(term.outcome()) == 4


def test_a_number_is_checked_as_it_is_typed_and_refused_naming_the_rule(terminal):
    term = terminal(typed("number", min=1, max=10))
    term.wait_for("a number between 1 and 10")
    term.press("1", "2")
    screen = term.wait_for("Not yet:")
    assert "10" in screen
    term.press("enter")
    term.wait_for("Not taken:")
    term.press("backspace", "backspace", "7", "enter")
    assert value_of(term.outcome()) == 7


def test_a_date_is_checked_as_it_is_typed(terminal):
    term = terminal(typed("date", question="Release date?"))
    term.wait_for("a date (YYYY-MM-DD)")
    term.press(*"2026-02-30")
    term.wait_for("Not yet:")
    for _ in range(2):
        term.press("backspace")
    term.press(*"28", "enter")
    assert value_of(term.outcome()) == "2026-02-28"


def test_a_time_and_a_datetime_are_answered(terminal):
    term = terminal(typed("time", question="When?"))
    term.wait_for("a time of day")
    term.press(*"09:30", "enter")
    assert value_of(term.outcome()) == "09:30"
    term = terminal(typed("datetime", question="When exactly?"))
    term.wait_for("with its UTC offset")
    term.press(*"2026-12-24T18:30:00+01:00", "enter")
    assert value_of(term.outcome()) == "2026-12-24T18:30:00+01:00"


def test_files_are_filtered_and_ticked(terminal, tmp_path):
    """Typing filters the list; Up/Down move; Space ticks (at most max_count); Enter sends."""
    root = tmp_path / "repo"
    for name in ("src/app.py", "src/util.py", "docs/guide.md", "README.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    term = terminal(files_question(root, max_count=2))
    screen = term.wait_for("4 of 4 files match")
    assert "[ ] README.md" in screen
    term.press(*"src")
    term.wait_for("2 of 4 files match")
    term.press("space", "down", "space")
    screen = term.wait_for("2 ticked")
    assert "[x] src/app.py" in screen
    assert "[x] src/util.py" in screen
    term.press("backspace", "backspace", "backspace")
    term.wait_for("4 of 4 files match")
    term.press("space")  # a third file: refused, max_count is 2
    term.wait_for("At most 2 files")
    term.press("enter")
    assert value_of(term.outcome()) == ["src/app.py", "src/util.py"]


def test_an_upload_takes_a_path_with_completion(terminal, tmp_path):
    """Tab completes the path; Enter copies the file into the uploads folder (private) and,
    for one file, sends its record."""
    source = tmp_path / "report-final.txt"
    source.write_bytes(b"the report\n" * 100)
    uploads = tmp_path / "uploads"
    term = terminal(
        typed("upload", question="Send the report", max_count=1, accept=[".txt"]),
        DSH_USER_QUESTIONS_UPLOADS=str(uploads),
    )
    term.wait_for("Path of the file:")
    term.press(*f"{tmp_path}/report-f", "\t")
    term.wait_for("report-final.txt")
    term.press("enter")
    (record,) = value_of(term.outcome())
    assert record["name"] == "report-final.txt"
    assert record["sha256"] == hashlib.sha256(source.read_bytes()).hexdigest()
    written = Path(record["path"])
    assert written.read_bytes() == source.read_bytes()
    assert written.is_relative_to(uploads)
    assert os.stat(uploads).st_mode & 0o777 == 0o700


def test_an_upload_of_a_refused_type_or_too_large_keeps_nothing(terminal, tmp_path):
    uploads = tmp_path / "uploads"
    (tmp_path / "tool.exe").write_bytes(b"MZ")
    (tmp_path / "big.txt").write_bytes(b"x" * 5000)
    (tmp_path / "ok.txt").write_bytes(b"ok")
    term = terminal(
        typed("upload", question="Send it", max_count=1, accept=[".txt"], max_bytes=1000),
        DSH_USER_QUESTIONS_UPLOADS=str(uploads),
    )
    term.wait_for("Path of the file:")
    term.press(*f"{tmp_path}/tool.exe", "enter")
    term.wait_for("not a type this")
    term.press(*(["backspace"] * 200), *f"{tmp_path}/big.txt", "enter")
    term.wait_for("larger than this")
    kept = [p for p in uploads.rglob("*") if p.is_file()] if uploads.exists() else []
    assert kept == []
    term.press(*(["backspace"] * 200), *f"{tmp_path}/ok.txt", "enter")
    (record,) = value_of(term.outcome())
    assert record["name"] == "ok.txt"


def test_line_mode_answers_typed_questions(piped, tmp_path):
    """Through pipes: the line is the value (files separated by commas)."""
    assert value_of_piped(piped(typed("number", min=1, max=10), "7\n")) == 7
    assert value_of_piped(piped(typed("date", question="When?"), "2026-12-24\n")) == "2026-12-24"
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.txt").write_text("a")
    (root / "b.txt").write_text("b")
    answer = piped(files_question(root), "a.txt, b.txt\n")
    assert value_of_piped(answer) == ["a.txt", "b.txt"]


def value_of_piped(result: Any) -> Any:
    assert result.answer is not None, (result.stdout, result.stderr)
    return result.answer["answers"][0]["value"]
