"""The harness context: a plugin manager, an agent registry and the services plugins add.

Re-exported by `dsh_user_questions.harness`, the one public path to these names.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import pluggy

from . import hookspecs
from ._abort import check_seconds
from ._agents import AgentRegistry, SupportsAgentRegistry
from ._discovery import select_entrypoint_plugins
from ._hookcalls import OneByOne
from ._markers import PROJECT

__all__ = ["DEFAULT_GRACE", "HarnessContext"]

DEFAULT_GRACE = 5.0
"""Seconds ``aclose()`` waits for the providers' clean-up of the asks it withdraws."""

_log = logging.getLogger("dsh_user_questions")


class _PluginManager(pluggy.PluginManager):
    """A plugin manager that lets plugins veto a registration and own the services they add.

    Registrations and unregistrations take one (re-entrant) lock, so threads registering and
    unregistering at once never see each other's half-done work.
    """

    def __init__(self, context: HarnessContext) -> None:
        super().__init__(PROJECT)
        self._context = context
        self._changing = threading.RLock()

    def register(self, plugin: object, name: str | None = None) -> str | None:
        with self._changing:
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
        with self._changing:
            removed = super().unregister(plugin, name)
            if removed is not None:
                context = self._context
                for service_name, owner in list(context._owners.items()):
                    if owner is removed:
                        del context._owners[service_name]
                        context._services.pop(service_name, None)
            return removed


class HarnessContext:
    """A harness's context: its plugin manager, its agent registry and the services plugins add.

    Registering `dsh_user_questions.plugin` (or loading the ``"dsh"`` entry points) adds the
    ``user_questions`` service: ``ctx.user_questions``, or ``ctx.get("user_questions")``.
    Use it as ``async with HarnessContext() as ctx:`` so `aclose` always runs.
    """

    def __init__(
        self, agents: SupportsAgentRegistry | type[AgentRegistry] | None = AgentRegistry
    ) -> None:
        """``agents``: the harness's agent registry (anything with ``get`` and ``roots``);
        ``None`` when the harness has none; by default a fresh `AgentRegistry` (the class given
        is made into one)."""
        self.agents: SupportsAgentRegistry | None = agents() if isinstance(agents, type) else agents
        self._services: dict[str, object] = {}
        self._owners: dict[str, object] = {}
        self.plugin_manager: pluggy.PluginManager = _PluginManager(self)
        self.plugin_manager.add_hookspecs(hookspecs)
        self._closed = False
        self.plugin_manager.hook.dsh_context_services.call_historic(
            kwargs={"ctx": self}, result_callback=self._add_services
        )
        self.plugin_manager.hook.dsh_context_opened.call_historic(kwargs={"ctx": self})

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

    def load_entrypoints(self, group: str = PROJECT) -> list[str]:
        """Register the plugins installed under the ``group`` entry points; returns their names.

        Registered by pluggy's own loader (``load_setuptools_entrypoints``), so
        ``plugin_manager.list_plugin_distinfo()`` names each one's distribution. Plugins
        blocked or already registered are skipped, including a plugin object already
        registered under another name (``ctx.register(dsh_user_questions.plugin)`` and then
        ``ctx.load_entrypoints()`` registers it once: no error, not returned). User-questions
        providers are chosen by `DSH_USER_QUESTIONS_PROVIDER`: set to an entry-point name, it
        blocks every other provider; unset, two installed providers raise
        ``DUPLICATE_PROVIDER`` naming both, after the other plugins were registered. Unknown
        hook names fail loudly (``check_pending``).
        """
        from importlib import metadata  # slow to import; only needed here

        pm = self.plugin_manager
        candidates = []
        present: list[str] = []
        seen = set()
        for dist in metadata.distributions():
            for ep in dist.entry_points:
                if ep.group != group or ep.name in seen:
                    continue
                seen.add(ep.name)
                if pm.is_blocked(ep.name) or pm.has_plugin(ep.name):
                    continue
                loaded = ep.load()
                if pm.is_registered(loaded):  # registered by hand already, under another name
                    present.append(ep.name)
                    continue
                candidates.append((ep.name, dist, loaded))
        chosen, conflict = select_entrypoint_plugins(candidates, pm)
        wanted = {name for name, _, _ in chosen}
        # pluggy's own loader registers them (and records their distributions for
        # list_plugin_distinfo()); the providers left out, and the plugins registered by
        # hand already, are blocked only meanwhile.
        held = [n for n, _, _ in candidates if n not in wanted and not pm.is_blocked(n)]
        held += present
        for name in held:
            pm.set_blocked(name)
        try:
            pm.load_setuptools_entrypoints(group)
        finally:
            for name in held:
                pm.unblock(name)
        names = [name for name, _, _ in chosen if pm.has_plugin(name)]
        pm.check_pending()
        if conflict is not None:
            raise conflict
        return names

    async def aclose(self, *, grace: float = DEFAULT_GRACE) -> None:
        """Close the context: settle the asks still in flight, then the closing hooks.

        First every service with an ``asettle(grace)`` method settles its work in flight: the
        user-questions service withdraws each pending ask (its caller gets ``ASK_ABORTED``)
        and waits, up to ``grace`` seconds in all, for the providers' own clean-up (a durable
        provider records the question as withdrawn or expired before this returns). Then every
        ``dsh_context_closing`` implementation runs, newest first, then every
        ``dsh_context_closed`` one. Each hook is one pluggy call (arguments matched by name,
        wrappers once around it); awaitables returned are awaited in turn; a failing
        implementation is logged and the rest still run. Plugins stay registered. A second call does
        nothing.
        """
        if self._closed:
            return
        self._closed = True
        seconds = check_seconds(grace, "grace")
        for service in list(self._services.values()):
            settle = getattr(service, "asettle", None)
            if callable(settle):
                try:
                    await settle(seconds)
                except Exception:
                    _log.exception("a service failed to settle its work in flight")
        pm = self.plugin_manager
        await OneByOne(pm, "dsh_context_closing").acall("plugin %s failed to close", ctx=self)
        await OneByOne(pm, "dsh_context_closed").acall("plugin %s failed to close", ctx=self)

    async def __aenter__(self) -> HarnessContext:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

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
