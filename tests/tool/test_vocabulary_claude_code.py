"""Claude Code's vocabulary read faithfully (issue 28, point 3) and one look-alike rule (issue
29, point 3): previews, " (Recommended)", the reserved labels, labels that look alike."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_user_questions import (
    AskUserQuestionOption,
    AskUserQuestionRequest,
    UserQuestionError,
    UserQuestionErrorCode,
    WireFormatError,
    _confusables,
    _tool_schema,
    plugin,
    rules,
    tool,
)
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.rules import check_request
from dsh_user_questions.testing import ScriptedProvider, make_question, make_request

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
        assert preview["maxLength"] == _tool_schema.MAX_PREVIEW_LENGTH
        assert "preview" not in option["items"]["required"]

    def test_a_long_preview_is_invalid_args_with_its_path(self) -> None:
        """A preview over the limit is refused with its path and length."""
        long = "x" * (_tool_schema.MAX_PREVIEW_LENGTH + 1)
        assert tool_problems({"label": "a", "preview": long}, {"label": "b"}) == (
            f"questions[0].options[0].preview: must be at most {_tool_schema.MAX_PREVIEW_LENGTH}"
            f" characters (got {_tool_schema.MAX_PREVIEW_LENGTH + 1})",
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


def options_of(*labels: str) -> tuple[AskUserQuestionOption, ...]:
    """Options with these labels."""
    return tuple(AskUserQuestionOption(label) for label in labels)


async def refused(*labels: str) -> UserQuestionError:
    """The error ``ask()`` raises for one question offering ``labels`` (nobody is asked)."""
    provider = ScriptedProvider()
    async with HarnessContext() as ctx:
        ctx.register(plugin)
        ctx.user_questions.register_provider(provider)
        with pytest.raises(UserQuestionError) as caught:
            await ctx.user_questions.ask(make_request(make_question(options=options_of(*labels))))
    assert provider.requests == []
    return caught.value


class TestLookAlikeLabels:
    """Labels of one question that look the same are refused by ``ask()``, naming both."""

    @pytest.mark.parametrize(
        ("first", "second"),
        [
            ("pop", "\u0440\u043e\u0440"),  # Cyrillic er, o, er
            ("cluster-l", "cluster-I"),
            ("cluster-1", "cluster-l"),
            ("backup-0", "backup-O"),
            ("npm", "npm\u200b"),  # a zero-width space
            ("npm", "n\u0440m"),
            ("modern", "rnodern"),
            ("paypal", "\u0440\u0430\u0443\u0440\u0430l"),
        ],
    )
    async def test_a_look_alike_pair_is_bad_question(self, first: str, second: str) -> None:
        """The second label of a look-alike pair is refused, the message naming both."""
        error = await refused(first, second)
        assert error.code == UserQuestionErrorCode.BAD_QUESTION
        problem = (
            f"option 1 {json.dumps(second)} looks the same as option 0 {json.dumps(first)}"
            " (labels must not look alike: Unicode confusables, l, I and 1, 0 and O)"
        )
        assert error.problems == (problem,)
        assert str(error) == f'question "pkg" {problem}'

    @pytest.mark.parametrize(
        "labels",
        [
            ("\u0434\u0430", "\u043d\u0435\u0442"),  # Cyrillic yes and no
            ("caf\u00e9", "cafe"),
            ("pop", "pip", "top"),
            ("backup-1", "backup-2"),
        ],
    )
    def test_labels_that_differ_at_a_glance_pass(self, labels: tuple[str, ...]) -> None:
        """Labels that a reader tells apart pass the rule."""
        check_request(make_request(make_question(options=options_of(*labels))))

    def test_the_tool_refuses_a_pair_at_its_path(self) -> None:
        """The tool reports a look-alike label at its path, naming the first one's path."""
        assert tool_problems({"label": "backup-0"}, {"label": "backup-O"}) == (
            "questions[0].options[1].label: looks the same as questions[0].options[0].label"
            ' ("backup-O" and "backup-0"; labels must not look alike: Unicode confusables, l,'
            " I and 1, 0 and O)",
        )

    def test_the_skeleton_is_shared_by_case_and_spaces(self) -> None:
        """``label_skeleton`` reads labels as ``label_key`` does, and look-alikes as one."""
        assert rules.label_skeleton(" Cluster-I ") == rules.label_skeleton("cluster-l")
        assert rules.label_skeleton("\u0420\u043e\u0440") == rules.label_skeleton("pop")

    def test_the_ascii_table_is_the_datas(self) -> None:
        """The ASCII look-alikes kept in code are exactly those of Unicode's data."""
        from confusable_homoglyphs import confusables

        found = {}
        for code in range(0x21, 0x7F):
            char = chr(code)
            for hit in confusables.is_confusable(char, greedy=True) or ():
                glyphs = [g["c"] for g in hit["homoglyphs"]]
                if len(glyphs) == 1 and glyphs[0].isascii():
                    found[char] = glyphs[0]
        assert found == _confusables.ASCII_PROTOTYPES


