"""The main job: ``dsh-ask`` with this provider installed, in a real pseudo-terminal."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pexpect
import pyte
from conftest import COLUMNS, KEYS, ROWS, TIMEOUT, question

DSH_ASK = Path(sys.executable).with_name("dsh-ask")


def run_in_terminal(command: str, tmp_path: Path, keys: list[str], wait_text: str) -> str:
    """Run ``command`` through sh in a pseudo-terminal, press ``keys`` once ``wait_text``
    shows, and return everything it wrote."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_USER_QUESTIONS_")}
    env.update(TERM="xterm-256color", LC_ALL="C.UTF-8")
    child = pexpect.spawn(
        "sh",
        ["-c", command],
        cwd=str(tmp_path),
        env=env,
        dimensions=(ROWS, COLUMNS),
        encoding="utf-8",
        codec_errors="replace",
        timeout=TIMEOUT,
    )
    screen = pyte.Screen(COLUMNS, ROWS)
    stream = pyte.Stream(screen)
    transcript = ""
    try:
        while wait_text not in "\n".join(screen.display):
            data = child.read_nonblocking(65536, timeout=TIMEOUT)
            transcript += data
            stream.feed(data)
        for key in keys:
            child.send(KEYS.get(key, key))
        while True:
            try:
                transcript += child.read_nonblocking(65536, timeout=TIMEOUT)
            except pexpect.EOF:
                break
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, transcript
    return transcript


def write_request(tmp_path: Path) -> None:
    """Write the package-manager question as ``request.json`` in ``tmp_path``."""
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"questions": [question()]}), encoding="utf-8")


def test_dsh_ask_with_a_file_asks_in_the_terminal(tmp_path: Path) -> None:
    """``dsh-ask FILE`` asks through the installed terminal provider and prints the answer."""
    write_request(tmp_path)
    out = run_in_terminal(
        f"{shlex.quote(str(DSH_ASK))} request.json", tmp_path, ["2"], "Esc cancel"
    )
    assert '{"answers":[{"id":"pkg","selected":["npm"]}]}' in out


def test_questions_piped_to_dsh_ask_are_answered_at_the_terminal(tmp_path: Path) -> None:
    """With the questions on stdin, dsh-ask takes the answers from the terminal, not from EOF."""
    write_request(tmp_path)
    out = run_in_terminal(
        f"cat request.json | {shlex.quote(str(DSH_ASK))} -", tmp_path, ["3"], "Esc cancel"
    )
    assert '{"answers":[{"id":"pkg","selected":["yarn"]}]}' in out


def test_captured_stdout_still_gets_the_form_on_the_terminal(tmp_path: Path) -> None:
    """With stdout redirected, the form is drawn on /dev/tty and stdout holds only the JSON."""
    write_request(tmp_path)
    run_in_terminal(
        f"{shlex.quote(str(DSH_ASK))} request.json > answer.json", tmp_path, ["1"], "Esc cancel"
    )
    answer = (tmp_path / "answer.json").read_text(encoding="utf-8")
    assert answer == '{"answers":[{"id":"pkg","selected":["pnpm"]}]}\n'


class TestTextBeforeTheForm:
    """What the shell printed before ``dsh-ask`` stays on the screen."""

    def test_a_line_without_a_newline_is_kept(self, tmp_path: Path) -> None:
        """``printf 'keep this'; dsh-ask q.json``: after the answer, "keep this" is still on the
        screen, above the record and the printed answer."""
        write_request(tmp_path)
        out = run_in_terminal(
            f"printf 'keep this'; {shlex.quote(str(DSH_ASK))} request.json",
            tmp_path,
            ["2"],
            "Esc cancel",
        )
        screen = pyte.Screen(COLUMNS, ROWS)
        pyte.Stream(screen).feed(out)
        lines = [line.rstrip() for line in screen.display]
        assert lines[0] == "keep this"
        assert lines[1].startswith("\u2714 Package manager")
