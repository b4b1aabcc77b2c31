"""The one view of a question (dsh_user_questions.view): what every surface shows of it."""

from __future__ import annotations

import gc
import json
import weakref
from typing import Any

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_user_questions import (
    AskUserQuestionIntent,
    AskUserQuestionItem,
    AskUserQuestionOption,
)
from dsh_user_questions._diff import parse_diff
from dsh_user_questions._markdown import render as markdown
from dsh_user_questions.diff_review import diff_review_question
from dsh_user_questions.rules import inert_text
from dsh_user_questions.testing import make_plan_question, make_question, make_request
from dsh_user_questions.view import (
    OptionView,
    QuestionView,
    diff_lines,
    question_view,
    request_view,
)

ALLOWED = {
    "p", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "code", "em",
    "strong", "s", "a", "table", "thead", "tbody", "tr", "th", "td", "hr", "br",
}  # fmt: skip
MARKDOWN_BITS = st.sampled_from(
    ["*", "_", "[", "](", ")", "!", "`", "```\n", "# ", "> ", "- ", "1. ", "10. ", "|", "|-|",
     "~~", "<b>", "<script>", "javascript:", "http://x", "mailto:a@b", "\n", "\n\n", "  ",
     "word", "\x1b[2J", "\u202e", "\\"]
)  # fmt: skip
SOURCES = st.lists(MARKDOWN_BITS | st.text(max_size=5), max_size=60).map("".join)

