"""Capture the prompt's screens for the README: ``python tests/capture_screen.py [--write]``.

Runs the driver in a pseudo-terminal (80x24, one of them 40x12), reads the screen through pyte,
and prints the screens (``--write`` puts them in README.md between the ``screen`` markers
instead).
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


if __name__ == "__main__":
    main(sys.argv[1:])
