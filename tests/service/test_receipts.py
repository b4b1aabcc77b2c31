"""A receipt means taken: a provider learns whether the asker received its answer."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionRequest,
    UserQuestionError,
    UserQuestionErrorCode,
    UserQuestionService,
)
from dsh_user_questions.harness import AbortController
from dsh_user_questions.providing import Receipt, receipt
from dsh_user_questions.testing import make_request

PNPM = AskUserQuestionAnswer([AskUserQuestionAnswerItem(id="pkg", selected=("pnpm",))])
BAD = AskUserQuestionAnswer([AskUserQuestionAnswerItem(id="pkg", selected=("yarn",))])


class Answering:
    """Answers when told; keeps the receipt of every ask."""

    def __init__(self) -> None:
        self.receipts: list[Receipt] = []
        self.answer: asyncio.Future[AskUserQuestionAnswer] | None = None

    async def ask(self, request: AskUserQuestionRequest) -> Any:
        self.receipts.append(receipt(request))
        self.answer = asyncio.get_running_loop().create_future()
        return await self.answer


async def _pending(provider: Answering) -> None:
    for _ in range(100):
        if provider.answer is not None:
            return
        await asyncio.sleep(0)


@pytest.mark.parametrize("timeout", [None, 300.0])
@pytest.mark.parametrize("with_signal", [False, True])
async def test_an_answer_returned_to_the_caller_is_taken(
    user_questions: UserQuestionService, with_signal: bool, timeout: float | None
) -> None:
    """The receipt resolves True once ask() returned the answer."""
    provider = Answering()
    user_questions.register_provider(provider)
    signal = AbortController().signal if with_signal else None
    asking = asyncio.ensure_future(user_questions.ask(make_request(signal=signal), timeout))
    await _pending(provider)
    assert provider.answer is not None
    provider.answer.set_result(PNPM)
    assert await asking == PNPM
    assert provider.receipts[0].taken is True
    assert await provider.receipts[0] is True


@pytest.mark.parametrize("with_signal", [False, True])
async def test_a_caller_cancelled_as_the_answer_lands_did_not_take_it(
    user_questions: UserQuestionService, with_signal: bool
) -> None:
    """The answer lands and the asking task is cancelled in the same step: not taken."""
    provider = Answering()
    user_questions.register_provider(provider)
    signal = AbortController().signal if with_signal else None
    asking = asyncio.ensure_future(user_questions.ask(make_request(signal=signal)))
    await _pending(provider)
    assert provider.answer is not None
    provider.answer.set_result(PNPM)
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking
    assert await provider.receipts[0] is False


async def test_a_refused_answer_was_not_taken(user_questions: UserQuestionService) -> None:
    """An answer refused as BAD_ANSWER resolves the receipt False."""
    provider = Answering()
    user_questions.register_provider(provider)
    asking = asyncio.ensure_future(user_questions.ask(make_request()))
    await _pending(provider)
    assert provider.answer is not None
    provider.answer.set_result(BAD)
    with pytest.raises(UserQuestionError) as caught:
        await asking
    assert caught.value.code is UserQuestionErrorCode.BAD_ANSWER
    assert await provider.receipts[0] is False


async def test_an_aborted_ask_did_not_take_an_answer(user_questions: UserQuestionService) -> None:
    """An ask aborted before the answer resolves the receipt False."""
    provider = Answering()
    user_questions.register_provider(provider)
    controller = AbortController()
    asking = asyncio.ensure_future(user_questions.ask(make_request(signal=controller.signal)))
    await _pending(provider)
    controller.abort()
    with pytest.raises(UserQuestionError):
        await asking
    assert await provider.receipts[0] is False


async def test_a_receipt_outside_an_ask_is_not_taken() -> None:
    """A request no service is asking has a receipt that is already False."""
    outside = receipt(make_request())
    assert outside.done()
    assert outside.taken is False
    assert await outside is False


async def test_receipt_callbacks_and_the_service_method(
    user_questions: UserQuestionService,
) -> None:
    """add_done_callback hears the verdict; service.receipt() is the same receipt."""
    heard: list[bool] = []

    class Instant:
        def ask(self, request: AskUserQuestionRequest) -> Any:
            taken = user_questions.receipt(request)
            assert taken is receipt(request)
            taken.add_done_callback(heard.append)
            return PNPM

    user_questions.register_provider(Instant())
    assert await user_questions.ask(make_request()) == PNPM
    assert heard == [True]
