"""Drive the provider as a person would: a real pseudo-terminal read through a screen emulator,
or real pipes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pexpect
import pyte
import pytest
from dsh_user_questions.testing import make_plan_question
from hypothesis import settings

# No per-example deadline: on a loaded machine one example can take longer than Hypothesis's
# 200 ms for no fault of the code (timings belong in benchmarks/, not in tests).
settings.register_profile("terminal", deadline=None)
settings.load_profile("terminal")

DRIVER = Path(__file__).with_name("driver.py")
COLUMNS, ROWS = 80, 24
TIMEOUT = 15.0


class _Screen(pyte.HistoryScreen):  # type: ignore[misc]
    """A screen that answers cursor-position requests like a real terminal, and keeps the lines
    scrolled off its top (the scrollback)."""

    def __init__(self, reply: Callable[[str], None], rows: int, columns: int) -> None:
        super().__init__(columns, rows, history=1000)
        self._reply = reply

    def write_process_input(self, data: str) -> None:
        self._reply(data)


class Terminal:
    """The driver running in a pseudo-terminal, with what its screen shows."""

    def __init__(
        self,
        request: dict[str, Any],
        tmp_path: Path,
        *args: str,
        size: tuple[int, int] = (ROWS, COLUMNS),
        preexec_fn: Callable[[], None] | None = None,
        **extra_env: str,
    ) -> None:
        path = tmp_path / "request.json"
        path.write_text(json.dumps(request), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_USER_QUESTIONS_")}
        env.update(TERM="xterm-256color", LC_ALL="C.UTF-8", PYTHONIOENCODING="utf-8")
        env.update(extra_env)
        self.child = pexpect.spawn(
            sys.executable,
            [str(DRIVER), str(path), *args],
            env=env,
            dimensions=size,
            encoding="utf-8",
            codec_errors="replace",
            timeout=TIMEOUT,
            preexec_fn=preexec_fn,  # run in the child before the driver starts
        )
        self.child.delaybeforesend = None
        self.screen = _Screen(self.child.send, *size)
        self.stream = pyte.Stream(self.screen)
        self.transcript = ""

    def _pump(self, wait: float) -> bool:
        try:
            data = self.child.read_nonblocking(65536, timeout=wait)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False
        self.transcript += data
        self.stream.feed(data)
        return True

    @property
    def text(self) -> str:
        """The screen as text, trailing blanks dropped."""
        return "\n".join(line.rstrip() for line in self.screen.display).rstrip("\n")

    @property
    def scrollback(self) -> list[str]:
        """The lines scrolled off the top of the screen, oldest first, trailing blanks dropped."""
        columns = self.screen.columns
        return [
            "".join(line[x].data for x in range(columns)).rstrip()
            for line in self.screen.history.top
        ]

    def everything(self) -> list[str]:
        """The scrollback and then the screen, one string a line."""
        return self.scrollback + self.text.splitlines()

    def wait_for(self, *texts: str) -> str:
        """Read output until every one of ``texts`` is on the screen; return the screen."""
        deadline = time.monotonic() + TIMEOUT
        while not all(text in self.text for text in texts):
            if time.monotonic() > deadline or not self._pump(0.1):
                if all(text in self.text for text in texts):
                    break
                raise AssertionError(f"{texts!r} never appeared; the screen:\n{self.text}")
        return self.text

    def wait_until(self, condition: Callable[[str], bool], what: str) -> str:
        """Read output until ``condition(screen text)`` holds; return the screen."""
        deadline = time.monotonic() + TIMEOUT
        while not condition(self.text):
            if time.monotonic() > deadline or not self._pump(0.1):
                if condition(self.text):
                    break
                raise AssertionError(f"never saw {what}; the screen:\n{self.text}")
        return self.text

    def settle(self, seconds: float = 0.5) -> str:
        """Keep reading for ``seconds`` (a quiet period for things that must NOT happen)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self._pump(0.05):
            pass
        return self.text

    def pointer_line(self) -> str | None:
        """The screen line holding the highlight pointer, if one is on screen."""
        lines = [line for line in self.text.splitlines() if line.startswith("\u276f")]
        assert len(lines) <= 1, self.text
        return lines[0] if lines else None

    def wait_until_gone(self, text: str) -> str:
        """Read output until ``text`` has left the screen; return the screen."""
        deadline = time.monotonic() + TIMEOUT
        while text in self.text:
            if time.monotonic() > deadline or not self._pump(0.1):
                raise AssertionError(f"{text!r} stayed; the screen:\n{self.text}")
        return self.text

    def resize(self, rows: int, columns: int) -> None:
        """Change the terminal's size, as a person dragging the window does (SIGWINCH)."""
        self.child.setwinsize(rows, columns)
        self.screen.resize(rows, columns)

    def ended_by_signal(self) -> str:
        """Read until the driver is gone (ended by a signal, printing no outcome); the screen."""
        deadline = time.monotonic() + TIMEOUT
        while self._pump(0.1):
            if time.monotonic() > deadline:
                raise AssertionError(f"the driver did not end; the screen:\n{self.text}")
        self.child.close()
        return self.text

    def press(self, *keys: str) -> None:
        """Type ``keys`` (names from `KEYS`, or literal text)."""
        for key in keys:
            self.child.send(KEYS.get(key, key))

    def outcome(self) -> dict[str, Any]:
        """Wait for the driver to finish; its ``answer`` or ``error`` and ``tty`` lines."""
        deadline = time.monotonic() + TIMEOUT
        while self._pump(0.1):
            if time.monotonic() > deadline:
                raise AssertionError(f"the driver did not finish; the screen:\n{self.text}")
        self.child.close()
        result: dict[str, Any] = {"screen": self.text}
        result.update(_parse(self.transcript))
        assert "answer" in result or "error" in result, self.transcript
        return result

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


