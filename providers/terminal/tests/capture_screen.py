"""Capture the prompt's screens for the README: ``python tests/capture_screen.py [--write]``.

Runs the driver in an 80x24 pseudo-terminal, reads the screen through pyte, and prints the
screens (``--write`` puts them in README.md between the ``screen`` markers instead).
``test_readme.py`` checks that the README shows what this captures.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from conftest import Terminal, plan_review

README = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- screen:start -->", "<!-- screen:end -->"

PACKAGE_MANAGER: dict[str, Any] = {
    "questions": [
        {
            "id": "pkg",
            "header": "Package manager",
            "question": "Which package manager should the project use?",
            "detail": "The repository has **no lockfile** yet; CI runs `npm ci` today.",
            "options": [
                {"label": "pnpm (Recommended)", "description": "Fast, disk-efficient installs"},
                {"label": "npm", "description": "Ships with Node.js"},
                {"label": "yarn"},
            ],
        }
    ]
}


def capture(request: dict[str, Any], ready: str) -> str:
    """The screen once ``ready`` shows, trailing blank lines dropped."""
    with tempfile.TemporaryDirectory() as tmp:
        term = Terminal(request, Path(tmp))
        try:
            return term.wait_for(ready)
        finally:
            term.close()


def screens() -> str:
    """The README's block: the question screen and the plan-review screen."""
    parts = [
        capture(PACKAGE_MANAGER, "Esc cancel"),
        capture({"questions": [plan_review()]}, "Esc cancel"),
    ]
    return "\n".join(["```text", parts[0], "```", "", "```text", parts[1], "```"])


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


if __name__ == "__main__":
    main(sys.argv[1:])
