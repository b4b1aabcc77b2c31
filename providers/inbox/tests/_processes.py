"""Processes the tests start: harnesses, dsh-inbox answer, dsh-inbox serve."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from dsh_user_questions_inbox import Inbox, QuestionRecord

HERE = Path(__file__).parent
DSH_INBOX = str(Path(sys.executable).parent / "dsh-inbox")


class Harness:
    """A running harness_proc.py whose JSON events are read as they come."""

    def __init__(
        self, url: str, label: str | None, *args: str, env: dict[str, str] | None = None
    ) -> None:
        """``label`` ``None``: the default configuration (the per-process label)."""
        env = {
            **os.environ,
            "DSH_USER_QUESTIONS_INBOX": url,
            "DSH_USER_QUESTIONS_PROVIDER": "inbox",
            **(env or {}),
        }
        if label is None:
            env.pop("DSH_USER_QUESTIONS_INBOX_HARNESS", None)
        else:
            env["DSH_USER_QUESTIONS_INBOX_HARNESS"] = label
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "harness_proc.py"), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        self.events: queue.Queue[dict[str, object]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        with self.process.stdout:
            for line in self.process.stdout:
                self.events.put(json.loads(line))

    def next(self, kind: str | tuple[str, ...], timeout: float = 120) -> dict[str, object]:
        """The next event of that kind (or of one of those kinds); others are skipped."""
        kinds = (kind,) if isinstance(kind, str) else kind
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"the harness sent no {kind!r} event")
            event = self.events.get(timeout=left)
            if event["event"] in kinds:
                return event

    def finish(self) -> None:
        """Close stdin and wait for a clean exit."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert self.process.wait(timeout=120) == 0
        self._reader.join()

    def interrupt(self) -> None:
        """SIGINT (Ctrl-C), then wait for the process to end."""
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=60)
        self._reader.join()
        if self.process.stdin is not None:
            self.process.stdin.close()

    def kill(self) -> None:
        """kill -9."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=60)
        self._reader.join()
        if self.process.stdin is not None:
            self.process.stdin.close()


def until(condition: Callable[[], object], what: str, timeout: float = 120) -> None:
    """Wait for ``condition()`` to hold."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def pending(inbox: Inbox, label: str, count: int) -> list[QuestionRecord]:
    """Wait until ``label`` has ``count`` pending questions; those records."""
    until(
        lambda: len(inbox.records(state="pending", harness=label)) == count,
        f"{count} questions from {label}",
    )
    return inbox.records(state="pending", harness=label)


class Answering:
    """The installed ``dsh-inbox answer``, running with the answer on stdin."""

    def __init__(self, url: str, question_id: str, answer: object) -> None:
        self.process = subprocess.Popen(
            [DSH_INBOX, "--inbox", url, "answer", question_id, "--surface", "dsh-inbox"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._answer = json.dumps(answer)

    def wait(self) -> tuple[int, str]:
        """The exit status and stderr."""
        _, err = self.process.communicate(self._answer, timeout=120)
        return self.process.returncode, err


def dsh_inbox_answer(url: str, question_id: str, answer: object) -> Answering:
    """Start the installed ``dsh-inbox answer`` with the answer on stdin."""
    return Answering(url, question_id, answer)


class Server:
    """A running ``dsh-inbox serve`` on a loopback port, with the page's protocol over HTTP."""

    def __init__(
        self, url: str, port: int = 0, token: str = "test-token", env: dict[str, str] | None = None
    ) -> None:
        self.process = subprocess.Popen(
            [DSH_INBOX, "--inbox", url, "serve", "--port", str(port), "--token", token],
            env={**os.environ, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith("dsh-inbox: serving http://"), line + self.stop_and_read()
        self.base = line.split("serving ", 1)[1].strip()
        self.port = int(self.base.split(":")[2].split("/")[0])

    def state(self) -> list[dict[str, object]]:
        """The pending questions as the page reads them."""
        import httpx

        response = httpx.get(self.base + "state", timeout=60)
        response.raise_for_status()
        pending: list[dict[str, object]] = response.json()["pending"]
        return pending

    def post(self, route: str, body: object) -> tuple[int, dict[str, object]]:
        """POST JSON to ``answer`` or ``cancel``; the status code and JSON body."""
        import httpx

        response = httpx.post(self.base + route, json=body, timeout=60)
        return response.status_code, response.json()

    def stop_and_read(self, sig: int = signal.SIGTERM) -> str:
        """Stop the server with ``sig``; its stderr."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        _, err = self.process.communicate(timeout=60)
        return err
