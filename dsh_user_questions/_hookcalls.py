"""Calling a hook whose implementations must all run, even when one of them raises.

pluggy stops a hook call at the first implementation that raises. Observers and closing hooks
must all run, so each plain implementation takes part through a guard that logs its exception
and lets the call go on. All of it is ONE call through pluggy's public API: the hook without
its plain implementations (``PluginManager.subset_hook_caller``: its wrappers only), called with
the guards as extra implementations (``HookCaller.call_extra``). So pluggy still matches
arguments by name, keeps the implementations' order (``tryfirst``/``trylast``, newest first),
runs each ``wrapper=True`` (and old-style ``hookwrapper=True``) implementation exactly once
around the whole call, and tracing and call monitoring see it. The subset and the guards are
made again only when the hook's implementations change. Awaitables the implementations
return are awaited in turn, each failure logged. tests/harness/test_pluggy_semantics.py compares
this with a plain pluggy call.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any

import pluggy

__all__ = ["OneByOne"]

_log = logging.getLogger("dsh_user_questions")

_Call = tuple[pluggy.HookCaller, list[Callable[..., object]]]
"""What one call needs: the hook without its plain implementations, and their guards."""


class OneByOne:
    """Calls every implementation of one hook in one pluggy call; a failing one stops no other."""

    __slots__ = ("_hook", "_made", "_name", "_pm")

    def __init__(self, pm: pluggy.PluginManager, name: str) -> None:
        self._pm = pm
        self._name = name
        self._hook: pluggy.HookCaller = getattr(pm.hook, name)
        # The implementations and failure message last called with, and what was made of them.
        self._made: tuple[list[pluggy.HookImpl], str, _Call] | None = None

    def call(self, failure: str, **kwargs: Any) -> list[Any]:
        """Call the hook; log ``failure % plugin_name`` for an implementation that raises."""
        impls = self._hook.get_hookimpls()
        if not impls:
            return []
        wrappers_only, guards = self._make(impls, failure)
        try:
            results = wrappers_only.call_extra(guards, kwargs)
        except Exception:  # a wrapper raised (or re-raised): the plain ones have run
            _log.exception(failure, f"wrapping {self._name}")
            return []
        return results if isinstance(results, list) else [results]

    def _make(self, impls: list[pluggy.HookImpl], failure: str) -> _Call:
        """The hook without its plain implementations, and their guards: made again only when
        the hook's implementations (a plugin registered or unregistered) or ``failure`` change."""
        made = self._made
        if made is not None and made[0] == impls and made[1] == failure:
            return made[2]
        plain = [impl for impl in impls if not (impl.wrapper or impl.hookwrapper)]
        wrappers_only = self._pm.subset_hook_caller(self._name, [impl.plugin for impl in plain])
        call = (wrappers_only, [_guard(impl, failure) for impl in plain])
        self._made = (impls, failure, call)
        return call

    async def acall(self, failure: str, **kwargs: Any) -> None:
        """Like `call`, then await what the implementations returned, one after the other."""
        for result in self.call(failure, **kwargs):
            if inspect.isawaitable(result):
                await result


def _guard(impl: pluggy.HookImpl, failure: str) -> Callable[..., object]:
    """``impl``'s function with its exceptions (also those of an awaitable it returns) logged.

    pluggy calls it as it would call ``impl``: it reads the argument names through
    ``__wrapped__`` and passes them positionally.
    """
    function = impl.function
    name = impl.plugin_name

    @functools.wraps(function)
    def guarded(*args: object) -> object:
        try:
            result = function(*args)
        except Exception:
            _log.exception(failure, name)
            return None
        if inspect.isawaitable(result):
            return _logged(result, failure, name)
        return result

    return guarded


async def _logged(awaitable: Any, failure: str, name: str) -> object:
    try:
        return await awaitable
    except Exception:
        _log.exception(failure, name)
        return None
