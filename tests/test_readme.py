"""The README's harness-side example runs and prints what the README says it prints."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_example_prints_its_documented_output(tmp_path: Path) -> None:
    """The python blocks under 'A harness-side example' prints the text block after it."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## A harness-side example", 1)[1]
    match = re.search(r"```python\n(.*?)```\s*\nprints\s*\n\s*```text\n(.*?)```", section, re.S)
    assert match is not None, "README example or its output block is missing"
    code, expected = match.groups()
    # The next block (agent and signal) continues the same script and prints nothing.
    follow_up = re.search(r"```python\n(.*?)```", section[match.end() :], re.S)
    assert follow_up is not None
    code += follow_up.group(1)
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert done.stdout == expected


def test_readme_gives_the_two_commands() -> None:
    """The README names the command that asks in the terminal and the one that runs the tests."""
    text = README.read_text(encoding="utf-8")
    assert "dsh-ask examples/" in text
    assert "\nscripts/test\n" in text


def test_readme_tool_example_prints_its_documented_output(tmp_path: Path) -> None:
    """The python block under 'The model-facing tool' prints the text block after it."""
    section = README.read_text(encoding="utf-8").split("## The model-facing tool", 1)[1]
    match = re.search(r"```python\n(.*?)```\s*\nprints\s*\n\s*```text\n(.*?)```", section, re.S)
    assert match is not None, "README tool example or its output block is missing"
    code, expected = match.groups()
    script = tmp_path / "tool_example.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert done.stdout == expected
