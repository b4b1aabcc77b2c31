"""The core's conformance suite, driven with keys through a real pseudo-terminal.

The provider runs in this process as a harness would run it in a terminal: ``sys.stdin`` and
``sys.stdout`` are the slave side of a fresh pty (80x24), and prompt_toolkit's session is made
for them, as it would be for a process started in that terminal. The driver types on the master
side and reads it through a terminal emulator (pyte), so its screen is what the human sees:
a live escape sequence would be consumed there, not shown. Installed as the ``terminal`` entry
point's plugin module.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import fcntl
import os
import re
import struct
import sys
import termios
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import ClassVar

import pyte
from dsh_user_questions import AskUserQuestionItem, AskUserQuestionRequest
from dsh_user_questions.conformance import (
    Approve,
    Enter,
    KeepPlanning,
    Other,
    ProviderConformance,
    Reply,
    Skip,
    TalkInstead,
)
from dsh_user_questions.harness import HarnessContext
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_input
from prompt_toolkit.output import create_output

import dsh_user_questions_terminal.plugin as terminal_plugin

COLUMNS, ROWS = 80, 24
WAIT_SECONDS = 15.0
LIST_HINT = "Esc cancel"  # the key hint of a question's choices, drawn once keys count
TEXT_HINT = "Enter send"  # the key hint of a text field
SUMMARY_HINT = "Enter submit"


class _Screen(pyte.Screen):  # type: ignore[misc]
    """A screen that answers the cursor-position requests prompt_toolkit sends."""

    def __init__(self, master: int) -> None:
        super().__init__(COLUMNS, ROWS)
        self._master = master

    def write_process_input(self, data: str) -> None:
        os.write(self._master, data.encode())


class PtyDriver:
    """The human at the terminal: reads the emulated screen, presses keys."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.screen_ = _Screen(master)
        self.stream = pyte.Stream(self.screen_)
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        asyncio.get_running_loop().add_reader(master, self._read)

    def _read(self) -> None:
        try:
            data = os.read(self.master, 65536)
        except OSError:  # the slave side is closed
            asyncio.get_running_loop().remove_reader(self.master)
            return
        self.stream.feed(self.decoder.decode(data))

    def close(self) -> None:
        asyncio.get_running_loop().remove_reader(self.master)

    async def screen(self) -> str:
        await asyncio.sleep(0)
        return "\n".join(line.rstrip() for line in self.screen_.display).rstrip("\n")

    async def _until(self, *texts: str) -> None:
        deadline = asyncio.get_running_loop().time() + WAIT_SECONDS
        screen = await self.screen()
        while not all(text in screen for text in texts):
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"{texts!r} never showed; the screen:\n{screen}")
            await asyncio.sleep(0.02)
            screen = await self.screen()

    def press(self, *keys: str) -> None:
        for key in keys:
            os.write(self.master, key.encode())

    async def _type(self, text: str) -> None:
        await self._until(TEXT_HINT)
        # Ctrl-U first: after a refusal the field keeps the refused text for editing, and a
        # person answering again clears it.
        self.press("\x15", text, "\r")

    async def receipt(self, request: AskUserQuestionRequest) -> bool | None:
        """The terminal never tells the human an answer was taken: its record says what they
        chose, not that the harness received it."""
        return None

    async def _answer(self, question: AskUserQuestionItem, reply: Reply) -> None:
        labels = [option.label for option in question.options]
        digit = {label: str(index + 1) for index, label in enumerate(labels)}
        other, skip = str(len(labels) + 1), str(len(labels) + 2)
        if isinstance(reply, Enter):  # a number, date, time or date-time: typed in its field
            await self._until(question.question)
            await self._type(str(reply.value))
            return
        if not labels:  # the text field is open at once; empty Enter skips
            await self._type(reply.text if isinstance(reply, Other) else "")
            return
        await self._until(question.question, LIST_HINT)
        if isinstance(reply, TalkInstead):
            self.press(other)  # the row after the plan's options
            await self._until("Talk instead? This closes the question.")
            self.press("y")
        elif isinstance(reply, Approve) and question.intent is not None:
            self.press(digit[question.intent.approve])
        elif isinstance(reply, KeepPlanning) and question.intent is not None:
            keep = next(label for label in labels if label != question.intent.approve)
            self.press(digit[keep])
            await self._type(reply.feedback or "")
        elif isinstance(reply, Skip):
            self.press(skip)
        elif not question.multi_select:
            if isinstance(reply, Other):
                await self._press_other(other)
                await self._type(reply.text)
            else:
                self.press(digit[reply.labels[0]])
        else:
            for label in reply.labels:
                self.press(digit[label])
                await self._until(f"[x] {label}")
            if isinstance(reply, Other):
                await self._press_other(other)
                await self._type(reply.text)
                await self._until("[x] Other", LIST_HINT)
            self.press("\r")

    async def _press_other(self, number: str) -> None:
        """Press the Other row's number, as a person reading the form would: only if it is
        there (a question with allow_other false has none)."""
        screen = await self.screen()
        if not re.search(rf"\b{number}\. (\[[ x]\] )?Other\b", screen):
            raise AssertionError(f"the form offers no Other row; the screen:\n{screen}")
        self.press(number)

    async def reply(self, request: AskUserQuestionRequest, replies: Sequence[Reply]) -> None:
        for question, reply in zip(request.questions, replies, strict=True):
            await self._answer(question, reply)
        if len(request.questions) > 1:
            await self._until(SUMMARY_HINT)
            self.press("\r")

    async def cancel(self, request: AskUserQuestionRequest) -> None:
        await self._until(LIST_HINT)
        self.press("\x1b")
        question = request.questions[0].question
        deadline = asyncio.get_running_loop().time() + WAIT_SECONDS
        while question in await self.screen():
            if "Discard your answers" in await self.screen():
                self.press("y")
                return
            if asyncio.get_running_loop().time() > deadline:
                return  # the suite reports the question that stayed
            await asyncio.sleep(0.02)


