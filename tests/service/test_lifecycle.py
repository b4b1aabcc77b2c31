"""The lifecycle API: context opened/closed hooks, aclose() settling asks, shared providers."""

from __future__ import annotations

import asyncio
import gc
import sys
from typing import Any

import pytest

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionRequest,
    ProviderSetupError,
    UserQuestionError,
    UserQuestionErrorCode,
    hookimpl,
    plugin,
    tool,
)
from dsh_user_questions.harness import AbortController, HarnessContext
from dsh_user_questions.providing import SharedProvider
from dsh_user_questions.testing import ScriptedProvider, make_request

PNPM = AskUserQuestionAnswer([AskUserQuestionAnswerItem(id="pkg", selected=("pnpm",))])


class DurableProvider:
    """Writes a record per question; cancellation's clean-up takes a loop step or two."""

    def __init__(self) -> None:
        self.records: dict[int, str] = {}
        self.started = asyncio.Event()

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        key = len(self.records)
        self.records[key] = "pending"
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await asyncio.sleep(0.01)  # the store's write
            self.records[key] = "withdrawn"
            raise
        raise AssertionError("never answered")


def _context(provider: object) -> HarnessContext:
    ctx = HarnessContext()
    ctx.register(plugin)
    ctx.user_questions.register_provider(provider)
    return ctx


class TestAclose:
    """aclose() settles the pending asks first, within its grace period."""

    @pytest.mark.parametrize("with_signal", [False, True])
    @pytest.mark.parametrize("timeout", [None, 300.0])
    async def test_aclose_withdraws_pending_asks_before_returning(
        self, with_signal: bool, timeout: float | None
    ) -> None:
        """aclose() withdraws an ask in flight (ASK_ABORTED) after the provider's clean-up ran."""
        provider = DurableProvider()
        ctx = _context(provider)
        signal = AbortController().signal if with_signal else None
        asking = asyncio.ensure_future(ctx.user_questions.ask(make_request(signal=signal), timeout))
        await provider.started.wait()
        await ctx.aclose()
        assert provider.records == {0: "withdrawn"}
        with pytest.raises(UserQuestionError) as caught:
            await asking
        assert caught.value.code is UserQuestionErrorCode.ASK_ABORTED
        assert "the harness context closed" in str(caught.value)

    async def test_aclose_waits_for_the_clean_up_of_an_ask_that_just_timed_out(self) -> None:
        """An ask that timed out right before aclose() has its provider clean-up awaited too."""
        provider = DurableProvider()
        ctx = _context(provider)
        with pytest.raises(UserQuestionError) as caught:
            await ctx.user_questions.ask(make_request(), timeout=0.01)
        assert caught.value.code is UserQuestionErrorCode.ASK_TIMED_OUT
        await ctx.aclose()
        assert provider.records == {0: "withdrawn"}

    async def test_settling_comes_before_the_closing_hooks(self) -> None:
        """dsh_context_closing and dsh_context_closed run after the asks are settled, in order."""
        provider = DurableProvider()
        ctx = _context(provider)
        seen: list[str] = []

        class Closer:
            @hookimpl
            def dsh_context_closing(self, ctx: HarnessContext) -> None:
                seen.append(f"closing {dict(provider.records)}")

            @hookimpl
            async def dsh_context_closed(self, ctx: HarnessContext) -> None:
                seen.append("closed")

        ctx.register(Closer())
        asking = asyncio.ensure_future(ctx.user_questions.ask(make_request()))
        await provider.started.wait()
        await ctx.aclose()
        assert seen == ["closing {0: 'withdrawn'}", "closed"]
        with pytest.raises(UserQuestionError):
            await asking
        await ctx.aclose()  # a second call does nothing
        assert seen == ["closing {0: 'withdrawn'}", "closed"]

    async def test_the_grace_period_bounds_aclose(self) -> None:
        """A provider whose clean-up never ends holds aclose() for the grace period only."""
        release = asyncio.Event()

        class Stuck:
            async def ask(self, request: AskUserQuestionRequest) -> Any:
                try:
                    await asyncio.Event().wait()
                except asyncio.CancelledError:
                    await release.wait()
                    raise

        ctx = _context(Stuck())
        asking = asyncio.ensure_future(
            ctx.user_questions.ask(make_request(signal=AbortController().signal))
        )
        await asyncio.sleep(0)
        await asyncio.wait_for(ctx.aclose(grace=0.05), 5)
        release.set()
        with pytest.raises(UserQuestionError):
            await asking

    @pytest.mark.skipif(
        sys.version_info < (3, 11),
        reason="Task.uncancel() tells a second cancel apart from 3.11 on",
    )
    async def test_a_caller_cancelled_meanwhile_stays_cancelled(self) -> None:
        """When the caller's own task is cancelled too, the caller gets CancelledError (3.11+)."""
        provider = DurableProvider()
        ctx = _context(provider)
        asking = asyncio.ensure_future(ctx.user_questions.ask(make_request()))
        await provider.started.wait()
        asking.cancel()
        await ctx.aclose()
        with pytest.raises(asyncio.CancelledError):
            await asking


