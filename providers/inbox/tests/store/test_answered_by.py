"""Who answered, in the store on both engines: ``Inbox.answer(..., by=...)`` and
``QuestionRecord.answered_by`` (the CLI's login name: tests/surfaces/test_cli.py)."""

from __future__ import annotations

import pytest
from _requests import PKG, pick

from dsh_user_questions_inbox import Inbox


def test_by_is_recorded_with_the_answer(inbox: Inbox) -> None:
    """The applied answer names its person; the record and its JSON say who."""
    record = inbox.add(PKG, harness="h")
    assert inbox.answer(record.id, pick("npm"), surface="code", by="ana").applied
    stored = inbox.get(record.id)
    assert stored is not None
    assert stored.answered_by == "ana"
    assert stored.answer == pick("npm", by="ana")
    assert stored.to_answer().answered_by == "ana"  # type: ignore[union-attr]
    assert stored.to_dict()["answered_by"] == "ana"


def test_by_wins_over_the_answers_own_name(inbox: Inbox) -> None:
    """A surface that knows who answered records that person, whatever the answer claims."""
    record = inbox.add(PKG, harness="h")
    inbox.answer(record.id, pick("npm", by="mallory"), surface="web", by="ana")
    assert inbox.get(record.id).answered_by == "ana"  # type: ignore[union-attr]


def test_without_by_nobody_is_named(inbox: Inbox) -> None:
    """Code that names nobody records nobody (an unanswered record names nobody either)."""
    record = inbox.add(PKG, harness="h")
    assert inbox.get(record.id).answered_by is None  # type: ignore[union-attr]
    inbox.answer(record.id, pick("npm"), surface="code")
    assert inbox.get(record.id).answered_by is None  # type: ignore[union-attr]


@pytest.mark.parametrize("bad", ["", "   "])
def test_an_empty_name_is_refused_and_nothing_stored(inbox: Inbox, bad: str) -> None:
    """``by`` must name someone: refused before anything is written."""
    record = inbox.add(PKG, harness="h")
    with pytest.raises(ValueError, match=r"Inbox.answer\(by=...\) must be a non-empty name"):
        inbox.answer(record.id, pick("npm"), surface="code", by=bad)
    assert inbox.get(record.id).answer is None  # type: ignore[union-attr]
