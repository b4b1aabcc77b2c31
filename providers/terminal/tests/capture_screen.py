"""Capture the prompt's screens for the README: ``python tests/capture_screen.py [--write]``.

Runs the driver in a pseudo-terminal (80x24, one of them 40x12), reads the screen through pyte,
and prints the screens (``--write`` puts them in README.md between the ``screen`` markers
instead, and draws the package-manager example's form as SVG pictures into the repository's
docs/img/, ``terminal-form.svg`` at 80x24 and ``terminal-form-40x12.svg``).
``test_readme.py`` checks that the README shows what this captures, and that the committed
pictures are what this draws now.
"""

from __future__ import annotations

import json
import sys
import tempfile
from html import escape
from pathlib import Path
from typing import Any

from conftest import Terminal, plan_review

README = Path(__file__).resolve().parent.parent / "README.md"
# The repository's docs pictures and examples (absent when the tests run from an unpacked
# sdist).
IMAGES = Path(__file__).resolve().parents[3] / "docs" / "img"
EXAMPLE = IMAGES.parent.parent / "examples" / "package-manager.json"
START, END = "<!-- screen:start -->", "<!-- screen:end -->"

PACKAGE_MANAGER: dict[str, Any] = {
    "questions": [
        {
            "id": "pkg",
            "header": "Package manager",
            "question": "Which package manager should the project use?",
            "detail": "The repository has **no lockfile** yet; CI runs `npm ci` today.",
            "options": [
                # Said as a label, as the README's screen shows it (without the flag, the
                # suffix reads as "recommended": true).
                {
                    "label": "pnpm (Recommended)",
                    "description": "Fast, disk-efficient installs",
                    "recommended": False,
                },
                {"label": "npm", "description": "Ships with Node.js"},
                {"label": "yarn"},
            ],
        }
    ]
}


# The same question written in Chinese, asked in a Chinese locale: the form's words are the
# catalog's, the question is the model's (docs/img/terminal-form-zh.svg).
CHINESE: dict[str, Any] = {
    "questions": [
        {
            "id": "pkg",
            "header": "包管理器",
            "question": "这个项目应该用哪个包管理器？",  # noqa: RUF001
            "detail": "仓库里还没有**锁文件**；持续集成目前运行 `npm ci`。",  # noqa: RUF001
            "options": [
                {
                    "label": "pnpm",
                    "description": "快速，节省磁盘空间",  # noqa: RUF001
                    "recommended": True,
                },
                {"label": "npm", "description": "随 Node.js 一起安装"},
                {"label": "yarn"},
            ],
        }
    ]
}


LONG_LIST: dict[str, Any] = {
    "questions": [
        {
            "id": "region",
            "header": "Region",
            "question": "Where should the staging cluster run?",
            "options": [
                {"label": name, "description": f"{zone} zone"}
                for name, zone in [
                    ("eu-west-1", "Ireland"),
                    ("eu-central-1", "Frankfurt"),
                    ("eu-north-1", "Stockholm"),
                    ("us-east-1", "Virginia"),
                    ("us-east-2", "Ohio"),
                    ("us-west-2", "Oregon"),
                    ("ap-south-1", "Mumbai"),
                    ("ap-northeast-1", "Tokyo"),
                    ("sa-east-1", "Sao Paulo"),
                    ("ca-central-1", "Canada"),
                    ("af-south-1", "Cape Town"),
                    ("me-south-1", "Bahrain"),
                ]
            ],
        }
    ]
}


def long_plan() -> dict[str, Any]:
    """A plan review whose plan is longer than the screen."""
    item = plan_review()
    steps = [f"{n}. Move service {n} to pnpm and check its CI" for n in range(1, 31)]
    item["detail"] = "# Migrate every service to pnpm\n\n" + "\n".join(steps)
    return {"questions": [item]}


DIFF_REVIEW: dict[str, Any] = {
    "questions": [
        {
            "id": "edit",
            "header": "Edit",
            "question": "Apply this change to src/app.py?",
            "detail": (
                "--- a/src/app.py\n"
                "+++ b/src/app.py\n"
                "@@ -40,4 +40,5 @@ def main() -> None:\n"
                "     config = load_config()\n"
                "-    run(config, debug=True)\n"
                "+    run(config, debug=False)\n"
                "+    report(config)\n"
                "     close(config)\n"
                " \n"
            ),
            "options": [
                {"label": "Apply", "description": "write the change", "recommended": True},
                {"label": "Keep editing", "description": "say what should change"},
            ],
            "intent": {"kind": "diff-review", "approve": "Apply"},
        }
    ]
}


