"""The minimal host seam: a harness context, an agent registry and abort signals.

No Python harness of this family exists, so the package ships the few parts it needs. A real
harness can adopt them or supply its own: the service relies only on ``ctx.plugin_manager``,
``ctx.agents.get(id)`` and ``ctx.agents.roots()`` (or ``ctx.agents.is_root(agent)`` when the
registry has it), and on the `AbortSignal` interface.

This module is the public path to three concepts, each in a private module of its own: abort
signals (``_abort``), the agent registry (``_agents``) and the context (``_context``).
"""

from __future__ import annotations

from ._abort import AbortController, AbortError, AbortSignal
from ._agents import Agent, AgentRegistry
from ._context import HarnessContext

__all__ = [
    "AbortController",
    "AbortError",
    "AbortSignal",
    "Agent",
    "AgentRegistry",
    "HarnessContext",
]
