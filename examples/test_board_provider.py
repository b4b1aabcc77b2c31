"""The conformance suite on the example provider; the driver is all there is to write.

Run it with ``pytest examples/test_board_provider.py``: one PASSED or FAILED line per rule.
"""

import contextlib

from board_provider import BoardProvider

from dsh_user_questions.conformance import (
    Approve,
    Attach,
    Choose,
    Enter,
    KeepPlanning,
    Other,
    ProviderConformance,
    TalkInstead,
)
from dsh_user_questions.rules import INPUT_TYPES


class BoardDriver:
    """The human at the board: reads it, answers in wire form, closes questions."""

    def __init__(self, provider):
        self.provider = provider

    async def screen(self):
        return self.provider.board()

    def key(self, request):  # the provider may get a copy (with a timeout's signal)
        return next(
            k for k, (r, _) in self.provider.pending.items() if r.questions == request.questions
        )

    async def reply(self, request, replies):
        items = []
        for question, reply in zip(request.questions, replies, strict=True):
            if isinstance(reply, TalkInstead):
                self.provider.close(self.key(request))
                return
            item = {"id": question.id, "selected": []}
            if isinstance(reply, (Choose, Other)):
                item["selected"] = list(reply.labels)
            if isinstance(reply, Other):
                item["custom"] = reply.text
            if isinstance(reply, Enter):  # a typed value, or the paths picked
                item["value"] = list(reply.value) if isinstance(reply.value, tuple) else reply.value
            if isinstance(reply, Attach):
                item["value"] = [self.provider.upload(reply.path)]
            if isinstance(reply, Approve):
                item["selected"] = [question.intent.approve]
            if isinstance(reply, KeepPlanning) and reply.feedback:
                item["custom"] = reply.feedback
            elif isinstance(reply, KeepPlanning):
                keep = [o.label for o in question.options if o.label != question.intent.approve]
                item["selected"] = keep[:1]
            items.append(item)
        self.provider.answer(self.key(request), {"answers": items})

    async def cancel(self, request):
        self.provider.close(self.key(request))

    async def receipt(self, request):
        return None  # the board never tells the human whether an answer was taken


class TestBoardProvider(ProviderConformance):
    input_types = frozenset(INPUT_TYPES)  # the board shows every typed input

    @contextlib.asynccontextmanager
    async def connect(self, ctx):
        provider = BoardProvider()
        dispose = ctx.user_questions.register_provider(provider)
        try:
            yield BoardDriver(provider)
        finally:
            dispose()
