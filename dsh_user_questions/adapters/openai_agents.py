"""``ask_user_question`` as an OpenAI Agents SDK `FunctionTool`.

One line: ``Agent(name=..., tools=[ask_user_question_tool(ctx)])``, or leave ``ctx`` out and
run with the harness context as the run context (``Runner.run(agent, input, context=ctx)``, or
a context holding it as ``.harness``, with optional ``.agent`` and ``.signal``).

Strictness: by default the tool is strict (``strict_json_schema=True``, as the SDK
recommends) with the tool's strict-mode schema, ``tool.input_schema(strict=True)``: every
property required, optional ones nullable, and only the keywords strict mode supports; the
nulls the model then sends for optional properties mean "left out". ``strict=False`` gives the
published schema (with its length limits) undeclared-strict instead, for models without strict
mode. Either way the tool validates the arguments itself, with the full rules: a call that
breaks them gets ``Error: invalid arguments: ...`` with every problem back as its output, and
the model calls again (the SDK has no retry signal of its own; the tool's description tells the
model to fix the problems and call again). Cancelling the run's task (or a streamed run's
``cancel()``) cancels the pending ask.
"""

from __future__ import annotations

from typing import Any

from .. import tool
from ._common import context_of, missing_framework

try:
    from agents import FunctionTool, RunContextWrapper
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise missing_framework("openai_agents", "openai-agents", err) from err

__all__ = ["ask_user_question_tool"]

_HOW = "run with Runner.run(agent, input, context=ctx) (or a context that has it as .harness)"


def ask_user_question_tool(
    ctx: Any | None = None,
    *,
    agent: object | None = None,
    signal: Any | None = None,
    strict: bool = True,
) -> FunctionTool:
    """The ``ask_user_question`` tool for an Agents SDK ``Agent``.

    ``ctx`` is the harness context; ``None`` takes it from the run context. ``agent`` and
    ``signal`` go into every ask (``None`` takes ``.agent`` / ``.signal`` of the run context
    when it has them). ``strict`` chooses OpenAI's strict mode and its schema variant.
    """

    async def invoke(run: RunContextWrapper[Any], arguments: str) -> str:
        given = run.context
        harness = ctx if ctx is not None else context_of(given, _HOW)
        result = await tool.run(
            harness,
            arguments,
            agent=agent if agent is not None else getattr(given, "agent", None),
            signal=signal if signal is not None else getattr(given, "signal", None),
        )
        return result.content

    return FunctionTool(
        name=tool.NAME,
        description=tool.DESCRIPTION,
        params_json_schema=tool.input_schema(strict=strict),
        on_invoke_tool=invoke,
        strict_json_schema=strict,
    )
