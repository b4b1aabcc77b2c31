"""A waiting ask whose SQLite file is damaged under it: how long until it fails.

    python benchmarks/bench_store_damage.py [--rounds 10]

For each way the file can be damaged (emptied in place as ``: > inbox.db`` does, truncated,
overwritten in place, replaced by another store with the old ``-wal`` left beside it, and,
as the baseline, deleted), one `InboxProvider` asks a question and waits; the file is damaged;
the figure is the time from the damage until the ask raises ``STORE_UNUSABLE`` (median and
maximum of ``--rounds``, each with a fresh store). The provider's watcher checks the file
between two polls of the store (every 0.25 s); a damaged but non-empty file is reported when
two checks in a row find it so. Never asserted: the tests bound the delay at 10 s.

Needs only ``providers/inbox`` installed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from dsh_user_questions import AskUserQuestionRequest, StoreError

from dsh_user_questions_inbox import open_inbox
from dsh_user_questions_inbox.provider import InboxProvider

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]
from bench_inbox import REQUEST, report  # noqa: E402


def _deleted(path: Path) -> None:
    for file in path.parent.glob(f"{path.name}*"):
        file.unlink()


def _emptied(path: Path) -> None:
    path.write_bytes(b"")


def _truncated(path: Path) -> None:
    os.truncate(path, path.stat().st_size - 1000)


def _overwritten(path: Path) -> None:
    with path.open("r+b") as file:
        file.write(b"not a database\n" * 500)


def _replaced(path: Path) -> None:
    other = path.parent / "other.db"
    with open_inbox(f"sqlite:///{other}"):
        pass
    os.replace(other, path)


DAMAGE: dict[str, Callable[[Path], None]] = {
    "deleted (baseline)": _deleted,
    "emptied in place": _emptied,
    "truncated": _truncated,
    "overwritten in place": _overwritten,
    "replaced, old -wal beside it": _replaced,
}


def _recorded(url: str) -> None:
    with open_inbox(url) as view:
        while not view.records(state="pending"):
            time.sleep(0.01)


async def _one(damage: Callable[[Path], None]) -> float:
    """Seconds from the damage until the waiting ask fails."""
    folder = Path(tempfile.mkdtemp(prefix="dsh-inbox-damage-"))
    os.environ["XDG_STATE_HOME"] = str(folder / "state")
    path = folder / "inbox.db"
    url = f"sqlite:///{path}"
    provider = InboxProvider(url, harness="bench")
    try:
        asking = asyncio.ensure_future(provider.ask(AskUserQuestionRequest.from_dict(REQUEST)))
        await asyncio.to_thread(_recorded, url)
        await asyncio.sleep(0.3)  # the watcher is listening
        started = time.perf_counter()
        damage(path)
        try:
            await asyncio.wait_for(asking, 60)
        except StoreError:
            return time.perf_counter() - started
        raise SystemExit("the ask was answered, not failed")
    finally:
        await asyncio.to_thread(provider.close)
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    started, load = time.time(), os.getloadavg()[0]
    rows = []
    for name, damage in DAMAGE.items():
        delays = [asyncio.run(_one(damage)) for _ in range(args.rounds)]
        rows.append(
            (
                name,
                f"{statistics.median(delays) * 1000:.0f} ms",
                f"{max(delays) * 1000:.0f} ms",
            )
        )
    report(rows, started, load, ("damage", "ask fails after (median)", "max"))


if __name__ == "__main__":
    main()
