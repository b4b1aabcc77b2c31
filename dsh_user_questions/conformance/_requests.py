"""The questions the suite asks: short, distinct question texts a driver can find on a screen.

Built with the testing kit's builders, so they are the requests every other test asks too.
"""

from __future__ import annotations

from ..payloads import AskUserQuestionOption
from ..testing import make_plan_question, make_question, make_request

__all__ = ["CHECKS", "COLOUR", "FRUIT", "NAME", "PKG", "PLAN", "PLAN_REVIEW", "TYPED", "request"]

PKG = make_question(
    header="Package manager",
    detail="The repository has no lockfile yet.",
    options=(
        AskUserQuestionOption("pnpm", description="Fast, disk-efficient"),
        AskUserQuestionOption("npm", description="Ships with Node.js"),
        AskUserQuestionOption("yarn"),
    ),
)
CHECKS = make_question(
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
NAME = make_question(
    id="name", header="Project name", question="What should the project be called?", options=()
)
COLOUR = make_question(
    id="colour",
    header=None,
    question="Which colour for the logo?",
    options=(AskUserQuestionOption("red"), AskUserQuestionOption("blue")),
)
FRUIT = make_question(
    id="fruit",
    header=None,
    question="Which fruit for the mascot?",
    options=(AskUserQuestionOption("apple"), AskUserQuestionOption("pear")),
)
PLAN = "# Ship the parser\n\n1. Write the grammar\n2. Test it on the corpus\n"
PLAN_REVIEW = make_plan_question(PLAN)
TYPED = "Bun, über schnell: 速い"
"""Text the human types: non-ASCII and wide characters must come back unchanged."""

request = make_request
