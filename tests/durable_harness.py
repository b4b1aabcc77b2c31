"""A harness in a process of its own, for the durable adapter tests (killed with kill -9).

``durable_harness.py langgraph CHECKPOINT [BUILDER]``: runs (or resumes) the thread
``thread-1`` of a LangGraph graph whose scripted model asks one question, on the checkpointer
``CHECKPOINT`` (a SQLite file path, or a ``postgresql://`` URL), with `answer_interrupts`.
``durable_harness.py openai-agents STATE``: the Agents SDK's durable tool; the interrupted
run's ``RunState`` is kept in the file ``STATE`` (its run id ``run-1``); a second run answers
and resumes it.
``durable_harness.py pydantic-ai HISTORY``: runs a pydantic-ai agent with the deferred tool,
keeping its message history in the file ``HISTORY`` (``ModelMessagesTypeAdapter``), and answers
its deferred calls with `answer_deferred` (the history names the run, for the keys); a second
run with the history file resumes it.

Either way the questions go to the inbox (``DSH_USER_QUESTIONS_PROVIDER=inbox``,
``DSH_USER_QUESTIONS_INBOX``); the model appends every tool result it is given to the file
``DSH_TEST_SEEN``, and the harness prints ``{"event": "done", "output": ...}`` at the end.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from dsh_user_questions import tool
from dsh_user_questions.harness import HarnessContext

QUESTION = {
    "questions": [
        {"id": "pkg", "question": "Which one?", "options": [{"label": "pnpm"}, {"label": "npm"}]}
    ]
}


def say(**event: object) -> None:
    print(json.dumps(event), flush=True)


def _seen(entry: dict[str, Any]) -> None:
    with open(os.environ["DSH_TEST_SEEN"], "a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None


def _write(path: Path, data: bytes) -> None:
    path.write_bytes(data)


async def langgraph(checkpoint: str, builder: str) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from _langgraph_graphs import BUILDERS, ScriptedChatModel

    from dsh_user_questions.adapters.langgraph import answer_interrupts, ask_user_question_tool

    if checkpoint.startswith("postgresql://"):
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        saver_cm: Any = AsyncPostgresSaver.from_conn_string(checkpoint)
    else:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        saver_cm = AsyncSqliteSaver.from_conn_string(checkpoint)
    async with saver_cm as saver, HarnessContext() as ctx:
        if hasattr(saver, "setup"):
            await saver.setup()
        ctx.load_entrypoints()
        model = ScriptedChatModel(script=[QUESTION], seen=[])
        graph = BUILDERS[builder](model, ask_user_question_tool(), saver)
        config: Any = {"configurable": {"thread_id": "thread-1"}}
        say(event="ready")
        final = await answer_interrupts(graph, {"messages": [("user", "go")]}, config, ctx)
        say(event="done", output=final["messages"][-1].content)


async def pydantic_ai(history_file: str) -> None:
    from pydantic_ai import Agent, DeferredToolRequests, ModelMessagesTypeAdapter
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from dsh_user_questions.adapters.pydantic_ai import answer_deferred, ask_user_question_tool

    def model(messages: list[ModelMessage], _info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
        if isinstance(last, ModelRequest) and returns:
            for part in returns:
                _seen({"id": part.tool_call_id, "content": part.content, "outcome": part.outcome})
            return ModelResponse(parts=[TextPart(str(returns[-1].content))])
        return ModelResponse(parts=[ToolCallPart(tool.NAME, QUESTION, tool_call_id="call-1")])

    agent = Agent(
        FunctionModel(model),
        output_type=[str, DeferredToolRequests],
        tools=[ask_user_question_tool(deferred=True)],
    )
    path = Path(history_file)
    async with HarnessContext() as ctx:
        ctx.load_entrypoints()
        say(event="ready")
        saved = _read(path)
        if saved is not None:  # a run that ended deferred: its history and its pending calls
            history = ModelMessagesTypeAdapter.validate_json(saved)
            calls = [p for p in history[-1].parts if isinstance(p, ToolCallPart)]
            requests = DeferredToolRequests(calls=calls)
        else:
            result = await agent.run("go")
            assert isinstance(result.output, DeferredToolRequests)
            history = result.all_messages()
            _write(path, ModelMessagesTypeAdapter.dump_json(history))
            requests = result.output
        results = await answer_deferred(requests, ctx, messages=history)
        result = await agent.run(message_history=history, deferred_tool_results=results)
        say(event="done", output=result.output)


async def openai_agents(state_file: str) -> None:
    from agents import Agent, RunConfig, Runner, RunState
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    from dsh_user_questions.adapters.openai_agents import (
        answer_interruptions,
        ask_user_question_tool,
    )

    def finish(call: Any) -> Any:
        items = call.input if isinstance(call.input, list) else []
        outputs = [
            i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]
        for item in outputs:
            _seen({"id": item["call_id"], "content": item["output"]})
        return [assistant_message(str(outputs[-1]["output"]))]

    path = Path(state_file)
    saved = _read(path)
    # The model decides from its script; a resumed run starts at its last step.
    steps: list[Any] = (
        []
        if saved is not None
        else [[function_call(tool.NAME, json.dumps(QUESTION), call_id="call-1")]]
    )
    model = ScriptedModel([*steps, ModelStep.respond(finish)])
    agent = Agent(name="assistant", model=model, tools=[ask_user_question_tool(durable=True)])
    offline = RunConfig(tracing_disabled=True)
    async with HarnessContext() as ctx:
        ctx.load_entrypoints()
        say(event="ready")
        if saved is None:
            result = await Runner.run(agent, "go", context=ctx, run_config=offline)
            assert result.interruptions
            saved = result.to_state().to_string(context_serializer=lambda _ctx: {}).encode()
            _write(path, saved)
        state = await RunState.from_string(agent, saved.decode(), context_override=ctx)
        state = await answer_interruptions(state, ctx, run_id="run-1")
        result = await Runner.run(agent, state, context=ctx, run_config=offline)
        say(event="done", output=result.final_output)


if __name__ == "__main__":
    framework, *args = sys.argv[1:]
    if framework == "langgraph":
        asyncio.run(langgraph(args[0], args[1] if len(args) > 1 else "tool_node"))
    elif framework == "openai-agents":
        asyncio.run(openai_agents(args[0]))
    else:
        asyncio.run(pydantic_ai(args[0]))