# Controls, bidi overrides, a zero-width space and a look-alike (Cyrillic er in "npm").
HOSTILE = "n\u0440m \x1b[31mred\x07 \u202eevil\u202c zero\u200bwidth"
DIFF = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-old \x1b[2J\n+new \u202ex\n ctx\u200b\n"
# Emphasis nested this deep overflows the markdown parser's recursion.
TOO_DEEP = "*" * 3000 + "x" + "*" * 3000


def texts(data: Any, *, skip: frozenset[str] = frozenset({"label"})) -> list[str]:
    """Every text a surface would show in ``data`` (a view's JSON form): the values of its keys
    but ``skip``, the text nodes of its trees (not tags or attributes)."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [text for key, value in data.items() if key not in skip for text in texts(value)]
    if isinstance(data, list):
        if len(data) >= 2 and isinstance(data[0], str) and isinstance(data[1], dict):
            data = data[2:]  # an element: [tag, {attributes}, *children]
        return [text for item in data for text in texts(item)]
    return []


def hostile_question(**changes: Any) -> AskUserQuestionItem:
    fields: dict[str, Any] = {
        "id": "q",
        "header": f"head {HOSTILE}",
        "question": f"ask {HOSTILE}\nsecond line",
        "detail": f"# Title {HOSTILE}\n\ntext {HOSTILE}\n\n```\ncode {HOSTILE}\n```",
        "options": (
            AskUserQuestionOption(
                f"pick {HOSTILE}", f"desc {HOSTILE}", preview=f"*prev* {HOSTILE}"
            ),
            AskUserQuestionOption("plain"),
        ),
    }
    fields.update(changes)
    return AskUserQuestionItem(**fields)


class TestInertText:
    """Every model-written text of a view is inert; only the wire label stays as written."""

    def test_header_and_question_are_inert(self) -> None:
        """The header is inert on one line, the question inert with its line breaks."""
        view = question_view(hostile_question())
        assert view.header == inert_text(f"head {HOSTILE}")
        assert view.question == inert_text(f"ask {HOSTILE}\nsecond line", multiline=True)
        assert "\n" in view.question
        assert "\x1b" not in view.question
        assert "<U+0440>" in view.header

    def test_option_label_description_and_preview_are_inert(self) -> None:
        """An option shows its label inert on one line, its description and preview inert;
        its wire label is kept exactly as written, for the answer."""
        option = question_view(hostile_question()).options[0]
        assert option.label == f"pick {HOSTILE}"
        assert option.shown == inert_text(f"pick {HOSTILE}")
        assert option.description == inert_text(f"desc {HOSTILE}", multiline=True)
        assert option.preview == tuple(markdown(f"*prev* {HOSTILE}"))
        assert all(text == inert_text(text) for text in texts(option.to_dict()))

    def test_label_with_a_line_break_is_shown_on_one_line(self) -> None:
        """A label's line break is shown as a space: an option is one line everywhere."""
        view = question_view(make_question(options=(AskUserQuestionOption("a\u2028b"),)))
        assert view.options[0].shown == "a b"
        assert view.options[0].label == "a\u2028b"

    def test_detail_tree_and_text_are_inert(self) -> None:
        """The detail's tree has inert text nodes and headings moved down two levels; its text
        is the whole detail, inert, with its line breaks."""
        item = hostile_question()
        view = question_view(item)
        assert view.detail is not None
        assert view.detail[0][0] == "h3"
        assert view.detail_text == inert_text(str(item.detail), multiline=True)
        shown = texts(view.to_dict()["detail"])
        assert shown
        assert all(text == inert_text(text, multiline=True) for text in shown)
        assert not any("\x1b" in text or "\u202e" in text for text in shown)

    def test_diff_lines_are_inert(self) -> None:
        """Every line of a diff review's parsed diff is inert text."""
        view = question_view(diff_review_question(DIFF))
        assert view.diff is not None
        lines = [
            line for file in view.diff["files"] for hunk in file["hunks"] for line in hunk["lines"]
        ]
        assert [line[0] for line in lines] == ["del", "add", "ctx"]
        assert [line[3] for line in lines] == [
            inert_text(line[1:]) for line in DIFF.splitlines()[3:]
        ]
        assert all(text == inert_text(text) for text in texts(view.to_dict()["diff"]))

    @settings(max_examples=60, deadline=None)
    @given(st.text(max_size=40), st.text(max_size=40), st.text(max_size=80))
    def test_every_shown_text_is_inert_for_any_input(self, label: str, text: str, md: str) -> None:
        """Whatever the model writes, every text of the view but the wire label is inert."""
        item = AskUserQuestionItem(
            id="q",
            header=text,
            question=text,
            detail=md,
            options=(AskUserQuestionOption(label or "x", text, preview=md),),
        )
        data = question_view(item).to_dict()
        assert all(shown == inert_text(shown, multiline=True) for shown in texts(data))
        assert "\n" not in str(data["header"]) + data["options"][0]["shown"]


class TestKinds:
    """A view's kind says which form to show; ``approves`` marks a review's approve option."""

    def test_a_question_is_the_generic_form(self) -> None:
        """A question without an intent is kind "question", no option approves, no diff."""
        view = question_view(make_question(detail="Some *detail*"))
        assert view.kind == "question"
        assert not any(option.approves for option in view.options)
        assert view.diff is None
        assert view.detail == (["p", {}, "Some ", ["em", {}, "detail"]],)

    def test_a_plan_review(self) -> None:
        """A plan review is kind "plan-review" and only its approve option approves."""
        view = question_view(make_plan_question())
        assert view.kind == "plan-review"
        assert [(option.label, option.approves) for option in view.options] == [
            ("Approve", True),
            ("Keep planning", False),
        ]
        assert view.diff is None
        assert view.detail is not None

    def test_a_diff_review(self) -> None:
        """A diff review is kind "diff-review" with its detail parsed as a diff."""
        view = question_view(diff_review_question(DIFF))
        assert view.kind == "diff-review"
        assert view.diff == parse_diff(DIFF)
        assert [option.approves for option in view.options] == [True, False]

    def test_an_unknown_intent_is_the_generic_form(self) -> None:
        """An intent kind no surface knows is shown as an ordinary question: nothing approves."""
        item = make_question(detail="x", intent=AskUserQuestionIntent("vote", "pnpm"))
        view = question_view(item)
        assert view.kind == "question"
        assert not any(option.approves for option in view.options)

    def test_a_review_failing_its_rules_is_the_generic_form(self) -> None:
        """A review whose approve label names no option is not a review card."""
        view = question_view(
            make_plan_question(intent=AskUserQuestionIntent("plan-review", "Nope"))
        )
        assert view.kind == "question"
        assert not any(option.approves for option in view.options)


class TestOptions:
    """What an option's view carries besides its texts."""

    def test_recommended(self) -> None:
        """``recommended`` is the option's own flag."""
        item = make_question(
            options=(
                AskUserQuestionOption("pnpm", recommended=True),
                AskUserQuestionOption("npm"),
            )
        )
        assert [option.recommended for option in question_view(item).options] == [True, False]

    def test_without_preview_or_description(self) -> None:
        """An option without a preview or description has ``None`` for both."""
        option = question_view(make_question(options=(AskUserQuestionOption("npm"),))).options[0]
        assert option == OptionView(
            label="npm",
            shown="npm",
            description=None,
            preview=None,
            recommended=False,
            approves=False,
        )


class TestOtherAndSecret:
    """Whether free text is offered, and whether the answer is secret."""

    def test_other_is_offered_beside_options(self) -> None:
        """A question with options offers free text ("Other") by default."""
        assert question_view(make_question()).other is True

    def test_other_is_not_offered_when_not_allowed(self) -> None:
        """``allow_other=False``: the options only, no free text."""
        assert question_view(make_question(allow_other=False)).other is False

    def test_other_is_always_offered_without_options(self) -> None:
        """A question without options collects free text only."""
        view = question_view(make_question(options=()))
        assert view.other is True
        assert view.options == ()

    def test_secret(self) -> None:
        """A secret question's view says so; an ordinary one's does not."""
        assert question_view(make_question(options=(), secret=True)).secret is True
        assert question_view(make_question()).secret is False

    def test_multi_select(self) -> None:
        """``multi_select`` is the question's own."""
        assert question_view(make_question(multi_select=True)).multi_select is True


class TestRecursionFallbacks:
    """Markdown nested too deep for the parser still shows as inert text."""

    def test_detail_too_deep_keeps_its_text(self) -> None:
        """A detail the parser cannot take has no tree; its inert text is kept."""
        view = question_view(make_question(detail=TOO_DEEP + "\x1b"))
        assert view.detail is None
        assert view.detail_text == inert_text(TOO_DEEP + "\x1b", multiline=True)

    def test_preview_too_deep_is_one_code_block(self) -> None:
        """A preview the parser cannot take is one pre/code block of its inert text."""
        item = make_question(options=(AskUserQuestionOption("a", preview=TOO_DEEP + "\x1b"),))
        preview = question_view(item).options[0].preview
        assert preview == (
            ["pre", {}, ["code", {}, inert_text(TOO_DEEP + "\x1b", multiline=True)]],
        )


class TestJsonForm:
    """``QuestionView.to_dict``: the form the pages read."""

    def test_json_round_trip(self) -> None:
        """The JSON form survives JSON unchanged and names every field of the view."""
        for item in (hostile_question(), diff_review_question(DIFF), make_plan_question()):
            data = question_view(item).to_dict()
            assert json.loads(json.dumps(data)) == data
            assert set(data) == {field.name for field in attrs.fields(QuestionView)}
            assert set(data["options"][0]) == {field.name for field in attrs.fields(OptionView)}

    def test_values(self) -> None:
        """The JSON form carries the view's values: trees as lists, absent ones as null."""
        view = question_view(make_question(secret=False))
        data = view.to_dict()
        assert data["id"] == "pkg"
        assert data["kind"] == "question"
        assert data["detail"] is None
        assert data["detail_text"] is None
        assert data["diff"] is None
        assert data["header"] == "Tooling"
        assert data["question"] == "Which package manager?"
        assert data["options"][1] == {
            "label": "npm",
            "shown": "npm",
            "description": "The default",
            "preview": None,
            "recommended": False,
            "approves": False,
        }

    def test_a_fresh_copy_each_time(self) -> None:
        """Changing one JSON form leaves the cached view (and the next JSON form) unchanged."""
        view = question_view(diff_review_question(DIFF))
        first = view.to_dict()
        first["detail"].clear()
        first["diff"]["files"].clear()
        assert view.to_dict() != first
        assert view.diff is not None
        assert view.diff["files"]


class TestCache:
    """Views are cached while their item lives, so a surface may ask on every redraw."""

    def test_same_item_same_view(self) -> None:
        """The item, or an equal item built anew, gets the very same view object."""
        item = make_question()
        view = question_view(item)
        assert question_view(item) is view
        assert question_view(make_question()) is view

    def test_a_view_goes_with_its_item(self) -> None:
        """Once its item is gone, nothing keeps a view alive (a settled question's big diff)."""
        item = diff_review_question(DIFF)
        gone = weakref.ref(question_view(item))
        del item
        gc.collect()
        assert gone() is None

    def test_request_view(self) -> None:
        """A request's view is its questions' views, in order, the cached objects."""
        first, second = make_question(id="a"), make_plan_question()
        views = request_view(make_request(first, second))
        assert views == (question_view(first), question_view(second))
        assert views[0] is question_view(first)
        assert views[1].kind == "plan-review"


def _walk(node: Any, tags: set[str], hrefs: list[str]) -> None:
    if isinstance(node, str):
        return
    tag, attributes, *children = node
    tags.add(tag)
    if "href" in attributes:
        hrefs.append(attributes["href"])
    for child in children:
        _walk(child, tags, hrefs)


class TestMarkdown:
    """`markdown`: the element tree holds only allowed tags and safe links."""

    @settings(max_examples=300, deadline=None)
    @given(source=SOURCES)
    def test_model_markdown_renders_to_allowed_tags_and_safe_links(self, source: str) -> None:
        """Whatever the model writes, the tree has only allowed tags and http(s)/mailto links."""
        tags: set[str] = set()
        hrefs: list[str] = []
        for node in markdown(source):
            _walk(node, tags, hrefs)
        assert tags <= ALLOWED
        assert all(href.lower().startswith(("http://", "https://", "mailto:")) for href in hrefs)

    def test_list_numbers_are_kept_as_written(self) -> None:
        """A list numbered 3, 4, 9 starts at 3 and keeps 9 as 9."""
        assert markdown("3. a\n4. b\n9. c\n") == [
            ["ol", {"start": 3}, ["li", {"value": 3}, "a"], ["li", {"value": 4}, "b"],
             ["li", {"value": 9}, "c"]]
        ]  # fmt: skip

    def test_raw_html_stays_text(self) -> None:
        """HTML in markdown is text, never an element."""
        assert markdown("<b>bold</b> and <script>x</script>") == [
            ["p", {}, "<b>bold</b> and <script>x</script>"]
        ]


class TestLinkTargets:
    """A rendered link shows where it points: its words may read like another address."""

    def test_a_link_shows_its_target_beside_its_words(self) -> None:
        """Words that look like one address, pointing at another, show the real target."""
        assert markdown("[https://github.com/org/repo](https://evil.example/x)") == [
            [
                "p",
                {},
                ["a", {"href": "https://evil.example/x"}, "https://github.com/org/repo"],
                " (https://evil.example/x)",
            ]
        ]

    def test_a_link_whose_words_are_its_target_is_shown_once(self) -> None:
        """An autolink or a mail link reading its own address is not repeated."""
        assert markdown("<https://example.com/a>") == [
            ["p", {}, ["a", {"href": "https://example.com/a"}, "https://example.com/a"]]
        ]
        assert markdown("[me@example.com](mailto:me@example.com)") == [
            ["p", {}, ["a", {"href": "mailto:me@example.com"}, "me@example.com"]]
        ]

    def test_an_unsafe_target_is_text_after_the_words(self) -> None:
        """An ftp: link is no link, its target shown as text."""
        assert markdown("[click](ftp://files.example/f)") == [
            ["p", {}, "click", " (ftp://files.example/f)"]
        ]


class TestDiffLines:
    """`diff_lines`: a parsed diff as the lines every line-by-line surface draws."""

    def test_each_file_s_meta_headers_then_hunks_in_order_each_line_marked(self) -> None:
        """Meta lines, the ---/+++ headers, then each hunk's header and its lines with their
        marks and line numbers; a removed line reading "--- x" is a removed line."""
        diff = (
            "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n keep\n--- x\n+new\n"
            "\\ No newline at end of file\n"
        )
        assert diff_lines(parse_diff(diff)) == [
            ("meta", None, None, "diff --git a/f b/f"),
            ("file", None, None, "--- a/f"),
            ("file", None, None, "+++ b/f"),
            ("hunk", None, None, "@@ -1,3 +1,3 @@"),
            ("ctx", 1, 1, " keep"),
            ("del", 2, None, "--- x"),
            ("add", None, 2, "+new"),
            ("note", None, None, "\\ No newline at end of file"),
        ]
