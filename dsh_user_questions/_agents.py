"""The agent registry: which agents are live, and which of them talk to the human.

Re-exported by `dsh_user_questions.harness`, the one public path to these names.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["Agent", "AgentRegistry", "SupportsAgentRegistry"]


class SupportsAgentRegistry(Protocol):
    """What the service needs of a harness's agent registry: ``get`` and ``roots``.

    A registry may also offer ``is_root(agent) -> bool`` (as `AgentRegistry` does): the
    service then asks it instead of scanning ``roots()``, which costs one look-up per ask
    instead of one per live agent.
    """

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
    another agent and stays owned even after that owner detaches. Thread-safe.
    """

    def __init__(self) -> None:
        # id -> (agent, owned); a dict keeps the order in which agents entered.
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

    def is_root(self, agent: object, /) -> bool:
        """Whether ``agent`` is live here (this very object) and owned by no other agent."""
        agent_id = getattr(agent, "id", None)
        if not isinstance(agent_id, str):
            return False
        entry = self._live.get(agent_id)
        return entry is not None and entry[0] is agent and not entry[1]

    def roots(self) -> list[Any]:
        """The live agents that no other agent owns, in the order they entered."""
        return [agent for agent, owned in list(self._live.values()) if not owned]