KEYS = {
    "up": "\x1b[A",
    "down": "\x1b[B",
    "left": "\x1b[D",
    "enter": "\r",
    "esc": "\x1b",
    "space": " ",
    "ctrl-c": "\x03",
    "backspace": "\x7f",
    "pagedown": "\x1b[6~",
    "pageup": "\x1b[5~",
    "home": "\x1b[H",
    "end": "\x1b[F",
}


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Callable[..., Terminal]]:
    """Start the driver on a request in a fresh pseudo-terminal (closed after the test)."""
    started: list[Terminal] = []

    def start(
        request: dict[str, Any],
        *args: str,
        size: tuple[int, int] = (ROWS, COLUMNS),
        preexec_fn: Callable[[], None] | None = None,
        **env: str,
    ) -> Terminal:
        term = Terminal(request, tmp_path, *args, size=size, preexec_fn=preexec_fn, **env)
        started.append(term)
        return term

    yield start
    for term in started:
        term.close()


def _parse(output: str) -> dict[str, Any]:
    """The driver's ``ANSWER``, ``ERROR`` and ``TTY`` lines (styles before them ignored)."""
    found: dict[str, Any] = {}
    for match in re.finditer(r"(ANSWER|ERROR|TTY) ([^\r\n]*)", output):
        kind, rest = match.groups()
        if kind == "ANSWER":
            rest, _, by = rest.partition(" BY ")
            found["answer"] = json.loads(rest)
            found["answered_by"] = by.strip() or None
        elif kind == "ERROR":
            found["error"] = rest.split(" ", 1)[0]
        else:
            found["tty"] = rest.strip()
    return found


class Piped:
    """The outcome of the driver run with pipes for stdin, stdout and stderr."""

    def __init__(self, process: subprocess.CompletedProcess[str]) -> None:
        lines = process.stdout.splitlines()
        self.stdout = process.stdout
        self.stderr = process.stderr
        found = _parse(process.stdout)
        answer_lines = [line[7:] for line in lines if line.startswith("ANSWER ")]
        self.answers = [json.loads(line.partition(" BY ")[0]) for line in answer_lines]
        self.answer: dict[str, Any] | None = found.get("answer")
        self.answered_by: str | None = found.get("answered_by")
        self.error: str | None = found.get("error")


@pytest.fixture
def piped(tmp_path: Path) -> Callable[..., Piped]:
    """Run the driver on a request with ``stdin`` text through real pipes."""

    def run(request: dict[str, Any], stdin: str, *args: str, **env: str) -> Piped:
        path = tmp_path / "request.json"
        path.write_text(json.dumps(request), encoding="utf-8")
        environ = {k: v for k, v in os.environ.items() if not k.startswith("DSH_USER_QUESTIONS_")}
        environ.update(env)
        process = subprocess.run(
            [sys.executable, str(DRIVER), str(path), *args],
            input=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=environ,
            timeout=TIMEOUT,
            check=True,
        )
        return Piped(process)

    return run


def question(qid: str = "pkg", **fields: Any) -> dict[str, Any]:
    """A wire-form question about a package manager, with ``fields`` overriding."""
    base: dict[str, Any] = {
        "id": qid,
        "header": "Package manager",
        "question": "Which package manager should I use?",
        "options": [
            {"label": "pnpm", "description": "fast, disk-efficient"},
            {"label": "npm", "description": "comes with node"},
            {"label": "yarn"},
        ],
    }
    base.update(fields)
    return base


PLAN = "# Migrate to pnpm\n\n1. Add `pnpm-lock.yaml`\n2. Switch CI to `pnpm install`\n"


def plan_review() -> dict[str, Any]:
    """The wire form of the plan-review question the core builds (``make_plan_question``)."""
    return make_plan_question(PLAN).to_dict()
