"""The LangGraph adapter in one process: a scripted chat model, an in-memory checkpointer.

Each test runs the three kinds of graph a user builds (a hand-built ToolNode loop,
langgraph.prebuilt's ReAct agent, langchain.agents.create_agent); a `ScriptedProvider` plays
the human. The durable runs across processes are in test_adapters_durable.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("langgraph", reason="the LangGraph adapter tests need its extra")

from _langgraph_graphs import BUILDERS, ScriptedChatModel
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

from dsh_user_questions import AskUserQuestionRequest, UserQuestionError, plugin, rules, tool
from dsh_user_questions.adapters.langgraph import (
    answer_interrupts,
    ask_user_question_tool,
    key_of,
    resume_value,
)
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import WAIT_FOR_ABORT, ScriptedProvider

GOOD = {
    "questions": [
        {"id": "pkg", "question": "Which one?", "options": [{"label": "pnpm"}, {"label": "npm"}]}
    ]
}
OTHER = {"questions": [{"id": "name", "question": "Project name?"}]}
BAD = {"questions": [{"id": "pkg", "question": "Which one?", "multiSelect": True}]}
ANSWER = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
START_INPUT = {"messages": [("user", "set it up")]}

each_graph = pytest.mark.parametrize("kind", list(BUILDERS))


def _graph(kind: str, *script: Any) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(script=list(script), seen=[])
    return BUILDERS[kind](model, ask_user_question_tool(), InMemorySaver()), model


def _config(thread: str = "thread-1") -> Any:
    return {"configurable": {"thread_id": thread}}


async def _tool_run_text(arguments: object, answer: object) -> str:
    """What `tool.run` gives the model for this call and this human answer."""
    provider = ScriptedProvider(answer)
    async with HarnessContext() as ctx:
        ctx.register(plugin)
        ctx.user_questions.register_provider(provider)
        return (await tool.run(ctx, arguments)).content


class TestPause:
    """A call pauses the graph with the wire form and its key; the answer resumes it."""

    @each_graph
    async def test_a_good_call_pauses_with_the_wire_form_and_its_key(self, kind: str) -> None:
        """The interrupt's value is the request's wire form, keyed by thread and tool call."""
        graph, model = _graph(kind, GOOD)
        await graph.ainvoke(START_INPUT, _config())
        (pending,) = (await graph.aget_state(_config())).interrupts
        expected = AskUserQuestionRequest(
            questions=tool.read_arguments(GOOD), key="langgraph:thread-1:call-0-0"
        ).to_dict()
        assert pending.value == expected
        assert model.seen == []

    @each_graph
    async def test_the_answer_reaches_the_model_as_tool_run_gives_it(
        self, kind: str, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """answer_interrupts asks with the key, resumes, and the model gets tool.run's text once."""
        graph, model = _graph(kind, GOOD)
        scripted_provider.push(ANSWER)
        final = await answer_interrupts(graph, START_INPUT, _config(), dsh_context)
        (request,) = scripted_provider.requests
        assert request.key == "langgraph:thread-1:call-0-0"
        expected = await _tool_run_text(GOOD, ANSWER)
        assert model.seen == [{"id": "call-0-0", "status": "success", "content": expected}]
        assert final["messages"][-1].content == expected

    @each_graph
    async def test_parallel_calls_are_asked_together_and_resumed_together(
        self, kind: str, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """Two tool calls in one model turn: two interrupts, two asks, one resume."""
        graph, _model = _graph(kind, [GOOD, OTHER])
        other_answer = {"answers": [{"id": "name", "selected": [], "custom": "demo"}]}

        def by_key(request: AskUserQuestionRequest) -> Any:
            return ANSWER if request.questions[0].id == "pkg" else other_answer

        scripted_provider.push(by_key, by_key)
        final = await answer_interrupts(graph, START_INPUT, _config(), dsh_context)
        keys = sorted(r.key for r in scripted_provider.requests)
        assert keys == ["langgraph:thread-1:call-0-0", "langgraph:thread-1:call-0-1"]
        results = {
            m.tool_call_id: m.content for m in final["messages"] if isinstance(m, ToolMessage)
        }
        assert results == {
            "call-0-0": await _tool_run_text(GOOD, ANSWER),
            "call-0-1": await _tool_run_text(OTHER, other_answer),
        }

    @each_graph
    async def test_a_graph_ends_without_questions(
        self, kind: str, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """No tool call: one run, the final state, nobody asked."""
        graph, _model = _graph(kind)
        final = await answer_interrupts(graph, START_INPUT, _config(), dsh_context)
        assert final["messages"][-1].content == "nothing"
        assert scripted_provider.requests == []

    @each_graph
    def test_a_sync_graph_pauses_and_resumes(self, kind: str) -> None:
        """graph.invoke (no event loop) works too: the tool is synchronous underneath."""
        graph, model = _graph(kind, GOOD)
        graph.invoke(START_INPUT, _config())
        (pending,) = graph.get_state(_config()).interrupts
        graph.invoke(Command(resume={pending.id: ANSWER}), _config())
        assert model.seen[0]["status"] == "success"


class TestErrors:
    """Bad calls, bad resume values, cancels, aborts and foreign interrupts: what the graph does."""

    @each_graph
    async def test_a_bad_call_is_an_error_tool_message_and_does_not_pause(
        self, kind: str, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """Invalid arguments: status="error" with the tool's words; the model calls again."""
        graph, model = _graph(kind, BAD, GOOD)
        await graph.ainvoke(START_INPUT, _config())
        state = await graph.aget_state(_config())
        errors = [m for m in state.values["messages"] if isinstance(m, ToolMessage)]
        assert [m.status for m in errors] == ["error"]
        assert errors[0].content == await _tool_run_text(BAD, ANSWER)
        (pending,) = state.interrupts  # only the second, good call paused
        assert pending.value["key"] == "langgraph:thread-1:call-1-0"
        scripted_provider.push(ANSWER)
        await answer_interrupts(graph, START_INPUT, _config(), dsh_context)
        assert len(scripted_provider.requests) == 1
        assert [s["status"] for s in model.seen] == ["error", "success"]

    @each_graph
    async def test_a_resume_value_is_checked_against_the_question(self, kind: str) -> None:
        """A resume naming a label that was never offered is BAD_ANSWER, told as tool.run tells
        it."""
        graph, model = _graph(kind, GOOD)
        await graph.ainvoke(START_INPUT, _config())
        wrong = {"answers": [{"id": "pkg", "selected": ["yarn"]}]}
        await graph.ainvoke(Command(resume=wrong), _config())
        (seen,) = model.seen
        assert seen["status"] == "error"
        with pytest.raises(UserQuestionError) as caught:
            rules.check_answer(tool.read_arguments(GOOD), wrong)
        assert seen["content"] == f"Error: {caught.value.message}"

    @each_graph
    async def test_a_cancelled_question_is_an_error_tool_message(
        self, kind: str, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """ASK_CANCELLED goes back to the model as the tool's error text, status="error"."""
        graph, model = _graph(kind, GOOD)
        scripted_provider.push(UserQuestionError.cancelled())
        await answer_interrupts(graph, START_INPUT, _config(), dsh_context)
        assert model.seen == [
            {
                "id": "call-0-0",
                "status": "error",
                "content": f"Error: {UserQuestionError.cancelled().message}",
            }
        ]

    @each_graph
    async def test_an_aborted_ask_leaves_the_graph_paused_and_a_rerun_finishes(
        self, kind: str, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """The harness's abort raises and keeps the interrupt; a second call asks the same key."""
        from dsh_user_questions.harness import AbortController

        graph, model = _graph(kind, GOOD)
        controller = AbortController()
        scripted_provider.push(WAIT_FOR_ABORT, ANSWER)
        run = asyncio.ensure_future(
            answer_interrupts(graph, START_INPUT, _config(), dsh_context, signal=controller.signal)
        )
        while not scripted_provider.requests:  # noqa: ASYNC110 (the provider has no hook to wait on)
            await asyncio.sleep(0.01)
        controller.abort()
        with pytest.raises(UserQuestionError) as caught:
            await asyncio.wait_for(run, 30)
        assert caught.value.code == "ASK_ABORTED"
        assert (await graph.aget_state(_config())).interrupts
        final = await answer_interrupts(graph, START_INPUT, _config(), dsh_context)
        assert [r.key for r in scripted_provider.requests] == ["langgraph:thread-1:call-0-0"] * 2
        humans = [m for m in final["messages"] if m.type == "human"]
        assert len(humans) == 1  # the input was not sent again
        assert [s["status"] for s in model.seen] == ["success"]

    async def test_a_foreign_interrupt_is_refused_clearly(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """answer_interrupts answers only its own questions and says so."""

        def approve(_state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
            # Python 3.10's LangGraph hands an async run's sync node its config only as this
            # argument; a runnable invoked with it makes it current, as interrupt() needs.
            RunnableLambda(lambda _: interrupt({"approve?": True})).invoke(None, config)
            return {}

        builder = StateGraph(MessagesState)
        builder.add_node("approve", approve)
        builder.add_edge(START, "approve")
        graph = builder.compile(checkpointer=InMemorySaver())
        with pytest.raises(ValueError, match="answers only ask_user_question's interrupts"):
            await answer_interrupts(graph, START_INPUT, _config(), dsh_context)
        assert scripted_provider.requests == []


class KeyedProvider:
    """A stand-in for a durable provider: one record per key, kept when the asker goes away."""

    def __init__(self) -> None:
        self.records: dict[str | None, asyncio.Future[Any]] = {}
        self.asked: list[str | None] = []

    async def ask(self, request: AskUserQuestionRequest) -> Any:
        self.asked.append(request.key)
        loop = asyncio.get_running_loop()
        record = self.records.setdefault(request.key, loop.create_future())
        return await asyncio.shield(record)  # a dying asker leaves the record pending


class TestKeys:
    """Keys and resume values: stable for a thread, reattached by a new process."""

    def test_keys_are_stable_and_valid_for_any_thread_id(self) -> None:
        """A thread id outside the key characters (or too long) gives a hashed key, still stable."""
        assert key_of("t-1", "call_9") == "langgraph:t-1:call_9"
        odd = key_of("thread with spaces ✓", "call_9")
        assert odd == key_of("thread with spaces ✓", "call_9")
        assert odd.startswith("langgraph:sha256:")
        assert key_of("x" * 300, "c") != key_of("x" * 300, "d")
        AskUserQuestionRequest(questions=tool.read_arguments(GOOD), key=odd)  # a valid key

    def test_resume_value_of_an_answer_and_an_error(self) -> None:
        """The resume values answer_interrupts uses, for a hand-written driver."""
        from dsh_user_questions import AskUserQuestionAnswer

        assert resume_value(AskUserQuestionAnswer.from_dict(ANSWER)) == ANSWER
        assert resume_value(UserQuestionError.cancelled()) == {
            "error": {"code": "ASK_CANCELLED", "message": UserQuestionError.cancelled().message}
        }
        with pytest.raises(TypeError):
            resume_value("yes")

    @each_graph
    async def test_a_new_process_on_the_same_thread_reattaches_to_the_same_key(
        self, kind: str, tmp_path: Any
    ) -> None:
        """A run dies while waiting; a new graph, model and context on the same SQLite checkpoint
        file ask the same key again, get the answer given meanwhile, and the model gets it once."""
        pytest.importorskip("langgraph.checkpoint.sqlite")
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        provider = KeyedProvider()
        path = str(tmp_path / "checkpoints.db")
        async with AsyncSqliteSaver.from_conn_string(path) as saver, HarnessContext() as ctx:
            ctx.register(plugin)
            ctx.user_questions.register_provider(provider)
            model = ScriptedChatModel(script=[GOOD], seen=[])
            graph = BUILDERS[kind](model, ask_user_question_tool(), saver)
            run = asyncio.ensure_future(answer_interrupts(graph, START_INPUT, _config(), ctx))
            while not provider.asked:  # noqa: ASYNC110 (the provider has no hook to wait on)
                await asyncio.sleep(0.01)
            run.cancel()  # the process "dies" while waiting
            with pytest.raises(asyncio.CancelledError):
                await run
        (key,) = provider.records
        provider.records[key].set_result(ANSWER)  # answered while nobody waits

        async with AsyncSqliteSaver.from_conn_string(path) as saver, HarnessContext() as ctx:
            ctx.register(plugin)
            ctx.user_questions.register_provider(provider)
            model = ScriptedChatModel(script=[GOOD], seen=[])
            graph = BUILDERS[kind](model, ask_user_question_tool(), saver)
            final = await answer_interrupts(graph, START_INPUT, _config(), ctx)
        assert provider.asked == ["langgraph:thread-1:call-0-0"] * 2
        assert [s["content"] for s in model.seen] == [await _tool_run_text(GOOD, ANSWER)]
        assert len([m for m in final["messages"] if m.type == "human"]) == 1


class TestResumeByHand:
    """Issue 26: the graph relays what tool.run gives; docs/langgraph.md's hand-written resume."""

    async def test_a_tool_result_resume_gives_the_model_exactly_its_text(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """Resume with resume_value(await tool.run(..., key=...)), as the docs show."""
        graph, model = _graph("tool_node", GOOD)
        await graph.ainvoke(START_INPUT, _config())
        snapshot = await graph.aget_state(_config())
        scripted_provider.push(ANSWER)
        resume = {}
        for pending in snapshot.interrupts:
            result = await tool.run(
                dsh_context, {"questions": pending.value["questions"]}, key=pending.value["key"]
            )
            resume[pending.id] = resume_value(result)
        await graph.ainvoke(Command(resume=resume), _config())
        assert [s["content"] for s in model.seen] == [await _tool_run_text(GOOD, ANSWER)]
        assert scripted_provider.requests[0].key == "langgraph:thread-1:call-0-0"

    async def test_an_error_tool_result_is_an_error_tool_message(self) -> None:
        """A failed tool result resumes as a ToolMessage with status="error" and its text."""
        graph, model = _graph("tool_node", GOOD)
        await graph.ainvoke(START_INPUT, _config())
        failed = tool.result_of((), UserQuestionError.cancelled())
        await graph.ainvoke(Command(resume=resume_value(failed)), _config())
        assert model.seen == [{"id": "call-0-0", "status": "error", "content": failed.content}]

    def test_the_hashed_key_is_the_one_earlier_releases_made(self) -> None:
        """Records keyed by an earlier release's hashed form are found again after an upgrade."""
        import hashlib

        thread, call = "thread with spaces", "call_9"
        both = f"{len(thread)}:{thread}:{call}".encode()
        assert key_of(thread, call) == "langgraph:sha256:" + hashlib.sha256(both).hexdigest()
