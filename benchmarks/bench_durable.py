"""The cost of a durable LangGraph ask, next to a live one and to LangGraph's own interrupt().

``python -m benchmarks.bench_durable`` (needs the ``langgraph`` extra, langgraph-checkpoint-sqlite
and the inbox provider; not part of ``tox -e bench``). One run measures, per question:

- **interrupt() round trip**: LangGraph alone. A one-node graph calls ``interrupt()``; the
  driver reads the pending interrupt from the checkpoint and resumes with ``Command(resume=)``.
- **live ask**: the LangChain adapter's tool in a ``ToolNode`` graph; the tool awaits
  ``ctx.user_questions.ask`` on the inbox (one record), nothing is checkpointed while waiting.
- **durable ask**: the LangGraph adapter's tool in the same graph, run by `answer_interrupts`:
  ``interrupt()`` with the request's wire form, an inbox record by key, ``Command(resume=)``.

Every graph uses the same ``AsyncSqliteSaver`` file and a fresh thread per question; both asks
use the same inbox (SQLite) and the same "human": a thread answering each pending record through
the inbox's API as soon as it sees it, so the two asks differ only in how they pause. Also
measured: the durable ask with an instant in-process provider (no inbox), to show the adapter's
own cost over LangGraph's round trip. The variants take turns; each figure is the median.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ._common import WIRE_ANSWER, Figure, InstantProvider, text_table

GOOD = {
    "questions": [
        {
            "id": "pkg",
            "question": "Which package manager should the project use?",
            "options": [{"label": "pnpm"}, {"label": "npm"}, {"label": "yarn"}],
        }
    ]
}


def _tool_graph(made: Any, saver: Any) -> Any:
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    def model(_state: MessagesState) -> dict[str, Any]:
        call = {"name": "ask_user_question", "args": GOOD, "id": "call-1", "type": "tool_call"}
        return {"messages": [AIMessage(content="", tool_calls=[call])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_node("tools", ToolNode([made]))
    builder.add_edge(START, "model")
    builder.add_edge("model", "tools")
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=saver)


def _interrupt_graph(saver: Any) -> Any:
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.types import interrupt

    def model(_state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(content="asking")]}

    def ask(_state: MessagesState) -> dict[str, Any]:
        answer = interrupt(GOOD)
        return {"messages": [AIMessage(content=str(answer))]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_node("ask", ask)
    builder.add_edge(START, "model")
    builder.add_edge("model", "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=saver)


class Human(threading.Thread):
    """Answers every pending inbox record as soon as it sees one (polls every millisecond)."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        from dsh_user_questions_inbox import open_inbox

        self.inbox = open_inbox(url)
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            for record in self.inbox.records(state="pending"):
                self.inbox.answer(record.id, WIRE_ANSWER, surface="bench")
            time.sleep(0.001)


async def _measure(rounds: int) -> list[Figure]:
    from dsh_user_questions_inbox.provider import InboxProvider
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from langgraph.types import Command

    from dsh_user_questions import plugin
    from dsh_user_questions.adapters import langchain as live_adapter
    from dsh_user_questions.adapters import langgraph as durable_adapter
    from dsh_user_questions.harness import HarnessContext

    folder = Path(tempfile.mkdtemp(prefix="dsh-bench-durable-"))
    url = f"sqlite:///{folder / 'inbox.db'}"
    human = Human(url)
    human.start()
    times: dict[str, list[float]] = {"interrupt": [], "live": [], "durable": [], "instant": []}
    async with AsyncSqliteSaver.from_conn_string(str(folder / "checkpoints.db")) as saver:
        inbox_ctx = HarnessContext()
        inbox_ctx.register(plugin)
        provider = InboxProvider(url, harness="bench")
        inbox_ctx.user_questions.register_provider(provider)
        instant_ctx = HarnessContext()
        instant_ctx.register(plugin)
        instant_ctx.user_questions.register_provider(InstantProvider())

        interrupt_graph = _interrupt_graph(saver)
        live_graph = _tool_graph(live_adapter.ask_user_question_tool(inbox_ctx), saver)
        durable_graph = _tool_graph(durable_adapter.ask_user_question_tool(), saver)
        start = {"messages": [("user", "set it up")]}

        async def interrupt_round(config: Any) -> None:
            await interrupt_graph.ainvoke(start, config)
            (pending,) = (await interrupt_graph.aget_state(config)).interrupts
            await interrupt_graph.ainvoke(Command(resume={pending.id: WIRE_ANSWER}), config)

        async def live_round(config: Any) -> None:
            await live_graph.ainvoke(start, config)

        async def durable_round(config: Any) -> None:
            await durable_adapter.answer_interrupts(durable_graph, start, config, inbox_ctx)

        async def instant_round(config: Any) -> None:
            await durable_adapter.answer_interrupts(durable_graph, start, config, instant_ctx)

        variants = {
            "interrupt": interrupt_round,
            "live": live_round,
            "durable": durable_round,
            "instant": instant_round,
        }
        for warm in range(3):  # imports, table creation, first compiles
            for name, variant in variants.items():
                await variant({"configurable": {"thread_id": f"warm-{name}-{warm}"}})
        for index in range(rounds):
            for name, variant in variants.items():
                config = {"configurable": {"thread_id": f"{name}-{index}"}}
                began = time.perf_counter()
                await variant(config)
                times[name].append(time.perf_counter() - began)
        provider.close()
        await inbox_ctx.aclose()
        await instant_ctx.aclose()
    human.stop.set()
    human.join()
    ms = {name: statistics.median(values) * 1000 for name, values in times.items()}
    base = "LangGraph interrupt() round trip"
    return [
        Figure(base, ms["interrupt"], "ms", "", None),
        Figure("live ask through the inbox", ms["live"], "ms", base, ms["interrupt"]),
        Figure("durable ask through the inbox", ms["durable"], "ms", base, ms["interrupt"]),
        Figure(
            "durable ask through the inbox",
            ms["durable"],
            "ms",
            "live ask through the inbox",
            ms["live"],
        ),
        Figure("durable ask, instant provider", ms["instant"], "ms", base, ms["interrupt"]),
    ]


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    began = time.monotonic()
    load = os.getloadavg()[0]
    figures = asyncio.run(_measure(rounds))
    print(f"{rounds} questions per variant, median; Python {sys.version.split()[0]}")
    print(f"load average (1 min) {load:.2f} before, {os.getloadavg()[0]:.2f} after;", end=" ")
    print(f"{time.monotonic() - began:.0f} s")
    print(text_table(figures))


if __name__ == "__main__":
    main()
