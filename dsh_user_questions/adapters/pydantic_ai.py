"""``ask_user_question`` as a pydantic-ai `Tool`.

One line: ``Agent(model, tools=[ask_user_question_tool(ctx)])``, or leave ``ctx`` out and run
the agent with the harness context as its deps (``deps=ctx``, or deps holding it as
``deps.harness``, with optional ``deps.agent`` and ``deps.signal``).

The tool's own JSON Schema is given to the model and checked by the tool (pydantic-ai does not
re-validate it); arguments that break it raise `ModelRetry` with every problem, so the model
corrects itself within the tool's retry budget (pydantic-ai's ``max_retries``, 1 by default).
Every other outcome is the tool's result text: the answer JSON, or ``Error: <message>`` (for
instance ``ASK_CANCELLED``), which the tool's description tells the model how to read.
Cancelling the run (``CancellationToken``, ``AgentRun.cancel()``, or cancelling the task)
cancels the pending ask.
"""

from __future__ import annotations

from typing import Any

from .. import tool
from ._common import context_of, is_invalid_arguments, missing_framework

try:
    from pydantic_ai import ModelRetry, RunContext, Tool
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise missing_framework("pydantic_ai", "pydantic-ai", err) from err

__all__ = ["ask_user_question_tool"]


def ask_user_question_tool(
    ctx: Any | None = None,
    *,
    agent: object | None = None,
    signal: Any | None = None,
    max_retries: int | None = None,
) -> Tool[Any]:
    """The ``ask_user_question`` tool for a pydantic-ai ``Agent``.

    ``ctx`` is the harness context; ``None`` takes it from the run's deps. ``agent`` and
    ``signal`` go into every ask (``None`` takes ``deps.agent`` / ``deps.signal`` when the deps
    have them). ``max_retries`` overrides the agent's retry budget for invalid arguments.
    """

    async def ask_user_question(run: RunContext[Any], **arguments: Any) -> str:
        deps = run.deps
        harness = ctx if ctx is not None else context_of(deps)
        result = await tool.run(
            harness,
            arguments,
            agent=agent if agent is not None else getattr(deps, "agent", None),
            signal=signal if signal is not None else getattr(deps, "signal", None),
        )
        if is_invalid_arguments(result):
            raise ModelRetry(result.content.removeprefix("Error: "))
        return result.content

    made: Tool[Any] = Tool.from_schema(
        ask_user_question,
        name=tool.NAME,
        description=tool.DESCRIPTION,
        json_schema=tool.input_schema(),
        takes_ctx=True,
    )
    if max_retries is not None:
        made.max_retries = max_retries
    return made
