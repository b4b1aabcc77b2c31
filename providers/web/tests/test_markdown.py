"""The server's markdown: the element tree the page builds holds only allowed tags and links."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_user_questions_web._markdown import render
from dsh_user_questions_web._stream import page_form

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


def _walk(node: Any, tags: set[str], hrefs: list[str]) -> None:
    if isinstance(node, str):
        return
    tag, attrs, *children = node
    tags.add(tag)
    if "href" in attrs:
        hrefs.append(attrs["href"])
    for child in children:
        _walk(child, tags, hrefs)


@settings(max_examples=300, deadline=None)
@given(source=SOURCES)
def test_model_markdown_renders_to_allowed_tags_and_safe_links(source: str) -> None:
    """Whatever the model writes, the tree has only allowed tags and http(s)/mailto links."""
    tags: set[str] = set()
    hrefs: list[str] = []
    for node in render(source):
        _walk(node, tags, hrefs)
    assert tags <= ALLOWED
    assert all(href.lower().startswith(("http://", "https://", "mailto:")) for href in hrefs)


def test_list_numbers_are_kept_as_written() -> None:
    """A list numbered 3, 4, 9 starts at 3 and keeps 9 as 9."""
    assert render("3. a\n4. b\n9. c\n") == [
        ["ol", {"start": 3}, ["li", {"value": 3}, "a"], ["li", {"value": 4}, "b"],
         ["li", {"value": 9}, "c"]]
    ]  # fmt: skip


def test_raw_html_stays_text() -> None:
    """HTML in markdown is text, never an element."""
    assert render("<b>bold</b> and <script>x</script>") == [
        ["p", {}, "<b>bold</b> and <script>x</script>"]
    ]


class TestLinkTargets:
    """A rendered link shows where it points: its words may read like another address."""

    def test_a_link_shows_its_target_beside_its_words(self) -> None:
        """Words that look like one address, pointing at another, show the real target."""
        assert render("[https://github.com/org/repo](https://evil.example/x)") == [
            [
                "p",
                {},
                ["a", {"href": "https://evil.example/x"}, "https://github.com/org/repo"],
                " (https://evil.example/x)",
            ]
        ]

    def test_a_link_whose_words_are_its_target_is_shown_once(self) -> None:
        """An autolink or a mail link reading its own address is not repeated."""
        assert render("<https://example.com/a>") == [
            ["p", {}, ["a", {"href": "https://example.com/a"}, "https://example.com/a"]]
        ]
        assert render("[me@example.com](mailto:me@example.com)") == [
            ["p", {}, ["a", {"href": "mailto:me@example.com"}, "me@example.com"]]
        ]

    def test_an_unsafe_target_is_text_after_the_words(self) -> None:
        """An ftp: link is no link, its target shown as text."""
        assert render("[click](ftp://files.example/f)") == [
            ["p", {}, "click", " (ftp://files.example/f)"]
        ]


class TestOptionPreviews:
    """An option's preview reaches the page rendered on the server, inert, like a detail."""

    def test_a_preview_is_rendered_and_inert(self) -> None:
        """``previewDoc`` is the preview's markdown tree, control characters as stand-ins; an
        option without a preview has none."""
        question = {
            "id": "layout",
            "question": "Which layout?",
            "options": [
                {"label": "grid", "preview": "**Grid**\n\n```\n| a | b |\x1b[2J\n```"},
                {"label": "list"},
            ],
        }
        shown = page_form({"id": "ask-1", "questions": [question]})["questions"][0]["shown"]
        grid, plain = shown["options"]
        assert ["strong", {}, "Grid"] in grid["previewDoc"][0]
        code = grid["previewDoc"][1][2][2]
        assert "\x1b" not in code
        assert code.startswith("| a | b |")
        assert "previewDoc" not in plain
