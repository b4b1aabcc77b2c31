"""The framework one-liners of docs/adapters.md (once the README's) run as written and give the
framework the tool."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from dsh_user_questions import tool
from dsh_user_questions.harness import HarnessContext

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "adapters.md"


def _block(framework: str) -> str:
    part = PAGE.read_text(encoding="utf-8").split(f"**{framework}**", 1)[1]
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


async def _run_async_block(block: str, scope: dict[str, Any]) -> None:
    """Run a page's block written with top-level ``await`` / ``async with``, as an app would."""
    import ast

    code = compile(block, "adapters.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(code, scope)
    if result is not None:
        await result


GOOD = {
    "questions": [
        {"id": "pkg", "question": "Which one?", "options": [{"label": "pnpm"}, {"label": "npm"}]}
    ]
}
ANSWER = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
ANSWER_TEXT = '{"answers":[{"id":"pkg","selected":["pnpm"]}]}'


async def test_pydantic_ai_durable_cycle(
    dsh_context: HarnessContext, scripted_provider: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The deferred block: the run ends deferred, is answered, and the answer is the output."""
    pytest.importorskip("pydantic_ai", reason="needs the pydantic-ai extra")
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    def model(messages: Any, _info: Any) -> ModelResponse:
        last = messages[-1]
        returns = [p for p in last.parts if p.part_kind == "tool-return"]
        if isinstance(last, ModelRequest) and returns:
            return ModelResponse(parts=[TextPart(str(returns[-1].content))])
        return ModelResponse(parts=[ToolCallPart(tool.NAME, GOOD, tool_call_id="call-1")])

    scripted_provider.push(ANSWER)
    scope: dict[str, Any] = {"ctx": dsh_context, "model": FunctionModel(model)}
    await _run_async_block(_block("pydantic-ai, durable"), scope)
    assert capsys.readouterr().out == ANSWER_TEXT + "\n"
    (request,) = scripted_provider.requests
    assert request.key is not None
    assert request.key.startswith("pydantic-ai:")  # the run's id, then the call's
    assert request.key.endswith(":call-1")


async def test_openai_agents_durable_cycle(
    dsh_context: HarnessContext, scripted_provider: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The durable Agents SDK block: paused, saved, answered by key, resumed."""
    pytest.importorskip("agents", reason="needs the openai-agents extra")
    import json

    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    def finish(call: Any) -> Any:
        items = call.input if isinstance(call.input, list) else []
        outputs = [i["output"] for i in items if isinstance(i, dict) and "output" in i]
        return [assistant_message(str(outputs[-1]))]

    model = ScriptedModel(
        [[function_call(tool.NAME, json.dumps(GOOD), call_id="call-1")], ModelStep.respond(finish)]
    )
    scripted_provider.push(ANSWER)
    scope: dict[str, Any] = {"ctx": dsh_context, "model": model}
    from agents import set_tracing_disabled

    set_tracing_disabled(True)
    try:
        await _run_async_block(_block("OpenAI Agents SDK, durable"), scope)
    finally:
        set_tracing_disabled(False)
    assert capsys.readouterr().out == ANSWER_TEXT + "\n"
    assert [r.key for r in scripted_provider.requests] == ["openai-agents:build-42:call-1"]


async def test_langgraph_block(
    dsh_context: HarnessContext,
    scripted_provider: Any,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The LangGraph block: create_agent on a SQLite checkpointer, answered, to the end."""
    pytest.importorskip("langchain.agents", reason="needs langchain for create_agent")
    pytest.importorskip("langgraph.checkpoint.sqlite", reason="needs langgraph-checkpoint-sqlite")
    from _langgraph_graphs import ScriptedChatModel

    monkeypatch.chdir(tmp_path)
    scripted_provider.push(ANSWER)
    scope: dict[str, Any] = {"ctx": dsh_context, "model": ScriptedChatModel(script=[GOOD], seen=[])}
    await _run_async_block(_block("LangGraph"), scope)
    assert capsys.readouterr().out == ANSWER_TEXT + "\n"
    assert [r.key for r in scripted_provider.requests] == ["langgraph:build-42:call-0-0"]


class TestLangGraphExtra:
    """Issue 26: ``pip install 'dsh-user-questions[langgraph]'`` gives what the example imports."""

    def test_the_extra_holds_every_distribution_the_example_imports(self) -> None:
        """Each module the page's LangGraph block imports comes from the [langgraph] extra,
        the package itself or the checkpointer the page says to add."""
        pytest.importorskip("langchain.agents", reason="needs langchain")
        pytest.importorskip("langgraph.checkpoint.sqlite", reason="needs the SQLite checkpointer")
        import configparser

        from packaging.requirements import Requirement
        from packaging.utils import canonicalize_name

        config = configparser.ConfigParser()
        config.read(ROOT / "setup.cfg", encoding="utf-8")
        extra = config["options.extras_require"]["langgraph"]
        allowed = {canonicalize_name(Requirement(line).name) for line in extra.split() if line}
        allowed |= {"dsh-user-questions", "langgraph-checkpoint-sqlite"}  # named beside it
        modules = re.findall(r"^from ([\w.]+) import", _block("LangGraph"), re.M)
        owners = {module: _owner(module) for module in modules}
        assert owners.keys() >= {"langchain.agents", "langgraph.checkpoint.sqlite.aio"}
        assert {m: o for m, o in owners.items() if o not in allowed} == {}


def _owner(module: str) -> str:
    """The (canonical) name of the distribution whose files hold ``module``."""
    import importlib.metadata
    import importlib.util

    from packaging.utils import canonicalize_name

    spec = importlib.util.find_spec(module)
    assert spec is not None, module
    assert spec.origin is not None, module
    origin = Path(spec.origin).resolve()
    if origin.is_relative_to(ROOT):
        return "dsh-user-questions"  # this tree, on the path
    top = module.split(".")[0]
    for name in importlib.metadata.packages_distributions().get(top, []):
        dist = importlib.metadata.distribution(name)
        for file in dist.files or ():
            if file.name == origin.name and Path(str(dist.locate_file(file))).resolve() == origin:
                return str(canonicalize_name(name))
    raise AssertionError(f"no installed distribution holds {module}")
