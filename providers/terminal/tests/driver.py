"""Ask one request through the terminal provider and print the outcome; the tests run it.

Usage: ``python driver.py REQUEST.json [--entrypoints | --register] [--cancel] [--twice]``, the
request in wire form (``multiSelect``, ``intent`` and ``detail`` allowed).

- SIGUSR1 aborts the request's signal on the event loop's thread; with ``--cancel`` it cancels
  the task awaiting ``ask()`` instead. SIGUSR2 aborts the signal from another thread.
- ``--entrypoints`` loads the installed ``dsh`` entry points; ``--register`` registers a
  ``TerminalProvider()`` object; by default the plugin module is registered.
- ``--twice`` asks the request twice at once; ``--threads`` asks it at once from two threads,
  each with its own event loop.
- ``--timeout=SECONDS`` asks with that timeout.
- ``--delay`` waits a second before asking (for keys typed before the prompt shows).
- ``--before=TEXT`` prints TEXT on stdout without a newline before asking (an agent's last
  sentence, streamed).
- ``--log`` logs a line to stderr (through ``logging``) and prints one to stdout every 50 ms
  from a background thread while the ask is open.

Prints ``ANSWER <json>`` or ``ERROR <code> <message>``, then ``TTY restored`` or ``TTY changed``
(whether the terminal's modes are as they were before the ask).
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
import termios
import threading
import time

from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest, UserQuestionError
from dsh_user_questions import plugin as core_plugin
from dsh_user_questions.harness import AbortController, HarnessContext

import dsh_user_questions_terminal.plugin as terminal_plugin
from dsh_user_questions_terminal import TerminalProvider


def _modes() -> list[object] | None:
    stdin = sys.stdin
    return termios.tcgetattr(stdin.fileno()) if stdin is not None and stdin.isatty() else None


def _chatter(stop: threading.Event) -> None:
    """A harness busy in the background: log lines on stderr and prints on stdout."""
    log = logging.getLogger("harness")
    count = 0
    while not stop.wait(0.05):
        count += 1
        log.warning("background log line %d", count)
        print(f"background print {count}", flush=True)


def _answer_line(answer: AskUserQuestionAnswer) -> str:
    """``ANSWER`` and the answer's wire form without ``answered_by``, then `` BY`` and who."""
    data = answer.to_dict()
    by = data.pop("answered_by", None)
    return "ANSWER " + json.dumps(data, ensure_ascii=False) + ("" if by is None else f" BY {by}")


def _ask_in_thread(data: object, results: list[str]) -> None:
    async def ask() -> None:
        ctx = HarnessContext()
        ctx.register(core_plugin)
        ctx.register(terminal_plugin, name="terminal")
        answer = await ctx.user_questions.ask(AskUserQuestionRequest.from_dict(data))
        results.append(_answer_line(answer))

    asyncio.run(ask())


def _threads(data: object) -> None:
    results: list[str] = []
    threads = [threading.Thread(target=_ask_in_thread, args=(data, results)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for line in results:
        print(line, flush=True)


async def main(data: object, entrypoints: bool, cancel: bool) -> None:
    ctx = HarnessContext()
    if entrypoints:
        ctx.load_entrypoints()
    elif "--register" in sys.argv[2:]:
        ctx.register(core_plugin)
        ctx.user_questions.register_provider(TerminalProvider())
    else:
        ctx.register(core_plugin)
        ctx.register(terminal_plugin, name="terminal")
    controller = AbortController()
    request = AskUserQuestionRequest.from_dict(data, signal=controller.signal)
    timeout = next(
        (float(a.split("=", 1)[1]) for a in sys.argv[2:] if a.startswith("--timeout=")), None
    )
    ask = asyncio.ensure_future(ctx.user_questions.ask(request, timeout=timeout))
    if "--twice" in sys.argv[2:]:
        # A second agent asks the same questions at the same time.
        again = AskUserQuestionRequest.from_dict(data)
        first, second = await asyncio.gather(ask, ctx.user_questions.ask(again))
        for answer in (first, second):
            print(_answer_line(answer), flush=True)
        return
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, ask.cancel if cancel else controller.abort)
    loop.add_signal_handler(
        signal.SIGUSR2, lambda: threading.Thread(target=controller.abort).start()
    )
    before = _modes()
    stop = threading.Event()
    if "--log" in sys.argv[2:]:
        logging.basicConfig(format="%(name)s: %(message)s")
        threading.Thread(target=_chatter, args=(stop,), daemon=True).start()
    try:
        answer = await ask
    except UserQuestionError as error:
        print(f"ERROR {error.code} {error.message}", flush=True)
    except asyncio.CancelledError:
        print("ERROR CANCELLED the ask was cancelled", flush=True)
    else:
        print(_answer_line(answer), flush=True)
    finally:
        stop.set()
    print("TTY " + ("restored" if _modes() == before else "changed"), flush=True)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as file:
        wire = json.load(file)
    for arg in sys.argv[2:]:
        if arg.startswith("--before="):
            sys.stdout.write(arg.split("=", 1)[1])
            sys.stdout.flush()
    if "--delay" in sys.argv[2:]:
        time.sleep(1.0)  # keys typed meanwhile wait in the terminal's input queue
    if "--threads" in sys.argv[2:]:
        _threads(wire)
    else:
        asyncio.run(main(wire, "--entrypoints" in sys.argv[2:], "--cancel" in sys.argv[2:]))
