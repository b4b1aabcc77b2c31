"""The examples for secrets, diff review (docs/questions.md) and observability
(docs/observability.md), which were the README's, run as documented."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _example(page: str, heading: str, said: str) -> tuple[str, str]:
    """The first python block under ``heading`` of ``page`` and the text block after ``said``."""
    text = "\n" + (DOCS / page).read_text(encoding="utf-8")
    section = text.split(f"\n{heading}\n", 1)[1]
    section = re.split(r"\n#{2,3} ", section, maxsplit=1)[0]
    match = re.search(
        rf"```python\n((?:(?!```).)*?)```\s*\n{re.escape(said)}\s*\n\s*```text\n(.*?)```",
        section,
        re.S,
    )
    assert match is not None, f"the example under {heading!r} or its output block is missing"
    return match.group(1), match.group(2)


def _run(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        timeout=120,
    )


@pytest.mark.parametrize("heading", ["## Secret answers", "## Diff review"])
def test_example_prints_what_the_page_says(heading: str, tmp_path: Path) -> None:
    """The example under the heading of docs/questions.md prints exactly its documented output."""
    code, expected = _example("questions.md", heading, "prints")
    assert _run(code, tmp_path).stdout == expected


def test_observability_example_logs_what_the_page_says(tmp_path: Path) -> None:
    """docs/observability.md's logging example writes the documented records (the wait aside)."""
    code, expected = _example("observability.md", "# Observability", "logs (the wait varies)")
    logged = _run(code, tmp_path).stderr
    assert re.sub(r"after \d+\.\d{3} s", "after 0.000 s", logged) == expected
