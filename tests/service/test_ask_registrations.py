"""ask() works out which plugins provide and observe once per change of the hooks, not per ask.

These guard that what an ask keeps between asks (the answering provider implementations, the
observer plugins and their ``observer_idle``, the observer hooks' subset callers and guards) is
made again whenever a plugin registers, unregisters or is blocked between two asks.
"""

from __future__ import annotations

from collections.abc import Generator

import pluggy
import pytest

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    UserQuestionError,
    UserQuestionErrorCode,
    hookimpl,
    plugin,
)
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import ScriptedProvider, make_request

PNPM = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
NPM = {"answers": [{"id": "pkg", "selected": ["npm"]}]}


class Provider:
    """A provider plugin answering every request with ``answer``."""

    def __init__(self, answer: object) -> None:
        self.answer = answer

    @hookimpl
    async def dsh_user_questions_ask(self, request: AskUserQuestionRequest) -> object:
        return self.answer


class Watcher:
    """An observer plugin of the three hooks, recording what it hears; idle while ``idle``."""

    def __init__(self, name: str, seen: list[str], idle: bool | None = None) -> None:
        self.name = name
        self.seen = seen
        if idle is not None:
            self.idle = idle
            self.observer_idle = lambda: self.idle

    @hookimpl
    def dsh_user_questions_asked(self) -> None:
        self.seen.append(f"{self.name} asked")

    @hookimpl
    def dsh_user_questions_answered(self) -> None:
        self.seen.append(f"{self.name} answered")

    @hookimpl
    def dsh_user_questions_failed(self) -> None:
        self.seen.append(f"{self.name} failed")


class Failing(Watcher):
    """An observer whose asked hook raises."""

    @hookimpl
    def dsh_user_questions_asked(self) -> None:
        self.seen.append(f"{self.name} asked")
        raise RuntimeError("observer broke")


class Wrapper:
    """A new-style wrapper around the observers' asked and answered hooks, recording its runs."""

    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    @hookimpl(wrapper=True)
    def dsh_user_questions_asked(self) -> Generator[None, object, object]:
        self.seen.append("wrapper before asked")
        result = yield
        self.seen.append("wrapper after asked")
        return result

    @hookimpl(wrapper=True)
    def dsh_user_questions_answered(self) -> Generator[None, object, object]:
        self.seen.append("wrapper before answered")
        result = yield
        self.seen.append("wrapper after answered")
        return result


def context() -> HarnessContext:
    """A fresh context with the core plugin (whose log observer is idle: the logger is off)."""
    ctx = HarnessContext()
    ctx.register(plugin)
    return ctx


async def answer_of(ctx: HarnessContext) -> str:
    answer = await ctx.user_questions.ask(make_request())
    assert isinstance(answer, AskUserQuestionAnswer)
    return answer.answers[0].selected[0]


class TestProvidersBetweenAsks:
    async def test_a_provider_plugin_swapped_between_asks_answers_the_next_ask(self) -> None:
        """After the one provider plugin is unregistered and another registered, the next ask
        goes to the new one."""
        async with context() as ctx:
            first = Provider(PNPM)
            ctx.register(first)
            assert await answer_of(ctx) == "pnpm"
            ctx.unregister(first)
            ctx.register(Provider(NPM))
            assert await answer_of(ctx) == "npm"

    async def test_no_provider_after_the_plugin_leaves_and_a_registered_one_after(self) -> None:
        """Once the provider plugin is unregistered the ask raises NO_PROVIDER; a provider
        registered with register_provider() then answers."""
        async with context() as ctx:
            provider = Provider(PNPM)
            ctx.register(provider)
            assert await answer_of(ctx) == "pnpm"
            ctx.unregister(provider)
            with pytest.raises(UserQuestionError) as raised:
                await ctx.user_questions.ask(make_request())
            assert raised.value.code is UserQuestionErrorCode.NO_PROVIDER
            ctx.user_questions.register_provider(ScriptedProvider(NPM))
            assert await answer_of(ctx) == "npm"

    async def test_a_second_provider_slipped_in_between_asks_is_refused(self) -> None:
        """A second provider plugin registered on the plugin manager behind the context's
        back, after an ask, makes the next ask DUPLICATE_PROVIDER."""
        async with context() as ctx:
            ctx.register(Provider(PNPM))
            assert await answer_of(ctx) == "pnpm"
            pluggy.PluginManager.register(ctx.plugin_manager, Provider(NPM))  # with no veto
            with pytest.raises(UserQuestionError) as raised:
                await ctx.user_questions.ask(make_request())
            assert raised.value.code is UserQuestionErrorCode.DUPLICATE_PROVIDER