@contextlib.contextmanager
def _this_process_in(slave: int) -> Iterator[None]:
    """Make the pty's slave side this process's terminal: stdin, stdout, TERM."""
    stdin = open(os.dup(slave), encoding="utf-8")  # noqa: SIM115
    stdout = open(os.dup(slave), "w", encoding="utf-8")  # noqa: SIM115
    saved = sys.stdin, sys.stdout, dict(os.environ)
    sys.stdin, sys.stdout = stdin, stdout
    os.environ["TERM"] = "xterm-256color"
    for name in [name for name in os.environ if name.startswith("DSH_USER_QUESTIONS_")]:
        del os.environ[name]
    try:
        # The session a process started in this terminal would have (prompt_toolkit keeps
        # the first one it makes for good, so a new terminal needs a new session).
        with create_app_session(input=create_input(stdin), output=create_output(stdout)):
            yield
    finally:
        sys.stdin, sys.stdout = saved[0], saved[1]
        os.environ.clear()
        os.environ.update(saved[2])
        stdin.close()
        stdout.close()


class TestTerminalConformance(ProviderConformance):
    """The terminal provider, through its entry point's plugin, passes the provider contract."""

    timeout = WAIT_SECONDS
    # The typed fields the driver types into (the file list and the upload's path entry are
    # driven by tests/prompt/test_inputs.py).
    input_types = frozenset({"number", "date", "time", "datetime"})
    opt_out: ClassVar[Mapping[str, str]] = {
        "test_custom_text_with_control_characters_is_never_an_answer": (
            "a terminal delivers control characters as keys, never as typed text: ESC is the"
            " Esc key (more choices) and the line discipline takes the others, so no answer can"
            " carry one; text pasted with them is refused by rules.check_answer"
            " (tests/prompt/test_answers.py, tests/lines/test_lines.py)"
        ),
    }

    @contextlib.asynccontextmanager
    async def connect(self, ctx: HarnessContext) -> AsyncIterator[PtyDriver]:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        driver = PtyDriver(master)
        try:
            with _this_process_in(slave):
                ctx.register(terminal_plugin, name="terminal")
                yield driver
        finally:
            driver.close()
            os.close(slave)
            os.close(master)
