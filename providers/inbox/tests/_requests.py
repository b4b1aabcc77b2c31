"""Requests and answers the tests ask and give, in their wire form."""

from __future__ import annotations

from typing import Any

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


def pick(label: str, question_id: str = "pkg") -> dict[str, Any]:
    """An answer selecting ``label`` for ``question_id``."""
    return {"answers": [{"id": question_id, "selected": [label]}]}


PKG_OPTIONS_ONLY = {"questions": [{**PKG["questions"][0], "allow_other": False}]}
"""`PKG` with ``allow_other`` false: its options are the only answers."""
