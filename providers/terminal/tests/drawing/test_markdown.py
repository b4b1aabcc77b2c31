"""The detail's markdown as the terminal shows it."""

from __future__ import annotations

from dsh_user_questions import AskUserQuestionItem
from dsh_user_questions._markdown import render as markdown

from dsh_user_questions_terminal._markdown import lines_to_plain, render_nodes
from dsh_user_questions_terminal._page import Page


def plain(source: str) -> list[str]:
    return lines_to_plain(render_nodes(markdown(source)))


def test_headings_and_paragraphs_are_separated_by_blank_lines():
    """A heading and the paragraphs after it are shown without markers, one blank line apart."""
    assert plain("# Plan\n\nFirst step.\nSame paragraph.\n\nSecond.") == [
        "Plan",
        "",
        "First step.",
        "Same paragraph.",
        "",
        "Second.",
    ]


def test_lists_get_bullets_numbers_and_nesting():
    """Bullet and ordered lists keep their numbering and indent nested items."""
    assert plain("3. three\n4. four\n   - sub\n\n- dot") == [
        "3. three",
        "4. four",
        "   \u2022 sub",
        "",
        "\u2022 dot",
    ]


def test_code_blocks_are_indented_and_kept_verbatim():
    """Fenced code keeps its lines and spacing, indented by two."""
    assert plain("```\nif x:\n    y()\n```") == ["  if x:", "      y()"]


def test_quotes_tables_rules_and_links():
    """Quotes get a bar, table cells a separator (and a rule under the header), links their
    address in the core's words (in brackets, as on every surface) unless the words are it."""
    source = "> quoted\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n---\n\n[docs](https://x.test) <https://y.test>"
    assert plain(source) == [
        "\u2502 quoted",
        "",
        "a \u2502 b",
        "\u2500\u2500\u253c\u2500\u2500",
        "1 \u2502 2",
        "",
        "\u2500" * 40,
        "",
        "docs (https://x.test) https://y.test",
    ]


def test_emphasis_becomes_style_not_markers():
    """Bold, italic and inline code are styles on the text, and their markers are gone."""
    lines = render_nodes(markdown("**bold** *it* `code`"))
    assert ("bold", "bold") in lines[0]
    assert ("italic", "it") in lines[0]
    assert ("class:md.code", "code") in lines[0]


def test_raw_html_stays_text():
    """HTML in the markdown is shown as its text, never interpreted."""
    assert plain("<script>alert(1)</script>") == ["<script>alert(1)</script>"]


def test_table_columns_align():
    """Cells of different widths are padded so every column starts at the same place."""
    source = "| name | note |\n|---|---|\n| a | first |\n| longer name | 2 |"
    lines = plain(source)
    assert [line.index("\u2502") for line in lines if "\u2502" in line] == [12, 12, 12]
    assert lines[0].startswith("name ")
    assert any(set(line) <= set("\u2500\u253c ") for line in lines)


class TestTheCoresTree:
    """The terminal draws the core's element tree (`dsh_user_questions.view.markdown`)."""

    def test_a_top_heading_is_underlined_though_the_tree_moved_it_down(self):
        """The core moves headings two levels down (``#`` is ``h3``): the terminal still draws
        a top heading bold and underlined, and the others bold only."""
        lines = render_nodes(markdown("# Top\n\n## Next"))
        assert lines[0] == [("bold underline", "Top")]
        assert lines[2] == [("bold", "Next")]

    def test_each_item_shows_its_number_as_written(self):
        """An ordered list item shows the number the markdown gives it (as the web page does),
        so "drop step 1" names the step shown as 1."""
        assert plain("1. one\n\n1. again") == ["1. one", "", "1. again"]

    def test_a_links_target_is_styled_as_an_address(self):
        """The words of a link are underlined and the core's target after them is dimmed."""
        (line,) = render_nodes(markdown("[docs](https://x.test)"))
        assert line == [("underline", "docs"), ("class:md.url", " (https://x.test)")]

    def test_a_tree_is_drawn_without_parsing(self):
        """A tree made by hand (not from markdown) is drawn: the terminal parses nothing."""
        tree = [["p", {}, "a ", ["strong", {}, "b"]], ["pre", {}, ["code", {}, "x\ny\n"]]]
        assert lines_to_plain(render_nodes(tree)) == ["a b", "", "  x", "  y"]

    def test_a_detail_too_deep_to_parse_is_shown_as_its_text(self):
        """Markdown nested too deep for the parser has no tree in the view: the page shows the
        view's inert text of the detail instead, line by line."""
        deep = "*" * 3000 + "x" + "*" * 3000
        item = AskUserQuestionItem(id="q", question="?", detail=f"{deep}\n\x1b[2J")
        lines = lines_to_plain(Page(item).detail)
        assert lines == [deep, "<U+001B>[2J"]
