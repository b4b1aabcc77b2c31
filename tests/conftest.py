"""Shared test helpers: hypothesis profiles and small request builders.

The fixtures ``dsh_context``, ``user_questions`` and ``scripted_provider`` come from the
package's own pytest plugin (``dsh_user_questions.pytest_plugin``), as they would for a user.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from dsh_user_questions import (
    AskUserQuestionIntent,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
)

settings.register_profile("default", max_examples=200, deadline=None)
settings.register_profile("ci", max_examples=300, deadline=None)
settings.register_profile(
    "fuzz",
    max_examples=100_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


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
