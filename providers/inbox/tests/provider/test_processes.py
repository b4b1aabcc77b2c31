"""Several processes on one store: each question is answered exactly once."""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path

from _requests import PKG

from dsh_user_questions_inbox import Inbox, State

HERE = Path(__file__).resolve().parents[1]


def test_concurrent_answers_from_several_processes_apply_once_each(
    inbox: Inbox, inbox_url: str
) -> None:
    """Four processes race to answer the same 40 questions: one applied answer per question,
    and the record names the process whose answer won."""
    ids = [inbox.add(PKG, harness="h").id for _ in range(40)]
    surfaces = [f"surface-{n}" for n in range(4)]
    processes = [
        subprocess.Popen(
            [sys.executable, str(HERE / "answer_all.py"), inbox_url, surface, *ids],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for surface in surfaces
    ]
    for process in processes:  # the processes have connected by now or will block on stdin
        process.stdin.write("go\n")
        process.stdin.flush()
    applied: dict[str, list[str]] = collections.defaultdict(list)
    for surface, process in zip(surfaces, processes, strict=True):
        out, _ = process.communicate(timeout=240)
        assert process.returncode == 0
        for line in out.splitlines():
            result = json.loads(line)
            assert result["outcome"] in ("applied", "already-answered")
            if result["outcome"] == "applied":
                applied[result["id"]].append(surface)
    assert sorted(applied) == sorted(ids)
    for record in inbox.get_many(ids):
        assert applied[record.id] == [record.surface]
        assert record.state is State.ANSWERED