class TestClosedContext:
    """A context that has closed refuses every ask with CONTEXT_CLOSED; no provider is called."""

    async def test_ask_after_async_with_is_refused_without_calling_the_provider(self) -> None:
        """After ``async with HarnessContext()`` exits, ask() raises ProviderSetupError."""
        provider = ScriptedProvider(PNPM)
        async with HarnessContext() as ctx:
            ctx.register(plugin)
            ctx.user_questions.register_provider(provider)
        with pytest.raises(ProviderSetupError) as info:
            await ctx.user_questions.ask(make_request())
        assert info.value.code == UserQuestionErrorCode.CONTEXT_CLOSED
        assert str(info.value) == (
            "the harness context is closed, so ask_user_question cannot reach the user"
        )
        assert info.value.outcome.keeps_pending
        assert provider.requests == []

    async def test_ask_sync_after_aclose_is_refused(self) -> None:
        """ask_sync (from a thread of its own) is refused the same way after aclose()."""
        provider = ScriptedProvider(PNPM)
        ctx = _context(provider)
        await ctx.aclose()
        with pytest.raises(ProviderSetupError) as info:
            await asyncio.to_thread(ctx.user_questions.ask_sync, make_request())
        assert info.value.code == UserQuestionErrorCode.CONTEXT_CLOSED
        assert provider.requests == []

    async def test_the_tool_gives_the_error_result(self) -> None:
        """tool.run on a closed context is the Error text of CONTEXT_CLOSED, nothing asked."""
        provider = ScriptedProvider(PNPM)
        ctx = _context(provider)
        await ctx.aclose()
        result = await tool.run(ctx, {"questions": [{"id": "pkg", "question": "Which?"}]})
        assert result.is_error
        assert result.content == (
            "Error: the harness context is closed, so ask_user_question cannot reach the user"
        )
        assert result.error == {"name": "ProviderSetupError", "code": "CONTEXT_CLOSED"}
        assert provider.requests == []

    async def test_resume_after_aclose_is_refused(self) -> None:
        """resume() waits for no question once the context has closed."""
        ctx = _context(ScriptedProvider())
        await ctx.aclose()
        with pytest.raises(ProviderSetupError) as info:
            await ctx.user_questions.resume("q-1")
        assert info.value.code == UserQuestionErrorCode.CONTEXT_CLOSED

    async def test_a_plugin_registered_after_close_does_not_reopen_it(self) -> None:
        """The service of a plugin registered on a closed context refuses asks too."""
        ctx = HarnessContext()
        await ctx.aclose()
        ctx.register(plugin)
        provider = ScriptedProvider(PNPM)
        ctx.user_questions.register_provider(provider)
        with pytest.raises(ProviderSetupError) as info:
            await ctx.user_questions.ask(make_request())
        assert info.value.code == UserQuestionErrorCode.CONTEXT_CLOSED
        assert provider.requests == []

    async def test_an_ask_pending_at_close_is_still_aborted(self) -> None:
        """The ask in flight when aclose() begins is withdrawn (ASK_ABORTED), as before."""
        provider = DurableProvider()
        ctx = _context(provider)
        asking = asyncio.ensure_future(ctx.user_questions.ask(make_request()))
        await provider.started.wait()
        await ctx.aclose()
        with pytest.raises(UserQuestionError) as info:
            await asking
        assert info.value.code == UserQuestionErrorCode.ASK_ABORTED


class Shared(SharedProvider):
    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []

    def context_opened(self, ctx: HarnessContext) -> None:
        self.events.append("opened")

    async def context_closed(self, ctx: HarnessContext) -> None:
        self.events.append("closed")

    async def last_context_closed(self) -> None:
        self.events.append("last closed")


class TestSharedProvider:
    """A shared provider hears each context open and close, and holds them weakly."""

    async def test_a_shared_provider_hears_each_context_open_and_close(self) -> None:
        """Registered in two contexts: opened twice, and the last close releases what they share."""
        shared = Shared()
        first, second = HarnessContext(), HarnessContext()
        first.register(shared)
        second.register(shared)
        assert shared.contexts == [first, second]
        await first.aclose()
        assert shared.contexts == [second]
        assert shared.events == ["opened", "opened", "closed"]
        await second.aclose()
        assert shared.events == ["opened", "opened", "closed", "closed", "last closed"]
        assert shared.contexts == []

    async def test_a_shared_provider_holds_contexts_weakly(self) -> None:
        """A context dropped without aclose() is not kept alive by the shared provider."""
        shared = Shared()
        ctx = HarnessContext()
        ctx.register(shared)
        assert len(shared.contexts) == 1
        del ctx
        gc.collect()
        assert shared.contexts == []

    async def test_context_opened_is_historic(self) -> None:
        """A plugin registered after the context opened still hears dsh_context_opened, once."""
        opened: list[HarnessContext] = []

        class Listener:
            @hookimpl
            def dsh_context_opened(self, ctx: HarnessContext) -> None:
                opened.append(ctx)

        ctx = HarnessContext()
        ctx.register(Listener())
        assert opened == [ctx]
