"""The llm plugin: ``ask_user_question`` in llm's sync and async chains and on its command line.

llm-echo's ``echo`` model plays the model: a prompt of ``{"tool_calls": [...]}`` makes it call
the tool, and its next turn echoes the tool results it was given. A `ScriptedProvider` plays
the human (through `use_context`); the command-line test asks through the installed terminal
provider in a real pseudo-terminal.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llm", reason="the llm adapter tests need its extra")
pytest.importorskip("llm_echo", reason="the llm adapter tests need the llm-echo model")

import llm
from _frameworks import ARGUMENTS, PNPM, PNPM_TEXT, closing, run_in_terminal, scripted

from dsh_user_questions import tool
from dsh_user_questions.adapters import llm as adapter
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import ScriptedProvider


@pytest.fixture
def human(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedProvider]:
    """A scripted human behind the process's harness context (llm's user dir in tmp_path)."""
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path))
    ctx, provider = scripted()
    adapter.use_context(ctx)
    yield provider
    adapter.use_context(None)
    closing(ctx)


def prompt(arguments: Any = ARGUMENTS) -> str:
    """What makes the echo model call ask_user_question with ``arguments``."""
    return json.dumps({"tool_calls": [{"name": "ask_user_question", "arguments": arguments}]})


def tool_outputs(last_text: str) -> list[str]:
    """The tool results the echo model's last turn was given."""
    return [result["output"] for result in json.loads(last_text)["tool_results"]]


class TestThePlugin:
    def test_llm_finds_the_tool(self) -> None:
        """llm's plugins offer ``ask_user_question`` with the tool's own schema."""
        found = llm.get_tools()["ask_user_question"]
        assert found.input_schema == tool.input_schema()
        assert found.description == tool.DESCRIPTION
        assert found.plugin == "dsh_user_questions"

    def test_the_process_context_loads_the_installed_plugins(self) -> None:
        """Without `use_context`, the asks go through one context with the ``dsh`` plugins."""
        adapter.use_context(None)
        try:
            ctx = adapter.context()
            assert isinstance(ctx, HarnessContext)
            assert adapter.context() is ctx
            assert ctx.get("user_questions") is not None
        finally:
            adapter.use_context(None)


class TestChains:
    def test_the_sync_chain_gets_the_answer_to_the_next_turn(self, human: ScriptedProvider) -> None:
        """In a sync chain the answer reaches the model's next turn as the tool result."""
        human.push(PNPM)
        chain = llm.get_model("echo").chain(prompt(), tools=[adapter.llm_tool()])
        responses = list(chain.responses())
        assert tool_outputs(responses[-1].text()) == [PNPM_TEXT]
        assert human.requests[0].questions[0].question == "Which package manager?"

    async def test_the_async_chain_gets_the_answer_to_the_next_turn(
        self, human: ScriptedProvider
    ) -> None:
        """In an async chain (a running loop) the same tool asks and answers."""
        human.push(PNPM)
        chain = llm.get_async_model("echo").chain(prompt(), tools=[adapter.llm_tool()])
        texts = [await response.text() async for response in chain.responses()]
        assert tool_outputs(texts[-1]) == [PNPM_TEXT]

    def test_two_sync_chains_ask_on_one_loop(self, human: ScriptedProvider) -> None:
        """Each sync tool call is its own ``asyncio.run()``; the provider sees one loop."""
        loops: list[object] = []

        def answer(_request: Any) -> Any:
            import asyncio

            loops.append(asyncio.get_running_loop())
            return PNPM

        human.push(answer, answer)
        for _ in range(2):
            chain = llm.get_model("echo").chain(prompt(), tools=[adapter.llm_tool()])
            list(chain.responses())
        assert len(loops) == 2
        assert loops[0] is loops[1]

    def test_invalid_arguments_reach_the_model_as_the_tools_error(
        self, human: ScriptedProvider
    ) -> None:
        """Arguments breaking the schema come back as the tool's ``Error:`` text, unasked."""
        chain = llm.get_model("echo").chain(prompt({"questions": []}), tools=[adapter.llm_tool()])
        (output,) = tool_outputs(list(chain.responses())[-1].text())
        assert output.startswith("Error: ")
        assert human.requests == []


class TestCommandLine:
    def test_llm_T_asks_in_the_terminal(self, tmp_path: Path) -> None:
        """``llm -m echo -T ask_user_question`` asks through the terminal provider in a real
        pseudo-terminal; the answer reaches the echo model's next turn."""
        exe = shutil.which("llm", path=str(Path(sys.executable).parent))
        if exe is None:
            pytest.skip("llm's command is not installed beside this Python")
        out = run_in_terminal(
            [exe, "-m", "echo", "-T", "ask_user_question", "-n", prompt()],
            tmp_path,
            ["2"],
            "Esc cancel",
            LLM_USER_PATH=str(tmp_path),
        )
        assert (
            '"output": "{\\"answers\\":[{\\"id\\":\\"pkg\\",\\"selected\\":[\\"npm\\"]}]}"' in out
        )
