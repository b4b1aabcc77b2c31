"""The pluggy seam: markers of project "dsh", documented hook specs, prefixed names."""

from __future__ import annotations

import inspect

import pluggy

import dsh_user_questions
from dsh_user_questions import hookspecs
from dsh_user_questions.harness import HarnessContext

SPECS = [getattr(hookspecs, name) for name in dir(hookspecs) if name.startswith("dsh_")]


def test_markers_are_for_project_dsh() -> None:
    """hookimpl and hookspec are pluggy markers of project "dsh"."""
    assert isinstance(dsh_user_questions.hookimpl, pluggy.HookimplMarker)
    assert isinstance(dsh_user_questions.hookspec, pluggy.HookspecMarker)
    assert dsh_user_questions.hookimpl.project_name == "dsh"
    assert dsh_user_questions.hookspec.project_name == "dsh"


def test_every_hook_is_documented_with_an_example() -> None:
    """Each spec's docstring states its contract and ends with an example."""
    assert len(SPECS) == 9
    for spec in SPECS:
        doc = inspect.getdoc(spec) or ""
        assert "Example::" in doc, spec.__name__
        assert "@hookimpl" in doc, spec.__name__


def test_only_the_provider_hook_ends_in_ask() -> None:
    """No hook name but dsh_user_questions_ask ends in "ask", so no observer is mistaken for it."""
    assert [spec.__name__ for spec in SPECS if spec.__name__.endswith("ask")] == [
        "dsh_user_questions_ask"
    ]


def test_the_context_knows_every_spec() -> None:
    """A harness context's plugin manager has every hook spec added."""
    hook = HarnessContext().plugin_manager.hook
    for spec in SPECS:
        assert getattr(hook, spec.__name__).spec is not None


def test_provider_hook_is_firstresult_and_services_hook_is_historic() -> None:
    """The provider hook returns one result; the services hook reaches later plugins."""
    hook = HarnessContext().plugin_manager.hook
    assert hook.dsh_user_questions_ask.spec.opts["firstresult"] is True
    assert hook.dsh_context_services.is_historic()


def test_package_root_exports_its_public_names() -> None:
    """Every name in __all__ is importable from the package root."""
    for name in dsh_user_questions.__all__:
        assert getattr(dsh_user_questions, name) is not None
