"""Calling hooks through pluggy one implementation at a time, so one failure stops no other.

pluggy stops a hook call at the first implementation that raises. Observers and closing hooks
must all run, so each implementation gets its own pluggy call (a subset hook caller without
the other implementations): pluggy still matches arguments by name and runs ``wrapper=True``
implementations (around each call). Awaitables they return are awaited.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Sequence
from typing import Any

import pluggy

__all__ = ["OneByOne"]

_log = logging.getLogger("dsh_user_questions")


class OneByOne:
    """Calls every non-wrapper implementation of one hook in its own pluggy call."""

    __slots__ = ("_callers", "_hook", "_impls", "_name", "_pm")

    def __init__(self, pm: pluggy.PluginManager, name: str) -> None:
        self._pm = pm
        self._name = name
        self._hook: pluggy.HookCaller = getattr(pm.hook, name)
        self._impls: Sequence[pluggy.HookImpl] = ()
        self._callers: list[tuple[str, pluggy.HookCaller]] = []

    def __bool__(self) -> bool:
        """Whether any implementation would run (cheap: the hot path asks it on every ask)."""
        return bool(self._hook.get_hookimpls())

    def _each(self) -> list[tuple[str, pluggy.HookCaller]]:
        impls = self._hook.get_hookimpls()
        if impls != self._impls:
            plain = [impl for impl in impls if not (impl.wrapper or impl.hookwrapper)]
            self._callers = [
                (
                    impl.plugin_name,
                    self._pm.subset_hook_caller(
                        self._name, [other.plugin for other in plain if other is not impl]
                    ),
                )
                for impl in reversed(plain)  # newest first, as pluggy calls them
            ]
            self._impls = impls
        return self._callers

    def call(self, failure: str, **kwargs: Any) -> list[Any]:
        """Call each implementation; log ``failure % plugin_name`` for one that raises."""
        results = []
        for plugin_name, caller in self._each():
            try:
                results.extend(caller(**kwargs))
            except Exception:
                _log.exception(failure, plugin_name)
        return results

    async def acall(self, failure: str, **kwargs: Any) -> None:
        """Like `call`, awaiting what each implementation returns, one after the other."""
        for plugin_name, caller in self._each():
            try:
                for result in caller(**kwargs):
                    if inspect.isawaitable(result):
                        await result
            except Exception:
                _log.exception(failure, plugin_name)
