"""tool.run() end to end (JSON arguments in, answer text out) for a 3-question call."""

from __future__ import annotations

import inspect
import json

import pluggy

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    hookspecs,
    plugin,
    tool,
)
from dsh_user_questions._tool_schema import MAX_SHAPE_CHARS
from dsh_user_questions.harness import HarnessContext

from ._common import REQUEST, Figure, InstantProvider, best_per_call

TARGET_US = 50.0

ARGUMENTS = json.dumps(
    {
        "questions": [
            {
                "id": "pkg",
                "header": "Tooling",
                "question": "Which package manager should the project use?",
                "options": [
                    {"label": "pnpm", "description": "Fast, strict, disk-efficient"},
                    {"label": "npm", "description": "Ships with Node.js"},
                    {"label": "yarn", "description": "Plug'n'Play installs"},
                ],
            },
            {
                "id": "features",
                "header": "Features",
                "question": "Which features should the scaffold include?",
                "options": [
                    {"label": "TypeScript"},
                    {"label": "ESLint"},
                    {"label": "Vitest", "description": "Unit tests"},
                ],
                "multi_select": True,
            },
            {"id": "name", "question": "What should the project be called?"},
        ]
    }
)
ANSWER = AskUserQuestionAnswer(
    [
        AskUserQuestionAnswerItem(id="pkg", selected=["pnpm"]),
        AskUserQuestionAnswerItem(id="features", selected=["TypeScript", "Vitest"]),
        AskUserQuestionAnswerItem(id="name", custom="my-app"),
    ]
)
EXPECTED = (
    '{"answers":[{"id":"pkg","selected":["pnpm"]},'
    '{"id":"features","selected":["TypeScript","Vitest"]},'
    '{"id":"name","selected":[],"custom":"my-app"}]}'
)


async def run(quick: bool) -> list[Figure]:
    number, repeat = (5_000, 5) if quick else (20_000, 9)
    ctx = HarnessContext()
    ctx.register(plugin)
    ctx.register(InstantProvider(ANSWER), name="instant")
    result = await tool.run(ctx, ARGUMENTS)
    assert result.content == EXPECTED, result
    assert not result.is_error, result

    # The baseline: the JSON in and out and the provider through a bare hook call, without
    # validation, payloads or the service.
    pm = pluggy.PluginManager("dsh")
    pm.add_hookspecs(hookspecs)
    pm.register(InstantProvider(ANSWER))
    hook = pm.hook.dsh_user_questions_ask

    async def bare(n: int) -> None:
        for _ in range(n):
            json.loads(ARGUMENTS)
            answer = hook(request=REQUEST)
            if inspect.isawaitable(answer):
                answer = await answer
            json.dumps(answer.to_dict(), ensure_ascii=False, separators=(",", ":"))

    async def running(n: int) -> None:
        for _ in range(n):
            await tool.run(ctx, ARGUMENTS)

    per_call = await best_per_call({"bare": bare, "run": running}, number, repeat)
    value = per_call["run"] * 1e6
    return [
        _largest_shape(),
        Figure(
            name="tool.run(), 3 questions",
            value=value,
            unit="us",
            baseline_name="json.loads + bare hook + json.dumps",
            baseline=per_call["bare"] * 1e6,
            target=f"< {TARGET_US:g} µs",
            met=value < TARGET_US,
        ),
    ]


def _largest_shape() -> Figure:
    """The size of the largest tool shape against its budget, and the headroom left."""
    shapes = {
        "openai_tool": tool.openai_tool(),
        "openai_tool(strict=True)": tool.openai_tool(strict=True),
        "openai_responses_tool(strict=True)": tool.openai_responses_tool(strict=True),
        "anthropic_tool": tool.anthropic_tool(),
        "gemini_tool": tool.gemini_tool(),
        "mcp_tool": tool.mcp_tool(),
    }
    sizes = {name: len(json.dumps(shape, separators=(",", ":"))) for name, shape in shapes.items()}
    name = max(sizes, key=sizes.__getitem__)
    return Figure(
        name=f"largest tool shape ({name}), compact JSON",
        value=sizes[name],
        unit="chars",
        baseline_name="-",
        baseline=None,
        target=f"<= {MAX_SHAPE_CHARS}",
        met=sizes[name] <= MAX_SHAPE_CHARS,
        note=f"{MAX_SHAPE_CHARS - sizes[name]} characters of headroom",
    )
