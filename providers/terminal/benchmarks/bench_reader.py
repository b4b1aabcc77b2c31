"""How long line mode takes to read one huge answer line: ``python benchmarks/bench_reader.py``.

Writes a line of ``--mib`` MiB (default 40) and its line break into a pipe from a thread, and
times line mode's stdin reader from the request for a line until the line is handed back.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import threading
import time

from dsh_user_questions_terminal._lines import _LineReader


def _feed(fd: int, size: int) -> None:
    chunk = b"x" * (1 << 20)
    with os.fdopen(fd, "wb") as pipe:
        for _ in range(size // len(chunk)):
            pipe.write(chunk)
        pipe.write(b"\n")


async def measure(mib: int) -> float:
    read_fd, write_fd = os.pipe()
    threading.Thread(target=_feed, args=(write_fd, mib << 20), daemon=True).start()
    started = time.perf_counter()
    line = await _LineReader(read_fd).readline()
    elapsed = time.perf_counter() - started
    assert line is not None
    assert len(line) == mib << 20
    os.close(read_fd)
    return elapsed


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mib", type=int, default=40)
    args = parser.parse_args(argv)
    elapsed = asyncio.run(measure(args.mib))
    print(
        f"CPython {platform.python_version()}, load average {os.getloadavg()[0]:.2f}:"
        f" one {args.mib} MiB line read in {elapsed * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
