"""``ask_user_question`` as a smolagents `Tool`, to use instead of ``UserInputTool``.

One line: ``ToolCallingAgent(tools=[AskUserQuestionTool(ctx)], model=...)`` (or a
``CodeAgent``, which calls it as ``ask_user_question(questions=[...])``). The tool's inputs are
the tool's own JSON Schema; its output is the tool's own text: the answer JSON, or
``Error: <message>`` (invalid arguments list every problem, so the model can call again).
smolagents checks the top level of a call first, in its own words (a missing ``questions``,
another argument, ``questions`` not an array), before any tool runs; everything inside
``questions`` is the tool's ``Error: invalid arguments: ...``.
smolagents calls tools synchronously (in worker threads for parallel calls): each ask runs on
the context's question loop (see `UserQuestionService.ask_sync`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from .. import tool
from .._sync import run_tool
from ._common import missing_framework

try:
    from smolagents import Tool  # type: ignore[import-untyped]
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise missing_framework("smolagents", "smolagents", err) from err

__all__ = ["AskUserQuestionTool"]


class AskUserQuestionTool(Tool):  # type: ignore[misc]  # smolagents ships no types
    """The ``ask_user_question`` tool asking through ``ctx.user_questions``.

    ``agent`` and ``signal`` go into every ask.
    ``workspace`` (a folder) is the root a model's files question picks from
    (`tool.run`'s).
    ``audience`` (person ids and ``group:NAME``) is who may answer (`tool.run`'s), set
    by the harness, never the model.
    """

    name = tool.NAME
    description = tool.DESCRIPTION
    inputs: ClassVar[dict[str, dict[str, Any]]] = {
        key: {"description": key, **value}
        for key, value in tool.input_schema()["properties"].items()
    }
    output_type = "string"
    skip_forward_signature_validation = True

    def __init__(
        self,
        ctx: Any,
        *,
        agent: object | None = None,
        signal: Any | None = None,
        workspace: Any = None,
        audience: Iterable[str] = (),
    ):
        super().__init__()
        self.ctx = ctx
        self.agent = agent
        self.signal = signal
        self.workspace = workspace
        self.audience = tuple(audience)

    def forward(self, **arguments: Any) -> str:
        return run_tool(
            self.ctx,
            arguments,
            agent=self.agent,
            signal=self.signal,
            workspace=self.workspace,
            audience=self.audience,
        ).content
