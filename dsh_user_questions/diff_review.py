"""Diff review: the human's consent before a change (a unified diff) is applied.

`diff_review_question` turns a unified diff into the one question a provider shows as a diff
card (intent ``diff-review``: file headers, hunks, added and removed lines) with **Apply** and
**Don't apply**; a UI that does not know the intent shows the diff as the question's detail.
`read_diff_review` reads the answer; `review_diff` does both around an ask and tells the three
outcomes apart: applied, not applied (with the human's feedback, if any), or talk instead.
It shares its reading and asking with `dsh_user_questions.plan_review`.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

import attrs

from ._i18n import N_
from ._payloads import AskUserQuestionAnswer, AskUserQuestionItem, AskUserQuestionOption
from ._review import Asks, Review, ReviewOutcome
from .rules import DIFF_REVIEW_INTENT

if TYPE_CHECKING:
    from .harness import AbortSignal

__all__ = [
    "DiffReviewDecision",
    "DiffReviewOutcome",
    "diff_review_question",
    "read_diff_review",
    "review_diff",
]

DIFF_REVIEW_ID: Final = "diff-review"
APPLY: Final = N_("Apply")
DONT_APPLY: Final = N_("Don't apply")

_HEADER = N_("Diff review")
_QUESTION = N_("Apply this change?")
_APPLY_DESCRIPTION = N_("Apply the change exactly as shown.")
_DONT_APPLY_DESCRIPTION = N_("Leave everything as it is; your feedback goes back to the model.")
_NOT_A_DIFF = (
    'a diff must be a non-empty unified diff: a "--- " line, then a "+++ " line, then at least'
    ' one hunk header "@@ -l,n +l,n @@"'
)
_HUNK = re.compile(r"@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


class DiffReviewDecision(str, enum.Enum):
    """What the human decided about a change."""

    APPLY = "apply"
    """Apply the change as shown."""
    DONT_APPLY = "dont-apply"
    """Leave it unapplied; ``feedback`` says what to change, if the human wrote anything."""
    TALK_INSTEAD = "talk-instead"
    """The human closed the question (the provider's ``ASK_CANCELLED``): apply nothing, stop
    and wait for their next message."""

    __str__ = str.__str__  # the value, as the str it is


@attrs.frozen
class DiffReviewOutcome(ReviewOutcome):
    """The human's verdict on a change.

    ``approved`` is true only when the human chose Apply (then apply the change);
    ``feedback`` is the human's own words when they did not; ``talk_instead`` is true when they
    closed the question to talk instead. ``decision`` names which of the three it is.
    """

    @property
    def decision(self) -> DiffReviewDecision:
        """Apply, don't apply, or talk instead."""
        return self._decide(
            DiffReviewDecision.APPLY, DiffReviewDecision.DONT_APPLY, DiffReviewDecision.TALK_INSTEAD
        )


_DIFF_REVIEW = Review(
    question_id=DIFF_REVIEW_ID,
    header=_HEADER,
    kind=DIFF_REVIEW_INTENT,
    approve=AskUserQuestionOption(APPLY, _APPLY_DESCRIPTION),
    reject=AskUserQuestionOption(DONT_APPLY, _DONT_APPLY_DESCRIPTION),
    outcome=DiffReviewOutcome,
)


def check_diff(diff: str) -> None:
    """Raise `ValueError` unless ``diff`` is a non-empty unified diff.

    That is: some line starts ``--- ``, the next line starts ``+++ ``, and a hunk header
    ``@@ -l[,n] +l[,n] @@`` follows. The message says which part is missing.
    """
    if not isinstance(diff, str):
        raise TypeError(f"diff must be a str, got {type(diff).__name__}")
    lines = diff.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("--- ") and index + 1 < len(lines):
            if not lines[index + 1].startswith("+++ "):
                continue
            if any(_HUNK.match(later) for later in lines[index + 2 :]):
                return
            raise ValueError(f'{_NOT_A_DIFF} (no hunk header after the "+++ " line)')
    if not diff.strip():
        raise ValueError(f"{_NOT_A_DIFF} (the diff is empty)")
    raise ValueError(f'{_NOT_A_DIFF} (no "--- " line followed by a "+++ " line)')


def diff_review_question(diff: str, title: str | None = None) -> AskUserQuestionItem:
    """The question asking the human whether to apply ``diff`` (a unified diff).

    id ``diff-review``, header ``Diff review``, question ``Apply this change?`` (``Apply this
    change to <title>?`` with a ``title``, e.g. the file's name), detail = the diff as given,
    options ``Apply`` and ``Don't apply``, intent ``diff-review`` approving ``Apply``. A diff
    that is not a unified diff is a `ValueError` saying what is missing (see `check_diff`).
    """
    check_diff(diff)
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a str or None, got {type(title).__name__}")
    question = _QUESTION if not title else f"Apply this change to {title}?"
    return _DIFF_REVIEW.question(question, diff)


def read_diff_review(answer: AskUserQuestionAnswer) -> DiffReviewOutcome:
    """The verdict in ``answer`` to the `diff_review_question`.

    Applied only when the answer has exactly one ``diff-review`` item, whose ``selected`` is
    exactly ``("Apply",)`` and which has no custom text. Anything else (a skip included) is not
    applied, with the custom text of the (first) ``diff-review`` item as feedback.
    """
    return _DIFF_REVIEW.read(answer)


async def review_diff(
    service: Asks,
    diff: str,
    *,
    title: str | None = None,
    agent: object | None = None,
    signal: AbortSignal | None = None,
    audience: Iterable[str] = (),
    approvals: int = 1,
) -> DiffReviewOutcome:
    """Ask the human whether to apply ``diff`` through ``service`` (``ctx.user_questions``).

    ``audience`` (person ids and ``group:NAME``) is who may answer; ``approvals`` how many
    distinct people of it must approve before it is applied (the first who does not settles
    it at once; docs/team.md). The provider's ``ASK_CANCELLED`` becomes the talk-instead
    outcome; every other error (``ASK_ABORTED``, ``NO_PROVIDER``, ``BAD_INTENT`` for
    ``approvals`` the audience cannot give, a bad diff's `ValueError`, ...) propagates
    unchanged.
    """
    question = diff_review_question(diff, title)
    return await _DIFF_REVIEW.ask(
        service, question, agent=agent, signal=signal, audience=audience, approvals=approvals
    )
