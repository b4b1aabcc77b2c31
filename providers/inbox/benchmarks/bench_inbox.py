"""Inbox benchmarks over SQLite and PostgreSQL; every figure next to a baseline of the same run.

    python benchmarks/bench_inbox.py [--rounds 40] [--pending 10000] [--answers 2000]

Figures, per engine:
- ask -> visible: from calling ``ask()`` (inbox provider, in this process) until the page's
  event stream of a running ``dsh-inbox serve`` delivers the question (``added``);
- click -> ask() returns: from posting the answer as the page does until ``ask()`` returns;
  baseline for both: one HTTP round trip to the same server (``GET state`` on an empty store);
- the same two with 10,000 other questions pending, and the page's snapshot of them
  (``GET state``), against the same baseline;
- answers per second, from one process and from four at once, each answering its own share
  of pending questions through the store; baseline: bare one-row write transactions per second
  on the same database with the same durability settings.

The PostgreSQL server is started here from Debian's binaries with ``fsync=on`` (the tests run
theirs with it off).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dsh_user_questions.plugin
import httpx
from dsh_user_questions import AskUserQuestionRequest
from dsh_user_questions.harness import HarnessContext

from dsh_user_questions_inbox import open_inbox
from dsh_user_questions_inbox.provider import InboxProvider

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"
sys.path.insert(0, str(TESTS))
from _postgres import PostgresServer, find_bin  # noqa: E402

DSH_INBOX = str(Path(sys.executable).parent / "dsh-inbox")
REQUEST = {
    "questions": [
        {"id": "pkg", "question": "Which package manager?",
         "options": [{"label": "pnpm"}, {"label": "npm"}]}
    ]
}  # fmt: skip
ANSWER = {"answers": [{"id": "pkg", "selected": ["npm"]}]}


@contextmanager
def engine(name: str) -> Iterator[str]:
    """A fresh store URL on ``name``; the PostgreSQL server lives as long as the block."""
    folder = Path(tempfile.mkdtemp(prefix="dsh-inbox-bench-"))
    if name == "sqlite":
        yield f"sqlite:///{folder / 'inbox.db'}"
        return
    bindir = find_bin()
    if bindir is None:
        raise SystemExit("PostgreSQL is not installed (Debian package postgresql)")
    server = PostgresServer(bindir, fsync=True)
    server.start()
    try:
        yield server.new_database()
    finally:
        server.destroy()


async def read_events(
    client: httpx.AsyncClient, base: str
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """The page's event stream at ``base`` (its SSE protocol): (event name, data) pairs."""
    event, data = "", []
    async with client.stream("GET", base + "events") as response:
        async for line in response.aiter_lines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
            elif not line and data:
                yield event, json.loads("\n".join(data))
                event, data = "", []


class Page:
    """A running dsh-inbox serve and the page's event stream."""

    def __init__(self, url: str) -> None:
        self.process = subprocess.Popen(
            [DSH_INBOX, "--inbox", url, "serve", "--port", "0", "--token", "bench"],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.base = self.process.stdout.readline().split("serving ", 1)[1].strip()
        self.events: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(120, read=None))
        self._reader: asyncio.Task[None] | None = None

    async def open(self) -> None:
        self._reader = asyncio.create_task(self._read())
        while (await self.events.get())[0] != "snapshot":
            pass

    async def _read(self) -> None:
        async for event in read_events(self.client, self.base):
            self.events.put_nowait(event)

    async def next(self, name: str) -> dict[str, object]:
        while True:
            event, data = await self.events.get()
            if event == name:
                return data

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        await self.client.aclose()
        self.process.terminate()
        self.process.communicate(timeout=60)


async def round_trips(page: Page, url: str, rounds: int) -> tuple[list[float], list[float]]:
    """(ask -> visible, click -> return) seconds for ``rounds`` asks, one at a time."""
    ctx = HarnessContext()
    ctx.register(dsh_user_questions.plugin)
    provider = InboxProvider(url, harness="bench")
    ctx.user_questions.register_provider(provider)
    visible: list[float] = []
    returned: list[float] = []
    try:
        for _ in range(rounds + 2):  # two warm-up rounds are dropped
            started = time.perf_counter()
            asking = asyncio.ensure_future(
                ctx.user_questions.ask(AskUserQuestionRequest.from_dict(REQUEST))
            )
            added = await page.next("added")
            while added["agent"] != "bench":  # the other pending questions' events
                added = await page.next("added")
            seen = time.perf_counter()
            clicked = time.perf_counter()
            response = await page.client.post(
                page.base + "answer", json={"id": added["id"], "answer": ANSWER}
            )
            assert response.status_code == 200, response.text
            await asking
            done = time.perf_counter()
            visible.append(seen - started)
            returned.append(done - clicked)
    finally:
        await asyncio.to_thread(provider.close)
    return visible[2:], returned[2:]


async def http_baseline(page: Page, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds + 2):
        started = time.perf_counter()
        response = await page.client.get(page.base + "state")
        response.raise_for_status()
        times.append(time.perf_counter() - started)
    return times[2:]


