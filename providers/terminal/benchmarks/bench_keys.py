"""How long the interactive form takes to answer a key with a long detail on screen.

Usage: ``python benchmarks/bench_keys.py [--lines 5000] [--keys 200]``

Runs the real form (prompt_toolkit application, key bindings, layout and renderer) on a pipe for
input and a 80x24 VT100 output written to ``/dev/null``, and times each key from the moment it
is written to the pipe until the render it causes has been written out. Prints the figures as a
markdown table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import statistics
import sys
import time
from typing import Any

import prompt_toolkit
from dsh_user_questions import AskUserQuestionRequest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from dsh_user_questions_terminal._abort import AbortRelay
from dsh_user_questions_terminal._interactive import GUARD_SECONDS, Form, _run_form

KEYS = {"PgDn (scroll the detail)": "\x1b[6~", "Down (move the pointer)": "\x1b[B"}


def request(lines: int, plan: bool) -> AskUserQuestionRequest:
    detail = "\n".join(
        f"{n}. step number {n} of a long plan, with some words" for n in range(lines)
    )
    item: dict[str, Any] = {
        "id": "q",
        "header": "Plan review" if plan else "Long detail",
        "question": "Approve this plan?" if plan else "Which one?",
        "detail": detail,
        "options": [{"label": "Approve"}, {"label": "Keep planning"}]
        if plan
        else [{"label": f"option {n}"} for n in range(1, 6)],
    }
    if plan:
        item["intent"] = {"kind": "plan-review", "approve": "Approve"}
    return AskUserQuestionRequest.from_dict({"questions": [item]})


async def measure(lines: int, keys: int, key: str, plan: bool) -> tuple[float, list[float]]:
    """The first render's time and each key's time, in seconds."""
    sink = open(os.devnull, "w", encoding="utf-8")  # noqa: ASYNC230, SIM115 - closed below
    with sink, create_pipe_input() as pipe:
        output = Vt100_Output(sink, lambda: Size(rows=24, columns=80), term="xterm")
        with create_app_session(input=pipe, output=output):
            started = time.perf_counter()
            form = Form(request(lines, plan))
            rendered = asyncio.Event()
            form.app.after_render += lambda _: rendered.set()
            run = asyncio.ensure_future(_run_form(form, AbortRelay(None), False, False))
            await rendered.wait()
            first = time.perf_counter() - started
            await asyncio.sleep(GUARD_SECONDS * 1.5)  # past the type-ahead guard
            times = []
            for _ in range(keys):
                rendered.clear()
                sent = time.perf_counter()
                pipe.send_text(key)
                await rendered.wait()
                times.append(time.perf_counter() - sent)
                if key == KEYS["PgDn (scroll the detail)"] and len(times) % 20 == 0:
                    pipe.send_text("\x1b[5~" * 20)  # back up, so every PgDn really scrolls
                    rendered.clear()
                    await rendered.wait()
            pipe.send_text("\x03")
            with contextlib.suppress(Exception):  # Ctrl-C: ASK_CANCELLED, as it should
                await run
            return first, times


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--keys", type=int, default=200)
    args = parser.parse_args(argv)
    print(
        f"CPython {platform.python_version()}, prompt_toolkit {prompt_toolkit.__version__},"
        f" {platform.machine()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
    )
    print()
    print("| detail | key | first render | per key: median | p95 | max |")
    print("|---|---|---|---|---|---|")
    for plan in (False, True):
        for name, key in KEYS.items():
            first, times = asyncio.run(measure(args.lines, args.keys, key, plan))
            times.sort()
            p95 = times[int(len(times) * 0.95) - 1]
            kind = f"{args.lines:,} lines" + (" (plan card)" if plan else "")
            print(
                f"| {kind} | {name} | {first * 1000:.0f} ms"
                f" | {statistics.median(times) * 1000:.1f} ms"
                f" | {p95 * 1000:.1f} ms | {times[-1] * 1000:.1f} ms |"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