class TestObserversBetweenAsks:
    async def test_an_observer_registered_after_an_ask_hears_the_next(self) -> None:
        """An observer registered after some asks hears the next ask; once unregistered it
        hears no more."""
        seen: list[str] = []
        async with context() as ctx:
            ctx.register(Provider(PNPM))
            await answer_of(ctx)
            watcher = Watcher("w", seen)
            ctx.register(watcher)
            await answer_of(ctx)
            assert seen == ["w asked", "w answered"]
            ctx.unregister(watcher)
            await answer_of(ctx)
            assert seen == ["w asked", "w answered"]

    async def test_a_busy_observer_joining_idle_ones_turns_the_calls_on(self) -> None:
        """With only idle observers no observer is called; one registered without
        observer_idle makes every observer called, and its leaving turns them off again."""
        seen: list[str] = []
        async with context() as ctx:
            ctx.register(Provider(PNPM))
            ctx.register(Watcher("idle", seen, idle=True))
            await answer_of(ctx)
            assert seen == []
            busy = Watcher("busy", seen)
            ctx.register(busy)
            await answer_of(ctx)
            assert sorted(seen) == ["busy answered", "busy asked", "idle answered", "idle asked"]
            ctx.unregister(busy)
            seen.clear()
            await answer_of(ctx)
            assert seen == []

    async def test_observers_joining_later_are_guarded_and_wrapped(self) -> None:
        """After an ask observed by a wrapper alone, two observers registered meanwhile take
        part in the next ask inside the wrapper, and the later one's failure is logged and
        stops neither the earlier one nor the ask."""
        seen: list[str] = []
        async with context() as ctx:
            ctx.register(Provider(PNPM))
            ctx.register(Wrapper(seen))
            await answer_of(ctx)
            assert seen == [
                "wrapper before asked",
                "wrapper after asked",
                "wrapper before answered",
                "wrapper after answered",
            ]
            seen.clear()
            ctx.register(Watcher("a", seen))
            ctx.register(Failing("b", seen))  # called first: the newest
            assert await answer_of(ctx) == "pnpm"
            assert seen == [
                "wrapper before asked",
                "b asked",
                "a asked",
                "wrapper after asked",
                "wrapper before answered",
                "b answered",
                "a answered",
                "wrapper after answered",
            ]

    async def test_an_observer_registered_again_is_called_once_per_hook(self) -> None:
        """An observer unregistered and registered again between asks is called once per
        hook, not once per registration it ever had."""
        seen: list[str] = []
        async with context() as ctx:
            ctx.register(Provider(PNPM))
            watcher = Watcher("w", seen)
            ctx.register(watcher)
            await answer_of(ctx)
            ctx.unregister(watcher)
            ctx.register(watcher)
            seen.clear()
            await answer_of(ctx)
            assert seen == ["w asked", "w answered"]


class TestBlockedBetweenAsks:
    async def test_a_provider_plugin_blocked_between_asks_leaves_no_provider(self) -> None:
        """A provider plugin blocked on the plugin manager (pluggy's set_blocked) after an ask
        is not called by the next ask: NO_PROVIDER."""
        async with context() as ctx:
            ctx.register(Provider(PNPM), name="pnpm-provider")
            assert await answer_of(ctx) == "pnpm"
            ctx.plugin_manager.set_blocked("pnpm-provider")
            with pytest.raises(UserQuestionError) as raised:
                await ctx.user_questions.ask(make_request())
            assert raised.value.code is UserQuestionErrorCode.NO_PROVIDER

    async def test_a_provider_plugin_replacing_a_blocked_one_answers(self) -> None:
        """After the one provider plugin is blocked between asks and another registered, the
        next ask goes to the new one."""
        async with context() as ctx:
            ctx.register(Provider(PNPM), name="pnpm-provider")
            assert await answer_of(ctx) == "pnpm"
            ctx.plugin_manager.set_blocked("pnpm-provider")
            ctx.register(Provider(NPM), name="npm-provider")
            assert await answer_of(ctx) == "npm"

    async def test_an_observer_blocked_between_asks_hears_no_more(self) -> None:
        """An observer that heard an ask and is then blocked hears none of the next; the
        observer calls are off again (the core's log observer being idle)."""
        seen: list[str] = []
        async with context() as ctx:
            ctx.register(Provider(PNPM))
            ctx.register(Watcher("w", seen), name="watcher")
            await answer_of(ctx)
            assert seen == ["w asked", "w answered"]
            ctx.plugin_manager.set_blocked("watcher")
            seen.clear()
            await answer_of(ctx)
            assert seen == []

    async def test_an_idle_observer_blocked_lets_a_busy_one_be_heard_alone(self) -> None:
        """With an idle and a busy observer, blocking the busy one between asks turns the
        observer calls off; registering it again under a new name turns them on."""
        seen: list[str] = []
        async with context() as ctx:
            ctx.register(Provider(PNPM))
            ctx.register(Watcher("idle", seen, idle=True))
            ctx.register(Watcher("busy", seen), name="busy")
            ctx.plugin_manager.set_blocked("busy")
            await answer_of(ctx)
            assert seen == []
            ctx.register(Watcher("busy again", seen), name="busy-again")
            await answer_of(ctx)
            assert "busy again answered" in seen
