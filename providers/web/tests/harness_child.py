"""A harness process for the restart tests: ask one question on a fixed port and token.

Usage: python harness_child.py PORT TOKEN QUESTION. Prints ``ready`` once the page is served,
then the answer as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys

from dsh_user_questions import AskUserQuestionItem, AskUserQuestionOption, AskUserQuestionRequest

from dsh_user_questions_web import WebProvider


async def main(port: int, token: str, question: str) -> None:
    provider = WebProvider(port=port, token=token, announce=False)
    await provider.start()
    print("ready", flush=True)
    options = (AskUserQuestionOption("pnpm"), AskUserQuestionOption("npm"))
    item = AskUserQuestionItem(id="pkg", question=question, options=options)
    answer = await provider.ask(AskUserQuestionRequest(questions=(item,)))
    print(json.dumps(answer.to_dict()), flush=True)
    await provider.stop()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], sys.argv[3]))
