"""The hot path's direct call of the one provider implementation gives what pluggy gives."""

from __future__ import annotations

from typing import Any

import pluggy
import pytest

from dsh_user_questions import hookimpl, hookspecs
from dsh_user_questions._providercall import call_provider_impl
from dsh_user_questions.testing import make_request

REQUEST = make_request()


class Takes:
    @hookimpl
    def dsh_user_questions_ask(self, request: object) -> object:
        return ("got", request)


class TakesNothing:
    @hookimpl
    def dsh_user_questions_ask(self) -> object:
        return "nothing"


class Defaulted:
    @hookimpl
    def dsh_user_questions_ask(self, request: object = None) -> object:
        return ("defaulted", request)


class ReturnsNone:
    @hookimpl
    def dsh_user_questions_ask(self, request: object) -> object:
        return None


class Raises:
    @hookimpl
    def dsh_user_questions_ask(self, request: object) -> object:
        raise LookupError("no screen")


class Wrapped:
    @hookimpl(wrapper=True)
    def dsh_user_questions_ask(self, request: object) -> Any:
        result = yield
        return ("wrapped", result)


def outcome(call: Any) -> object:
    try:
        return ("returned", call())
    except Exception as error:  # compared below, type and text
        return ("raised", type(error), str(error))


@pytest.mark.parametrize(
    "plugins",
    [[Takes()], [TakesNothing()], [Defaulted()], [ReturnsNone()], [Raises()], [Takes(), Wrapped()]],
    ids=["request", "no-args", "defaulted", "none", "raises", "wrapper"],
)
@pytest.mark.parametrize("traced", [False, True])
def test_the_shortcut_matches_pluggy(plugins: list[object], traced: bool) -> None:
    """For every implementation shape, with tracing on or off, the result is pluggy's."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for plugin in plugins:
        pm.register(plugin)
    calls: list[str] = []
    if traced:
        pm.add_hookcall_monitoring(lambda name, impls, kwargs: calls.append(name), lambda *a: None)
    hook = pm.hook.dsh_user_questions_ask
    impls = hook.get_hookimpls()
    by_pluggy = outcome(lambda: hook(request=REQUEST))
    pluggy_calls = len(calls)
    by_shortcut = outcome(lambda: call_provider_impl(pm, hook, impls, REQUEST))
    assert by_shortcut == by_pluggy
    if traced:
        assert len(calls) == 2 * pluggy_calls  # monitoring still sees the call


class Answers:
    def __init__(self, label: str) -> None:
        self.label = label

    @hookimpl
    async def dsh_user_questions_ask(self, request: object) -> object:
        return {"answers": [{"id": "pkg", "selected": [self.label]}]}


async def test_the_service_follows_changes_after_its_first_direct_call() -> None:
    """After an ask called the one provider directly, a new provider, a wrapper and call
    monitoring each take effect on the next ask."""
    from dsh_user_questions import plugin
    from dsh_user_questions.harness import HarnessContext

    ctx = HarnessContext()
    ctx.register(plugin)
    ctx.register(Answers("pnpm"), name="first")
    picked = await ctx.user_questions.ask(REQUEST)
    assert picked.answers[0].selected == ("pnpm",)
    ctx.plugin_manager.unregister(name="first")
    ctx.register(Answers("npm"), name="second")
    assert (await ctx.user_questions.ask(REQUEST)).answers[0].selected == ("npm",)
    calls: list[str] = []
    undo = ctx.plugin_manager.add_hookcall_monitoring(
        lambda name, impls, kwargs: calls.append(name), lambda *a: None
    )
    await ctx.user_questions.ask(REQUEST)
    assert "dsh_user_questions_ask" in calls  # monitoring sees the provider call
    undo()

    class Wrapping:
        @hookimpl(wrapper=True)
        def dsh_user_questions_ask(self, request: object) -> Any:
            calls.append("wrapped")
            return (yield)

    ctx.register(Wrapping(), name="wrapping")
    await ctx.user_questions.ask(REQUEST)
    assert calls[-1] == "wrapped"
    await ctx.aclose()
