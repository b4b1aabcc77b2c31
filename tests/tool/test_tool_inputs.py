"""The tool's typed inputs: what a model may ask through ``input``, and what it gets back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionRequest,
    AskUserQuestionUpload,
    UserQuestionError,
    rules,
    tool,
)
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import ScriptedProvider


def call(**input_: object) -> dict[str, object]:
    return {"questions": [{"id": "q", "question": "Which?", "input": input_}]}


class TestAsking:
    """A model asks a number, a date, files; the harness roots the files."""

    async def test_a_number_round_trip(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """The provider gets the input; the model gets the value in the answer's JSON."""
        scripted_provider.push({"answers": [{"id": "q", "value": 2.5}]})
        result = await tool.run(dsh_context, call(type="number", min=0, step=0.5, unit="GB"))
        assert result.content == '{"answers":[{"id":"q","selected":[],"value":2.5}]}'
        given = scripted_provider.requests[0].questions[0].input
        assert given is not None
        assert (given.type, given.min, given.step, given.unit) == (
            "number",
            0,
            0.5,
            "GB",
        )

    async def test_files_without_a_workspace_are_not_available(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """No workspace: BAD_QUESTION saying file questions are not available (not INVALID_ARGS,
        which the model would retry); nobody is asked."""
        result = await tool.run(dsh_context, call(type="files", pattern="*.md"))
        assert result.is_error
        assert result.error == {"name": "InvalidRequestError", "code": "BAD_QUESTION"}
        assert "file questions are not available here" in result.content
        assert scripted_provider.requests == []

    async def test_files_with_a_workspace_list_their_candidates(
        self,
        dsh_context: HarnessContext,
        scripted_provider: ScriptedProvider,
        tmp_path: Path,
    ) -> None:
        """The workspace is the root; the matching files are listed when the call asks."""
        (tmp_path / "docs").mkdir()
        (tmp_path / "docs" / "a.md").write_text("a")
        (tmp_path / "b.txt").write_text("b")
        scripted_provider.push({"answers": [{"id": "q", "value": ["docs/a.md"]}]})
        result = await tool.run(
            dsh_context, call(type="files", pattern="**/*.md"), workspace=tmp_path
        )
        assert result.content == '{"answers":[{"id":"q","selected":[],"value":["docs/a.md"]}]}'
        given = scripted_provider.requests[0].questions[0].input
        assert given is not None
        assert (given.root, given.candidates) == (str(tmp_path), ("docs/a.md",))

    async def test_an_upload_reaches_the_model_without_its_digest(
        self,
        dsh_context: HarnessContext,
        scripted_provider: ScriptedProvider,
        tmp_path: Path,
    ) -> None:
        """The model sees name, type, size and path of an upload, never its sha256."""
        path = tmp_path / "a.txt"
        path.write_bytes(b"abc")
        upload = AskUserQuestionUpload(
            name="a.txt",
            media_type="text/plain",
            size=3,
            sha256="ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            path=str(path),
        )

        def answer(request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
            return AskUserQuestionAnswer([AskUserQuestionAnswerItem(id="q", value=[upload])])

        scripted_provider.push(answer)
        result = await tool.run(dsh_context, call(type="upload"))
        assert json.loads(result.content) == {
            "answers": [
                {
                    "id": "q",
                    "selected": [],
                    "value": [
                        {"name": "a.txt", "media_type": "text/plain", "size": 3, "path": str(path)}
                    ],
                }
            ]
        }


class TestArguments:
    """What a model may not write in ``input``, reported with paths for its retry."""

    def problems(self, arguments: object) -> tuple[str, ...]:
        with pytest.raises(UserQuestionError) as info:
            tool.read_arguments(arguments)
        assert info.value.code == "INVALID_ARGS"
        return info.value.problems

    def test_the_model_cannot_give_a_root_or_candidates(self) -> None:
        """root and candidates are the harness's: unknown properties to the model."""
        problems = self.problems(call(type="files", root="/etc", candidates=["passwd"]))
        assert problems[0].startswith("questions[0].input.root: unknown property; allowed: type,")
        assert problems[1].startswith("questions[0].input.candidates: unknown property")

    def test_input_with_options_or_bad_fields(self) -> None:
        """Options beside input, min above max and a unit with an escape are each named."""
        arguments = call(type="number", min=3, max=1, unit="\x1b[31mkg")
        arguments["questions"][0]["options"] = [{"label": "a"}, {"label": "b"}]  # type: ignore[index]
        assert self.problems(arguments) == (
            "questions[0].input.unit: must not contain control characters, terminal escape"
            " sequences or bidirectional overrides (found U+001B at index 0)",
            "questions[0].input: may be given only without options (got 2)",
            "questions[0].input.min: is 3 above input.max 1",
        )

    def test_an_unknown_type_is_refused_by_the_schema(self) -> None:
        """The type is one of the enum's."""
        assert self.problems(call(type="colour")) == (
            "questions[0].input.type: must be one of number, date, time, datetime, files, upload",
        )

    def test_strict_mode_nulls_are_left_out(self) -> None:
        """OpenAI strict mode sends every input property, null for none: read as left out."""
        (item,) = tool.read_arguments(
            call(
                type="date", min=None, max=None, step=None, unit=None, pattern=None, max_count=None
            )
        )
        assert item.input is not None
        assert item.input.to_dict() == {"type": "date"}


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
INPUT_KEYS = st.sampled_from(
    ["type", "min", "max", "step", "unit", "pattern", "max_count", "root", "candidates", "x"]
)


@settings(max_examples=300)
@given(
    given_input=st.dictionaries(INPUT_KEYS, JSON_VALUES, max_size=5)
    | st.fixed_dictionaries(
        {"type": st.sampled_from(["number", "date", "time", "datetime", "files", "upload"])},
        optional={
            "min": st.floats(allow_nan=False) | st.integers(),
            "max": st.floats(allow_nan=False) | st.integers(),
            "step": st.floats(allow_nan=False) | st.integers(),
            "unit": st.text(max_size=25),
            "pattern": st.text(max_size=30),
            "max_count": st.integers(-2, 5),
        },
    )
)
def test_any_input_a_model_sends_is_read_or_refused_with_paths(given_input: object) -> None:
    """Whatever ``input`` a model sends, the tool reads questions the rules accept, or refuses
    with INVALID_ARGS; it never crashes."""
    arguments = {"questions": [{"id": "q", "question": "Which?", "input": given_input}]}
    refused: UserQuestionError | None = None
    try:
        (item,) = tool.read_arguments(json.loads(json.dumps(arguments)))
    except UserQuestionError as err:
        refused = err
    if refused is not None:
        assert refused.code == "INVALID_ARGS"
        assert all(problem for problem in refused.problems)
        return
    assert item.input is not None
    if item.input.type != "files":  # a files question gets its root from the harness
        rules.check_request(AskUserQuestionRequest(questions=[item]))
