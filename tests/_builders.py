"""Small request builders shared by the tests (a plain module: tests/ is on sys.path)."""

from __future__ import annotations

from dsh_user_questions import (
    AskUserQuestionIntent,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
)


def pkg_question(**changes: object) -> AskUserQuestionItem:
    """A single-select question with two options, id ``pkg``."""
    fields: dict[str, object] = {
        "id": "pkg",
        "question": "Which package manager?",
        "header": "Tooling",
        "options": (
            AskUserQuestionOption("pnpm", "Fast, disk-efficient"),
            AskUserQuestionOption("npm", "The default"),
        ),
    }
    fields.update(changes)
    return AskUserQuestionItem(**fields)  # type: ignore[arg-type]


def plan_question(**changes: object) -> AskUserQuestionItem:
    """A plan-review question: detail, Approve / Keep planning, intent approving Approve."""
    fields: dict[str, object] = {
        "id": "plan-review",
        "question": "Approve this plan?",
        "detail": "# Plan\n\n1. Do it",
        "options": (AskUserQuestionOption("Approve"), AskUserQuestionOption("Keep planning")),
        "intent": AskUserQuestionIntent("plan-review", "Approve"),
    }
    fields.update(changes)
    return AskUserQuestionItem(**fields)  # type: ignore[arg-type]


def request_of(*questions: AskUserQuestionItem, **kwargs: object) -> AskUserQuestionRequest:
    """A request of the given questions (``pkg_question()`` when none)."""
    return AskUserQuestionRequest(questions=questions or (pkg_question(),), **kwargs)  # type: ignore[arg-type]