def capture(
    request: dict[str, Any],
    ready: str,
    size: tuple[int, int] = (24, 80),
    keys: str = "",
    after: str = "",
) -> str:
    """The screen once ``ready`` shows (or, with ``keys`` typed once it shows, once ``after``
    shows too), trailing blank lines dropped."""
    with tempfile.TemporaryDirectory() as tmp:
        term = Terminal(request, Path(tmp), size=size)
        try:
            screen = term.wait_for(ready)
            if keys:
                term.press(keys)
                screen = term.wait_for(ready, after)
            return screen
        finally:
            term.close()


# The pictures' colours: a dark terminal theme, by pyte's colour names (256-colour and
# true-colour cells come as six hex digits and are used as they are).
BACKGROUND, FOREGROUND = "#1e1e1e", "#d4d4d4"
PALETTE = {
    "black": "#000000",
    "red": "#cd3131",
    "green": "#0dbc79",
    "brown": "#e5e510",
    "blue": "#2472c8",
    "magenta": "#bc3fbc",
    "cyan": "#11a8cd",
    "white": "#e5e5e5",
    "brightblack": "#808080",
    "brightred": "#f14c4c",
    "brightgreen": "#23d18b",
    "brightbrown": "#f5f543",
    "brightblue": "#3b8eea",
    "brightmagenta": "#d670d6",
    "brightcyan": "#29b8db",
    "brightwhite": "#ffffff",
}
CELL_WIDTH, CELL_HEIGHT, FONT_SIZE, PADDING = 8.4, 18, 14, 12


def _colour(name: str, default: str) -> str:
    if name == "default":
        return default
    if len(name) == 6 and all(c in "0123456789abcdefABCDEF" for c in name):
        return f"#{name.lower()}"
    return PALETTE.get(name, default)


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def svg(screen: Any, title: str) -> str:
    """The pyte ``screen`` drawn as an SVG: monospace text on a dark background, one ``<text>``
    per run of cells with the same look (so a glyph a font draws wider cannot shift the rest of
    the line), blank rows below the form left out. Deterministic: the same screen gives the
    same bytes."""
    columns = screen.columns
    shown = [line.rstrip() for line in screen.display]
    rows = max((y + 1 for y, line in enumerate(shown) if line), default=1)
    width = columns * CELL_WIDTH + 2 * PADDING
    height = rows * CELL_HEIGHT + 2 * PADDING
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_number(width)}" '
        f'height="{_number(height)}" viewBox="0 0 {_number(width)} {_number(height)}" '
        f'role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title, quote=False)}</title>",
        f'<rect width="100%" height="100%" rx="6" fill="{BACKGROUND}"/>',
        f"<g font-family=\"ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace\" "
        f'font-size="{FONT_SIZE}">',
    ]
    for y in range(rows):
        line = screen.buffer[y]
        cells = [line[x] for x in range(columns)]
        x = 0
        while x < columns:
            cell = cells[x]
            look = (cell.fg, cell.bg, cell.bold, cell.italics, cell.underscore, cell.reverse)
            end = x + 1
            while (
                end < columns
                and (
                    (c := cells[end]).fg,
                    c.bg,
                    c.bold,
                    c.italics,
                    c.underscore,
                    c.reverse,
                )
                == look
            ):
                end += 1
            text = "".join(c.data for c in cells[x:end])
            fg = _colour(cell.fg, FOREGROUND)
            bg = _colour(cell.bg, BACKGROUND)
            if cell.reverse:
                fg, bg = bg, fg
            left = PADDING + x * CELL_WIDTH
            top = PADDING + y * CELL_HEIGHT
            if bg != BACKGROUND:
                out.append(
                    f'<rect x="{_number(left)}" y="{_number(top)}" '
                    f'width="{_number((end - x) * CELL_WIDTH)}" height="{CELL_HEIGHT}" '
                    f'fill="{bg}"/>'
                )
            if text.strip():
                # Spaces kept as no-break spaces: SVG viewers collapse ordinary ones.
                shown_text = text.rstrip().replace(" ", "\u00a0")
                style = ""
                if cell.bold:
                    style += ' font-weight="bold"'
                if cell.italics:
                    style += ' font-style="italic"'
                if cell.underscore:
                    style += ' text-decoration="underline"'
                out.append(
                    f'<text x="{_number(left)}" y="{_number(top + FONT_SIZE)}" '
                    f'fill="{fg}"{style}>{escape(shown_text, quote=False)}</text>'
                )
            x = end
    out += ["</g>", "</svg>", ""]
    return "\n".join(out)


