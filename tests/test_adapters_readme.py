"""The README's framework one-liners run as written and give the framework the tool."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from dsh_user_questions import tool
from dsh_user_questions.harness import HarnessContext

README = Path(__file__).resolve().parent.parent / "README.md"


def _block(framework: str) -> str:
    section = README.read_text(encoding="utf-8").split("## Agent frameworks", 1)[1]
    section = section.split("\n## ", 1)[0]
    part = section.split(f"**{framework}**", 1)[1]
    match = re.search(r"```python\n(.*?)```", part, re.S)
    assert match is not None, f"no python block for {framework}"
    return match.group(1)


class RecordingChatModel:
    """Stands in for a chat model: records the tools it is bound to."""

    def bind_tools(self, tools: list[Any]) -> list[Any]:
        return tools


async def test_pydantic_ai_one_liner(dsh_context: HarnessContext) -> None:
    """The pydantic-ai block builds an Agent whose model is offered ask_user_question."""
    pytest.importorskip("pydantic_ai", reason="needs the pydantic-ai extra")
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    offered: list[str] = []

    def model(_messages: Any, info: Any) -> ModelResponse:
        offered.extend(t.name for t in info.function_tools)
        return ModelResponse(parts=[TextPart("ok")])

    scope: dict[str, Any] = {"ctx": dsh_context, "model": FunctionModel(model)}
    exec(_block("pydantic-ai"), scope)
    await scope["agent"].run("hello")
    assert offered == [tool.NAME]


def test_openai_agents_one_liner(dsh_context: HarnessContext) -> None:
    """The OpenAI Agents SDK block builds an Agent holding ask_user_question."""
    pytest.importorskip("agents", reason="needs the openai-agents extra")
    scope: dict[str, Any] = {"ctx": dsh_context}
    exec(_block("OpenAI Agents SDK"), scope)
    assert [t.name for t in scope["agent"].tools] == [tool.NAME]


def test_langchain_one_liner(dsh_context: HarnessContext) -> None:
    """The LangChain block binds ask_user_question to the chat model."""
    pytest.importorskip("langchain_core", reason="needs the langchain extra")
    scope: dict[str, Any] = {"ctx": dsh_context, "chat_model": RecordingChatModel()}
    exec(_block("LangChain"), scope)
    assert [t.name for t in scope["model_with_tools"]] == [tool.NAME]