class TestReservedLabels:
    """Only the UI's own choices themselves ("Other", "Skip") are reserved."""

    @pytest.mark.parametrize("label", ["Other", "skip", " SKIP. ", "Other:", "O ther"])
    async def test_the_uis_own_choices_are_refused_quoting_the_label(self, label: str) -> None:
        """A label that is "Other" or "Skip" is BAD_QUESTION, quoting the model's own label."""
        error = await refused("pnpm", label)
        assert error.code == UserQuestionErrorCode.BAD_QUESTION
        meaning = "Other" if "o" in label.lower() else "Skip"
        assert error.problems == (
            f"option 1 {json.dumps(label)} reads as the UI's own {json.dumps(meaning)} choice,"
            " which every UI adds itself; leave it out",
        )

    @pytest.mark.parametrize(
        "label", ["Skip tests", "None of the above", "Something else", "Other (please specify)"]
    )
    def test_labels_saying_more_are_ordinary(self, label: str) -> None:
        """A label that says more than the UI's own choice is the model's to offer."""
        check_request(make_request(make_question(options=options_of("pnpm", label))))
        [question] = tool.read_arguments(
            {"questions": [tool_question({"label": "a"}, {"label": label})]}
        )
        assert question.options[1].label == label


class TestRecommendedSuffix:
    """A label ending " (Recommended)" reads as ``recommended=True`` without the suffix."""

    def test_from_dict_reads_the_suffix(self) -> None:
        """from_dict drops the suffix (any case) and marks the option recommended."""
        for label in ("pnpm (Recommended)", "pnpm (recommended)", "pnpm  (Recommended) "):
            option = AskUserQuestionOption.from_dict({"label": label})
            assert (option.label, option.recommended) == ("pnpm", True)

    def test_an_explicit_flag_keeps_the_label(self) -> None:
        """An option that says ``recommended`` itself keeps its label as written."""
        option = AskUserQuestionOption.from_dict(
            {"label": "pnpm (Recommended)", "recommended": False}
        )
        assert (option.label, option.recommended) == ("pnpm (Recommended)", False)

    def test_every_option_reads_back_as_it_was(self) -> None:
        """to_dict then from_dict gives the same option, suffix or not, recommended or not."""
        for option in (
            AskUserQuestionOption("pnpm (Recommended)"),
            AskUserQuestionOption("pnpm (Recommended)", recommended=True),
            AskUserQuestionOption("pnpm", recommended=True),
            AskUserQuestionOption("(Recommended)"),
        ):
            assert AskUserQuestionOption.from_dict(option.to_dict()) == option

    def test_the_tool_reads_the_suffix(self) -> None:
        """The tool's arguments read the suffix the same way, strict-mode nulls included."""
        [question] = tool.read_arguments(
            {
                "questions": [
                    tool_question(
                        {"label": "Sidebar (Recommended)", "recommended": None}, {"label": "Tabs"}
                    )
                ]
            }
        )
        assert [(o.label, o.recommended) for o in question.options] == [
            ("Sidebar", True),
            ("Tabs", False),
        ]

    def test_two_suffixed_options_of_a_single_select_are_invalid(self) -> None:
        """Two " (Recommended)" labels on a single-select break the one-recommended rule."""
        assert tool_problems({"label": "a (Recommended)"}, {"label": "b (Recommended)"}) == (
            "questions[0].options[1].recommended: must not be true:"
            " questions[0].options[0].recommended is already true, and a single-select question"
            " recommends at most one option",
        )


_CYRILLIC_TWINS = {"a": "\u0430", "c": "\u0441", "e": "\u0435", "o": "\u043e", "p": "\u0440"}


class TestLookAlikeProperties:
    """The look-alike rule on any label a model may write (Hypothesis)."""

    @given(
        st.text(alphabet="aceop", min_size=1, max_size=12),
        st.lists(st.booleans(), min_size=12, max_size=12),
        st.booleans(),
    )
    def test_a_label_and_its_disguised_copy_are_never_both_offered(
        self, word: str, swaps: list[bool], invisible: bool
    ) -> None:
        """A label and a copy with Cyrillic twins or a zero-width space put in are refused."""
        copy = "".join(_CYRILLIC_TWINS[c] if s else c for c, s in zip(word, swaps, strict=False))
        copy += "\u200b" if invisible else ""
        if copy == word:
            return
        with pytest.raises(UserQuestionError) as caught:
            check_request(make_request(make_question(options=options_of(word, copy))))
        assert caught.value.code == UserQuestionErrorCode.BAD_QUESTION

    @given(st.lists(st.text(min_size=1, max_size=12), min_size=2, max_size=5))
    def test_the_rule_never_crashes(self, labels: list[str]) -> None:
        """Any labels are accepted or refused as BAD_QUESTION, never an exception of another
        kind; a refusal names options by their place."""
        refused: UserQuestionError | None = None
        try:
            check_request(make_request(make_question(options=options_of(*labels))))
        except UserQuestionError as error:
            refused = error
        if refused is not None:
            assert refused.code == UserQuestionErrorCode.BAD_QUESTION
            assert all(problem.startswith("option ") for problem in refused.problems)


def test_mcp_choices_that_look_alike_are_told_apart_by_their_values() -> None:
    """An MCP elicitation whose titles look alike is asked with labels the rule accepts."""
    mcp = pytest.importorskip("dsh_user_questions.mcp._callback")
    choices = [{"const": "b0", "title": "backup-0"}, {"const": "bO", "title": "backup-O"}]
    [question] = mcp.questions_for_elicitation(
        "m", {"type": "object", "properties": {"pick": {"type": "string", "oneOf": choices}}}
    )
    assert [option.label for option in question.options] == ["backup-0", "backup-O (bO)"]
    check_request(make_request(question))
