"""A team on one PostgreSQL: harnesses on two network namespaces ask, people answer on the page.

    python benchmarks/bench_team.py [--processes 50] [--questions 20] [--people 5]
        [--baseline-questions 50] [--pending 10000] [--loads 3] [--round-timeout 600]
        [--no-netns] [--no-page]

Run as root (network namespaces; PostgreSQL then runs as the ``postgres`` user, as in the
tests). Needs ``providers/inbox[postgresql,serve,tests]``, Debian's ``postgresql`` and, for the
page's load time, ``chromium``. Printed, never asserted:

- **nothing lost or doubled**: ``--processes`` harness processes (`team_asker.py`: a
  `HarnessContext` with the inbox provider), half in each of two network namespaces reaching
  the PostgreSQL server over a veth pair and a bridge on a private /24, each ask
  ``--questions`` questions in sequence. ``--people`` people answer on the page of one
  ``dsh-inbox serve`` (on the host, over the server's socket) through its HTTP API, each with
  an event stream of their own as the page has (the heartbeats confirmed), all at once: every
  question is answered by the person it falls to, and about one in five also by a second
  person at the same moment (two people clicking the same card). Checked and printed: every
  question was applied exactly once (one POST accepted, every other refused as no longer
  pending), every asker got its own answer (each question's first option is its tag), the
  store counts every question answered and none pending.
- **answer -> asker**: p50/p95/p99 from the accepted answer's POST (sent, and its response)
  until the asker's ``ask()`` returned, ``time.time()`` in each process on this one machine
  (network namespaces share its clock). The page answers a POST once the asker has received the
  answer (or after 1.5 s), so the response usually comes after the asker's return: from the
  POST sent is the figure the goal is about. Baseline: one harness process asking
  ``--baseline-questions`` in sequence, answered by the same people.
- **page load with ``--pending`` pending**: the page of a ``dsh-inbox serve`` in Chromium
  (Playwright, headless), a fresh browser context per load: the Performance API's
  first-contentful-paint, the navigation's responseEnd and domContentLoadedEventEnd, and the
  first frame whose queue counts every pending question (a requestAnimationFrame probe);
  median of ``--loads``. Baseline: the same page with 100 pending.

Without namespaces (``--no-netns``, not root, or when they cannot be made: said in the output)
every harness runs on the host and reaches the server over TCP on 127.0.0.1. Every namespace,
link and process this makes is removed at the end, on failure and on SIGTERM too; namespaces a
killed run left behind are removed by the next run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import math
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from dsh_user_questions_inbox import open_inbox

HERE = Path(__file__).resolve().parent
sys.path[:0] = [
    str(HERE),
    str(HERE.parent / "tests"),
    str(HERE.parent.parent / "web" / "benchmarks"),
]
from _postgres import PostgresServer, find_bin  # noqa: E402  (the tests' server)
from bench_inbox import Page, read_events, report  # noqa: E402
from team_asker import request  # noqa: E402

ASKER = str(HERE / "team_asker.py")
_PREFIX = "dsht"  # namespaces, bridge and links: dsht<pid>, dsht<pid>a, dsht<pid>a0, ...
_CHILDREN: list[asyncio.subprocess.Process] = []  # every harness process started


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


class Network:
    """Two network namespaces, each joined by a veth pair to a bridge on the host; the bridge
    and the namespaces' ends have addresses on one private /24 (``.1`` is the host's)."""

    def __init__(self) -> None:
        self.name = f"{_PREFIX}{os.getpid()}"
        self.prefix = f"10.237.{os.getpid() % 250 + 3}"
        self.host = f"{self.prefix}.1"
        self.network = f"{self.prefix}.0/24"
        self.namespaces = [f"{self.name}a", f"{self.name}b"]
        self._undo: list[tuple[str, ...]] = []

    @staticmethod
    def remove_stale() -> None:
        """Remove the namespaces and bridges of runs whose process is gone."""
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        for line in listed.splitlines():
            name = line.split()[0] if line.split() else ""
            pid = name[len(_PREFIX) : -1]
            if name.startswith(_PREFIX) and pid.isdigit() and not _alive(int(pid)):
                subprocess.run(["ip", "netns", "del", name], capture_output=True)
                subprocess.run(["ip", "link", "del", name[:-1]], capture_output=True)

    def up(self) -> None:
        """Make it all (`subprocess.CalledProcessError` when this machine cannot)."""
        bridge = self.name
        _ip("link", "add", bridge, "type", "bridge")
        self._undo.append(("link", "del", bridge))
        _ip("addr", "add", f"{self.host}/24", "dev", bridge)
        _ip("link", "set", bridge, "up")
        for index, ns in enumerate(self.namespaces):
            _ip("netns", "add", ns)
            self._undo.append(("netns", "del", ns))
            _ip("link", "add", f"{ns}0", "type", "veth", "peer", "name", f"{ns}1")
            self._undo.append(("link", "del", f"{ns}0"))
            _ip("link", "set", f"{ns}1", "netns", ns)
            _ip("link", "set", f"{ns}0", "master", bridge)
            _ip("link", "set", f"{ns}0", "up")
            _ip("-n", ns, "addr", "add", f"{self.prefix}.{index + 2}/24", "dev", f"{ns}1")
            _ip("-n", ns, "link", "set", f"{ns}1", "up")
            _ip("-n", ns, "link", "set", "lo", "up")

    def down(self) -> None:
        """Remove what `up` made, newest first; what is already gone is passed over."""
        while self._undo:
            subprocess.run(["ip", *self._undo.pop()], capture_output=True)

    def reach(self, port: int) -> None:
        """Check each namespace reaches the server's port (`RuntimeError` if not)."""
        probe = f"import socket; socket.create_connection(({self.host!r}, {port}), 10).close()"
        for ns in self.namespaces:
            done = subprocess.run(
                ["ip", "netns", "exec", ns, sys.executable, "-c", probe],
                capture_output=True,
                text=True,
            )
            if done.returncode:
                raise RuntimeError(f"namespace {ns} cannot reach {self.host}:{port}: {done.stderr}")


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


