"""The README shows the prompt as it really looks."""

from __future__ import annotations

from capture_screen import README, readme_block, screens


def test_readme_screens_match_a_fresh_capture():
    """README.md shows the screens the prompt draws today (refresh: capture_screen.py --write)."""
    assert readme_block(README.read_text(encoding="utf-8")) == screens()
