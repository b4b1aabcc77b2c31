"""An option's preview (markdown) is shown, inert, while that option is focused."""

from __future__ import annotations

from conftest import question

HINT = "Esc cancel"

OPTIONS = [
    {
        "label": "pnpm",
        "description": "fast",
        "preview": "```sh\npnpm install\n```\n\nA **shared** store. <b>tag</b> \x1b[31mred",
    },
    {"label": "npm", "preview": "# npm\n\nShips with Node.js; `npm ci` in CI."},
    {"label": "yarn"},
]


class TestPreviews:
    """The focused option's preview follows the question, behind a bar, under its label."""

    def test_the_focused_options_preview_is_shown_inert(self, terminal) -> None:
        """The pointer's option shows its preview (markdown rendered, tags and escapes as text);
        moving on shows the next one's, an option without one shows none."""
        term = terminal({"questions": [question(options=OPTIONS)]})
        screen = term.wait_for(HINT, "Preview \u00b7 pnpm")
        assert "pnpm install" in screen
        assert "A shared store. <b>tag</b> <U+001B>[31mred" in screen
        term.press("down")
        screen = term.wait_for("Preview \u00b7 npm", "Ships with Node.js; npm ci in CI.")
        assert "pnpm install" not in screen
        term.press("down")
        screen = term.wait_until(lambda s: "Preview" not in s, "no preview on yarn")
        assert "\u276f 3. yarn" in screen
        term.press("enter")
        assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["yarn"]}]}

    def test_a_long_preview_scrolls_at_40x12(self, terminal) -> None:
        """At 40x12 a preview taller than its room shows its position and scrolls with PgDn to
        its last line; the pointer's row stays on screen and answers."""
        long = "\n".join(f"- line {n} of the preview" for n in range(1, 13))
        options = [{"label": "pnpm", "preview": long}, {"label": "npm"}]
        term = terminal({"questions": [question(options=options)]}, size=(12, 40))
        screen = term.wait_for(HINT, "Preview \u00b7 pnpm")
        assert "\u2195 lines 1-" in screen
        assert "\u276f 1. pnpm" in screen
        for _ in range(6):
            term.press("pagedown")
        screen = term.wait_for("line 12 of the preview")
        assert "\u276f 1. pnpm" in screen
        term.press("enter")
        assert term.outcome()["answer"] == {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}


class TestPreviewsInLineMode:
    """Line mode has no focus: each option's preview follows that option, behind a bar."""

    def test_each_preview_follows_its_option(self, piped) -> None:
        """The prompt on stderr shows each preview (markdown rendered, inert) under its option;
        the answer is read as usual."""
        result = piped({"questions": [question(options=OPTIONS)]}, "2\n")
        assert result.answer == {"answers": [{"id": "pkg", "selected": ["npm"]}]}
        lines = result.stderr.splitlines()
        first = lines.index("  1. pnpm - fast")
        assert "\u2502   pnpm install" in lines[first + 1]
        assert any("A shared store. <b>tag</b> <U+001B>[31mred" in line for line in lines)
        second = next(i for i, line in enumerate(lines) if line.startswith("  2. npm"))
        assert lines[second + 1].strip() == "\u2502 npm"
        assert lines[second + 4].startswith("  3. yarn")
