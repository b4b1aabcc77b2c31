"""Calling a hook whose implementations must all run, even when one of them raises.

pluggy stops a hook call at the first implementation that raises. Observers and closing hooks
must all run, so each plain implementation takes part through a guard that logs its exception
and lets the call go on. All of it is ONE call through pluggy's public API: the hook without
its plain implementations (``PluginManager.subset_hook_caller``: its wrappers only), called with
the guards as extra implementations (``HookCaller.call_extra``). So pluggy still matches
arguments by name, keeps the implementations' order (``tryfirst``/``trylast``, newest first),
runs each ``wrapper=True`` (and old-style ``hookwrapper=True``) implementation exactly once
around the whole call, and tracing and call monitoring see it. Awaitables the implementations
return are awaited in turn, each failure logged. tests/test_pluggy_semantics.py compares this
with a plain pluggy call.
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


class OneByOne:
    """Calls every implementation of one hook in one pluggy call; a failing one stops no other."""

    __slots__ = ("_hook", "_name", "_pm")

    def __init__(self, pm: pluggy.PluginManager, name: str) -> None:
        self._pm = pm
        self._name = name
        self._hook: pluggy.HookCaller = getattr(pm.hook, name)

    def impls(self) -> list[pluggy.HookImpl]:
        """The hook's implementations (pluggy's public ``get_hookimpls()``)."""
        return self._hook.get_hookimpls()

    def call(self, failure: str, **kwargs: Any) -> list[Any]:
        """Call the hook; log ``failure % plugin_name`` for an implementation that raises."""
        impls = self._hook.get_hookimpls()
        if not impls:
            return []
        plain = [impl for impl in impls if not (impl.wrapper or impl.hookwrapper)]
        wrappers_only = self._pm.subset_hook_caller(self._name, [impl.plugin for impl in plain])
        guards = [_guard(impl, failure) for impl in plain]
        try:
            results = wrappers_only.call_extra(guards, kwargs)
        except Exception:  # a wrapper raised (or re-raised): the plain ones have run
            _log.exception(failure, f"wrapping {self._name}")
            return []
        return results if isinstance(results, list) else [results]

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
