"""Requests and answers the tests ask and give, in their wire form."""

from __future__ import annotations

import getpass
from typing import Any

LOGIN = getpass.getuser()
"""The login name ``dsh-inbox answer`` records as ``answered_by`` in these tests."""

PKG = {
    "questions": [
        {
            "id": "pkg",
            "question": "Which package manager?",
            "header": "Package manager",
            "options": [{"label": "pnpm"}, {"label": "npm", "description": "the default"}],
        }
    ]
}


def pick(label: str, question_id: str = "pkg", *, by: str | None = None) -> dict[str, Any]:
    """An answer selecting ``label`` for ``question_id`` (given ``by`` that person, if named)."""
    answer: dict[str, Any] = {"answers": [{"id": question_id, "selected": [label]}]}
    if by is not None:
        answer["answered_by"] = by
    return answer


PKG_OPTIONS_ONLY = {"questions": [{**PKG["questions"][0], "allow_other": False}]}
"""`PKG` with ``allow_other`` false: its options are the only answers."""
