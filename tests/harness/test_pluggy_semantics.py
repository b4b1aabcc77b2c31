"""The calls around pluggy keep pluggy's semantics: wrappers once per call, its loader's records."""

from __future__ import annotations

from collections.abc import Generator
from importlib import metadata
from typing import Any

import pluggy
import pytest

from dsh_user_questions import hookimpl, hookspecs, plugin
from dsh_user_questions._markers import PROJECT
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import ScriptedProvider, make_request


def _plugins(events: list[str], plain: int, *, failing: int | None = None) -> list[object]:
    """One wrapper=True observer of dsh_user_questions_asked and ``plain`` plain ones."""

    class Wrapper:
        @hookimpl(wrapper=True)
        def dsh_user_questions_asked(self) -> Generator[None, Any, Any]:
            events.append("before")
            result = yield
            events.append("after")
            return result

    def observer(number: int) -> object:
        class Observer:
            @hookimpl
            def dsh_user_questions_asked(self, request: object) -> None:
                events.append(f"observer {number}")
                if number == failing:
                    raise RuntimeError("observer failed")

        return Observer()

    return [Wrapper(), *(observer(number) for number in range(plain))]


def _pluggy_events(plain: int) -> list[str]:
    """What a bare pluggy call of the same hook runs, in order."""
    events: list[str] = []
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(hookspecs)
    for item in _plugins(events, plain):
        pm.register(item)
    pm.hook.dsh_user_questions_asked(request=make_request())
    return events


@pytest.mark.parametrize("plain", [0, 1, 3])
async def test_a_wrapper_wraps_each_observer_call_once_as_pluggy_does(plain: int) -> None:
    """With 0, 1 or 3 plain observers, a wrapper runs once per ask, in pluggy's order."""
    events: list[str] = []
    async with HarnessContext() as ctx:
        ctx.register(plugin)
        ctx.user_questions.register_provider(ScriptedProvider({"answers": []}))
        for item in _plugins(events, plain):
            ctx.register(item)
        await ctx.user_questions.ask(make_request())
    assert events == _pluggy_events(plain)
    assert events.count("before") == 1


async def test_observers_all_run_when_one_raises(caplog: pytest.LogCaptureFixture) -> None:
    """An observer that raises is logged; the others and the wrapper still run, once each."""
    events: list[str] = []
    async with HarnessContext() as ctx:
        ctx.register(plugin)
        ctx.user_questions.register_provider(ScriptedProvider({"answers": []}))
        for item in _plugins(events, 3, failing=1):
            ctx.register(item)
        await ctx.user_questions.ask(make_request())
    assert events == ["before", "observer 2", "observer 1", "observer 0", "after"]
    assert "user-questions observer" in caplog.text
    assert "observer failed" in caplog.text


async def test_a_lone_wrapper_of_the_closing_hook_runs() -> None:
    """A wrapper=True dsh_context_closing with no plain implementation still runs, once."""
    events: list[str] = []

    class Wrapper:
        @hookimpl(wrapper=True)
        def dsh_context_closing(self) -> Generator[None, Any, Any]:
            events.append("closing")
            return (yield)

    ctx = HarnessContext()
    ctx.register(Wrapper())
    await ctx.aclose()
    assert events == ["closing"]


def test_load_entrypoints_records_the_distributions_as_pluggy_does() -> None:
    """list_plugin_distinfo() after load_entrypoints() is what pluggy's own loader records."""
    ctx = HarnessContext()
    names = ctx.load_entrypoints()
    assert "user_questions" in names
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.load_setuptools_entrypoints(PROJECT)

    def described(manager: pluggy.PluginManager) -> list[tuple[object, str]]:
        return [(item, dist.project_name) for item, dist in manager.list_plugin_distinfo()]

    ours = described(ctx.plugin_manager)
    assert ours == described(pm)
    assert (plugin, metadata.distribution("dsh-user-questions").metadata["Name"]) in ours


def test_a_plugin_registered_by_hand_is_not_loaded_again() -> None:
    """``ctx.register(plugin)`` then ``ctx.load_entrypoints()``: the core plugin, installed
    under its entry point too, stays registered once (no pluggy "already registered" error),
    the other installed plugins load, and the service answers."""
    ctx = HarnessContext()
    ctx.register(plugin)
    names = ctx.load_entrypoints()
    assert "user_questions" not in names
    assert [item for item in ctx.plugin_manager.get_plugins() if item is plugin] == [plugin]
    assert not ctx.plugin_manager.is_blocked("user_questions")
    assert ctx.get("user_questions") is not None
