"""The minimal host seam: a harness context, an agent registry and abort signals.

No Python harness of this family exists, so the package ships the few parts it needs. A real
harness can adopt them or supply its own: the service relies only on ``ctx.plugin_manager``,
``ctx.agents.get(id)`` and ``ctx.agents.roots()``, and on the `AbortSignal` interface.
"""

from __future__ import annotations

import heapq
import inspect
import itertools
import threading
from collections.abc import Callable, Iterable
from typing import Any, Protocol

import pluggy

from . import hookspecs
from ._discovery import select_entrypoint_plugins

__all__ = [
    "AbortController",
    "AbortSignal",
    "Agent",
    "AgentRegistry",
    "HarnessContext",
    "SupportsAgentRegistry",
]

# Abort signals ---------------------------------------------------------------------------------


class AbortSignal:
    """Tells whether an operation was aborted, and why; listeners hear of it once.

    Made by an `AbortController`, `AbortSignal.timeout` or `AbortSignal.any`. Thread-safe: it may
    be aborted from any thread, with or without a running event loop; listeners run in the
    aborting thread, so one that touches an event loop must use ``call_soon_threadsafe``.
    """

    __slots__ = ("__weakref__", "_aborted", "_listeners", "_lock", "_reason")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: object = None
        self._listeners: dict[object, Callable[[], object]] | None = None
        self._lock = threading.Lock()

    @property
    def aborted(self) -> bool:
        """Whether the signal has aborted."""
        return self._aborted

    @property
    def reason(self) -> object:
        """Why it aborted (an exception, or whatever the aborting code gave); ``None`` before."""
        return self._reason

    def throw_if_aborted(self) -> None:
        """Raise the reason (or a `TimeoutError`-like one it wraps) if the signal has aborted."""
        if self._aborted:
            reason = self._reason
            if isinstance(reason, BaseException):
                raise reason
            raise AbortError(reason)

    def add_listener(self, listener: Callable[[], object]) -> Callable[[], None]:
        """Call ``listener()`` once when the signal aborts; returns a function removing it.

        A listener added after the abort runs at once. The remover is idempotent.
        """
        with self._lock:
            if not self._aborted:
                if self._listeners is None:
                    self._listeners = {}
                key = object()
                self._listeners[key] = listener
                return _Remover(self, key)
        _call(listener)
        return _noop

    def _remove(self, key: object) -> None:
        with self._lock:
            if self._listeners is not None:
                self._listeners.pop(key, None)

    def _abort(self, reason: object) -> None:
        with self._lock:
            if self._aborted:
                return
            self._aborted = True
            self._reason = (
                AbortError("signal is aborted without reason") if reason is None else reason
            )
            listeners = self._listeners
            self._listeners = None
        if listeners:
            for listener in listeners.values():
                _call(listener)

    @classmethod
    def abort(cls, reason: object = None) -> AbortSignal:
        """A signal that has already aborted with ``reason``."""
        signal = cls()
        signal._abort(reason)
        return signal

    @classmethod
    def timeout(cls, seconds: float) -> AbortSignal:
        """A signal that aborts with a `TimeoutError` after ``seconds``.

        It needs no event loop: a shared timer thread aborts it.
        """
        signal = cls()
        _timers.schedule(seconds, signal, TimeoutError(f"signal timed out after {seconds:g} s"))
        return signal

    @classmethod
    def any(cls, signals: Iterable[AbortSignal]) -> AbortSignal:
        """A signal that aborts as soon as any of ``signals`` aborts, with its reason."""
        sources = list(signals)
        combined = cls()
        for source in sources:
            if source.aborted:
                combined._abort(source.reason)
                return combined
        removers: list[Callable[[], None]] = []

        def follow(source: AbortSignal) -> Callable[[], None]:
            def on_abort() -> None:
                combined._abort(source.reason)
                for remove in removers:
                    remove()

            return on_abort

        for source in sources:
            removers.append(source.add_listener(follow(source)))
        return combined

    def __repr__(self) -> str:
        state = f"aborted reason={self._reason!r}" if self._aborted else "pending"
        return f"<AbortSignal {state}>"


class AbortError(Exception):
    """The reason of an abort that gave none (or gave something that is not an exception)."""


