"""Calling a hook whose implementations must all run, even when one of them raises.

pluggy stops a hook call at the first implementation that raises. Observers and closing hooks
must all run, so each plain implementation is called through a guard that logs its exception
and lets the call go on; the guarded implementations and the hook's wrappers are then called
in ONE pluggy call (``HookCaller._hookexec``, the manager's own call path: tracing and call
monitoring still see it). So pluggy still matches arguments by name, orders implementations
(``tryfirst``/``trylast``, newest first) and runs each ``wrapper=True`` (and old-style
``hookwrapper=True``) implementation exactly once around the whole call, also when it is the
only implementation. Awaitables the implementations return are awaited in turn, each failure
logged. tests/test_hookspecs.py compares this with a plain pluggy call.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Sequence
from typing import Any

import pluggy

__all__ = ["OneByOne"]

_log = logging.getLogger("dsh_user_questions")


class OneByOne:
    """Calls every implementation of one hook in one pluggy call; a failing one stops no other."""

    __slots__ = ("_failure", "_guarded", "_hook", "_impls", "_name")

    def __init__(self, pm: pluggy.PluginManager, name: str) -> None:
        self._name = name
        self._hook: pluggy.HookCaller = getattr(pm.hook, name)
        self._impls: Sequence[pluggy.HookImpl] | None = None
        self._guarded: list[pluggy.HookImpl] = []
        self._failure = ""

    def __bool__(self) -> bool:
        """Whether any implementation would run (cheap: the hot path asks it on every ask)."""
        return bool(self._hook.get_hookimpls())

    def _each(self, failure: str) -> list[pluggy.HookImpl]:
        impls = self._hook.get_hookimpls()
        if impls != self._impls or failure != self._failure:
            self._guarded = [
                impl if impl.wrapper or impl.hookwrapper else _guard(impl, failure)
                for impl in impls
            ]
            self._impls = impls
            self._failure = failure
        return self._guarded

    def call(self, failure: str, **kwargs: Any) -> list[Any]:
        """Call the hook; log ``failure % plugin_name`` for an implementation that raises."""
        impls = self._each(failure)
        if not impls:
            return []
        try:
            results = self._hook._hookexec(self._name, impls, kwargs, False)
        except Exception:  # a wrapper raised (or re-raised): the plain ones have run
            _log.exception(failure, f"wrapping {self._name}")
            return []
        return results if isinstance(results, list) else [results]

    async def acall(self, failure: str, **kwargs: Any) -> None:
        """Like `call`, then await what the implementations returned, one after the other."""
        for result in self.call(failure, **kwargs):
            if inspect.isawaitable(result):
                await result


def _guard(impl: pluggy.HookImpl, failure: str) -> pluggy.HookImpl:
    """``impl`` with its exceptions (also those of an awaitable it returns) logged, not raised."""
    function = impl.function
    name = impl.plugin_name

    @functools.wraps(function)  # pluggy reads the argument names through __wrapped__
    def guarded(*args: object) -> object:
        try:
            result = function(*args)
        except Exception:
            _log.exception(failure, name)
            return None
        if inspect.isawaitable(result):
            return _logged(result, failure, name)
        return result

    return pluggy.HookImpl(impl.plugin, name, guarded, impl.opts)


async def _logged(awaitable: Any, failure: str, name: str) -> object:
    try:
        return await awaitable
    except Exception:
        _log.exception(failure, name)
        return None
