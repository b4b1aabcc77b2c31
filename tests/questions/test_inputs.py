"""Typed answers and files: the ``input`` of a question and the ``value`` of its answer."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import attrs
import pytest

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionInput,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    AskUserQuestionUpload,
    UserQuestionError,
    UserQuestionService,
    WireFormatError,
    rules,
)
from dsh_user_questions._inputs import check_files
from dsh_user_questions.rules import MAX_UPLOAD_BYTES
from dsh_user_questions.testing import ScriptedProvider
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


def _ask(given: AskUserQuestionInput, **changes: object) -> AskUserQuestionItem:
    return AskUserQuestionItem(id="q", question="?", input=given, **changes)  # type: ignore[arg-type]


def _request_problems(item: AskUserQuestionItem) -> tuple[str, ...]:
    with pytest.raises(UserQuestionError) as info:
        rules.check_request(AskUserQuestionRequest(questions=[item]))
    assert info.value.code == "BAD_QUESTION"
    return info.value.problems


def _answer_problems(item: AskUserQuestionItem, **answer: object) -> tuple[str, ...]:
    with pytest.raises(UserQuestionError) as info:
        rules.check_answer([item], {"answers": [{"id": item.id, **answer}]})
    assert info.value.code == "BAD_ANSWER"
    return info.value.problems


NUMBER = AskUserQuestionInput(type="number", min=0, max=1, step=0.1)
FILES = AskUserQuestionInput(
    type="files",
    root="/w",
    pattern="src/**/*.py",
    max_count=2,
    candidates=["src/a.py", "src/b/c.py"],
)


class TestRequestRules:
    """`rules.check_request` refuses the combinations a typed input cannot take."""

    def test_input_takes_no_options_multi_select_or_secret(self) -> None:
        """Options, multi_select and secret beside input are each refused, naming the rule."""
        item = _ask(
            AskUserQuestionInput(type="date"),
            options=[AskUserQuestionOption("a"), AskUserQuestionOption("b")],
            multi_select=True,
        )
        assert _request_problems(item) == (
            "has input and options; a question with input takes its value only",
            "has input and is multi_select; a question with input takes its value only",
        )
        assert _request_problems(_ask(AskUserQuestionInput(type="time"), secret=True)) == (
            "has input and is secret; a secret question takes free text only",
        )

    def test_fields_fit_the_type(self) -> None:
        """An unknown type, a field of another type, min above max, a step of 0 are refused."""
        assert _request_problems(_ask(AskUserQuestionInput(type="colour"))) == (
            'has input.type "colour", which is none of number, date, time, datetime, files, upload',
        )
        assert _request_problems(
            _ask(AskUserQuestionInput(type="date", unit="kg", max_bytes=3))
        ) == (
            "has input.unit given, but a date input does not take it",
            "has input.max_bytes given, but a date input does not take it",
        )
        assert _request_problems(
            _ask(AskUserQuestionInput(type="number", min=5, max=3, step=0))
        ) == ("has input.min 5 above input.max 3", "has input.step 0 (it must be positive)")

    def test_a_files_input_needs_its_root_and_candidates(self) -> None:
        """The model never gives a root: a files input without one, or unlisted, is refused."""
        assert _request_problems(_ask(AskUserQuestionInput(type="files"))) == (
            "has an input of type files without a root (tool.run(..., workspace=...) or"
            " AskUserQuestionInput.files gives it one)",
            "has an input of type files whose candidates were never listed"
            " (AskUserQuestionInput.files lists them where the files are)",
        )

    def test_upload_limits(self) -> None:
        """max_bytes above the ceiling and an accept entry of no known form are refused."""
        assert _request_problems(
            _ask(AskUserQuestionInput(type="upload", max_bytes=10**9, accept=["png", ".png"]))
        ) == (
            f"has input.max_bytes 1000000000 (from 1 to {MAX_UPLOAD_BYTES})",
            'has input.accept[0] "png", which is neither a MIME type (image/png, image/*) nor'
            " an extension (.pdf)",
        )

    def test_a_good_input_passes(self) -> None:
        """Each type with fitting fields passes."""
        for given in (NUMBER, FILES, AskUserQuestionInput(type="upload", accept=["image/*"])):
            rules.check_request(AskUserQuestionRequest(questions=[_ask(given)]))


class TestAnswerRules:
    """`rules.check_answer` checks every value against its input."""

    @pytest.mark.parametrize("value", [0, 0.3, 0.7, 1, 1.0])
    def test_numbers_on_the_grid_pass(self, value: float) -> None:
        """Decimal arithmetic: 0.3 and 0.7 are on a 0.1 grid (float % says otherwise)."""
        rules.check_answer([_ask(NUMBER)], {"answers": [{"id": "q", "value": value}]})

    @pytest.mark.parametrize(
        ("value", "problem"),
        [
            (1.5, "has value 1.5 above the maximum 1"),
            (-1, "has value -1 below the minimum 0"),
            (0.25, "has value 0.25, which is off the step 0.1 counted from the minimum 0"),
            (True, "has value True, which is not a number (the question asks a number)"),
            ("1", 'has value "1", which is not a number (the question asks a number)'),
            (float("nan"), "has value nan, which is not a finite number"),
        ],
    )
    def test_bad_numbers(self, value: object, problem: str) -> None:
        """Out of range, off the grid, a bool, a string, NaN: each named with its rule."""
        if value is True:  # the wire reader takes a bool as no number at all
            answer = AskUserQuestionAnswer([AskUserQuestionAnswerItem(id="q", value=1)])
            object.__setattr__(answer.answers[0], "value", True)
            with pytest.raises(UserQuestionError) as info:
                rules.check_answer([_ask(NUMBER)], answer)
            assert info.value.problems == (f'answers[0] (question "q") {problem}',)
            return
        assert _answer_problems(_ask(NUMBER), value=value) == (
            f'answers[0] (question "q") {problem}',
        )

    def test_step_counts_from_zero_without_a_minimum(self) -> None:
        """Without min, the grid starts at 0: 5 is on a step of 5, 7 is not."""
        item = _ask(AskUserQuestionInput(type="number", step=5))
        rules.check_answer([item], {"answers": [{"id": "q", "value": -5}]})
        assert _answer_problems(item, value=7) == (
            'answers[0] (question "q") has value 7, which is off the step 5 counted from 0',
        )

    @pytest.mark.parametrize(
        ("kind", "good", "bad"),
        [
            ("date", "2024-02-29", ["2023-02-29", "20240101", "2024-1-01", "2024-01-01T00:00"]),
            ("time", "23:59:59", ["24:00", "9:30", "12:60", "12:00:00+01:00"]),
            (
                "datetime",
                "2026-12-07T09:30:00+01:00",
                [
                    "2026-12-07T09:30:00",
                    "2026-12-07 09:30Z",
                    "2026-13-01T00:00Z",
                    "2026-12-07T09:30+25:00",
                ],
            ),
        ],
    )
    def test_dates_and_times_are_real(self, kind: str, good: str, bad: list[str]) -> None:
        """A real date, time or RFC 3339 date-time with an offset passes; others are refused."""
        item = _ask(AskUserQuestionInput(type=kind))
        rules.check_answer([item], {"answers": [{"id": "q", "value": good}]})
        for value in bad:
            (problem,) = _answer_problems(item, value=value)
            assert f"has value {json.dumps(value)}, which is not " in problem, value

    def test_files_rules(self) -> None:
        """Distinct, relative, matching, offered and within max_count: each breach named."""
        item = _ask(FILES)
        rules.check_answer([item], {"answers": [{"id": "q", "value": ["src/a.py"]}]})
        assert _answer_problems(item, value=["src/a.py", "src/a.py", "/etc/passwd"]) == (
            'answers[0] (question "q") picks 3 files (at most 2)',
            'answers[0] (question "q") picks a file more than once',
            'answers[0] (question "q") picks "/etc/passwd", which is not a relative POSIX path',
        )
        assert _answer_problems(item, value=["src/../x.py", "docs/a.py", "src/z.py"])[1:] == (
            'answers[0] (question "q") picks "src/../x.py", which is not a plain relative path'
            " (no '.', '..' or empty parts)",
            'answers[0] (question "q") picks "docs/a.py", which does not match the pattern'
            ' "src/**/*.py"',
            'answers[0] (question "q") picks "src/z.py", which is not one of the files offered',
        )

    def test_uploads_rules(self) -> None:
        """Count, size, accepted type and a plain name: each breach named."""
        item = _ask(
            AskUserQuestionInput(type="upload", accept=["image/*"], max_bytes=2, max_count=1)
        )
        bad = AskUserQuestionUpload(
            name="../x.sh", media_type="text/x-sh", size=3, sha256="ab" * 32, path="/u/x"
        )
        problems = _answer_problems(item, value=[bad.to_dict(), UPLOAD.to_dict()])
        assert problems == (
            'answers[0] (question "q") uploads 2 files (at most 1)',
            'answers[0] (question "q") has upload 0 named "../x.sh", which is not a plain file'
            " name",
            'answers[0] (question "q") has upload 0 of 3 bytes (at most 2)',
            'answers[0] (question "q") has upload 0 of type "text/x-sh", which the question'
            " does not accept (image/*)",
            'answers[0] (question "q") has upload 1 of 3 bytes (at most 2)',
        )

    def test_input_takes_value_only_and_others_take_none(self) -> None:
        """Custom text on a typed question, and a value on an untyped one, are refused; a skip
        passes."""
        rules.check_answer([_ask(NUMBER)], {"answers": [{"id": "q", "selected": []}]})
        assert _answer_problems(_ask(NUMBER), custom="5") == (
            'answers[0] (question "q") has custom text, but the question takes a value (it has'
            " input)",
        )
        plain = AskUserQuestionItem(id="q", question="?")
        assert _answer_problems(plain, value=3) == (
            'answers[0] (question "q") has a value, but the question has no input (it takes'
            " options or text)",
        )


class TestWhereTheFilesAre:
    """The service's `check_files` checks paths and uploads on the asker's machine."""

    def test_paths_must_be_files_under_the_root(self, tmp_path: Path) -> None:
        """A missing file and a symbolic link out of the root are refused; a file passes."""
        root = tmp_path / "root"
        root.mkdir()
        (root / "a.txt").write_text("a")
        (tmp_path / "secret.txt").write_text("s")
        (root / "out.txt").symlink_to(tmp_path / "secret.txt")
        given = AskUserQuestionInput(
            type="files", root=str(root), candidates=["a.txt", "gone.txt", "out.txt"]
        )
        item = _ask(given)
        check_files(
            [item], AskUserQuestionAnswer([AskUserQuestionAnswerItem(id="q", value=["a.txt"])])
        )
        with pytest.raises(UserQuestionError) as info:
            check_files(
                [item],
                AskUserQuestionAnswer(
                    [AskUserQuestionAnswerItem(id="q", value=["gone.txt", "out.txt"])]
                ),
            )
        assert info.value.problems == (
            'answers[0] (question "q") picks "gone.txt", which is no regular file under the root',
            'answers[0] (question "q") picks "out.txt", which leads outside the root (a symbolic'
            " link)",
        )

    def test_an_upload_must_be_what_its_record_says(self, tmp_path: Path) -> None:
        """The file's size and sha256 are compared with the record's."""
        data = b"png"
        path = tmp_path / "cat.png"
        path.write_bytes(data)
        good = AskUserQuestionUpload(
            name="cat.png",
            media_type="image/png",
            size=3,
            sha256=hashlib.sha256(data).hexdigest(),
            path=str(path),
        )
        item = _ask(AskUserQuestionInput(type="upload"))
        check_files(
            [item], AskUserQuestionAnswer([AskUserQuestionAnswerItem(id="q", value=[good])])
        )
        lied = attrs.evolve(good, sha256="0" * 64)
        with pytest.raises(UserQuestionError) as info:
            check_files(
                [item], AskUserQuestionAnswer([AskUserQuestionAnswerItem(id="q", value=[lied])])
            )
        assert info.value.problems == (
            'answers[0] (question "q") has upload 0 whose file\'s sha256 differs from its record',
        )

    async def test_the_service_checks_files_when_the_answer_arrives(
        self,
        user_questions: UserQuestionService,
        scripted_provider: ScriptedProvider,
        tmp_path: Path,
    ) -> None:
        """ask() refuses a picked path that is no file under the root (BAD_ANSWER)."""
        given = AskUserQuestionInput(type="files", root=str(tmp_path), candidates=["x.txt"])
        scripted_provider.push({"answers": [{"id": "q", "value": ["x.txt"]}]})
        with pytest.raises(UserQuestionError) as info:
            await user_questions.ask(AskUserQuestionRequest(questions=[_ask(given)]))
        assert info.value.code == "BAD_ANSWER"
        (tmp_path / "x.txt").write_text("x")
        scripted_provider.push({"answers": [{"id": "q", "value": ["x.txt"]}]})
        answer = await user_questions.ask(AskUserQuestionRequest(questions=[_ask(given)]))
        assert answer.answers[0].value == ("x.txt",)
