"""Claude Code's vocabulary read faithfully: option previews (issue 28, point 3)."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_user_questions import (
    AskUserQuestionOption,
    AskUserQuestionRequest,
    UserQuestionError,
    UserQuestionErrorCode,
    WireFormatError,
    tool,
)

LAYOUT = "```\n+--------+\n| header |\n+--------+\n```\n\tand a tab"


def tool_question(*options: dict[str, Any]) -> dict[str, Any]:
    """A question in tool form, id ``layout``, with ``options``."""
    return {"id": "layout", "question": "Which layout?", "options": list(options)}


def tool_problems(*options: dict[str, Any]) -> tuple[str, ...]:
    """The INVALID_ARGS problems of tool arguments with one question of ``options``."""
    with pytest.raises(UserQuestionError) as caught:
        tool.read_arguments({"questions": [tool_question(*options)]})
    assert caught.value.code == UserQuestionErrorCode.INVALID_ARGS
    return caught.value.problems


class TestPreview:
    """An option's ``preview``: markdown shown when the option is focused."""

    def test_preview_round_trips_through_the_wire_form(self) -> None:
        """``preview`` is written under its wire key and read back unchanged."""
        option = AskUserQuestionOption("Boxed", "A framed header", preview=LAYOUT)
        assert option.to_dict() == {
            "label": "Boxed",
            "description": "A framed header",
            "preview": LAYOUT,
        }
        assert AskUserQuestionOption.from_dict(option.to_dict()) == option

    def test_absent_preview_is_left_out_of_the_wire_form(self) -> None:
        """An option without a preview has no ``preview`` key."""
        assert AskUserQuestionOption("Plain").to_dict() == {"label": "Plain"}

    def test_a_request_carries_previews_both_ways(self) -> None:
        """A request's options keep their previews through to_dict and from_dict."""
        data = {
            "questions": [tool_question({"label": "Boxed", "preview": LAYOUT}, {"label": "Bare"})]
        }
        request = AskUserQuestionRequest.from_dict(data)
        assert [o.preview for o in request.questions[0].options] == [LAYOUT, None]
        assert AskUserQuestionRequest.from_dict(request.to_dict()) == request

    def test_a_preview_that_is_not_text_names_its_path(self) -> None:
        """from_dict refuses a non-string preview with its path."""
        with pytest.raises(WireFormatError) as caught:
            AskUserQuestionRequest.from_dict(
                {"questions": [tool_question({"label": "a", "preview": 3}, {"label": "b"})]}
            )
        assert caught.value.problems == (
            "questions[0].options[0].preview: must be a string, not a number",
        )

    def test_preview_is_type_checked(self) -> None:
        """A non-string preview is a TypeError naming the field."""
        with pytest.raises(TypeError, match="preview"):
            AskUserQuestionOption("a", preview=3)  # type: ignore[arg-type]

    def test_the_tool_takes_a_multiline_preview(self) -> None:
        """The tool's arguments may give an option a preview of several lines and a tab."""
        [question] = tool.read_arguments(
            {"questions": [tool_question({"label": "Boxed", "preview": LAYOUT}, {"label": "Bare"})]}
        )
        assert question.options[0].preview == LAYOUT

    def test_the_schema_offers_preview_with_a_limit(self) -> None:
        """The published schema has an optional ``preview`` with a length limit."""
        option = tool.input_schema()["properties"]["questions"]["items"]["properties"]["options"]
        preview = option["items"]["properties"]["preview"]
        assert preview["maxLength"] == tool.MAX_PREVIEW_LENGTH
        assert "preview" not in option["items"]["required"]

    def test_a_long_preview_is_invalid_args_with_its_path(self) -> None:
        """A preview over the limit is refused with its path and length."""
        long = "x" * (tool.MAX_PREVIEW_LENGTH + 1)
        assert tool_problems({"label": "a", "preview": long}, {"label": "b"}) == (
            f"questions[0].options[0].preview: must be at most {tool.MAX_PREVIEW_LENGTH}"
            f" characters (got {tool.MAX_PREVIEW_LENGTH + 1})",
        )

    def test_a_preview_with_an_escape_is_invalid_args(self) -> None:
        """A terminal escape in a preview is refused, naming the character and its index."""
        assert tool_problems({"label": "a", "preview": "ok\n\x1b[2J"}, {"label": "b"}) == (
            "questions[0].options[0].preview: must not contain control characters other than"
            " tab and newline, terminal escape sequences or bidirectional overrides"
            " (found U+001B at index 3)",
        )

    def test_a_blank_preview_is_invalid_args(self) -> None:
        """A preview of only white space is refused."""
        assert tool_problems({"label": "a", "preview": " \n "}, {"label": "b"}) == (
            "questions[0].options[0].preview: must not be blank",
        )

    def test_a_strict_mode_null_preview_is_left_out(self) -> None:
        """``"preview": null`` (OpenAI strict mode) means no preview."""
        [question] = tool.read_arguments(
            {"questions": [tool_question({"label": "a", "preview": None}, {"label": "b"})]}
        )
        assert question.options[0].preview is None
