"""The pluggy seam: markers of project "dsh", documented hook specs, prefixed names."""

from __future__ import annotations

import asyncio
import inspect

import pluggy

import dsh_user_questions
from dsh_user_questions import hookimpl, hookspecs
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import ScriptedProvider, make_request

SPECS = [getattr(hookspecs, name) for name in dir(hookspecs) if name.startswith("dsh_")]


class TestSpecs:
    """The hook specs: project dsh, documented, named, known to the context."""

    def test_markers_are_for_project_dsh(self) -> None:
        """hookimpl and hookspec are pluggy markers of project "dsh"."""
        assert isinstance(dsh_user_questions.hookimpl, pluggy.HookimplMarker)
        assert isinstance(dsh_user_questions.hookspec, pluggy.HookspecMarker)
        assert dsh_user_questions.hookimpl.project_name == "dsh"
        assert dsh_user_questions.hookspec.project_name == "dsh"

    def test_every_hook_is_documented_with_an_example(self) -> None:
        """Each spec's docstring states its contract and ends with an example."""
        assert len(SPECS) == 11
        for spec in SPECS:
            doc = inspect.getdoc(spec) or ""
            assert "Example::" in doc, spec.__name__
            assert "@hookimpl" in doc, spec.__name__

    def test_only_the_provider_hook_ends_in_ask(self) -> None:
        """No hook name but dsh_user_questions_ask ends in "ask", so no observer is mistaken for
        it."""
        assert [spec.__name__ for spec in SPECS if spec.__name__.endswith("ask")] == [
            "dsh_user_questions_ask"
        ]

    def test_the_context_knows_every_spec(self) -> None:
        """A harness context's plugin manager has every hook spec added."""
        hook = HarnessContext().plugin_manager.hook
        for spec in SPECS:
            assert getattr(hook, spec.__name__).spec is not None

    def test_provider_hook_is_firstresult_and_services_hook_is_historic(self) -> None:
        """The provider hook returns one result; the services hook reaches later plugins."""
        hook = HarnessContext().plugin_manager.hook
        assert hook.dsh_user_questions_ask.spec.opts["firstresult"] is True
        assert hook.dsh_context_services.is_historic()

    def test_package_root_exports_its_public_names(self) -> None:
        """Every name in __all__ is importable from the package root."""
        for name in dsh_user_questions.__all__:
            assert getattr(dsh_user_questions, name) is not None


# Observers are called through pluggy -----------------------------------------------------------


class TestObservers:
    """Observer hooks: awaited when async, wrapped, arguments by name."""

    async def test_async_observers_are_awaited(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """An async def observer runs to its end before ask() returns (never silently dropped)."""
        seen: list[str] = []

        class AsyncObserver:
            @hookimpl
            async def dsh_user_questions_answered(self, request: object, answer: object) -> None:
                await asyncio.sleep(0)
                seen.append("answered")

        dsh_context.register(AsyncObserver())
        scripted_provider.push({"answers": []})
        await dsh_context.user_questions.ask(make_request())
        assert seen == ["answered"]

    async def test_observer_wrappers_run_and_arguments_match_by_name(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """A wrapper=True observer wraps each observer call; observers take any subset of args."""
        events: list[str] = []

        class Wrapper:
            @hookimpl(wrapper=True)
            def dsh_user_questions_asked(self) -> object:
                events.append("before")
                result = yield
                events.append("after")
                return result

        class Observer:
            @hookimpl
            def dsh_user_questions_asked(self) -> None:
                events.append("asked")

        dsh_context.register(Wrapper())
        dsh_context.register(Observer())
        scripted_provider.push({"answers": []})
        await dsh_context.user_questions.ask(make_request())
        assert events == ["before", "asked", "after"]
