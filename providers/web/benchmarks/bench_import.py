"""What loading the plugin costs: ``import dsh_user_questions_web.plugin`` against ``import
pluggy, attrs`` and the core's own plugin, each in a fresh interpreter, start-up subtracted.

Run: ``python benchmarks/bench_import.py [--runs N]``. Prints the median milliseconds of each
import and the plugin's cost as a multiple of ``pluggy, attrs``; "server" adds what the first
start loads (uvicorn, Starlette, markdown-it-py), which the plugin no longer imports.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

CASES = {
    "bare interpreter": "pass",
    "pluggy, attrs": "import pluggy, attrs",
    "core plugin": "import dsh_user_questions.plugin",
    "plugin": "import dsh_user_questions_web.plugin",
    "plugin + server": (
        "import dsh_user_questions_web.plugin, dsh_user_questions_web.app,"
        " dsh_user_questions_web.server, dsh_user_questions_web._markdown"
    ),
}


def _once(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=21)
    runs = parser.parse_args().runs
    times = {name: [] for name in CASES}  # type: dict[str, list[float]]
    for _ in range(runs):  # interleaved, so a busy moment hits every case alike
        for name, code in CASES.items():
            times[name].append(_once(code))
    median = {name: statistics.median(values) * 1000 for name, values in times.items()}
    bare = median["bare interpreter"]
    base = median["pluggy, attrs"] - bare
    print(f"python {sys.version.split()[0]}, {runs} runs each, median, start-up subtracted")
    for name in ("pluggy, attrs", "core plugin", "plugin", "plugin + server"):
        cost = median[name] - bare
        print(f"import {name:<22} {cost:7.1f} ms   {cost / base:4.1f}x pluggy, attrs")


if __name__ == "__main__":
    main()
