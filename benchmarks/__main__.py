"""Run the benchmarks: ``python -m benchmarks [--quick] [--only NAME,...] [--markdown]``."""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
import sys
import time

from . import (
    bench_ask,
    bench_import,
    bench_mcp,
    bench_pending,
    bench_plain,
    bench_sequential,
    bench_signals,
    bench_tool,
)
from ._common import Figure, markdown_table, text_table

BENCHMARKS = {
    "plain": bench_plain.run,
    "ask": bench_ask.run,
    "tool": bench_tool.run,
    "pending": bench_pending.run,
    "sequential": bench_sequential.run,
    "signals": bench_signals.run,
    "import": bench_import.run,
    "mcp": bench_mcp.run,
}


def machine() -> str:
    cpu = "unknown CPU"
    memory = "unknown memory"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next(
                line.split(":", 1)[1].strip() for line in info if line.startswith("model name")
            )
        with open("/proc/meminfo", encoding="utf-8") as info:
            kib = int(next(line.split()[1] for line in info if line.startswith("MemTotal")))
            memory = f"{kib / 2**20:.1f} GiB"
    except (OSError, StopIteration):
        pass
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs ({cpu}), {memory};"
        f" {platform.python_implementation()} {platform.python_version()}"
    )


def load() -> str:
    """The 1, 5 and 15 minute load averages: other work on the machine skews every figure."""
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smaller counts (100,000 sequential asks, fewer repeats): a check, not the figures",
    )
    parser.add_argument("--only", help="comma-separated: " + ",".join(BENCHMARKS))
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown")
    args = parser.parse_args(argv)
    chosen = list(BENCHMARKS) if not args.only else args.only.split(",")
    unknown = [name for name in chosen if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}")

    print(machine())
    print(datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), flush=True)
    print(f"load average before: {load()}", flush=True)
    figures: list[Figure] = []
    for name in chosen:
        started = time.perf_counter()
        print(f"running {name} ...", end=" ", flush=True)
        result = asyncio.run(BENCHMARKS[name](args.quick))
        figures.extend(result)
        print(f"{time.perf_counter() - started:.1f} s", flush=True)
    print(f"load average after: {load()}")
    print()
    print(markdown_table(figures) if args.markdown else text_table(figures))
    for figure in figures:
        if figure.note:
            print(f"- {figure.name}: {figure.note}")
    missed = [figure.name for figure in figures if figure.met is False]
    if missed:
        print(f"\nmissed: {'; '.join(missed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
