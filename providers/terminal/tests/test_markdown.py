"""The detail's markdown as the terminal shows it."""

from __future__ import annotations

from dsh_user_questions_terminal._markdown import lines_to_plain, render_markdown


def plain(source: str) -> list[str]:
    return lines_to_plain(render_markdown(source))


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
    address."""
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
        "docs <https://x.test> https://y.test",
    ]


def test_emphasis_becomes_style_not_markers():
    """Bold, italic and inline code are styles on the text, and their markers are gone."""
    lines = render_markdown("**bold** *it* `code`")
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
