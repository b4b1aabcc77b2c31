"""10,000 questions pending in the inbox: a harness's memory per ask, and a Submit in Chromium.

    python benchmarks/bench_pending.py [--pending 10000] [--rounds 15] [--engines sqlite,postgresql]
        [--memory-only]

Figures, per engine, each printed beside a baseline measured in the same run (never asserted):

- **process RSS per pending inbox ask**: one harness process (this one) with ``--pending``
  asks waiting through the `InboxProvider`, every question written to the store; how much its
  resident set grows (``/proc/self/statm``, after a collection, before minus after), divided
  by their number; each measurement in a fresh process, so memory freed by another is not
  reused. Baseline: the core's own pending ask, through a provider that only awaits a future.
- **asks started together -> all recorded**: the same ``--pending`` asks, all started in one
  loop turn; seconds until the store counts them all pending (polled every 50 ms).
- **click Submit -> card gone**: the inbox page of a running ``dsh-inbox serve`` in Debian's
  Chromium, with ``--pending`` questions in the store; from the click on Submit until the
  card's element leaves the document (timed inside the page with ``performance.now()``), and
  until the next frame after that. Baseline: the same page with a question for each round
  and ten more pending.

Needs ``providers/inbox[postgresql,serve,tests]`` installed, Debian's ``chromium`` and (for the
PostgreSQL figures) ``postgresql``; the server is started here, as in bench_inbox.py.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import dsh_user_questions.plugin
from dsh_user_questions import AskUserQuestionRequest
from dsh_user_questions.harness import HarnessContext

from dsh_user_questions_inbox import open_inbox
from dsh_user_questions_inbox.provider import InboxProvider

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent.parent / "web" / "benchmarks")]
from bench_inbox import DSH_INBOX, REQUEST, engine, report  # noqa: E402
from bench_submit import PROBE, launch  # noqa: E402  (the web provider's: the same page, timed alike)


class _Waiting:
    """The baseline provider: each ask awaits a future of its own, nothing else."""

    def __init__(self) -> None:
        self.futures: list[asyncio.Future[Any]] = []

    async def ask(self, request: AskUserQuestionRequest) -> Any:
        future = asyncio.get_running_loop().create_future()
        self.futures.append(future)
        return await future


def _rss() -> int:
    """This process's resident set size in bytes (``/proc/self/statm``: resident pages)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def _held(
    ctx: HarnessContext, count: int, ready: Any
) -> tuple[int, float, list[asyncio.Task[Any]]]:
    """(RSS bytes the process grows by while ``count`` asks wait, seconds until ``ready()``
    says every one is recorded, the asks); the asks all start in the same loop turn."""
    gc.collect()
    before = _rss()
    started = time.perf_counter()
    asks = [
        asyncio.ensure_future(ctx.user_questions.ask(AskUserQuestionRequest.from_dict(REQUEST)))
        for _ in range(count)
    ]
    while not ready():  # noqa: ASYNC110 (nothing to wait on: the store is polled)
        await asyncio.sleep(0.05)
    recorded = time.perf_counter() - started
    await asyncio.sleep(1)  # the last writes' threads finish
    gc.collect()
    return _rss() - before, recorded, asks


async def _settle(asks: list[asyncio.Task[Any]]) -> None:
    for task in asks:
        task.cancel()
    await asyncio.gather(*asks, return_exceptions=True)


async def _measure(url: str | None, count: int) -> tuple[float, float]:
    """(RSS bytes per pending ask, seconds until all are recorded) in this process: inbox asks
    on ``url``, or (``None``) the baseline's."""
    ctx = HarnessContext()
    ctx.register(dsh_user_questions.plugin)
    if url is None:
        waiting = _Waiting()
        ctx.user_questions.register_provider(waiting)
        held, recorded, asks = await _held(ctx, count, lambda: len(waiting.futures) >= count)
        await _settle(asks)
        await ctx.aclose()
        return held / count, recorded
    provider = InboxProvider(url, harness="bench-memory")
    ctx.user_questions.register_provider(provider)
    counter = open_inbox(url)
    counter.count()  # the counting connection is open before anything is measured
    held, recorded, asks = await _held(ctx, count, lambda: counter.count() >= count)
    counter.close()
    await _settle(asks)
    await ctx.aclose()
    provider.close()
    return held / count, recorded


def _measured(url: str | None, count: int) -> tuple[float, float]:
    """`_measure` in a fresh process: memory another measurement freed is not reused."""
    command = [sys.executable, __file__, "--measure", url or "baseline", "--pending", str(count)]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    per_ask, seconds = json.loads(out.strip().splitlines()[-1])
    return float(per_ask), float(seconds)


