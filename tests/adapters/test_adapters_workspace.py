"""Every adapter passes its ``workspace`` to `tool.run`: a model's files question is rooted
there (LangChain's tool here, through the live path every tool adapter shares)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("langchain_core", reason="the LangChain adapter tests need its extra")

from dsh_user_questions import tool
from dsh_user_questions.adapters.langchain import ask_user_question_tool
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import ScriptedProvider

FILES = {"questions": [{"id": "doc", "question": "Which document?", "input": {"type": "files"}}]}


def _call() -> dict[str, object]:
    return {"name": tool.NAME, "args": FILES, "id": "call-1", "type": "tool_call"}


async def test_the_workspace_roots_a_files_question(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider, tmp_path: Path
) -> None:
    """With a workspace, the question lists its files there and the answer reaches the model."""
    (tmp_path / "notes.md").write_text("n")
    scripted_provider.push({"answers": [{"id": "doc", "value": ["notes.md"]}]})
    message = await ask_user_question_tool(dsh_context, workspace=tmp_path).ainvoke(_call())
    assert message.content == '{"answers":[{"id":"doc","selected":[],"value":["notes.md"]}]}'
    given = scripted_provider.requests[0].questions[0].input
    assert given is not None
    assert (given.root, given.candidates) == (str(tmp_path), ("notes.md",))


async def test_without_a_workspace_file_questions_are_not_available(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """No workspace: the model reads that file questions are not available; nobody is asked."""
    message = await ask_user_question_tool(dsh_context).ainvoke(_call())
    assert "file questions are not available here" in message.content
    assert scripted_provider.requests == []
