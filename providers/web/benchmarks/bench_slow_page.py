"""What a page that reads nothing costs the web provider in memory (printed, never asserted).

A raw connection opens the event stream and never reads it; 300 asks, each with a 20 KB
detail (about 6 MB of events for that page), are made and cancelled at once. The figure is
the memory still allocated afterwards (``tracemalloc``), while the page is being dropped: at
most the stream's buffer (``Limits.stream_buffer_bytes``, 128 KiB here) plus what waits in the
socket, where an unbounded queue would keep all 6 MB. It depends on how far the server got in
dropping the page when it is read, so on the machine's load: it was a test's bound (1.5 MB)
until a busy machine measured 1.6 MB, and is a benchmark since.

Run: ``python benchmarks/bench_slow_page.py [--rounds 5] [--asks 300]`` with the ``tests``
extra installed (no browser needed).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import tracemalloc
from urllib.parse import urlsplit

from dsh_user_questions import AskUserQuestionItem, AskUserQuestionOption, AskUserQuestionRequest

from dsh_user_questions_web import Limits, WebProvider

OPTIONS = tuple(AskUserQuestionOption(label) for label in ("pnpm", "npm", "yarn"))
BUFFER = 128 * 1024


def question(index: int) -> AskUserQuestionRequest:
    """A one-question request with a 20 KB detail."""
    item = AskUserQuestionItem(
        id="pkg",
        question=f"Question {index}?",
        options=OPTIONS,
        detail=f"{index} " + "x" * 20_000,
    )
    return AskUserQuestionRequest(questions=(item,))


async def one_round(asks: int) -> int:
    """Bytes still allocated after ``asks`` asks made and cancelled with a page not reading."""
    limits = Limits(max_streams=4, write_timeout=1.0, stream_buffer_bytes=BUFFER)
    provider = WebProvider(announce=False, limits=limits)
    await provider.start()
    try:
        assert provider.url is not None
        parts = urlsplit(provider.url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 0
        sock = socket.create_connection((host, port))
        sock.sendall(f"GET {parts.path}events HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        await asyncio.sleep(0.2)
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for index in range(asks):
                asked = asyncio.ensure_future(provider.ask(question(index)))
                await asyncio.sleep(0)
                asked.cancel()
                await asyncio.sleep(0)
            await asyncio.sleep(0.5)
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        sock.close()
        return grown
    finally:
        await provider.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--asks", type=int, default=300)
    args = parser.parse_args()
    grown = [await one_round(args.asks) for _ in range(args.rounds)]
    load = os.getloadavg()[0]
    print(
        f"a page reading nothing, {args.asks} asks of 20 KB: memory kept median"
        f" {statistics.median(grown) / 1e6:.2f} MB, max {max(grown) / 1e6:.2f} MB"
        f" (stream buffer {BUFFER / 1e6:.2f} MB; unbounded would be"
        f" {args.asks * 20_000 / 1e6:.1f} MB; n={args.rounds}, load average {load:.1f})"
    )


if __name__ == "__main__":
    asyncio.run(main())
