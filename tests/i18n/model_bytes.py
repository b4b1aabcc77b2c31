"""Print, as JSON, every byte the model receives: the tool's shapes, answers and errors.

Run by test_model_bytes.py under an English and a Chinese locale; the two outputs must match.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from dsh_user_questions import AskUserQuestionRequest, UserQuestionError, plugin, tool
from dsh_user_questions._i18n import _
from dsh_user_questions._problems import shown_problem
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.rules import check_answer
from dsh_user_questions.testing import ScriptedProvider

CALL = {
    "questions": [
        {
            "id": "pkg",
            "header": "Tooling",
            "question": "Which package manager?",
            "options": [{"label": "pnpm"}, {"label": "npm"}],
        },
        {"id": "name", "question": "Project name?"},
    ]
}
TYPED = {
    "questions": [
        {"id": "n", "question": "How many?", "input": {"type": "number", "min": 1, "max": 9}},
        {"id": "d", "question": "When?", "input": {"type": "date"}},
        {"id": "f", "question": "Which?", "input": {"type": "files", "candidates": ["a.md"]}},
    ]
}
# An answer breaking a rule of each kind: its problems have Chinese translations for a person.
BAD_TYPED_ANSWER = {
    "answers": [
        {"id": "n", "value": 12},
        {"id": "d", "value": "2026-13-01"},
        {"id": "f", "value": ["../b.md"]},
    ]
}
# What the model may call with (its schema has no candidates): the number and the date.
TYPED_CALL = {"questions": TYPED["questions"][:2]}
BAD_CALLS: list[Any] = [
    {"questions": [{"id": "a", "question": "Q?", "options": [{"label": "其他"}, {"label": "B"}]}]},
    {"questions": [{"id": "a", "question": "Q?", "options": [{"label": "Skip"}, {"label": "B"}]}]},
    {"questions": []},
    "not json",
]


async def results() -> list[Any]:
    out: list[Any] = []
    script = ScriptedProvider(
        {"answers": [{"id": "pkg", "selected": ["npm"]}, {"id": "name", "custom": "demo"}]},
        {"answers": [{"id": "pkg", "selected": ["yarn"]}]},
        {"answers": BAD_TYPED_ANSWER["answers"][:2]},
    )
    ctx = HarnessContext()
    ctx.register(plugin)
    ctx.user_questions.register_provider(script)
    for arguments in [CALL, CALL, TYPED_CALL, *BAD_CALLS]:
        result = await tool.run(ctx, arguments)
        out.append([result.content, result.is_error, result.error])
    await ctx.aclose()
    return out


def main() -> None:
    shapes = {
        "description": tool.DESCRIPTION,
        "schema": tool.input_schema(),
        "strict": tool.input_schema(strict=True),
        "openai": tool.openai_tool(),
        "responses": tool.openai_responses_tool(),
        "anthropic": tool.anthropic_tool(),
        "gemini": tool.gemini_tool(),
        "mcp": tool.mcp_tool(),
    }
    seen = {"shapes": shapes, "results": asyncio.run(results())}
    try:
        check_answer(AskUserQuestionRequest.from_dict(TYPED), BAD_TYPED_ANSWER)
    except UserQuestionError as error:  # what a person reads of the same problems
        problems = [shown_problem(problem) for problem in error.problems]
        seen["error"] = [error.message, list(error.problems), str(error)]
    said = {"skip_shown_as": _("Skip"), "problems_shown_as": problems, "model": seen}
    print(json.dumps(said, ensure_ascii=False, default=repr))


if __name__ == "__main__":
    main()
