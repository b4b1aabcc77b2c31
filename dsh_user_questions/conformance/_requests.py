"""The questions the suite asks: short, distinct question texts a driver can find on a screen."""

from __future__ import annotations

from ..payloads import AskUserQuestionItem, AskUserQuestionOption, AskUserQuestionRequest
from ..plan_review import plan_review_question

__all__ = ["CHECKS", "COLOUR", "FRUIT", "NAME", "PKG", "PLAN", "PLAN_REVIEW", "TYPED", "request"]

PKG = AskUserQuestionItem(
    id="pkg",
    header="Package manager",
    question="Which package manager?",
    detail="The repository has no lockfile yet.",
    options=(
        AskUserQuestionOption("pnpm", description="Fast, disk-efficient"),
        AskUserQuestionOption("npm", description="Ships with Node.js"),
        AskUserQuestionOption("yarn"),
    ),
)
CHECKS = AskUserQuestionItem(
    id="checks",
    header="CI checks",
    question="Which checks should CI run?",
    options=(
        AskUserQuestionOption("lint"),
        AskUserQuestionOption("types", description="mypy --strict"),
        AskUserQuestionOption("tests"),
    ),
    multi_select=True,
)
NAME = AskUserQuestionItem(
    id="name", header="Project name", question="What should the project be called?"
)
COLOUR = AskUserQuestionItem(
    id="colour",
    question="Which colour for the logo?",
    options=(AskUserQuestionOption("red"), AskUserQuestionOption("blue")),
)
FRUIT = AskUserQuestionItem(
    id="fruit",
    question="Which fruit for the mascot?",
    options=(AskUserQuestionOption("apple"), AskUserQuestionOption("pear")),
)
PLAN = "# Ship the parser\n\n1. Write the grammar\n2. Test it on the corpus\n"
PLAN_REVIEW = plan_review_question(PLAN)
TYPED = "Bun, über schnell: 速い"
"""Text the human types: non-ASCII and wide characters must come back unchanged."""


def request(*questions: AskUserQuestionItem, **fields: object) -> AskUserQuestionRequest:
    """A request of ``questions``."""
    return AskUserQuestionRequest(questions=questions, **fields)  # type: ignore[arg-type]