def bare_writes_per_second(url: str, count: int, table: str) -> float:
    """One-row write transactions per second on the same database, same durability."""
    if url.startswith("sqlite"):
        path = url[len("sqlite:///") :] + f".{table}"
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, v TEXT)")
        started = time.perf_counter()
        for n in range(count):
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(f"INSERT INTO {table} (v) VALUES (?)", (str(n),))
            conn.execute("COMMIT")
        elapsed = time.perf_counter() - started
        conn.close()
        return count / elapsed
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table} (id serial PRIMARY KEY, v text)")
        started = time.perf_counter()
        for n in range(count):
            conn.execute(f"INSERT INTO {table} (v) VALUES (%s)", (str(n),))  # type: ignore[call-overload]
        return count / (time.perf_counter() - started)


def answers_per_second(url: str, count: int, processes: int) -> float:
    """Answer ``count`` pending questions, split among ``processes`` answering at once."""
    inbox = open_inbox(url)
    ids = [inbox.add(REQUEST, harness="bench-rate").id for _ in range(count)]
    inbox.close()
    shares = [ids[n::processes] for n in range(processes)]
    workers = [
        subprocess.Popen(
            [sys.executable, str(TESTS / "answer_all.py"), url, f"rate-{n}", *share],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        for n, share in enumerate(shares)
    ]
    time.sleep(2.0)  # every worker has imported and connected; they wait for the go
    started = time.perf_counter()
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.write("go\n")
        worker.stdin.close()
    for worker in workers:
        assert worker.wait(timeout=600) == 0
    return count / (time.perf_counter() - started)


def ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


async def run_engine(name: str, args: argparse.Namespace) -> list[tuple[str, str, str, str]]:
    rows: list[tuple[str, str, str, str]] = []
    with engine(name) as url:
        page = Page(url)
        try:
            await page.open()
            base = await http_baseline(page, args.rounds)
            visible, returned = await round_trips(page, url, args.rounds)
            baseline = f"HTTP round trip: {ms(base):.2f} ms"
            for label, values in (
                ("ask -> visible", visible),
                ("click -> ask() returns", returned),
            ):
                rows.append((f"{name}: {label}", f"{ms(values):.2f} ms", baseline,
                             f"{ms(values) / ms(base):.1f}x"))  # fmt: skip
            inbox = open_inbox(url)
            started = time.perf_counter()
            for _ in range(args.pending):
                inbox.add(REQUEST, harness="bench-pending")
            adds = args.pending / (time.perf_counter() - started)
            started = time.perf_counter()
            listed = len(inbox.records(state="pending"))
            listing = time.perf_counter() - started
            inbox.close()
            assert listed == args.pending
            snapshot = await http_baseline(page, 5)
            visible, returned = await round_trips(page, url, max(10, args.rounds // 2))
            many = f"{args.pending:,} pending"
            rows += [
                (f"{name}: ask -> visible, {many}", f"{ms(visible):.2f} ms", baseline,
                 f"{ms(visible) / ms(base):.1f}x"),
                (f"{name}: click -> ask() returns, {many}", f"{ms(returned):.2f} ms", baseline,
                 f"{ms(returned) / ms(base):.1f}x"),
                (f"{name}: page snapshot (GET state), {many}", f"{ms(snapshot):.0f} ms", baseline,
                 f"{ms(snapshot) / ms(base):.0f}x"),
                (f"{name}: records(state=pending), {many}", f"{listing * 1000:.0f} ms", "-", "-"),
                (f"{name}: questions added per second", f"{adds:,.0f}/s", "-", "-"),
            ]  # fmt: skip
        finally:
            await page.close()
        for processes in (1, 4):
            # Measured right before each rate: commit latency (fsync) drifts on a shared disk.
            bare = bare_writes_per_second(url, args.answers, f"bare{processes}")
            rate = answers_per_second(url, args.answers, processes)
            rows.append((
                f"{name}: answers per second, {processes} process{'es' if processes > 1 else ''}",
                f"{rate:,.0f}/s", f"bare one-row write transactions: {bare:,.0f}/s",
                f"{rate / bare:.2f}x",
            ))  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--pending", type=int, default=10_000)
    parser.add_argument("--answers", type=int, default=2000)
    parser.add_argument("--engines", default="sqlite,postgresql")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    started = time.time()
    rows = []
    for name in args.engines.split(","):
        rows += asyncio.run(run_engine(name, args))
    report(rows, started, load, ("figure", "value", "baseline (same run)", "ratio"))


def report(
    rows: list[tuple[str, ...]], started: float, load: float, header: tuple[str, ...]
) -> None:
    """Print when and how long it ran, under what load, then the rows as a markdown table."""
    print(
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
        f"{time.time() - started:.0f} s;"
        f" Python {platform.python_version()}; load average (1 min) {load:.2f} before,"
        f" {os.getloadavg()[0]:.2f} after\n",
    )
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
