"""A harness in a process of its own, asking through the installed ``inbox`` entry point.

``harness_proc.py ask N [TIMEOUT]``: ask N questions at once (each with a timeout when given)
and print each outcome; ``harness_proc.py key KEY...``: ask one question per key;
``harness_proc.py secret KEY``: ask one secret question with that key;
``harness_proc.py resume ID...``: resume those questions; ``harness_proc.py undelivered``: the
README's recipe (resume every undelivered question of the label). Either way
it then waits for late answers until stdin closes. One JSON line per event on stdout: ready,
answer, error (with its code), late (with the record's id and late answer).
"""

from __future__ import annotations

import asyncio
import json
import sys

from dsh_user_questions import AskUserQuestionRequest, UserQuestionError, hookimpl
from dsh_user_questions.harness import HarnessContext

from dsh_user_questions_inbox import AlreadyDelivered
from dsh_user_questions_inbox.plugin import get_provider

REQUEST = {
    "questions": [
        {
            "id": "pkg",
            "question": "Which package manager?",
            "options": [{"label": "pnpm"}, {"label": "npm"}],
        }
    ]
}


SECRET = {"questions": [{"id": "token", "question": "The deploy token?", "secret": True}]}


def say(**event: object) -> None:
    print(json.dumps(event), flush=True)


class LateAnswers:
    @hookimpl
    def dsh_user_questions_late_answer(self, record: object) -> None:
        say(event="late", id=record.id, late_answer=record.late_answer)  # type: ignore[attr-defined]


async def resumed(service: object, question_id: str) -> None:
    """The README's loop body: resume one undelivered question; say what came, with its id."""
    try:
        answer = await service.resume(question_id)  # type: ignore[attr-defined]
    except UserQuestionError as err:
        say(event="error", id=question_id, code=str(err.code))
    except AlreadyDelivered:
        say(event="taken", id=question_id)
    else:
        say(event="answer", id=question_id, answer=answer.to_dict())


async def one(ctx: HarnessContext, coro: object) -> None:
    try:
        answer = await coro  # type: ignore[misc]
    except UserQuestionError as err:
        say(event="error", code=str(err.code), message=err.message)
    else:
        if answer is not None:
            say(event="answer", answer=answer.to_dict())


async def main() -> None:
    ctx = HarnessContext()
    ctx.register(LateAnswers(), name="late-answers")
    ctx.load_entrypoints()
    # Open the store now: a short ask timeout then measures the wait for the human, not the
    # first connection (under load that can take longer than the whole timeout).
    await asyncio.to_thread(get_provider)
    service = ctx.user_questions
    mode, *args = sys.argv[1:]
    if mode == "ask":
        timeout = float(args[1]) if len(args) > 1 else None
        jobs = [
            service.ask(AskUserQuestionRequest.from_dict(REQUEST), timeout=timeout)
            for _ in range(int(args[0]))
        ]
    elif mode == "key":
        jobs = [service.ask(AskUserQuestionRequest.from_dict(REQUEST, key=key)) for key in args]
    elif mode == "secret":
        jobs = [service.ask(AskUserQuestionRequest.from_dict(SECRET, key=args[0]))]
    elif mode == "undelivered":
        inbox = get_provider().inbox
        records = await asyncio.to_thread(inbox.undelivered, harness=get_provider().harness)
        jobs = [resumed(service, record.id) for record in records]
    else:
        jobs = [service.resume(question_id) for question_id in args]
    say(event="ready")
    await asyncio.gather(*(one(ctx, job) for job in jobs))
    say(event="done")
    await asyncio.to_thread(sys.stdin.read)  # late answers arrive until the test closes stdin
    await ctx.aclose()


if __name__ == "__main__":
    asyncio.run(main())
