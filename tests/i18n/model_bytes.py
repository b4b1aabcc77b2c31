"""Print, as JSON, every byte the model receives: the tool's shapes, answers and errors.

Run by test_model_bytes.py under an English and a Chinese locale; the two outputs must match.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from dsh_user_questions import plugin, tool
from dsh_user_questions._i18n import _
from dsh_user_questions.harness import HarnessContext
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
    )
    ctx = HarnessContext()
    ctx.register(plugin)
    ctx.user_questions.register_provider(script)
    for arguments in [CALL, CALL, *BAD_CALLS]:
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
    print(json.dumps({"skip_shown_as": _("Skip"), "model": seen}, ensure_ascii=False, default=repr))


if __name__ == "__main__":
    main()