# Who answers: each question falls to one person; about one in five also to a second one at
# the same moment, so two people's POSTs race for it.
def _people_for(ask_id: str, people: int) -> tuple[int, ...]:
    h = int.from_bytes(hashlib.blake2b(ask_id.encode(), digest_size=4).digest(), "big")
    first = h % people
    if people > 1 and (h // people) % 5 == 0:
        return first, (first + 1 + (h // (5 * people)) % (people - 1)) % people
    return (first,)


@dataclass
class Post:
    person: int
    ask_id: str
    tag: str
    sent: float
    received: float
    code: int
    status: str


@dataclass
class Person:
    """One person on the page: an event stream of their own, answering what falls to them."""

    index: int
    people: int
    base: str
    posts: list[Post] = field(default_factory=list)
    busy: set[str] = field(default_factory=set)  # answers sent, no response yet
    done: set[str] = field(default_factory=set)  # answers that got a response
    reopened: int = 0  # event streams that ended, failed or fell silent, opened again
    ready: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self) -> None:
        """Answer until cancelled. As the page's browser does, a stream that ends, fails or
        brings nothing for two heartbeats (30 s) is opened again; its snapshot lists what is
        still pending."""
        limits = httpx.Limits(max_connections=200)
        async with httpx.AsyncClient(timeout=httpx.Timeout(30), limits=limits) as client:
            tasks: set[asyncio.Task[None]] = set()
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    await self._read(client, tasks)
                self.reopened += 1
                await asyncio.sleep(0.5)

    async def _read(self, client: httpx.AsyncClient, tasks: set[asyncio.Task[None]]) -> None:
        stream = ""
        async for event, data in read_events(client, self.base):
            if event in ("snapshot", "ping"):
                stream = data.get("stream", stream)
                task = asyncio.create_task(self._alive(client, stream, data["n"]))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            asks = {"snapshot": data.get("pending"), "added": [data]}.get(event) or []
            for ask in asks:
                mine = self.index in _people_for(ask["id"], self.people)
                if not mine or ask["id"] in self.busy or ask["id"] in self.done:
                    continue
                self.busy.add(ask["id"])
                task = asyncio.create_task(self._answer(client, ask))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            if event == "snapshot":
                self.ready.set()

    async def _alive(self, client: httpx.AsyncClient, stream: str, n: int) -> None:
        with contextlib.suppress(httpx.HTTPError):  # a dropped stream is opened again
            await client.post(self.base + "alive", json={"id": stream, "n": n})

    async def _answer(self, client: httpx.AsyncClient, ask: dict[str, Any]) -> None:
        tag = ask["questions"][0]["options"][0]["label"]
        answer = {"answers": [{"id": "pkg", "selected": [tag]}]}
        body = {"id": ask["id"], "answer": answer}
        for _ in range(5):  # a POST without a response is sent again, as a person clicks again
            sent = time.time()
            try:
                response = await client.post(self.base + "answer", json=body)
            except httpx.HTTPError as err:
                self.posts.append(Post(self.index, ask["id"], tag, sent, time.time(), 0, repr(err)))
                await asyncio.sleep(0.5)
                continue
            received = time.time()
            status = response.json().get("status", "") if response.content else ""
            self.posts.append(
                Post(self.index, ask["id"], tag, sent, received, response.status_code, status)
            )
            self.done.add(ask["id"])
            break
        self.busy.discard(ask["id"])


async def _start_asker(name: str, count: int, url: str, wrap: list[str]) -> Any:
    env = {**os.environ, "DSH_USER_QUESTIONS_INBOX": url, "DSH_USER_QUESTIONS_PROVIDER": "inbox"}
    process = await asyncio.create_subprocess_exec(
        *wrap, sys.executable, ASKER, name, str(count),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
    )  # fmt: skip
    _CHILDREN.append(process)
    return process


async def _lines(process: Any) -> list[dict[str, Any]]:
    import json

    out = []
    while line := await process.stdout.readline():
        out.append(json.loads(line))
    await process.wait()
    return out


@dataclass
class Round:
    """What one round of asking and answering gave."""

    asked: int
    answers: dict[str, list[dict[str, Any]]]  # tag -> the asker's events for it
    errors: list[dict[str, Any]]
    posts: list[Post]
    failed: int  # harness processes that exited with an error
    reopened: int = 0  # the people's event streams that ended or failed and were reopened
    cpu_askers: float = 0.0  # CPU seconds the harness processes used while asking, in all
    cpu_page: float = 0.0  # CPU seconds the page's server used meanwhile
    cpu_server: float = 0.0  # CPU seconds the PostgreSQL server used meanwhile
    hung: int = 0  # answers whose POST still had no response at the end
    stopped: int = 0  # harness processes still asking after the round's time, killed


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _cpu(pid: int) -> float:
    """CPU seconds (user and system) process ``pid`` has used."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server_cpu(server: PostgresServer) -> float:
    """CPU seconds the PostgreSQL server has used: the postmaster, its live children, and its
    children that ended (their time is added to the postmaster's when it reaps them)."""
    postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
    fields = _stat(postmaster)
    ticks = sum(int(fields[n]) for n in (11, 12, 13, 14))
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                child = _stat(int(entry.name))
                if int(child[1]) == postmaster:
                    ticks += int(child[11]) + int(child[12])
    return ticks / os.sysconf("SC_CLK_TCK")


async def ask_round(
    page: Page,
    server: PostgresServer,
    people: int,
    askers: list[tuple[str, str, list[str]]],
    count: int,
    timeout: float,
) -> Round:
    """``askers`` (name, store URL, command prefix) each ask ``count`` questions in sequence,
    ``people`` answer on ``page``; processes still asking after ``timeout`` s are killed (their
    questions count as lost)."""
    base = page.base
    crowd = [Person(index, people, base) for index in range(people)]
    streams = [asyncio.create_task(person.run()) for person in crowd]
    try:
        await asyncio.wait_for(asyncio.gather(*(p.ready.wait() for p in crowd)), 60)
        processes = [await _start_asker(name, count, url, wrap) for name, url, wrap in askers]
        for process in processes:  # every process has opened the store
            line = await asyncio.wait_for(process.stdout.readline(), 600)
            if b'"ready"' not in line:
                raise RuntimeError(f"a harness did not start: {line!r}")
        readers = [asyncio.create_task(_lines(process)) for process in processes]
        page_cpu, server_cpu = _cpu(page.process.pid), _server_cpu(server)
        for process in processes:  # the go, to all at once
            process.stdin.write(b"go\n")
        await asyncio.gather(*(process.stdin.drain() for process in processes))
        _, late = await asyncio.wait(readers, timeout=timeout)
        for process, reader in zip(processes, readers, strict=True):
            if reader in late:  # still asking after the round's time: stopped, reported
                process.kill()
        events = await asyncio.gather(*readers)
        page_cpu = _cpu(page.process.pid) - page_cpu
        server_cpu = _server_cpu(server) - server_cpu
        await asyncio.sleep(2.0)  # the racing POSTs' refusals come back
    finally:
        for stream in streams:
            stream.cancel()
        await asyncio.gather(*streams, return_exceptions=True)
    answers: dict[str, list[dict[str, Any]]] = {}
    errors = []
    cpu = sum(event["seconds"] for lines in events for event in lines if event["event"] == "cpu")
    for lines in events:
        for event in lines:
            if event["event"] == "answer":
                answers.setdefault(event["tag"], []).append(event)
            elif event["event"] == "error":
                errors.append(event)
    stopped = sum(1 for reader in readers if reader in late)
    failed = sum(1 for process in processes if process.returncode) - stopped
    posts = [post for person in crowd for post in person.posts]
    reopened = sum(person.reopened for person in crowd)
    hung = sum(len(person.busy) for person in crowd)
    return Round(
        len(askers) * count, answers, errors, posts, failed, reopened, cpu, page_cpu, server_cpu,
        hung, stopped,
    )  # fmt: skip


def _percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


@dataclass
class Checked:
    lines: list[str]
    ok: bool
    click: list[float]  # accepted POST sent -> ask() returned, seconds
    response: list[float]  # accepted POST's response -> ask() returned
    wait: list[float]  # accepted POST sent -> its response


def check(result: Round, tags: list[str]) -> Checked:
    """Nothing lost or doubled in ``result``, whose questions are ``tags``: each check's line,
    and the latencies of the applied answers."""
    applied = [p for p in result.posts if p.code == 200 and p.status in ("accepted", "kept")]
    refused = [p for p in result.posts if p.code == 409 and p.status == "not-pending"]
    failed = sum(1 for p in result.posts if p.code == 0)
    other = len(result.posts) - len(applied) - len(refused) - failed
    per_tag = Counter(p.tag for p in applied)
    once = sum(1 for tag in tags if per_tag[tag] == 1)
    doubled = sum(1 for tag in tags if per_tag[tag] > 1)
    got = {tag: [a["got"] for a in result.answers.get(tag, [])] for tag in tags}
    own = sum(1 for tag in tags if got[tag] == [[tag]])
    lost = sum(1 for tag in tags if not got[tag])
    wrong = sum(1 for tag in tags if got[tag] and got[tag] != [[tag]])
    lines = [
        f"questions asked: {result.asked}; applied exactly once through the page: {once}"
        f" (twice or more: {doubled})",
        f"answer POSTs: {len(result.posts)}; accepted: {len(applied)}; refused as no longer"
        f" pending (a second person on the same question): {len(refused)}; no response (tried"
        f" again): {failed}; anything else: {other}; event streams reopened: {result.reopened}",
        f"askers that got their own answer, once: {own} (none: {lost}; another's or more than"
        f" one: {wrong}; ask errors: {len(result.errors)}; harness processes failed:"
        f" {result.failed})",
    ]
    lines.append(
        f"answer POSTs still without a response at the end: {result.hung}; harness processes"
        f" still asking after the round's time (killed): {result.stopped}"
    )
    ok = once == own == len(tags) == result.asked and not (
        doubled or other or lost or wrong or result.errors or result.failed or result.stopped
    )
    by_tag = {p.tag: p for p in applied}
    click, response, wait = [], [], []
    for tag in tags:
        if tag in by_tag and tag in result.answers:
            post, returned = by_tag[tag], result.answers[tag][0]["returned"]
            click.append(returned - post.sent)
            response.append(returned - post.received)
            wait.append(post.received - post.sent)
    return Checked(lines, ok, click, response, wait)


STAGES = (
    ("answer POST sent -> answer written (settled_at)", "sent", "settled_at"),
    ("answer written -> asker claims it (delivered_at)", "settled_at", "delivered_at"),
    ("claimed -> ask() returned", "delivered_at", "returned"),
    ("ask() returned -> receipt written (received_at)", "returned", "received_at"),
    ("receipt written -> the POST's response", "received_at", "received"),
)


def stages(result: Round, url: str) -> list[str]:
    """Where an answer's time goes, from the stamps the store keeps (``time.time()`` of the
    process that wrote each: the page's server, then the asker's): p50 / p95 / p99 per stage."""
    applied = {p.tag: p for p in result.posts if p.code == 200 and p.status == "accepted"}
    with open_inbox(url) as inbox:
        records = {r.id: r for r in inbox.get_many([p.ask_id for p in applied.values()])}
    spans: dict[str, list[float]] = {name: [] for name, _, _ in STAGES}
    for tag, post in applied.items():
        record = records.get(post.ask_id)
        if record is None or tag not in result.answers:
            continue
        times = {
            "sent": post.sent, "settled_at": record.settled_at,
            "delivered_at": record.delivered_at, "received_at": record.received_at,
            "returned": result.answers[tag][0]["returned"], "received": post.received,
        }  # fmt: skip
        for name, start, end in STAGES:
            if times[start] is not None and times[end] is not None:
                spans[name].append(times[end] - times[start])
    return [
        f"  {name}: " + " / ".join(_ms(_percentile(values, p)) for p in (50, 95, 99))
        for name, values in spans.items()
        if values
    ]


PROBE = """(want) => {
  window.__shown = null;
  const check = () => {
    const count = document.getElementById("queue-count");
    if (count && count.textContent === want) { window.__shown = performance.now(); return; }
    requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
}"""

TIMINGS = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const paint = {};
  for (const entry of performance.getEntriesByType("paint")) paint[entry.name] = entry.startTime;
  return {fcp: paint["first-contentful-paint"] ?? null, response: nav.responseEnd,
          dcl: nav.domContentLoadedEventEnd, shown: window.__shown};
}"""


async def page_loads(url: str, counts: list[int], loads: int) -> dict[int, list[dict[str, float]]]:
    """Per pending count: each load's timings (ms since navigation start) of the page."""
    from bench_submit import launch
    from playwright.async_api import async_playwright

    timings: dict[int, list[dict[str, float]]] = {}
    inbox = open_inbox(url)
    page = Page(url)
    try:
        async with async_playwright() as playwright:
            browser = await launch(playwright)
            for pending in counts:
                have = inbox.count("pending")
                asks = [(request(f"page-{n}"), None, None, None) for n in range(have, pending)]
                for start in range(0, len(asks), 500):
                    inbox.add_many(asks[start : start + 500], harness="bench-page")
                assert inbox.count("pending") == pending
                timings[pending] = []
                for _ in range(loads + 1):  # the first load warms up and is not counted
                    context = await browser.new_context()
                    tab = await context.new_page()
                    await tab.add_init_script(f"({PROBE})({str(pending)!r})")
                    await tab.goto(page.base)
                    await tab.wait_for_function("() => window.__shown !== null", timeout=300_000)
                    timings[pending].append(await tab.evaluate(TIMINGS))
                    await context.close()
                timings[pending] = timings[pending][1:]
            await browser.close()
    finally:
        inbox.close()
        await page.close()
    return timings


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def latency_rows(name: str, team: Checked, base: Checked, label: str) -> list[tuple[str, ...]]:
    rows = []
    for what, values, baseline, goal in (
        ("answer POST sent -> ask() returned", team.click, base.click, True),
        ("answer POST's response -> ask() returned", team.response, base.response, False),
        ("answer POST sent -> its response", team.wait, base.wait, False),
    ):
        for p in (50, 95, 99):
            value, ref = _percentile(values, p), _percentile(baseline, p)
            target = goal and p == 99
            ratio = f"{value / ref:.2f}x" if ref > 0 and value > 0 else "-"
            rows.append((
                f"{name}: {what}, p{p}", _ms(value), f"{label}: {_ms(ref)}", ratio,
                "≤ 250 ms" if target else "-",
                ("met" if value <= 0.25 else "MISSED") if target else "-",
            ))  # fmt: skip
    return rows


def page_rows(
    timings: dict[int, list[dict[str, float]]], counts: list[int]
) -> list[tuple[str, ...]]:
    small, many = counts
    rows = []
    for key, what, goal in (
        ("fcp", "first contentful paint", 1000.0),
        ("response", "navigation responseEnd", None),
        ("dcl", "DOMContentLoaded end", None),
        ("shown", "first frame counting every pending question", None),
    ):
        # A load may report no figure (Chromium gives no paint entry for some loads).
        got = [t[key] for t in timings[many] if t.get(key) is not None]
        base = [t[key] for t in timings[small] if t.get(key) is not None]
        if not got or not base:
            rows.append((f"page load, {many:,} pending: {what}", "not reported", "-", "-",
                         "≤ 1 s" if goal else "-", "-"))  # fmt: skip
            continue
        value, ref = statistics.median(got), statistics.median(base)
        rows.append((
            f"page load, {many:,} pending: {what}", f"{value:.0f} ms",
            f"{small:,} pending: {ref:.0f} ms", f"{value / ref:.2f}x" if ref else "-",
            "≤ 1 s" if goal else "-",
            ("met" if value <= goal else "MISSED") if goal else "-",
        ))  # fmt: skip
    return rows


async def measure(
    args: argparse.Namespace, server: PostgresServer, network: Network | None, out: list[str]
) -> list[tuple[str, ...]]:
    host = network.host if network is not None else "127.0.0.1"
    url = server.new_database()  # the page's: over the socket, on the host
    dbname = url.split("/")[3].split("?")[0]
    remote = server.url(dbname, host=host)  # the harnesses': over TCP
    namespaces = network.namespaces if network is not None else [None]

    def wrap(index: int) -> list[str]:
        ns = namespaces[index % len(namespaces)]
        return [] if ns is None else ["ip", "netns", "exec", ns]

    page = Page(url)
    try:
        base_round = await ask_round(
            page,
            server,
            args.people,
            [("solo", remote, wrap(0))],
            args.baseline_questions,
            args.round_timeout,
        )
        base_tags = [f"solo-{k}" for k in range(args.baseline_questions)]
        names = [f"h{n}" for n in range(args.processes)]
        team_round = await ask_round(
            page, server, args.people,
            [(name, remote, wrap(n)) for n, name in enumerate(names)], args.questions,
            args.round_timeout,
        )  # fmt: skip
    finally:
        await page.close()
    tags = [f"{name}-{k}" for name in names for k in range(args.questions)]
    base, team = check(base_round, base_tags), check(team_round, tags)
    with open_inbox(url) as inbox:
        answered, pending = inbox.count("answered"), inbox.count("pending")
    stored = answered == base_round.asked + team_round.asked and pending == 0
    for name, checked in (("baseline round", base), ("team round", team)):
        out.append(f"{name}:")
        out += [f"  {line}" for line in checked.lines]
    out.append(f"store after both: {answered} answered, {pending} pending")
    for name, done in (("baseline round", base_round), ("team round", team_round)):
        out.append(f"where an answer's time goes, {name} (p50 / p95 / p99):")
        out += stages(done, url)
        out.append(
            f"CPU used while asking, {name}: the harness processes {done.cpu_askers:.1f} s in all"
            f" ({done.cpu_askers / done.asked * 1000:.1f} ms per question), the page's server"
            f" {done.cpu_page:.1f} s ({done.cpu_page / done.asked * 1000:.1f} ms per question),"
            f" PostgreSQL {done.cpu_server:.1f} s ({done.cpu_server / done.asked * 1000:.1f} ms"
            " per question)"
        )
    passed = base.ok and team.ok and stored
    out.append("nothing lost or doubled: " + ("every check passed" if passed else "CHECKS FAILED"))
    where = (
        f"{args.processes // len(namespaces)} in each of {len(namespaces)} network namespaces"
        if network is not None
        else "all on the host, one namespace"
    )
    label = f"{args.processes} processes ({where}), {args.people} people"
    rows = latency_rows(label, team, base, f"1 process, {args.baseline_questions} questions")
    if not args.no_page:
        counts = [100, args.pending]
        rows += page_rows(await page_loads(server.new_database(), counts, args.loads), counts)
    return rows


def _stop_children() -> None:
    for process in _CHILDREN:
        if process.returncode is None:  # not reaped yet: the pid is still this one's child
            try:
                os.kill(process.pid, signal.SIGKILL)
                os.waitpid(process.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass


def _on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # through every finally: processes, server, namespaces


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=50)
    parser.add_argument("--questions", type=int, default=20, help="asked by each process")
    parser.add_argument("--people", type=int, default=5)
    parser.add_argument("--baseline-questions", type=int, default=50)
    parser.add_argument("--pending", type=int, default=10_000)
    parser.add_argument("--loads", type=int, default=3)
    parser.add_argument(
        "--round-timeout", type=float, default=600, help="seconds a round may take (then: lost)"
    )
    parser.add_argument("--no-netns", action="store_true", help="every harness on the host")
    parser.add_argument("--no-page", action="store_true", help="skip the page's load time")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _on_sigterm)  # before the server's guard: ours runs instead
    bindir = find_bin()
    if bindir is None:
        raise SystemExit("PostgreSQL is not installed (Debian package postgresql)")
    load = os.getloadavg()[0]
    started = time.time()
    out: list[str] = []
    network: Network | None = None
    server: PostgresServer | None = None
    try:
        if args.no_netns:
            out.append("network namespaces: not used (--no-netns); every harness on the host")
        elif os.geteuid() != 0:
            out.append("network namespaces: not root; every harness on the host (one namespace)")
        else:
            Network.remove_stale()
            network = Network()
            try:
                network.up()
            except (OSError, subprocess.CalledProcessError) as err:
                why = getattr(err, "stderr", None) or err
                out.append(
                    f"network namespaces could not be made ({str(why).strip()}): every harness"
                    " on the host instead (one namespace)"
                )
                network.down()
                network = None
        host = network.host if network is not None else "127.0.0.1"
        port = _free_port(host)
        server = PostgresServer(
            bindir,
            fsync=True,
            settings={"listen_addresses": host, "port": str(port), "max_connections": "500"},
            trusted=[network.network] if network is not None else [],
        )
        server.start()
        if network is not None:
            network.reach(port)
            out.append(
                f"network namespaces: {', '.join(network.namespaces)}, {network.network} (the"
                f" server on {host}:{port}, over a bridge and a veth pair each)"
            )
        rows = asyncio.run(measure(args, server, network, out))
    finally:
        _stop_children()
        if server is not None:
            server.destroy()
        if network is not None:
            network.down()
    print("\n".join(out) + "\n")
    header = ("figure", "value", "baseline (same run)", "ratio", "goal", "")
    report(rows, started, load, header)


if __name__ == "__main__":
    main()