def picture(
    request: dict[str, Any],
    ready: str,
    size: tuple[int, int],
    title: str,
    *,
    keys: tuple[str, ...] = (),
    after: str = "",
    **env: str,
) -> str:
    """The screen once ``ready`` shows (then ``keys`` typed one by one, each once the last
    was drawn, until ``after`` shows), as SVG; ``env``: the driver's extra environment."""
    with tempfile.TemporaryDirectory() as tmp:
        term = Terminal(request, Path(tmp), size=size, **env)
        try:
            term.wait_for(ready)
            for key in keys:
                term.press(key)
                term.settle(0.3)
            if after:
                term.wait_for(after)
            return svg(term.screen, title)
        finally:
            term.close()


NUMBER: dict[str, Any] = {
    "questions": [
        {
            "id": "workers",
            "header": "Workers",
            "question": "How many test workers should CI run?",
            "input": {"type": "number", "min": 1, "max": 16, "step": 1, "unit": "workers"},
        }
    ]
}

# A file question's candidates as the asker lists them (its root is never shown).
FILES: dict[str, Any] = {
    "questions": [
        {
            "id": "read",
            "header": "Context",
            "question": "Which files should I read before changing the parser?",
            "input": {
                "type": "files",
                "root": "/",
                "max_count": 3,
                "candidates": [
                    "README.md",
                    "docs/parser.md",
                    "src/lexer.py",
                    "src/parser.py",
                    "src/tokens.py",
                    "tests/test_lexer.py",
                    "tests/test_parser.py",
                ],
            },
        }
    ]
}


def pictures() -> dict[str, str]:
    """The docs' pictures of the terminal form, by file name: the repository's
    examples/package-manager.json at 80x24 and at 40x12, a number and a file question."""
    example = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    title = "The terminal form asking which package manager the project should use"
    return {
        "terminal-form.svg": picture(example, "Esc cancel", (24, 80), f"{title} (80x24)"),
        "terminal-form-40x12.svg": picture(example, "Esc cancel", (12, 40), f"{title} (40x12)"),
        "terminal-form-zh.svg": picture(
            CHINESE,
            "Esc 取消",
            (24, 80),
            "The terminal form in Simplified Chinese (LANG=zh_CN.UTF-8, 80x24)",
            LC_ALL="",
            LANG="zh_CN.UTF-8",
        ),
        "terminal-number.svg": picture(
            NUMBER, "Esc more choices", (12, 80), "The terminal's number field with its range"
        ),
        "terminal-files.svg": picture(
            FILES,
            "Esc more choices",
            (16, 80),
            "The terminal's file list with its filter and checkboxes",
            keys=("src", " ", "\x1b[B", " ", "\x1b[A"),
            after="2 ticked",
        ),
    }


def screens() -> str:
    """The README's block: a question, plan reviews, a long list and a diff review."""
    parts = [
        capture(PACKAGE_MANAGER, "Esc cancel"),
        capture({"questions": [plan_review()]}, "Esc cancel"),
        capture(LONG_LIST, "Esc cancel", (12, 40), keys="\x1b[B" * 9, after="\u276f 10."),
        capture(long_plan(), "Esc cancel"),
        capture(DIFF_REVIEW, "Esc cancel"),
    ]
    blocks = []
    for part in parts:
        blocks += ["```text", part, "```", ""]
    return "\n".join(blocks[:-1])


def _span(text: str) -> tuple[int, int]:
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise LookupError(f"README.md has no {START} ... {END} block")
    return start + len(START), end


def readme_block(text: str) -> str:
    """What the README holds between the markers."""
    start, end = _span(text)
    return text[start:end].strip("\n")


def main(argv: list[str]) -> None:
    block = screens()
    if "--write" not in argv:
        print(block)
        return
    text = README.read_text(encoding="utf-8")
    start, end = _span(text)
    README.write_text(text[:start] + "\n" + block + "\n" + text[end:], encoding="utf-8")
    IMAGES.mkdir(parents=True, exist_ok=True)
    for name, drawing in pictures().items():
        (IMAGES / name).write_text(drawing, encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
