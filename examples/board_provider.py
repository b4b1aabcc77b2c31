"""A whole user-questions provider: a text board a chat bot would post and read back.

`board()` is what the human sees; `answer(key, answer)` and `close(key)` are what the human
does. It passes `dsh_user_questions.conformance` (README, "Write a provider").
"""

import asyncio
import hashlib
import itertools
import mimetypes
import os
import shutil
import tempfile

from dsh_user_questions import UserQuestionError
from dsh_user_questions.rules import check_answer, inert_text
from dsh_user_questions.view import question_view


class BoardProvider:
    def __init__(self):
        self.pending = {}  # key -> (request, future of the answer)
        self._keys = itertools.count(1)
        self.uploads = tempfile.mkdtemp(prefix="board-uploads-")  # private (mode 0700)

    def board(self):
        lines = []
        for key, (request, _) in self.pending.items():
            for q in request.questions:
                lines += [f"[{key}] {inert_text(q.header or '')}: {inert_text(q.question)}"]
                lines += [inert_text(q.detail or "", multiline=True)]
                lines += [
                    f"- {inert_text(o.label)}: {inert_text(o.description or '')}" for o in q.options
                ]
                typed = question_view(q).input  # a number, a date, files...: the core's view
                if typed is not None:
                    unit = f" {typed.unit}" if typed.unit else ""
                    lines += [f"({typed.type}{unit}, from {typed.min} to {typed.max})"]
                    lines += [f"- {path}" for path in typed.shown]  # a files question's list
        return "\n".join(lines)

    def upload(self, path):
        """Copy the human's file into the private folder; its record for the answer's value."""
        name = os.path.basename(path)
        target = os.path.join(tempfile.mkdtemp(dir=self.uploads), name)
        shutil.copyfile(path, target)
        with open(target, "rb") as file:
            data = file.read()
        media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        sha256 = hashlib.sha256(data).hexdigest()
        return {
            "name": name,
            "media_type": media_type,
            "size": len(data),
            "sha256": sha256,
            "path": target,
        }

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
