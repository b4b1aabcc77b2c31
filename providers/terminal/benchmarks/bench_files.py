"""How fast a file question over a large tree lists and opens in the terminal:
``python benchmarks/bench_files.py [--files 100000]``.

Makes a tree of ``--files`` empty files (1,000 folders) in a temporary folder, then times:

- listing it: `AskUserQuestionInput.files` (the asker's one walk; at most
  ``MAX_FILE_CANDIDATES`` candidates are kept);
- opening the question: the form built and its first frame laid out (80x24);
- a filter keystroke: the list narrowed to the paths holding ``7/``, and the frame laid out.

Prints the figures; no target is asserted (timings belong here, not in the tests).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from dsh_user_questions import AskUserQuestionInput, AskUserQuestionItem, AskUserQuestionRequest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from dsh_user_questions_terminal._interactive import Form


def make_tree(root: Path, count: int) -> None:
    folders = 1000
    for number in range(count):
        folder = root / f"pkg{number % folders}"
        if number < folders:
            folder.mkdir(parents=True)
        (folder / f"module_{number}.py").touch()


def measure(root: Path) -> tuple[float, float, float, int]:
    started = time.perf_counter()
    field = AskUserQuestionInput.files(root)
    listed = time.perf_counter() - started
    request = AskUserQuestionRequest(
        questions=[AskUserQuestionItem(id="q", question="Which files?", input=field)]
    )
    with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
        started = time.perf_counter()
        form = Form(request)
        form._frame()
        opened = time.perf_counter() - started
        started = time.perf_counter()
        form.text.text = "7/"  # one keystroke's worth of filtering: the rows follow the filter
        form.app.render_counter += 1
        form._frame()
        filtered = time.perf_counter() - started
    return listed, opened, filtered, len(field.candidates or ())


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=100_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        made = time.perf_counter()
        make_tree(root, args.files)
        made = time.perf_counter() - made
        listed, opened, filtered, candidates = measure(root)
    print(
        f"CPython {platform.python_version()}, load average {os.getloadavg()[0]:.2f}:"
        f" a tree of {args.files:,} files (made in {made:.1f} s) listed in {listed * 1000:.0f} ms"
        f" ({candidates:,} candidates kept); the terminal's file question opened (form and first"
        f" frame) in {opened * 1000:.0f} ms; a filter keystroke redrawn in"
        f" {filtered * 1000:.1f} ms; list and open: {(listed + opened) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