class _Remover:
    """Removes one listener from its signal; a plain class, since every wait makes one."""

    __slots__ = ("_key", "_signal")

    def __init__(self, signal: AbortSignal, key: object) -> None:
        self._signal = signal
        self._key = key

    def __call__(self) -> None:
        self._signal._remove(self._key)


def _noop() -> None:
    return None


def _call(listener: Callable[[], object]) -> None:
    try:
        listener()
    except Exception:
        import logging  # only a failing listener needs it; the import is kept light

        logging.getLogger(__name__).exception("an abort listener failed")


class AbortController:
    """Owns an `AbortSignal` and aborts it."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: object = None) -> None:
        """Abort the signal (once; later calls do nothing). Safe from any thread."""
        self.signal._abort(reason)


class _Timers:
    """One daemon thread that aborts timeout signals when they are due."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, AbortSignal, object]] = []
        self._counter = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def schedule(self, seconds: float, signal: AbortSignal, reason: object) -> None:
        import time

        due = time.monotonic() + max(0.0, seconds)
        with self._wake:
            heapq.heappush(self._heap, (due, next(self._counter), signal, reason))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="dsh-abort-timers", daemon=True
                )
                self._thread.start()
            self._wake.notify()

    def _run(self) -> None:
        import time

        while True:
            with self._wake:
                while not self._heap:
                    self._wake.wait()
                due, _, signal, reason = self._heap[0]
                delay = due - time.monotonic()
                if delay > 0:
                    self._wake.wait(delay)
                    continue
                heapq.heappop(self._heap)
            signal._abort(reason)


_timers = _Timers()


# Agents ----------------------------------------------------------------------------------------


class SupportsAgentRegistry(Protocol):
    """What the service needs of a harness's agent registry."""

    def get(self, agent_id: str, /) -> object | None: ...

    def roots(self) -> list[Any]: ...


class Agent:
    """A live agent of the harness, known by ``id``; compared by identity, never by value."""

    __slots__ = ("__weakref__", "id")

    def __init__(self, id: str) -> None:
        if not isinstance(id, str):
            raise TypeError(f"Agent id must be a str, got {type(id).__name__}")
        self.id = id

    def __repr__(self) -> str:
        return f"<Agent {self.id!r} at {id(self):#x}>"


class AgentRegistry:
    """The live agents of a harness: who is running now, and who owns whom.

    A root agent talks to the human; an agent entered with an ``owner`` was delegated work by
    another agent and stays owned even after that owner detaches.
    """

    def __init__(self) -> None:
        self._live: dict[str, tuple[Any, bool]] = {}
        self._lock = threading.Lock()

    def enter(self, agent: Any, owner: Any | None = None) -> Callable[[], None]:
        """Make ``agent`` live (owned by ``owner`` if given); returns its idempotent detach.

        Raises `ValueError` if an agent with the same id is live already, or if ``owner`` is
        not live here.
        """
        agent_id = agent.id
        with self._lock:
            if agent_id in self._live:
                raise ValueError(f"an agent with id {agent_id!r} is live already")
            if owner is not None and self._live.get(owner.id, (None, False))[0] is not owner:
                raise ValueError(f"the owner {owner.id!r} of agent {agent_id!r} is not live")
            entry = (agent, owner is not None)
            self._live[agent_id] = entry

        def detach() -> None:
            with self._lock:
                if self._live.get(agent_id) is entry:
                    del self._live[agent_id]

        return detach

    def get(self, agent_id: str, /) -> Any | None:
        """The live agent with this id, or ``None``."""
        entry = self._live.get(agent_id)
        return None if entry is None else entry[0]

    def roots(self) -> list[Any]:
        """The live agents that no other agent owns, in the order they entered."""
        return [agent for agent, owned in list(self._live.values()) if not owned]


# The context -----------------------------------------------------------------------------------


