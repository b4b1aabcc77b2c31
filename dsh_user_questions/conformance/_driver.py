"""The driver: the one provider-specific part of the conformance suite.

Besides the three methods of `ProviderDriver`, a driver may have two more, which the suite uses
when they are there (see `ReceiptDriver` and `StoreDriver`):

- ``async def receipt(self, request) -> bool | None``: what the surface told the human about
  the answer they gave to ``request``: ``True`` if it said the answer was taken ("Answer sent",
  "accepted", an ``applied`` result), ``False`` if it said it was not delivered, ``None`` if it
  said nothing (yet). The receipt check fails without it (a surface that never confirms an
  answer returns ``None``).
- ``async def stored(self) -> str``: everything the provider keeps at rest (a database file, a
  log file, a scrollback record), as text (decode bytes as latin-1). Without it the suite checks
  only the screen and the log records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .._payloads import AskUserQuestionRequest
from ._replies import Reply

__all__ = ["ProviderDriver", "ReceiptDriver", "StoreDriver"]


class ProviderDriver(Protocol):
    """Plays the human in front of a provider's UI: reads the screen, answers, closes.

    The suite only calls `reply` and `cancel` once the request's questions are on `screen`.
    Every method may take its time (a UI is slow); the suite waits up to
    `ProviderConformance.timeout` seconds for anything to show up or go away.
    """

    async def screen(self) -> str:
        """Everything the human sees of the provider now, as text; ``""`` when nothing.

        Return what the human's display shows after it acted on what the provider sent (for a
        terminal: the emulated screen), so a live escape sequence or markup would be missing
        from it while inert text shows as characters.
        """
        ...

    async def reply(self, request: AskUserQuestionRequest, replies: Sequence[Reply]) -> None:
        """Answer ``request`` as the human: one reply per question, in order, then submit."""
        ...

    async def cancel(self, request: AskUserQuestionRequest) -> None:
        """Close ``request`` as the human would (Esc, a close button): ``ASK_CANCELLED``."""
        ...


class ReceiptDriver(Protocol):
    """A driver that can tell what the surface said about an answer (optional)."""

    async def receipt(self, request: AskUserQuestionRequest) -> bool | None:
        """``True``: it said "taken"; ``False``: "not delivered"; ``None``: nothing (yet)."""
        ...


class StoreDriver(Protocol):
    """A driver that can show what the provider keeps at rest (optional)."""

    async def stored(self) -> str:
        """Everything the provider keeps at rest, as text (bytes decoded as latin-1)."""
        ...
