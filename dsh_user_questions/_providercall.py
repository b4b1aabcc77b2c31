"""Calling the one provider implementation: the hot path's shortcut around pluggy.

Every ask calls exactly one provider implementation, and pluggy's general machinery (a loop
over implementations, wrapper handling, a result list) costs more than the rest of the ask.
`call_provider_impl` calls that one implementation as pluggy would, and hands every case it
does not cover back to pluggy: wrappers, keyword arguments with defaults, unusual signatures,
and a manager with tracing or call monitoring on. tests/test_providercall.py checks that it
gives what pluggy gives.
"""

from __future__ import annotations

from collections.abc import Sequence

import pluggy

from .payloads import AskUserQuestionRequest

__all__ = ["call_provider_impl", "is_direct", "provider_impls"]


def provider_impls(impls: Sequence[pluggy.HookImpl]) -> list[pluggy.HookImpl]:
    """The implementations that provide answers (wrappers around the hook do not)."""
    return [impl for impl in impls if not (impl.wrapper or impl.hookwrapper)]


def call_provider_impl(
    pm: pluggy.PluginManager,
    hook: pluggy.HookCaller,
    impls: Sequence[pluggy.HookImpl],
    request: AskUserQuestionRequest,
) -> object:
    """Call the provider hook whose implementations are ``impls`` (one provider among them).

    With a single plain implementation taking ``request`` (or nothing) and no tracing on the
    manager, the implementation's function is called directly, as pluggy's ``_multicall``
    would: positional arguments by name, exceptions unchanged, the result as returned
    (``firstresult``). Anything else goes through ``hook(request=request)``.
    """
    if len(impls) == 1:
        impl = impls[0]
        if _plain(pm, impl):
            argnames = impl.argnames
            if argnames == ("request",):
                return impl.function(request)
            if not argnames:
                return impl.function()
    return hook(request=request)


def is_direct(pm: pluggy.PluginManager, impl: pluggy.HookImpl) -> bool:
    """Whether `call_provider_impl` calls ``impl`` alone as ``impl.function(request)``."""
    return impl.argnames == ("request",) and _plain(pm, impl)


def _plain(pm: pluggy.PluginManager, impl: pluggy.HookImpl) -> bool:
    # An implementation pluggy would call as a plain function, on an untraced manager.
    return not (impl.wrapper or impl.hookwrapper or impl.kwargnames) and _untraced(pm)


def _untraced(pm: pluggy.PluginManager) -> bool:
    # pluggy keeps its call function on the manager and swaps it for tracing and
    # add_hookcall_monitoring; only the plain one may be bypassed. (A pluggy that renames it
    # makes this False: always correct, merely slower.)
    inner = getattr(pm, "_inner_hookexec", None)
    return getattr(inner, "__name__", None) == "_multicall"
