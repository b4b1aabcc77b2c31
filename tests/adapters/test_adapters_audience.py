"""Every adapter passes the ``audience`` its harness gives it to the request (who may answer):
through `tool.run` (the tool adapters, live and durable) or on the request it builds itself; a
model never sets it. Real runs with pydantic-ai's own FunctionModel and a LangGraph graph; the
other adapters' entry points are checked from their sources (their frameworks are optional)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import pytest

from dsh_user_questions import plan_review, tool
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import ScriptedProvider

ADAPTERS = Path(inspect.getfile(tool)).parent / "adapters"
GOOD = {
    "questions": [
        {"id": "pkg", "question": "Which one?", "options": [{"label": "pnpm"}, {"label": "npm"}]}
    ]
}
ANSWER = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
AUDIENCE = ("group:oncall", "cy")
PEOPLE = '[groups]\noncall = ["ana", "bo"]\n'


@pytest.fixture(autouse=True)
def people_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "people.toml"
    path.write_text(PEOPLE, encoding="utf-8")
    monkeypatch.setenv("DSH_USER_QUESTIONS_PEOPLE", str(path))


def _entry_points() -> list[tuple[str, str, list[str]]]:
    """Each adapter's public function or class constructor that takes the harness context, the
    ``agent`` or ``signal`` (what goes into every ask), with its parameters."""
    found = []
    for path in sorted(ADAPTERS.glob("[!_]*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for node in tree.body:
            functions: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append((node.name, node))
            elif isinstance(node, ast.ClassDef):
                functions += [
                    (f"{node.name}.__init__", item)
                    for item in node.body
                    if isinstance(item, ast.FunctionDef) and item.name == "__init__"
                ]
            for name, function in functions:
                if name.startswith("_"):
                    continue
                names = [arg.arg for arg in (*function.args.args, *function.args.kwonlyargs)]
                if {"ctx", "agent", "signal", "workspace"} & set(names):
                    found.append((path.stem, name, names))
    return found


@pytest.mark.parametrize(
    ("adapter", "name", "parameters"), _entry_points(), ids=lambda value: str(value)
)
def test_every_entry_point_takes_an_audience(
    adapter: str, name: str, parameters: list[str]
) -> None:
    """What takes the context, the ask's agent or signal takes its audience too."""
    assert "audience" in parameters, f"{adapter}.{name} takes no audience"


def test_each_adapter_has_an_entry_point_with_an_audience() -> None:
    """The walk above found every adapter module (the check cannot pass by finding none)."""
    modules = {path.stem for path in ADAPTERS.glob("[!_]*.py")}
    assert {adapter for adapter, _name, _parameters in _entry_points()} == modules


async def test_pydantic_ai_passes_the_audience_in_a_real_run(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """A pydantic-ai run with its FunctionModel: the request the provider gets names the
    audience the harness gave the tool; the model's arguments never name one."""
    pytest.importorskip("pydantic_ai", reason="the pydantic-ai adapter tests need its extra")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from dsh_user_questions.adapters.pydantic_ai import ask_user_question_tool

    calls = [GOOD]

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if calls:
            return ModelResponse(parts=[ToolCallPart(tool.NAME, calls.pop(), tool_call_id="c1")])
        return ModelResponse(parts=[TextPart("done")])

    scripted_provider.push(ANSWER)
    agent: Agent[Any, str] = Agent(
        FunctionModel(model), tools=[ask_user_question_tool(dsh_context, audience=AUDIENCE)]
    )
    result = await agent.run("set it up")
    assert result.output == "done"
    (request,) = scripted_provider.requests
    assert request.audience == AUDIENCE


async def test_langgraph_answer_interrupts_passes_the_audience(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """The durable path (`run_durable`): LangGraph's answer_interrupts asks with the audience."""
    pytest.importorskip("langgraph", reason="the LangGraph adapter tests need its extra")
    from _langgraph_graphs import BUILDERS, ScriptedChatModel
    from langgraph.checkpoint.memory import InMemorySaver

    from dsh_user_questions.adapters.langgraph import answer_interrupts, ask_user_question_tool

    kind = next(iter(BUILDERS))
    model = ScriptedChatModel(script=[GOOD], seen=[])
    graph = BUILDERS[kind](model, ask_user_question_tool(), InMemorySaver())
    scripted_provider.push(ANSWER)
    config: Any = {"configurable": {"thread_id": "t-1"}}
    await answer_interrupts(
        graph, {"messages": [("user", "go")]}, config, dsh_context, audience=AUDIENCE
    )
    (request,) = scripted_provider.requests
    assert request.audience == AUDIENCE


async def test_a_plan_review_takes_an_audience_and_approvals(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """`plan_review.review_plan` (what the Claude Agent SDK adapter asks a plan with) puts the
    audience on the request and the approvals on the review's intent."""
    scripted_provider.push(
        {"answers": [{"id": "plan-review", "selected": ["Approve"]}], "answered_by": "ana"}
    )
    outcome = await plan_review.review_plan(
        dsh_context.user_questions, "# Plan\n\nShip it.", audience=AUDIENCE, approvals=2
    )
    assert outcome.approved
    (request,) = scripted_provider.requests
    assert request.audience == AUDIENCE
    intent = request.questions[0].intent
    assert intent is not None
    assert intent.approvals == 2
