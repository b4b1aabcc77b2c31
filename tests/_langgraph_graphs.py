"""Graphs for the LangGraph adapter's tests: a scripted chat model and three ways to build one.

`ScriptedChatModel` decides from the conversation alone (no state of its own), so a new process
resuming a thread gets the same model: for each ``ToolMessage`` it has not yet answered it
sends its next scripted call, and when the script is done it replies with the last tool
message's content. ``seen`` lists every tool message it was given, once per model call that
first saw it (and, with ``DSH_TEST_SEEN``, appends them to that file, for other processes).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from dsh_user_questions import tool


class ScriptedChatModel(BaseChatModel):
    """Calls the tool with each scripted argument set in turn, then repeats the last result."""

    script: list[Any]
    seen: list[dict[str, Any]]

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **_kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if results:
            last = results[-1]
            entry = {"id": last.tool_call_id, "status": last.status, "content": last.content}
            self.seen.append(entry)
            path = os.environ.get("DSH_TEST_SEEN")
            if path:
                with open(path, "a", encoding="utf-8") as out:
                    out.write(json.dumps(entry) + "\n")
        step = len(results)
        if step < len(self.script):
            calls = self.script[step]
            calls = calls if isinstance(calls, list) else [calls]
            message = AIMessage(
                content="",
                tool_calls=[
                    {"name": tool.NAME, "args": args, "id": f"call-{step}-{i}", "type": "tool_call"}
                    for i, args in enumerate(calls)
                ],
            )
        else:
            message = AIMessage(content=str(results[-1].content) if results else "nothing")
        return ChatResult(generations=[ChatGeneration(message=message)])


def tool_node_graph(model: ScriptedChatModel, made: Any, checkpointer: Any) -> Any:
    """A hand-built agent loop: model -> ToolNode -> model, until no tool call."""

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode([made]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "model")
    return builder.compile(checkpointer=checkpointer)


def react_graph(model: ScriptedChatModel, made: Any, checkpointer: Any) -> Any:
    """langgraph.prebuilt's ReAct agent."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated in favour of langchain.agents
        from langgraph.prebuilt import create_react_agent

        return create_react_agent(model, [made], checkpointer=checkpointer)


def create_agent_graph(model: ScriptedChatModel, made: Any, checkpointer: Any) -> Any:
    """langchain.agents.create_agent."""
    from langchain.agents import create_agent

    return create_agent(model, [made], checkpointer=checkpointer)


BUILDERS = {"tool_node": tool_node_graph, "react": react_graph, "create_agent": create_agent_graph}
