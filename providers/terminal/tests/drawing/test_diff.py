"""A diff review's diff as the terminal draws it: the core's parse, the terminal's gutter."""

from __future__ import annotations

from dsh_user_questions._diff import parse_diff

from dsh_user_questions_terminal._diff import GUTTER_STYLE, render_diff
from dsh_user_questions_terminal._markdown import lines_to_plain

DIFF = (
    "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -10,3 +10,3 @@ def main():\n"
    "     setup()\n---- run(debug=True)\n+++  run(debug=False)\n\\ No newline at end of file\n"
)


class TestDrawingTheCoresDiff:
    """The terminal draws `dsh_user_questions.view.parse_diff`'s files, hunks and lines."""

    def test_lines_keep_their_numbers_signs_and_colours(self):
        """Each line sits under its old and new number; headers bold, the hunk cyan, a removed
        line that reads like a file header (``--- ...``) still a removed line."""
        lines = render_diff(parse_diff(DIFF))
        assert lines_to_plain(lines) == [
            "      \u2502 diff --git a/app.py b/app.py",
            "      \u2502 --- a/app.py",
            "      \u2502 +++ b/app.py",
            "      \u2502 @@ -10,3 +10,3 @@ def main():",
            "10 10 \u2502      setup()",
            "11    \u2502 ---- run(debug=True)",
            "   11 \u2502 +++  run(debug=False)",
            "      \u2502 \\ No newline at end of file",
        ]
        styles = [line[1][0] for line in lines]
        assert styles == [
            *["class:diff.file"] * 3,
            "class:diff.hunk",
            "",
            "class:diff.removed",
            "class:diff.added",
            "class:diff.meta",
        ]
        assert all(line[0][0] == GUTTER_STYLE for line in lines)

    def test_a_structure_is_drawn_without_parsing(self):
        """A structure made by hand (not from a diff) is drawn: the terminal parses nothing."""
        diff = {
            "files": [
                {
                    "old": "a/x",
                    "new": None,
                    "meta": [],
                    "hunks": [{"header": "@@ -100 +0,0 @@", "lines": [["del", 100, None, "x"]]}],
                }
            ],
            "lines": 3,
        }
        assert lines_to_plain(render_diff(diff)) == [
            "        \u2502 --- a/x",
            "        \u2502 @@ -100 +0,0 @@",
            "100     \u2502 -x",
        ]

    def test_no_diff_draws_nothing(self):
        """A diff without files is no lines."""
        assert render_diff(parse_diff("")) == []
