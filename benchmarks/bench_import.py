"""Import time of the package vs importing pluggy and attrs alone (fresh interpreters)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from ._common import Figure, median

TARGET = 1.5
PROBE = (
    "import time; started = time.perf_counter(); import {modules};"
    " print(time.perf_counter() - started)"
)


def _import_seconds(modules: str, cwd: str) -> float:
    # A fresh interpreter each time, outside the source tree so the installed package is used,
    # and with bytecode caches allowed, as an installed package has them.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    output = subprocess.run(
        [sys.executable, "-c", PROBE.format(modules=modules)],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
        env=env,
    ).stdout
    return float(output)


async def run(quick: bool) -> list[Figure]:
    repeat = 10 if quick else 40
    subjects = {
        "baseline": "pluggy, attrs",
        "package": "dsh_user_questions",
        "tool": "dsh_user_questions.tool",
    }
    times: dict[str, list[float]] = {name: [] for name in subjects}
    with tempfile.TemporaryDirectory() as cwd:
        for modules in subjects.values():
            _import_seconds(modules, cwd)  # bytecode caches written, files in the page cache
        for _ in range(repeat):
            for name, modules in subjects.items():
                times[name].append(_import_seconds(modules, cwd))
    base = median(times["baseline"]) * 1e3
    package = median(times["package"]) * 1e3
    return [
        Figure(
            name="import dsh_user_questions",
            value=package,
            unit="ms",
            baseline_name="import pluggy, attrs",
            baseline=base,
            target=f"≤ {TARGET:g}x",
            met=package / base <= TARGET,
            note=f"median of {repeat} fresh interpreters each, timed inside the interpreter",
        ),
        Figure(
            name="import dsh_user_questions.tool",
            value=median(times["tool"]) * 1e3,
            unit="ms",
            baseline_name="import pluggy, attrs",
            baseline=base,
        ),
    ]
