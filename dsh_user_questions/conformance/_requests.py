"""The questions the suite asks: short, distinct question texts a driver can find on a screen.

Built with the testing kit's builders, so they are the requests every other test asks too.
"""

from __future__ import annotations

from .._payloads import AskUserQuestionInput, AskUserQuestionOption
from ..rules import MAX_CUSTOM_CHARS
from ..testing import make_plan_question, make_question, make_request

__all__ = [
    "ALLOWED",
    "CHECKS",
    "COLOUR",
    "FRUIT",
    "INPUTS",
    "NAME",
    "OPTIONS_ONLY",
    "PKG",
    "PLAN",
    "PLAN_REVIEW",
    "RECOMMENDED",
    "REFUSED",
    "SECRET",
    "SECRET_TEXT",
    "TYPED",
    "request",
]

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

ALLOWED = "\u05e9\u05dc\u05d5\u05dd\u200f, na\u00efve caf\u00e9 \u2013 ok"
"""Text every answer rule allows (Hebrew with a right-to-left mark, accents, a dash): a provider
must hand it back exactly, not refuse or change it."""

REFUSED = {
    "control characters": "clear \x1b[2J\x1b]0;pwned\x07 done",
    "bidi controls": "run \u202etxt.exe\u202c now",
    "over-long text": "x" * (MAX_CUSTOM_CHARS + 1),
}
"""Custom text `rules.check_answer` refuses, by rule: never an answer on any surface."""

RECOMMENDED = make_question(
    id="runtime",
    header="Runtime",
    question="Which runtime should the service use?",
    options=(
        AskUserQuestionOption("node", description="The team knows it", recommended=True),
        AskUserQuestionOption("deno"),
        AskUserQuestionOption("bun"),
    ),
)
"""A single-select with a recommended option: shown as such, never picked for the human."""

SECRET_TEXT = "tok_9f2c-Secret-77Qz"
SECRET = make_question(
    id="token",
    header="Registry token",
    question="Paste the registry token for the deploy?",
    options=(),
    secret=True,
)
"""A secret question: its answer reaches the asker and nothing else the provider shows or keeps."""

OPTIONS_ONLY = make_question(
    id="licence",
    header="Licence",
    question="Which licence should the project use?",
    options=(AskUserQuestionOption("MIT"), AskUserQuestionOption("Apache-2.0")),
    allow_other=False,
)
"""A single-select with ``allow_other`` false: its options are the only answers (no "Other")."""

INPUTS = {
    "number": make_question(
        id="disk",
        header="Disk",
        question="How large a disk should the server get?",
        options=(),
        input=AskUserQuestionInput(type="number", min=8, max=512, step=8, unit="GB"),
    ),
    "date": make_question(
        id="launch",
        header="Launch",
        question="On which day should it launch?",
        options=(),
        input=AskUserQuestionInput(type="date"),
    ),
    "time": make_question(
        id="standup",
        header="Stand-up",
        question="At what time is the stand-up?",
        options=(),
        input=AskUserQuestionInput(type="time"),
    ),
    "datetime": make_question(
        id="freeze",
        header="Freeze",
        question="When does the code freeze start?",
        options=(),
        input=AskUserQuestionInput(type="datetime"),
    ),
}
"""A typed question of each type that needs no files, by type."""

request = make_request
