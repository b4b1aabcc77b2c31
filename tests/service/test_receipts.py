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
from dsh_user_questions.harness import AbortController, HarnessContext
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


class TestFiling:
    """A provider that keeps questions files where one waits; the asker hears it at once."""

    async def test_an_asker_hears_the_filing_before_the_answer(
        self, dsh_context: HarnessContext
    ) -> None:
        """A hook wrapper of the asker takes the receipt; the provider files on it only when it
        is taken (``receipt(request, make=False)``); the filing arrives while the ask waits."""
        from dsh_user_questions import hookimpl
        from dsh_user_questions.providing import Filing

        heard: list[Filing] = []
        answer: asyncio.Future[AskUserQuestionAnswer] = asyncio.Future()

        class Keeping:
            @hookimpl
            async def dsh_user_questions_ask(self, request: AskUserQuestionRequest) -> Any:
                taken = receipt(request, make=False)
                assert taken is not None  # the asker's wrapper took it first
                taken.file(Filing("q-7", link="https://x.example/q-7", answer_command="answer q-7"))
                return await answer

        class Asker:
            @hookimpl(wrapper=True)
            def dsh_user_questions_ask(self, request: AskUserQuestionRequest) -> Any:
                receipt(request).when_filed(heard.append)
                return (yield)

        dsh_context.register(Keeping(), name="keeping")
        dsh_context.register(Asker(), name="asker")
        asking = asyncio.ensure_future(dsh_context.user_questions.ask(make_request()))
        for _ in range(100):
            if heard:
                break
            await asyncio.sleep(0)
        assert heard == [Filing("q-7", link="https://x.example/q-7", answer_command="answer q-7")]
        assert not asking.done()
        answer.set_result(PNPM)
        assert await asking == PNPM

    async def test_nobody_listening_costs_no_receipt(
        self, user_questions: UserQuestionService
    ) -> None:
        """Without an asker's receipt, ``receipt(request, make=False)`` is None."""
        seen: list[object] = []

        class Instant:
            def ask(self, request: AskUserQuestionRequest) -> Any:
                seen.append(receipt(request, make=False))
                return PNPM

        user_questions.register_provider(Instant())
        assert await user_questions.ask(make_request()) == PNPM
        assert seen == [None]

    def test_only_a_filing_is_filed(self) -> None:
        """Receipt.file() refuses anything but a Filing, naming what it got."""
        with pytest.raises(TypeError, match="takes a Filing, not dict"):
            Receipt().file({"question_id": "q"})  # type: ignore[arg-type]
