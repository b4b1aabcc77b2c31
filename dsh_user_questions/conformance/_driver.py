"""The driver: the one provider-specific part of the conformance suite."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..payloads import AskUserQuestionRequest
from ._replies import Reply

__all__ = ["ProviderDriver"]


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
