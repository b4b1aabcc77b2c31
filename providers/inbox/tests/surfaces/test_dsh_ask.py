"""``dsh-ask`` through the inbox tells its human at once where the question waits.

The inbox files each question on the ask's receipt (`Receipt.file`); ``dsh-ask`` prints that
filing on stderr before any answer exists: what was asked, the question's id, its link when a
server publishes links, and the ``dsh-inbox answer ID`` command. Stdout stays the answer JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

import pytest

from dsh_user_questions_inbox import open_inbox
from dsh_user_questions_inbox._notices import Notices

REQUEST = {
    "questions": [
        {
            "id": "pkg",
            "question": "Which package manager?\x1b[31m",
            "options": [{"label": "pnpm"}, {"label": "npm"}],
        }
    ]
}


def start_dsh_ask(url: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "DSH_USER_QUESTIONS_INBOX": url,
        "DSH_USER_QUESTIONS_PROVIDER": "inbox",
        "DSH_USER_QUESTIONS_NOTIFY": "",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "dsh_user_questions._cli", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # no controlling terminal: answers come from the inbox only
    )
    assert process.stdin is not None
    process.stdin.write(json.dumps(REQUEST))
    process.stdin.close()
    process.stdin = None  # written: communicate() then only reads
    return process


def read_until(stream: IO[str], last: str, timeout: float = 120) -> list[str]:
    """The lines of ``stream`` up to the one starting with ``last`` (a thread reads them, so a
    silent process fails the test instead of hanging it)."""
    lines: list[str] = []
    done = threading.Event()

    def read() -> None:
        for line in stream:
            lines.append(line.rstrip("\n"))
            if line.startswith(last):
                break
        done.set()

    threading.Thread(target=read, daemon=True).start()
    assert done.wait(timeout), f"dsh-ask never printed {last!r}; it printed {lines}"
    return lines


@pytest.mark.parametrize("links", [False, True], ids=["no-server", "public-url"])
def test_dsh_ask_prints_where_the_question_waits_before_it_is_answered(
    tmp_path: Path, links: bool
) -> None:
    """While nobody has answered yet, stderr names the question, its id, the link (when links
    are served) and the answer command; the answer then comes on stdout, alone."""
    url = f"sqlite:///{tmp_path / 'inbox.db'}"
    inbox = open_inbox(url)
    try:
        if links:
            Notices(inbox).publish_links("https://inbox.example")
        process = start_dsh_ask(url)
        try:
            assert process.stderr is not None
            said = read_until(process.stderr, "Waiting for the answer")
            [record] = inbox.records()
            assert said[0] == "Asked: Which package manager?<U+001B>[31m"  # model text inert
            assert f"Question id: {record.id}" in said
            assert f"Answer it with: dsh-inbox answer {record.id}" in said
            shown = [line for line in said if line.startswith("Answer it at: ")]
            if links:
                assert len(shown) == 1
                assert shown[0].startswith("Answer it at: https://inbox.example/")
            else:
                assert not shown
            inbox.answer(record.id, {"answers": [{"id": "pkg", "selected": ["npm"]}]}, surface="t")
            out, err = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    finally:
        inbox.close()
    assert process.returncode == 0, err
    assert out == '{"answers":[{"id":"pkg","selected":["npm"]}]}\n'
