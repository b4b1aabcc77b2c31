"""A whole user-questions provider: a text board a chat bot would post and read back.

`board()` is what the human sees; `answer(key, answer)` and `close(key)` are what the human
does. It passes `dsh_user_questions.conformance` (README, "Write a provider").
"""

import asyncio
import itertools

from dsh_user_questions import UserQuestionError
from dsh_user_questions.rules import check_answer, inert_text


class BoardProvider:
    def __init__(self):
        self.pending = {}  # key -> (request, future of the answer)
        self._keys = itertools.count(1)

    def board(self):
        lines = []
        for key, (request, _) in self.pending.items():
            for q in request.questions:
                lines += [f"[{key}] {inert_text(q.header or '')}: {inert_text(q.question)}"]
                lines += [inert_text(q.detail or "", multiline=True)]
                lines += [
                    f"- {inert_text(o.label)}: {inert_text(o.description or '')}" for o in q.options
                ]
        return "\n".join(lines)

    def answer(self, key, answer):
        request, future = self.pending[key]
        check_answer(request, answer)  # refused (BAD_ANSWER) to the human; the question stays
        future.set_result(answer)

    def close(self, key):
        self.pending[key][1].set_exception(UserQuestionError.cancelled())

    async def ask(self, request):
        key, future = next(self._keys), asyncio.get_running_loop().create_future()
        self.pending[key] = (request, future)
        try:  # an abort, or the caller's cancellation, cancels this await
            return await future
        finally:
            del self.pending[key]  # off the board, whatever happened
