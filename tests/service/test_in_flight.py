"""What the service books of an ask in flight: each ask its own request object and receipt.

A plain ask books only a small ticket; what a receipt or a withdrawal needs is made when a
provider or ``aclose()`` first asks for it, from whichever thread. These guard that it still
reaches the right ask and is resolved when that ask ends.
"""

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
    _waiting,
    plugin,
)
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.providing import Receipt, receipt
from dsh_user_questions.testing import make_request

PNPM = AskUserQuestionAnswer([AskUserQuestionAnswerItem(id="pkg", selected=("pnpm",))])


class LateReceipts:
    """Answers each ask when told, taking its receipt only as it answers (as a page confirming
    an answer does), optionally from a worker thread."""

    def __init__(self, *, from_thread: bool = False) -> None:
        self.from_thread = from_thread
        self.requests: list[AskUserQuestionRequest] = []
        self.answers: list[asyncio.Future[AskUserQuestionAnswer]] = []
        self.receipts: list[Receipt] = []
        self.pending = asyncio.Event()

    async def ask(self, request: AskUserQuestionRequest) -> Any:
        self.requests.append(request)
        answer = asyncio.get_running_loop().create_future()
        self.answers.append(answer)
        self.pending.set()
        result = await answer
        if self.from_thread:
            self.receipts.append(await asyncio.to_thread(receipt, request))
        else:
            self.receipts.append(receipt(request))
        return result

    async def asked(self, count: int) -> None:
        while len(self.answers) < count:
            self.pending.clear()
            await self.pending.wait()


def context(provider: object) -> HarnessContext:
    ctx = HarnessContext()
    ctx.register(plugin)
    ctx.user_questions.register_provider(provider)
    return ctx


class TestOneRequestObjectAskedTwice:
    async def test_each_ask_in_flight_gets_a_request_object_of_its_own(self) -> None:
        """Two asks in flight at once with the very same request object: the second
        provider call gets an equal copy, so the two asks are told apart."""
        provider = LateReceipts()
        request = make_request()
        async with context(provider) as ctx:
            first = asyncio.ensure_future(ctx.user_questions.ask(request))
            second = asyncio.ensure_future(ctx.user_questions.ask(request))
            await provider.asked(2)
            assert provider.requests[0] is request
            assert provider.requests[1] is not request
            assert provider.requests[1] == request
            for answer in provider.answers:
                answer.set_result(PNPM)
            assert await first == PNPM
            assert await second == PNPM

    async def test_a_receipt_taken_late_is_the_one_of_its_own_ask(self) -> None:
        """The first of two asks of one request object is answered while the second waits: the
        receipt its provider takes as it answers resolves True when that ask returns, while
        the second ask's stays pending until it returns too."""
        provider = LateReceipts()
        request = make_request()
        async with context(provider) as ctx:
            first = asyncio.ensure_future(ctx.user_questions.ask(request))
            second = asyncio.ensure_future(ctx.user_questions.ask(request))
            await provider.asked(2)
            provider.answers[0].set_result(PNPM)
            assert await first == PNPM
            assert provider.receipts[0].taken is True
            assert not second.done()
            provider.answers[1].set_result(PNPM)
            assert await second == PNPM
            assert provider.receipts[1].taken is True
            assert provider.receipts[0] is not provider.receipts[1]

    async def test_a_request_asked_again_after_its_ask_ended_is_its_own_object(self) -> None:
        """Once an ask has ended, the next ask of the same request object gives the provider
        that very object again (only asks in flight at the same time are copied)."""
        provider = LateReceipts()
        request = make_request()
        async with context(provider) as ctx:
            for count in (1, 2):
                asking = asyncio.ensure_future(ctx.user_questions.ask(request))
                await provider.asked(count)
                provider.answers[-1].set_result(PNPM)
                assert await asking == PNPM
            assert provider.requests[0] is request
            assert provider.requests[1] is request


class TestReceiptsOfPlainAsks:
    async def test_a_receipt_taken_from_a_worker_thread_resolves_with_the_ask(self) -> None:
        """A plain ask's provider taking its receipt from another thread while the ask is in
        flight gets the receipt of that ask, True once ask() returned."""
        provider = LateReceipts(from_thread=True)
        async with context(provider) as ctx:
            asking = asyncio.ensure_future(ctx.user_questions.ask(make_request()))
            await provider.asked(1)
            provider.answers[0].set_result(PNPM)
            assert await asking == PNPM
            assert provider.receipts[0].taken is True

    async def test_a_receipt_asked_for_after_the_ask_ended_is_not_taken(self) -> None:
        """A receipt asked for once a plain ask has ended is resolved False at once: nothing
        of the ask is left booked."""
        provider = LateReceipts()
        request = make_request()
        async with context(provider) as ctx:
            asking = asyncio.ensure_future(ctx.user_questions.ask(request))
            await provider.asked(1)
            provider.answers[0].set_result(PNPM)
            assert await asking == PNPM
            late = receipt(request)
            assert late.done()
            assert await late is False

    async def test_a_withdrawn_plain_ask_whose_provider_took_no_receipt_is_aborted(
        self,
    ) -> None:
        """aclose() withdraws a plain ask (no signal, no timeout, no receipt taken): its
        caller gets ASK_ABORTED."""
        provider = LateReceipts()
        ctx = context(provider)
        asking = asyncio.ensure_future(ctx.user_questions.ask(make_request()))
        await provider.asked(1)
        await ctx.aclose()
        with pytest.raises(UserQuestionError) as raised:
            await asking
        assert raised.value.code is UserQuestionErrorCode.ASK_ABORTED


class TestBooking:
    """The booking itself (``dsh_user_questions._waiting``), where a race between threads
    cannot be staged through ask()."""

    def test_a_flight_is_made_once_per_ask_and_ended_when_it_lands(self) -> None:
        """Two look-ups of one booked ask's flight get the same flight; landing the ask ends
        that flight (its receipt resolved with ``taken``) and books nothing more."""
        request = make_request()
        ticket = (object(), request, None)
        assert _waiting.board(ticket)
        kept: list[object] = []
        try:
            flight = _waiting.flight_of(request)
            assert flight is not None
            assert _waiting.flight_of(request) is flight
            taken = _waiting.receipt_for(request)
        finally:
            _waiting.land(request, True, kept.append)
        assert taken.done()
        assert taken.taken is True
        assert kept == []  # no provider task was left cleaning up
        assert _waiting.flight_of(request) is None

    def test_the_same_request_object_is_not_booked_twice(self) -> None:
        """A second booking of a request object already in flight is refused (the service
        then books a copy), and the first booking stays."""
        request = make_request()
        first = (object(), request, None)
        assert _waiting.board(first)
        try:
            assert not _waiting.board((object(), request, None))
            assert _waiting.flights[id(request)] is first
        finally:
            _waiting.land(request, False, print)

    def test_a_flight_made_as_its_ask_lands_is_ended_and_not_kept(self) -> None:
        """A flight made for an ask that landed meanwhile (on another thread) is ended at
        once (a withdrawal finds it over) and is not left booked for a later ask."""
        request = make_request()
        flight = _waiting._make_flight(id(request), (object(), request, None))
        assert _waiting.flight_of(request, make=False) is None
        assert id(request) not in _waiting._boarded
        assert flight.withdraw().aborted
