"""What the human does with one question, as the suite tells a driver to do it.

Each reply also says which answer item the provider must hand back for it, so the suite can
compare what the human did with what the caller got.
"""

from __future__ import annotations

from typing import TypeAlias

import attrs

from .._payloads import AskUserQuestionAnswerItem, AskUserQuestionItem
from ..rules import is_plan_review

__all__ = [
    "Approve",
    "Attach",
    "Choose",
    "Enter",
    "KeepPlanning",
    "Other",
    "Reply",
    "Skip",
    "TalkInstead",
]


@attrs.frozen(init=False)
class Choose:
    """Pick these options (exactly one on a single-select) and confirm."""

    labels: tuple[str, ...]

    def __init__(self, *labels: str) -> None:
        self.__attrs_init__(labels)


@attrs.frozen(init=False)
class Other:
    """Type your own answer: the "Other" text, or the answer to a question without options.

    On a multi-select, ``labels`` are checked beside the text.
    """

    text: str
    labels: tuple[str, ...]

    def __init__(self, text: str, *labels: str) -> None:
        self.__attrs_init__(text, labels)


@attrs.frozen
class Enter:
    """Give a typed question (one with ``input``) this value and confirm: a number, an ISO
    date, time or date-time string (a date-time with its offset), or a tuple of the relative
    paths to pick among a files question's candidates."""

    value: int | float | str | tuple[str, ...]


@attrs.frozen
class Attach:
    """On an upload question: attach the local file at ``path`` and confirm."""

    path: str


@attrs.frozen
class Skip:
    """Leave the question unanswered with the UI's skip control."""


@attrs.frozen
class Approve:
    """On a plan review: approve the plan."""


@attrs.frozen
class KeepPlanning:
    """On a plan review: keep planning, with ``feedback`` for the model or none."""

    feedback: str | None = None


@attrs.frozen
class TalkInstead:
    """On a plan review: close the card to talk about the plan (the ask is cancelled)."""


Reply: TypeAlias = Choose | Other | Skip | Approve | KeepPlanning | TalkInstead | Enter | Attach


def expected_item(question: AskUserQuestionItem, reply: Reply) -> AskUserQuestionAnswerItem:
    """The answer item a provider must return when the human gives ``reply`` to ``question``."""
    if isinstance(reply, Choose):
        return AskUserQuestionAnswerItem(id=question.id, selected=reply.labels)
    if isinstance(reply, Other):
        return AskUserQuestionAnswerItem(id=question.id, selected=reply.labels, custom=reply.text)
    if isinstance(reply, Skip):
        return AskUserQuestionAnswerItem(id=question.id)
    if isinstance(reply, Enter):
        return AskUserQuestionAnswerItem(id=question.id, value=reply.value)
    if isinstance(reply, Attach):
        raise ValueError(f"{reply!r} gives an upload whose path the provider chooses")
    if question.intent is None or not is_plan_review(question):
        raise ValueError(f"{reply!r} is a plan-review reply, but {question.id!r} is no plan review")
    if isinstance(reply, Approve):
        return AskUserQuestionAnswerItem(id=question.id, selected=(question.intent.approve,))
    if isinstance(reply, KeepPlanning):
        if reply.feedback is not None:
            return AskUserQuestionAnswerItem(id=question.id, custom=reply.feedback)
        others = [o.label for o in question.options if o.label != question.intent.approve]
        return AskUserQuestionAnswerItem(id=question.id, selected=tuple(others[:1]))
    raise ValueError(f"{reply!r} cancels the ask; it has no answer item")
