"""What the agent-framework adapter tests share: the model's arguments, a scripted context, a
real pseudo-terminal."""

from __future__ import annotations

import asyncio
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from dsh_user_questions import plugin
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import ScriptedProvider

QUESTION: dict[str, Any] = {
    "id": "pkg",
    "question": "Which package manager?",
    "header": "Tooling",
    "options": [
        {"label": "pnpm", "description": "Fast, disk-efficient"},
        {"label": "npm", "description": "The default"},
    ],
}
ARGUMENTS: dict[str, Any] = {"questions": [QUESTION]}
"""What a model sends to ``ask_user_question``."""

PNPM: dict[str, Any] = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
"""The human's answer, as a script step."""

PNPM_TEXT = '{"answers":[{"id":"pkg","selected":["pnpm"]}]}'
"""The tool's result text for that answer."""

NPM_TEXT = '{"answers":[{"id":"pkg","selected":["npm"]}]}'
"""The tool's result text when the human picks npm (key 2) in the terminal."""

PICK_NPM = (("Esc cancel",), "2")
"""The terminal step answering `QUESTION`: once the form takes keys, press 2 (npm)."""


def scripted(*steps: Any) -> tuple[HarnessContext, ScriptedProvider]:
    """A fresh context whose provider plays ``steps``."""
    ctx = HarnessContext()
    ctx.register(plugin)
    provider = ScriptedProvider(*steps)
    ctx.user_questions.register_provider(provider)
    return ctx, provider


def closing(ctx: HarnessContext) -> None:
    """Close ``ctx`` from synchronous code."""
    asyncio.run(ctx.aclose())


def run_in_terminal(
    argv: list[str], tmp_path: Path, keys: list[str], wait_text: str, **env: str
) -> str:
    """Run ``argv`` in a pseudo-terminal with the installed terminal provider, press ``keys``
    once ``wait_text`` shows on the screen, and return everything it wrote."""
    return drive_terminal(argv, tmp_path, [((wait_text,), "".join(keys))], **env)


CHILD_PRELUDE = f"""\
import sys
sys.path[:0] = [{str(Path(__file__).parent)!r}, {str(Path(__file__).parent / "adapters")!r}]
from dsh_user_questions.harness import HarnessContext
ctx = HarnessContext()
ctx.load_entrypoints()


def answered(text):
    with open("answered.txt", "w", encoding="utf-8") as out:
        out.write(str(text))


"""
"""What each child of `ask_in_terminal` starts with: the tests folder and its adapters folder
importable, ``ctx`` with the installed plugins (the terminal provider asks), and
``answered(text)`` to hand back what the model's next turn was given."""


def ask_in_terminal(code: str, tmp_path: Path, *steps: tuple[tuple[str, ...], str]) -> str:
    """Run ``code`` in a child Python in a pseudo-terminal, after `CHILD_PRELUDE`; at each step
    wait until all its texts show on the screen, then type its keys. Returns what the child
    passed to ``answered``."""
    script = tmp_path / "child.py"
    script.write_text(CHILD_PRELUDE + code, encoding="utf-8")
    drive_terminal([sys.executable, str(script)], tmp_path, list(steps))
    return (tmp_path / "answered.txt").read_text(encoding="utf-8")


def drive_terminal(
    argv: list[str], tmp_path: Path, steps: list[tuple[tuple[str, ...], str]], **env: str
) -> str:
    """Run ``argv`` in a pseudo-terminal with the installed terminal provider; at each step
    wait until all its texts show on the screen, then type its keys; return everything the
    child wrote, once it exited with status 0."""
    pexpect = pytest.importorskip("pexpect")
    pyte = pytest.importorskip("pyte")
    pytest.importorskip("dsh_user_questions_terminal")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("DSH_USER_QUESTIONS_")}
    environ.update(
        TERM="xterm-256color", LC_ALL="C.UTF-8", DSH_USER_QUESTIONS_PROVIDER="terminal", **env
    )
    with warnings.catch_warnings():
        # pexpect forks this process; CrewAI's lancedb (once imported) warns on every fork.
        warnings.filterwarnings("ignore", "lance is not fork-safe", UserWarning)
        child = pexpect.spawn(
            argv[0],
            argv[1:],
            cwd=str(tmp_path),
            env=environ,
            dimensions=(24, 80),
            encoding="utf-8",
            codec_errors="replace",
            timeout=60,
        )
    screen = pyte.Screen(80, 24)
    stream = pyte.Stream(screen)
    transcript = ""
    try:
        for texts, keys in steps:
            while not all(text in "\n".join(screen.display) for text in texts):
                data = child.read_nonblocking(65536, timeout=60)
                transcript += data
                stream.feed(data)
            child.send(keys)
        while True:
            try:
                transcript += child.read_nonblocking(65536, timeout=60)
            except pexpect.EOF:
                break
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, transcript
    return transcript
