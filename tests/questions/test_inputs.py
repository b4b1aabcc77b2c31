"""Typed answers and files: the ``input`` of a question and the ``value`` of its answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionInput,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    AskUserQuestionUpload,
    WireFormatError,
)
from dsh_user_questions.view import InputView, question_view

UPLOAD = AskUserQuestionUpload(
    name="cat.png", media_type="image/png", size=3, sha256="ab" * 32, path="/tmp/u/cat.png"
)


class TestWireForm:
    """``input`` and ``value`` travel in the one wire form, ``None`` fields left out."""

    def test_a_number_question_reads_back_as_written(self) -> None:
        """A number input writes its set fields in snake_case and reads back equal."""
        item = AskUserQuestionItem(
            id="n",
            question="How many?",
            input=AskUserQuestionInput(type="number", min=0, max=10, step=0.5, unit="kg"),
        )
        data = item.to_dict()
        assert data["input"] == {"type": "number", "min": 0, "max": 10, "step": 0.5, "unit": "kg"}
        assert AskUserQuestionItem.from_dict(json.loads(json.dumps(data))) == item

    def test_a_files_question_carries_root_and_candidates(self) -> None:
        """The harness-written root and candidates travel, so a page elsewhere offers the list."""
        given = AskUserQuestionInput(
            type="files", root="/w", pattern="**/*.py", max_count=2, candidates=["a.py", "b/c.py"]
        )
        assert given.candidates == ("a.py", "b/c.py")
        assert given.to_dict() == {
            "type": "files",
            "pattern": "**/*.py",
            "max_count": 2,
            "root": "/w",
            "candidates": ["a.py", "b/c.py"],
        }
        assert AskUserQuestionInput.from_dict(given.to_dict()) == given

    def test_values_read_back_as_written(self) -> None:
        """A number, a string, paths and uploads each read back as the same value."""
        for value in (3, 2.5, "2026-12-07", ("a.py", "b.py"), (UPLOAD,)):
            item = AskUserQuestionAnswerItem(id="q", value=value)
            data = json.loads(json.dumps(item.to_dict()))
            assert AskUserQuestionAnswerItem.from_dict(data) == item

    def test_value_is_written_only_when_given(self) -> None:
        """A skip is ``{id, selected: []}``: no ``value`` key."""
        assert AskUserQuestionAnswerItem(id="q").to_dict() == {"id": "q", "selected": []}

    def test_bad_wire_values_are_named_by_path(self) -> None:
        """A value of no allowed shape, and a bad upload field, are reported with their paths."""
        with pytest.raises(WireFormatError) as info:
            AskUserQuestionAnswer.from_dict(
                {
                    "answers": [
                        {"id": "a", "value": True},
                        {"id": "b", "value": ["x", {"name": "y"}]},
                        {"id": "c", "value": [{**UPLOAD.to_dict(), "size": "3"}]},
                    ]
                }
            )
        assert info.value.problems == (
            "answers[0].value: must be a number, a string or an array, not a boolean",
            "answers[1].value: must hold only paths (strings) or only uploads (objects)",
            "answers[2].value[0].size: must be an integer, not a string",
        )

    def test_the_model_cannot_be_given_a_root_by_type(self) -> None:
        """Types are checked at construction: a bool is no number, a string no tuple of paths."""
        with pytest.raises(TypeError, match="min must be a number"):
            AskUserQuestionInput(type="number", min=True)
        with pytest.raises(TypeError, match="value must be"):
            AskUserQuestionAnswerItem(id="q", value={"a": 1})  # type: ignore[arg-type]

    def test_an_unknown_input_key_is_refused(self) -> None:
        """An input key no declaration names is refused with the allowed list."""
        with pytest.raises(WireFormatError) as info:
            AskUserQuestionRequest.from_dict(
                {"questions": [{"id": "a", "question": "?", "input": {"type": "date", "fmt": 1}}]}
            )
        assert info.value.problems[0].startswith(
            "questions[0].input.fmt: unknown property; allowed: type, min, max, step, unit,"
        )


class TestListing:
    """`AskUserQuestionInput.files` lists the candidates where the files are."""

    def test_lists_matching_files_and_skips_dot_git(self, tmp_path: Path) -> None:
        """Regular files matching the glob, as sorted relative POSIX paths; ``.git`` skipped."""
        (tmp_path / "src" / "pkg").mkdir(parents=True)
        (tmp_path / ".git").mkdir()
        (tmp_path / ".git" / "config.py").write_text("")
        (tmp_path / "src" / "pkg" / "a.py").write_text("")
        (tmp_path / "b.py").write_text("")
        (tmp_path / "c.txt").write_text("")
        given = AskUserQuestionInput.files(tmp_path, pattern="**/*.py", max_count=1)
        assert given.root == str(tmp_path)
        assert given.candidates == ("b.py", "src/pkg/a.py")


class TestView:
    """`QuestionView.input` is what every surface draws of the input."""

    def test_view_of_an_upload_question(self) -> None:
        """Limits filled in with the documented defaults; no "Other" on a typed question."""
        view = question_view(
            AskUserQuestionItem(
                id="u", question="Logo?", input=AskUserQuestionInput(type="upload", accept=[".png"])
            )
        )
        assert view.other is False
        assert isinstance(view.input, InputView)
        assert view.input.max_bytes == 25 * 1024 * 1024
        assert view.input.max_count == 10
        assert view.to_dict()["input"]["accept"] == [".png"]

    def test_candidates_are_shown_inert(self) -> None:
        """A file name with an escape is offered by its path and shown with a stand-in."""
        view = question_view(
            AskUserQuestionItem(
                id="f",
                question="Which?",
                input=AskUserQuestionInput(
                    type="files", root="/w", candidates=["ok.txt", "bad\x1b[2J.txt"]
                ),
            )
        )
        assert view.input is not None
        assert view.input.candidates == ("ok.txt", "bad\x1b[2J.txt")
        assert view.input.shown == ("ok.txt", "bad<U+001B>[2J.txt")
        assert view.input.max_bytes is None
