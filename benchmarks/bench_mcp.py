"""One structured question through MCP elicitation vs through ask() with a scripted provider.

MCP side: the official ``mcp`` SDK, an in-memory client/server session (JSON-RPC over memory
streams); a server tool elicits the question repeatedly and times each round trip to the
client's elicitation callback, which accepts at once. Our side: ``ask()`` with a
``ScriptedProvider`` answering the same question in wire form. Both check the answer.
"""

# No "from __future__ import annotations": the MCP SDK reads the tool's annotations at run time.
import logging
import time
from collections.abc import Callable
from typing import Any, Literal

from dsh_user_questions import plugin
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import ScriptedProvider

from ._common import QUESTION, REQUEST, WIRE_ANSWER, Figure


async def mcp_seconds_per_elicitation(
    number: int, repeat: int, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Seconds per elicitation round trip; the root logger is left as it was (the SDK's server
    sets it to INFO, which would turn the core's ask log on for every later figure)."""
    return min(await mcp_rounds(number, repeat, clock))


async def mcp_rounds(
    number: int, repeat: int, clock: Callable[[], float] = time.perf_counter
) -> list[float]:
    """Seconds per elicitation round trip in each of ``repeat`` runs of ``number``, like
    `mcp_seconds_per_elicitation` (whose figure is the best of them)."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        return await _elicitations(number, repeat, clock)
    finally:
        root.setLevel(level)
        root.handlers[:] = handlers


async def _elicitations(number: int, repeat: int, clock: Callable[[], float]) -> list[float]:
    from mcp import Client, types
    from mcp.server.mcpserver import Context, MCPServer
    from pydantic import BaseModel, Field

    logging.getLogger("mcp").setLevel(logging.WARNING)

    class PackageManager(BaseModel):
        pkg: Literal["pnpm", "npm", "yarn"] = Field(
            title=QUESTION.header, description=QUESTION.question
        )

    server = MCPServer("bench")

    @server.tool()
    async def elicit_many(n: int, ctx: Context) -> float:  # type: ignore[type-arg]
        started = clock()
        for _ in range(n):
            result = await ctx.elicit(QUESTION.question, PackageManager)
            assert result.action == "accept", result
            assert result.data.pkg == "pnpm", result
        return (clock() - started) / n

    async def accept(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"pkg": "pnpm"})

    rounds: list[float] = []
    async with Client(server, mode="legacy", elicitation_callback=accept) as client:
        await client.call_tool("elicit_many", {"n": max(1, number // 10)})  # warm up
        for _ in range(repeat):
            result = await client.call_tool("elicit_many", {"n": number})
            assert not result.is_error, result
            rounds.append(float(result.structured_content["result"]))  # type: ignore[index]
    return rounds


async def _ask_seconds_per_question(number: int, repeat: int) -> float:
    ctx = HarnessContext()
    ctx.register(plugin)
    provider = ScriptedProvider()
    ctx.user_questions.register_provider(provider)
    ask = ctx.user_questions.ask
    best = float("inf")
    for _ in range(repeat + 1):  # the first run warms up
        provider.push(*[WIRE_ANSWER] * number)
        provider.requests.clear()
        started = time.perf_counter()
        for _ in range(number):
            answer = await ask(REQUEST)
        best = min(best, (time.perf_counter() - started) / number)
        assert answer.answers[0].selected == ("pnpm",)
    return best


async def run(quick: bool) -> list[Figure]:
    number, repeat = (300, 3) if quick else (2_000, 5)
    mcp = await mcp_seconds_per_elicitation(number, repeat) * 1e6
    ours = await _ask_seconds_per_question(number, repeat) * 1e6
    return [
        Figure(
            name="ask(), ScriptedProvider, one question",
            value=ours,
            unit="us",
            baseline_name="MCP elicitation, in-memory session",
            baseline=mcp,
            note="lower is better; the ratio is ask() time over the MCP round trip",
        )
    ]