class _PluginManager(pluggy.PluginManager):
    """A plugin manager that lets plugins veto a registration and own the services they add."""

    def __init__(self, context: HarnessContext) -> None:
        super().__init__(hookspecs.PROJECT)
        self._context = context

    def register(self, plugin: object, name: str | None = None) -> str | None:
        context = self._context
        before = set(context._services)
        plugin_name = super().register(plugin, name)
        if plugin_name is None:
            return None
        try:
            self.hook.dsh_plugin_registered(ctx=context, plugin=plugin, name=plugin_name)
        except BaseException:
            super().unregister(plugin)
            for added in set(context._services) - before:
                del context._services[added]
            raise
        for added in set(context._services) - before:
            context._owners[added] = plugin
        return plugin_name

    def unregister(self, plugin: object | None = None, name: str | None = None) -> Any | None:
        removed = super().unregister(plugin, name)
        if removed is not None:
            context = self._context
            for service_name, owner in list(context._owners.items()):
                if owner is removed:
                    del context._owners[service_name]
                    context._services.pop(service_name, None)
        return removed


class _Default:
    """The type of the "make a fresh registry" default of `HarnessContext`."""


_DEFAULT = _Default()


class HarnessContext:
    """A harness's context: its plugin manager, its agent registry and the services plugins add.

    Registering `dsh_user_questions.plugin` (or loading the ``"dsh"`` entry points) adds the
    ``user_questions`` service: ``ctx.user_questions``, or ``ctx.get("user_questions")``.
    """

    def __init__(self, agents: SupportsAgentRegistry | _Default | None = _DEFAULT) -> None:
        self.agents: SupportsAgentRegistry | None = (
            AgentRegistry() if isinstance(agents, _Default) else agents
        )
        self._services: dict[str, object] = {}
        self._owners: dict[str, object] = {}
        self.plugin_manager: pluggy.PluginManager = _PluginManager(self)
        self.plugin_manager.add_hookspecs(hookspecs)
        self.plugin_manager.hook.dsh_context_services.call_historic(
            kwargs={"ctx": self}, result_callback=self._add_services
        )

    def _add_services(self, services: Any) -> None:
        for name, service in dict(services).items():
            if name in self._services:
                raise ValueError(f"the harness context has a service named {name!r} already")
            self._services[name] = service

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register a plugin (a module or object with hook implementations)."""
        return self.plugin_manager.register(plugin, name)

    def unregister(self, plugin: object) -> None:
        """Unregister a plugin; the services it added go with it."""
        self.plugin_manager.unregister(plugin)

    def load_entrypoints(self, group: str = hookspecs.PROJECT) -> list[str]:
        """Register the plugins installed under the ``group`` entry points; returns their names.

        Plugins blocked or already registered are skipped. User-questions providers are
        chosen by `DSH_USER_QUESTIONS_PROVIDER`: set to an entry-point name, it blocks every
        other provider; unset, two installed providers raise ``DUPLICATE_PROVIDER`` naming
        both, after the other plugins were registered. Unknown hook names fail loudly
        (``check_pending``).
        """
        from importlib import metadata  # slow to import; only needed here

        pm = self.plugin_manager
        candidates = []
        seen = set()
        for dist in metadata.distributions():
            for ep in dist.entry_points:
                if ep.group != group or ep.name in seen:
                    continue
                seen.add(ep.name)
                if pm.is_blocked(ep.name) or pm.get_plugin(ep.name) is not None:
                    continue
                candidates.append((ep.name, dist, ep.load()))
        chosen, conflict = select_entrypoint_plugins(candidates, pm)
        names = []
        for name, _dist, plugin in chosen:
            if pm.get_plugin(name) is None and self.register(plugin, name=name):
                names.append(name)
        pm.check_pending()
        if conflict is not None:
            raise conflict
        return names

    async def aclose(self) -> None:
        """Close the context: every ``dsh_context_closing`` implementation runs, newest first.

        Awaitables they return are awaited in turn; a failing one is logged and the rest still
        run. Plugins stay registered.
        """
        for impl in self.plugin_manager.hook.dsh_context_closing.get_hookimpls()[::-1]:
            try:
                result = impl.function(self)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                import logging

                logging.getLogger(__name__).exception("plugin %s failed to close", impl.plugin_name)

    def get(self, name: str) -> Any | None:
        """The service named ``name``, or ``None`` when no registered plugin provides it."""
        return self._services.get(name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        service = self.__dict__.get("_services", {}).get(name)
        if service is None:
            raise AttributeError(
                f"the harness context has no service {name!r}: register the plugin that provides it"
            )
        return service
