"""The MCP client the conformance suite drives: our `elicitation_callback` over Streamable HTTP.

Run by ``conformance client --command "python elicitation_client.py"``, which appends the
scenario server's URL. The client connects (the handshake era, whose sessions carry the
server's requests), lists the tools and calls each with no arguments; every elicitation the
server sends is asked through ``elicitation_callback(ctx)``, whose provider is a human pressing
Enter on every field: on the option the pointer starts on (the recommended one, which is the
field's default) where there are options, on an empty text (a skip) where there are none.
A field with options (the scenario's enum and boolean) must come with no "Other" for the
human's own words (``allow_other`` false), or the provider fails the elicitation.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp import Client

from dsh_user_questions import AskUserQuestionRequest, plugin
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.mcp import elicitation_callback


class EnterOnEveryField:
    """A provider answering as a human who presses Enter on each field."""

    async def ask(self, request: AskUserQuestionRequest) -> dict[str, Any]:
        answers = []
        for question in request.questions:
            if question.options and question.allow_other:
                raise AssertionError(f"field {question.id!r} offers Other beside its values")
            pointed = [option.label for option in question.options if option.recommended]
            picked = pointed[:1] if pointed and not question.multi_select else []
            answers.append({"id": question.id, "selected": picked})
        return {"answers": answers}


async def main(url: str) -> None:
    async with HarnessContext() as ctx:
        ctx.register(plugin)
        ctx.user_questions.register_provider(EnterOnEveryField())
        callback = elicitation_callback(ctx)
        async with Client(url, mode="legacy", elicitation_callback=callback) as client:
            for tool in (await client.list_tools()).tools:
                result = await client.call_tool(tool.name, {})
                print(tool.name, result.model_dump_json(exclude_none=True), flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[-1])
