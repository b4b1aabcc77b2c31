"""The README's examples for secrets, diff review and observability run as documented."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def _example(heading: str, said: str) -> tuple[str, str]:
    """The first python block under ``heading`` and the text block after ``said``."""
    section = README.read_text(encoding="utf-8").split(f"\n{heading}\n", 1)[1]
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


@pytest.mark.parametrize("heading", ["### Secret answers", "### Diff review"])
def test_example_prints_what_the_readme_says(heading: str, tmp_path: Path) -> None:
    """The example under the heading prints exactly its documented output."""
    code, expected = _example(heading, "prints")
    assert _run(code, tmp_path).stdout == expected


def test_observability_example_logs_what_the_readme_says(tmp_path: Path) -> None:
    """The logging example writes the documented records (the wait aside)."""
    code, expected = _example("## Observability", "logs (the wait varies)")
    logged = _run(code, tmp_path).stderr
    assert re.sub(r"after \d+\.\d{3} s", "after 0.000 s", logged) == expected
