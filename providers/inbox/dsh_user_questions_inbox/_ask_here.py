"""``dsh-inbox answer ID`` on a terminal: the terminal provider's form, withdrawn if another
surface settles the question first."""

from __future__ import annotations

import asyncio
import importlib
import sys
import threading

from dsh_user_questions import (
    AskCancelledError,
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    UserQuestionError,
)
from dsh_user_questions.harness import AbortController
from dsh_user_questions.rules import inert_text as inert

from ._record import QuestionRecord, State
from ._store import Inbox

__all__ = ["EXIT_CLOSED", "ask_in_terminal"]

EXIT_CLOSED = 130  # the human closed the form: the question is cancelled, as dsh-ask says


def ask_in_terminal(inbox: Inbox, record: QuestionRecord) -> AskUserQuestionAnswer | int:
    """The answer the human gives in the form, or the exit status when there is none."""
    if record.state is not State.PENDING:
        print(
            f"dsh-inbox: question {record.id} is {record.state.value}; pipe an answer's JSON to"
            " stdin to leave a late answer",
            file=sys.stderr,
        )
        return 3
    try:
        terminal = importlib.import_module("dsh_user_questions_terminal")
    except ImportError:
        print(
            "dsh-inbox: the terminal form needs dsh-user-questions-inbox[terminal];"
            " or pipe the answer's wire-form JSON to stdin",
            file=sys.stderr,
        )
        return 1
    return asyncio.run(_ask(inbox, record, terminal.TerminalProvider()))


async def _ask(
    inbox: Inbox, record: QuestionRecord, provider: object
) -> AskUserQuestionAnswer | int:
    controller = AbortController()
    stop = threading.Event()
    watch = threading.Thread(target=_follow, args=(inbox, record.id, controller, stop), daemon=True)
    watch.start()
    request = AskUserQuestionRequest.from_dict(record.request, signal=controller.signal)
    try:
        answer = await provider.ask(request)  # type: ignore[attr-defined]
    except UserQuestionError as err:
        if isinstance(err, AskCancelledError) and inbox.settle(
            record.id, State.CANCELLED, surface="cli"
        ):
            print(f"closed question {record.id}")
            return EXIT_CLOSED
        now = inbox.get(record.id)
        state = "gone" if now is None else now.state.value
        who = "" if now is None or now.surface is None else f" by {inert(now.surface)}"
        print(
            f"dsh-inbox: question {record.id} was {state}{who} while you answered",
            file=sys.stderr,
        )
        return 3
    finally:
        stop.set()
        watch.join()
    checked: AskUserQuestionAnswer = answer
    return checked


def _follow(
    inbox: Inbox, question_id: str, controller: AbortController, stop: threading.Event
) -> None:
    """Abort the form as soon as another surface (or the asker) settles the question."""
    listener = inbox.listen()
    try:
        current = inbox.get(question_id)
        while not stop.is_set():
            if current is None or current.state.final:
                controller.abort(RuntimeError("the question was settled elsewhere"))
                return
            changed = listener.poll(0.25)
            if changed is None or question_id in changed:
                current = inbox.get(question_id)
    finally:
        listener.close()