async def memory(url: str, count: int) -> tuple[float, float, float, float]:
    """(RSS bytes per pending inbox ask, per pending baseline ask, seconds to record ``count``
    inbox asks started together, seconds for the baseline's asks to reach their provider);
    each measured in a process of its own."""
    per_base, base_time = await asyncio.to_thread(_measured, None, count)
    per_ask, recorded = await asyncio.to_thread(_measured, url, count)
    return per_ask, per_base, recorded, base_time


async def submits(url: str, pending: int, rounds: int) -> list[tuple[float, float]]:
    """(card gone, next frame) milliseconds of ``rounds`` Submits with ``pending`` in the store."""
    from playwright.async_api import async_playwright, expect

    inbox = open_inbox(url)
    for _ in range(pending - len(inbox.records(state="pending"))):
        inbox.add(REQUEST, harness="bench-page")
    inbox.close()
    process = subprocess.Popen(  # noqa: ASYNC220 (started before anything is timed)
        [DSH_INBOX, "--inbox", url, "serve", "--port", "0", "--token", "bench"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    base = process.stdout.readline().split("serving ", 1)[1].strip()
    try:
        async with async_playwright() as playwright:
            browser = await launch(playwright)
            page = await browser.new_page()
            await page.goto(base)
            await expect(page.locator("#queue-count")).to_have_text(str(pending), timeout=300_000)
            await page.evaluate(PROBE)
            for index in range(rounds + 1):  # the first round warms up and is not counted
                card = page.locator("#card-slot article.card")
                await card.locator('input[value="npm"]').check()
                await card.locator("button.next").click()
                await page.wait_for_function(
                    "(n) => window.__marks.length > n", arg=index, timeout=60_000
                )
                await expect(page.locator("#queue-count")).to_have_text(
                    str(pending - index - 1), timeout=60_000
                )
            marks = (await page.evaluate("window.__marks"))[1:]
            await browser.close()
    finally:
        process.terminate()
        process.communicate(timeout=60)
    return [(gone, frame) for gone, frame in marks]


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} ms"


async def run_engine(name: str, args: argparse.Namespace) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    many = f"{args.pending:,} pending"
    with engine(name) as url:
        per_ask, per_base, recorded, base_time = await memory(url, args.pending)
        rows.append((
            f"{name}: process RSS per pending inbox ask ({many})", f"{per_ask:,.0f} B",
            f"core ask awaiting a future: {per_base:,.0f} B", f"{per_ask / per_base:.2f}x",
            "≤ 4,096 B", "met" if per_ask <= 4096 else "MISSED",
        ))  # fmt: skip
        rows.append((
            f"{name}: {args.pending:,} asks started together -> all recorded", f"{recorded:.2f} s",
            f"core asks reaching a future: {base_time:.2f} s", f"{recorded / base_time:.1f}x",
            "≤ 2 s", "met" if recorded <= 2 else "MISSED",
        ))  # fmt: skip
    if args.memory_only:
        return rows
    small = args.rounds + 11  # the baseline page: a question for each round, and ten more
    with engine(name) as url:
        few = await submits(url, small, args.rounds)
        lots = await submits(url, args.pending, args.rounds)
    for index, label in ((0, "click Submit -> card gone"), (1, "click Submit -> next frame")):
        value = statistics.median(mark[index] for mark in lots)
        base = statistics.median(mark[index] for mark in few)
        target = index == 0
        rows.append((
            f"{name}: {label}, {many}", _ms([m[index] for m in lots]),
            f"{small} pending: {_ms([m[index] for m in few])}", f"{value / base:.2f}x",
            "≤ 100 ms" if target else "-",
            ("met" if value <= 100 else "MISSED") if target else "-",
        ))  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pending", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--engines", default="sqlite,postgresql")
    parser.add_argument("--memory-only", action="store_true", help="skip the Submits in Chromium")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # one memory figure (see _measured)
    args = parser.parse_args()
    if args.measure:
        url = None if args.measure == "baseline" else args.measure
        print(json.dumps(asyncio.run(_measure(url, args.pending))))
        return
    load = os.getloadavg()[0]
    started = time.time()
    rows = []
    for name in args.engines.split(","):
        rows += asyncio.run(run_engine(name, args))
    report(rows, started, load, ("figure", "value", "baseline (same run)", "ratio", "target", ""))


if __name__ == "__main__":
    main()
