"""One harness of bench_team.py: ``team_asker.py NAME COUNT``, the store's URL in
``DSH_USER_QUESTIONS_INBOX`` (and ``DSH_USER_QUESTIONS_PROVIDER=inbox``).

A `HarnessContext` with the installed inbox provider opens the store, says ``ready``, and once a
line arrives on stdin asks COUNT questions in sequence. Each question's first option is its tag
``NAME-k``: the answer its asker must get back. One JSON line on stdout per event: ready, then
for each ask its tag, ``returned`` (``time.time()`` as ``ask()`` returned) and the labels it got,
or its error's code; last the CPU seconds the process used while asking (all its threads).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from dsh_user_questions import AskUserQuestionRequest, UserQuestionError
from dsh_user_questions.harness import HarnessContext

from dsh_user_questions_inbox.plugin import get_provider


def say(**event: object) -> None:
    print(json.dumps(event), flush=True)


def request(tag: str) -> AskUserQuestionRequest:
    """A question whose first option is ``tag`` (the people answer with it)."""
    item = {"id": "pkg", "question": f"Ship {tag}?", "options": [{"label": tag}, {"label": "no"}]}
    return AskUserQuestionRequest.from_dict({"questions": [item]})


async def main() -> None:
    name, count = sys.argv[1], int(sys.argv[2])
    ctx = HarnessContext()
    ctx.load_entrypoints()
    await asyncio.to_thread(get_provider)  # the store is open before the go
    say(event="ready")
    await asyncio.to_thread(sys.stdin.readline)
    cpu = time.process_time()
    for k in range(count):
        tag = f"{name}-{k}"
        try:
            answer = await ctx.user_questions.ask(request(tag))
        except UserQuestionError as err:
            say(event="error", tag=tag, code=str(err.code))
            continue
        returned = time.time()
        assert answer is not None
        say(event="answer", tag=tag, returned=returned, got=list(answer.answers[0].selected))
    say(event="cpu", seconds=time.process_time() - cpu)
    await ctx.aclose()


if __name__ == "__main__":
    asyncio.run(main())
