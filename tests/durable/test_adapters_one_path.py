"""Issue 26: every durable adapter goes through `tool.run`, keys its asks by run and call, keeps
secrets out of what it saves, asks parallel questions at once and never resends an input.

`KeyedStore` plays a durable provider (the inbox's contract, in memory): one record per key,
a new key takes the next scripted answer, a key asked again gets its record's answer at once.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest, rules, tool
from dsh_user_questions.harness import HarnessContext

# Ids made mostly of the separator, the escape and what an escape spells, to find a forgery.
_IDS = st.text(alphabet=st.sampled_from("t1c:~3A7E sha256"), min_size=1, max_size=12)
PKG = {
    "questions": [
        {"id": "pkg", "question": "Which one?", "options": [{"label": "pnpm"}, {"label": "npm"}]}
    ]
}
NAME = {"questions": [{"id": "name", "question": "Project name?"}]}
TOKEN = {"questions": [{"id": "token", "question": "Your npm token?", "secret": True}]}
CLEAR = "npm_s3cr3t_0123abcd"
PNPM = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
NPM = {"answers": [{"id": "pkg", "selected": ["npm"]}]}
SECRET_ANSWER = {"answers": [{"id": "token", "selected": [], "custom": CLEAR}]}
PLACEHOLDER_TEXT = json.dumps(
    {"answers": [{"id": "token", "selected": [], "custom": rules.SECRET_PLACEHOLDER}]},
    separators=(",", ":"),
)


class KeyedStore:
    """A durable provider in memory: one record per key, answered once, kept."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.records: dict[str | None, Any] = {}
        self.asked: list[str | None] = []  # the keys of the asks a person saw

    async def ask(self, request: AskUserQuestionRequest) -> Any:
        if request.key is not None and request.key in self.records:
            return self.records[request.key]
        self.asked.append(request.key)
        answer = self.answers.pop(0)
        if callable(answer):
            answer = await answer(request)
        self.records[request.key] = answer
        return answer


class Secrets:
    """The harness's on_secrets hook: keeps what it is handed."""

    def __init__(self) -> None:
        self.kept: list[tuple[str, dict[str, str]]] = []

    def __call__(self, name: str, secrets: Mapping[str, str]) -> None:
        self.kept.append((name, dict(secrets)))


def _all_bytes(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(folder.iterdir()))


@pytest.fixture
async def ctx() -> Any:
    async with HarnessContext() as context:
        from dsh_user_questions import plugin

        context.register(plugin)
        yield context


class TestDurableKey:
    def test_a_key_is_the_framework_the_run_and_the_call(self) -> None:
        """durable_key joins the three; ids outside the key's characters give a stable hash."""
        assert tool.durable_key("langgraph", "t-1", "call_1") == "langgraph:t-1:call_1"
        odd = tool.durable_key("pydantic-ai", "run 1", "call 1")
        assert odd.startswith("pydantic-ai:sha256:")
        assert odd == tool.durable_key("pydantic-ai", "run 1", "call 1")
        assert odd != tool.durable_key("pydantic-ai", "run 1", "call 2")

    def test_two_runs_reusing_a_call_id_get_two_keys(self) -> None:
        """The same call id in two runs never makes the same key."""
        assert tool.durable_key("x", "run-a", "c") != tool.durable_key("x", "run-b", "c")
        # The hash form keeps the boundary between the ids: ("a:b", "c") is not ("a", "b:c").
        assert tool.durable_key("x", "a b", "c d") != tool.durable_key("x", "a", "b c d")

    def test_ids_holding_the_separator_cannot_forge_a_key(self) -> None:
        """Issue 35: thread ``t:1`` + call ``c`` and thread ``t`` + call ``1:c`` are two keys
        (both were ``langgraph:t:1:c``), readable, with ``:`` and ``~`` escaped."""
        first = tool.durable_key("langgraph", "t:1", "c")
        second = tool.durable_key("langgraph", "t", "1:c")
        assert first != second
        assert (first, second) == ("langgraph:t~3A1:c", "langgraph:t:1~3Ac")
        assert tool.durable_key("x", "user:42", "c") != tool.durable_key("x", "user", "42:c")
        assert tool.durable_key("x", "a~3Ab", "c") != tool.durable_key("x", "a:b", "c")
        # A run id "sha256" never spells another pair's hashed key.
        hashed = tool.durable_key("x", "a b", "c")
        assert tool.durable_key("x", "sha256", hashed.split(":")[-1]) != hashed

    @settings(max_examples=300, deadline=None)
    @given(_IDS, _IDS, st.data())
    def test_durable_keys_are_injective(self, run: str, call: str, data: st.DataObject) -> None:
        """Two different (run id, call id) pairs never give the same key (another pair: the
        same text split at another ``:``, or any), and every key fits a request's key."""
        from dsh_user_questions._payloads import KEY_PATTERN

        joined = f"{run}:{call}"
        splits = [
            (joined[:at], joined[at + 1 :])
            for at, char in enumerate(joined)
            if char == ":" and 0 < at < len(joined) - 1
        ]
        other = data.draw(st.sampled_from(splits) | st.tuples(_IDS, _IDS))
        first, second = (tool.durable_key("langgraph", *pair) for pair in ((run, call), other))
        assert KEY_PATTERN.fullmatch(first)
        assert KEY_PATTERN.fullmatch(second)
        assert (first == second) == ((run, call) == other)

    def test_a_framework_name_with_the_separator_is_refused(self) -> None:
        """A framework name with ``:`` (it would blur where the run id starts) is a ValueError."""
        with pytest.raises(ValueError, match="framework"):
            tool.durable_key("lang:graph", "t", "c")

    @pytest.mark.parametrize("run_id", [None, ""])
    def test_no_run_identity_is_refused(self, run_id: str | None) -> None:
        """A key of the call id alone is never made: a clear ValueError instead."""
        with pytest.raises(ValueError, match="needs its run's identity"):
            tool.durable_key("openai-agents", run_id, "call-1")


class TestPydanticAI:
    @pytest.fixture(autouse=True)
    def _needs(self) -> None:
        pytest.importorskip("pydantic_ai", reason="needs the pydantic-ai extra")

    @staticmethod
    def _agent() -> Any:
        from pydantic_ai import Agent, DeferredToolRequests
        from pydantic_ai.models.test import TestModel

        from dsh_user_questions.adapters.pydantic_ai import ask_user_question_tool

        return Agent(
            TestModel(),
            output_type=[str, DeferredToolRequests],
            tools=[ask_user_question_tool(deferred=True)],
        )

    async def test_two_test_model_runs_on_one_store_are_each_asked(self, ctx: Any) -> None:
        """TestModel reuses its tool call id; the second run is asked, not handed run 1's answer."""
        from dsh_user_questions.adapters.pydantic_ai import answer_deferred

        first_answer = {"answers": [{"id": "a", "selected": [], "custom": "first"}]}
        second_answer = {"answers": [{"id": "a", "selected": [], "custom": "second"}]}
        store = KeyedStore(first_answer, second_answer)
        ctx.user_questions.register_provider(store)
        agent = self._agent()
        first = await agent.run("go")
        second = await agent.run("go")
        (call_1,) = first.output.calls
        (call_2,) = second.output.calls
        assert call_1.tool_call_id == call_2.tool_call_id  # the collision the key must survive
        one = await answer_deferred(first.output, ctx)
        two = await answer_deferred(second.output, ctx)
        assert len(store.asked) == 2  # the second run's question reached a person
        assert "first" in one.calls[call_1.tool_call_id]
        assert "second" in two.calls[call_2.tool_call_id]

    async def test_the_key_is_the_same_from_the_requests_and_from_the_saved_history(
        self, ctx: Any
    ) -> None:
        """Requests rebuilt from the saved history (after a crash) find the same record."""
        from pydantic_ai import DeferredToolRequests, ModelMessagesTypeAdapter

        from dsh_user_questions.adapters.pydantic_ai import answer_deferred

        store = KeyedStore({"answers": [{"id": "a", "selected": [], "custom": "x"}]})
        ctx.user_questions.register_provider(store)
        first = await self._agent().run("go")
        await answer_deferred(first.output, ctx)
        history = ModelMessagesTypeAdapter.validate_json(
            ModelMessagesTypeAdapter.dump_json(first.all_messages())
        )
        rebuilt = DeferredToolRequests(
            calls=[p for p in history[-1].parts if p.part_kind == "tool-call"]
        )
        await answer_deferred(rebuilt, ctx, messages=history)
        assert len(store.asked) == 1
        assert list(store.records) == [store.asked[0]]
        assert first.run_id in str(store.asked[0])

    async def test_no_run_identity_is_refused_before_anyone_is_asked(self, ctx: Any) -> None:
        """Requests without the run's metadata, messages or run_id=: a ValueError, no ask."""
        from pydantic_ai import DeferredToolRequests
        from pydantic_ai.messages import ToolCallPart

        from dsh_user_questions.adapters.pydantic_ai import answer_deferred

        store = KeyedStore(PNPM)
        ctx.user_questions.register_provider(store)
        requests = DeferredToolRequests(calls=[ToolCallPart(tool.NAME, PKG, tool_call_id="c1")])
        with pytest.raises(ValueError, match="cannot tell which run made the tool call 'c1'"):
            await answer_deferred(requests, ctx)
        assert store.asked == []
        results = await answer_deferred(requests, ctx, run_id="run-7")
        assert store.asked == ["pydantic-ai:run-7:c1"]
        assert results.calls == {"c1": tool.format_answer(AskUserQuestionAnswer.from_dict(PNPM))}

    @staticmethod
    def _secret_agent(seen: list[object]) -> Any:
        from pydantic_ai import Agent, DeferredToolRequests
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
        from pydantic_ai.models.function import FunctionModel

        from dsh_user_questions.adapters.pydantic_ai import ask_user_question_tool

        def model(messages: list[Any], _info: Any) -> ModelResponse:
            returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
            if returns:
                seen.extend(p.content for p in returns)
                return ModelResponse(parts=[TextPart("done")])
            return ModelResponse(parts=[ToolCallPart(tool.NAME, TOKEN, tool_call_id="c1")])

        return Agent(
            FunctionModel(model),
            output_type=[str, DeferredToolRequests],
            tools=[ask_user_question_tool(deferred=True)],
        )

    async def test_a_secret_never_reaches_the_model_or_the_saved_history(self, ctx: Any) -> None:
        """The model gets the placeholder; the results and saved history hold no clear text."""
        from pydantic_ai import ModelMessagesTypeAdapter

        from dsh_user_questions.adapters.pydantic_ai import answer_deferred

        ctx.user_questions.register_provider(KeyedStore(SECRET_ANSWER))
        seen: list[object] = []
        agent = self._secret_agent(seen)
        first = await agent.run("go")
        results = await answer_deferred(first.output, ctx)
        again = await agent.run(message_history=first.all_messages(), deferred_tool_results=results)
        assert seen == [PLACEHOLDER_TEXT]
        assert CLEAR not in repr(results)
        assert CLEAR.encode() not in ModelMessagesTypeAdapter.dump_json(again.all_messages())

    async def test_a_secret_goes_to_the_on_secrets_hook(self, ctx: Any) -> None:
        """on_secrets gets the clear text, named by the call's key."""
        from dsh_user_questions.adapters.pydantic_ai import answer_deferred

        ctx.user_questions.register_provider(KeyedStore(SECRET_ANSWER))
        kept = Secrets()
        first = await self._secret_agent([]).run("go")
        await answer_deferred(first.output, ctx, on_secrets=kept)
        assert kept.kept == [(f"pydantic-ai:{first.run_id}:c1", {"token": CLEAR})]


class TestOpenAIAgents:
    @pytest.fixture(autouse=True)
    def _needs(self) -> None:
        pytest.importorskip("agents", reason="needs the openai-agents extra")

    @staticmethod
    def _agent(*steps: list[Any], seen: list[list[str]]) -> Any:
        from agents import Agent
        from agents.testing import ModelStep, ScriptedModel, assistant_message

        from dsh_user_questions.adapters.openai_agents import ask_user_question_tool

        def finish(call: Any) -> Any:
            items = call.input if isinstance(call.input, list) else []
            outputs = [
                str(i["output"])
                for i in items
                if isinstance(i, dict) and i.get("type") == "function_call_output"
            ]
            seen.append(outputs)
            return [assistant_message("done")]

        model = ScriptedModel([*steps, ModelStep.respond(finish)])
        return Agent(name="a", model=model, tools=[ask_user_question_tool(durable=True)])

    @staticmethod
    async def _run(agent: Any, ctx: Any, state: Any = "go") -> Any:
        from agents import RunConfig, Runner

        return await Runner.run(
            agent, state, context=ctx, run_config=RunConfig(tracing_disabled=True)
        )

    async def test_two_runs_reusing_a_call_id_on_one_store_are_each_asked(self, ctx: Any) -> None:
        """A fake model reusing call_id: the second run is asked and gets its own answer."""
        from agents.testing import function_call

        from dsh_user_questions.adapters.openai_agents import answer_interruptions

        store = KeyedStore(PNPM, NPM)
        ctx.user_questions.register_provider(store)
        seen: list[list[str]] = []
        for run_id in ("run-1", "run-2"):
            agent = self._agent(
                [function_call(tool.NAME, json.dumps(PKG), call_id="c1")], seen=seen
            )
            paused = await self._run(agent, ctx)
            state = await answer_interruptions(paused, ctx, run_id=run_id)
            await self._run(agent, ctx, state)
        assert store.asked == ["openai-agents:run-1:c1", "openai-agents:run-2:c1"]
        assert seen == [
            [tool.format_answer(AskUserQuestionAnswer.from_dict(a))] for a in (PNPM, NPM)
        ]

    async def test_no_run_id_is_refused_before_anyone_is_asked(self, ctx: Any) -> None:
        """The SDK's state has no public run identity: without run_id=, a clear ValueError."""
        from agents.testing import function_call

        from dsh_user_questions.adapters.openai_agents import answer_interruptions

        store = KeyedStore(PNPM)
        ctx.user_questions.register_provider(store)
        agent = self._agent([function_call(tool.NAME, json.dumps(PKG), call_id="c1")], seen=[])
        paused = await self._run(agent, ctx)
        with pytest.raises(ValueError, match="answer_interruptions needs run_id="):
            await answer_interruptions(paused, ctx)
        assert store.asked == []

    async def test_parallel_questions_are_asked_at_once(self, ctx: Any) -> None:
        """Two calls in one turn: both are asked before either is answered."""
        from agents.testing import function_call

        from dsh_user_questions.adapters.openai_agents import answer_interruptions

        both = asyncio.Event()
        started: list[str | None] = []

        async def answer(request: AskUserQuestionRequest) -> Any:
            started.append(request.key)
            if len(started) == 2:
                both.set()
            await asyncio.wait_for(both.wait(), 30)  # a for loop never gets here twice
            if request.questions[0].id == "pkg":
                return PNPM
            return {"answers": [{"id": "name", "selected": [], "custom": "demo"}]}

        ctx.user_questions.register_provider(KeyedStore(answer, answer))
        seen: list[list[str]] = []
        turn = [
            function_call(tool.NAME, json.dumps(PKG), call_id="c1"),
            function_call(tool.NAME, json.dumps(NAME), call_id="c2"),
        ]
        agent = self._agent(turn, seen=seen)
        paused = await self._run(agent, ctx)
        assert len(paused.interruptions) == 2
        state = await answer_interruptions(paused, ctx, run_id="r")
        await self._run(agent, ctx, state)
        assert sorted(started) == ["openai-agents:r:c1", "openai-agents:r:c2"]
        assert len(seen[0]) == 2

    async def test_a_secret_never_reaches_the_model_or_the_run_state(self, ctx: Any) -> None:
        """Placeholder to the model; no RunState string holds the clear text; on_secrets has it."""
        from agents import RunState
        from agents.testing import function_call

        from dsh_user_questions.adapters.openai_agents import answer_interruptions

        ctx.user_questions.register_provider(KeyedStore(SECRET_ANSWER))
        kept = Secrets()
        seen: list[list[str]] = []
        agent = self._agent([function_call(tool.NAME, json.dumps(TOKEN), call_id="c1")], seen=seen)
        paused = await self._run(agent, ctx)
        state = await answer_interruptions(paused, ctx, run_id="r", on_secrets=kept)
        saved = state.to_string(context_serializer=lambda _ctx: {})
        assert CLEAR not in saved
        restored = await RunState.from_string(agent, saved, context_override=ctx)
        done = await self._run(agent, ctx, restored)
        assert seen == [[PLACEHOLDER_TEXT]]
        assert CLEAR not in done.to_state().to_string(context_serializer=lambda _ctx: {})
        assert kept.kept == [("openai-agents:r:c1", {"token": CLEAR})]


class TestLangGraph:
    @pytest.fixture(autouse=True)
    def _needs(self) -> None:
        pytest.importorskip("langgraph", reason="needs the langgraph extra")

    async def test_a_secret_never_reaches_the_model_or_the_checkpoint_tables(
        self, ctx: Any, tmp_path: Path
    ) -> None:
        """SQLite checkpointer: the model gets the placeholder; no table holds the clear text."""
        pytest.importorskip("langgraph.checkpoint.sqlite", reason="needs the SQLite checkpointer")
        from _langgraph_graphs import ScriptedChatModel, tool_node_graph
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        from dsh_user_questions.adapters.langgraph import answer_interrupts, ask_user_question_tool

        ctx.user_questions.register_provider(KeyedStore(SECRET_ANSWER))
        path = tmp_path / "checkpoints.db"
        model = ScriptedChatModel(script=[TOKEN], seen=[])
        async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
            graph = tool_node_graph(model, ask_user_question_tool(), saver)
            config: Any = {"configurable": {"thread_id": "t1"}}
            final = await answer_interrupts(graph, {"messages": [("user", "go")]}, config, ctx)
        assert [entry["content"] for entry in model.seen] == [PLACEHOLDER_TEXT]
        assert final["messages"][-1].content == PLACEHOLDER_TEXT
        stored = _all_bytes(tmp_path)  # the database and its WAL
        assert b"token" in stored  # the question is there...
        assert CLEAR.encode() not in stored  # ...its clear answer is not

    async def test_a_secret_goes_to_the_on_secrets_hook(self, ctx: Any) -> None:
        """on_secrets gets the clear text, named by the call's key."""
        from _langgraph_graphs import ScriptedChatModel, tool_node_graph
        from langgraph.checkpoint.memory import InMemorySaver

        from dsh_user_questions.adapters.langgraph import answer_interrupts, ask_user_question_tool

        ctx.user_questions.register_provider(KeyedStore(SECRET_ANSWER))
        kept = Secrets()
        model = ScriptedChatModel(script=[TOKEN], seen=[])
        graph = tool_node_graph(model, ask_user_question_tool(), InMemorySaver())
        config: Any = {"configurable": {"thread_id": "t1"}}
        go = {"messages": [("user", "go")]}
        await answer_interrupts(graph, go, config, ctx, on_secrets=kept)
        assert kept.kept == [("langgraph:t1:call-0-0", {"token": CLEAR})]

    async def test_a_thread_that_ended_on_its_input_is_not_sent_it_again(self, ctx: Any) -> None:
        """A rerun after the final checkpoint returns the values; the model is not called."""
        from _langgraph_graphs import ScriptedChatModel, tool_node_graph
        from langgraph.checkpoint.memory import InMemorySaver

        from dsh_user_questions.adapters.langgraph import answer_interrupts, ask_user_question_tool

        store = KeyedStore(PNPM)
        ctx.user_questions.register_provider(store)
        model = ScriptedChatModel(script=[PKG], seen=[])
        graph = tool_node_graph(model, ask_user_question_tool(), InMemorySaver())
        config: Any = {"configurable": {"thread_id": "t1"}}
        go = {"messages": [("user", "go")]}
        first = await answer_interrupts(graph, go, config, ctx)
        again = await answer_interrupts(graph, go, config, ctx)  # the rerun after a crash
        assert len(again["messages"]) == len(first["messages"])
        assert [m.type for m in again["messages"]].count("human") == 1
        assert len(model.seen) == 1
        assert len(store.asked) == 1

    async def test_a_new_input_on_an_ended_thread_is_a_new_turn(self, ctx: Any) -> None:
        """Another input (or input_id) is sent: a thread goes on turn after turn."""
        from _langgraph_graphs import ScriptedChatModel, tool_node_graph
        from langgraph.checkpoint.memory import InMemorySaver

        from dsh_user_questions.adapters.langgraph import answer_interrupts, ask_user_question_tool

        ctx.user_questions.register_provider(KeyedStore(PNPM))
        model = ScriptedChatModel(script=[PKG], seen=[])
        graph = tool_node_graph(model, ask_user_question_tool(), InMemorySaver())
        config: Any = {"configurable": {"thread_id": "t1"}}
        await answer_interrupts(graph, {"messages": [("user", "go")]}, config, ctx)
        later = await answer_interrupts(graph, {"messages": [("user", "thanks")]}, config, ctx)
        assert [m.type for m in later["messages"]].count("human") == 2
        same = await answer_interrupts(
            graph, {"messages": [("user", "thanks")]}, config, ctx, input_id="turn-3"
        )
        assert [m.type for m in same["messages"]].count("human") == 3


class TestLiveToolsHandSecretsToTheHook:
    """The live tools give the model the placeholder and on_secrets the clear text."""

    async def test_langchain(self, ctx: Any) -> None:
        """LangChain's tool: a ToolMessage with the placeholder; the hook named by the call id."""
        pytest.importorskip("langchain_core", reason="needs the langchain extra")
        from dsh_user_questions.adapters.langchain import ask_user_question_tool

        ctx.user_questions.register_provider(KeyedStore(SECRET_ANSWER))
        kept = Secrets()
        made = ask_user_question_tool(ctx, on_secrets=kept)
        message = await made.ainvoke(
            {"type": "tool_call", "name": tool.NAME, "args": TOKEN, "id": "c1"}
        )
        assert message.content == PLACEHOLDER_TEXT
        assert kept.kept == [("c1", {"token": CLEAR})]

    async def test_pydantic_ai(self, ctx: Any) -> None:
        """pydantic-ai's live tool: the tool return is the placeholder text."""
        pytest.importorskip("pydantic_ai", reason="needs the pydantic-ai extra")
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
        from pydantic_ai.models.function import FunctionModel

        from dsh_user_questions.adapters.pydantic_ai import ask_user_question_tool

        def model(messages: list[Any], _info: Any) -> ModelResponse:
            returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
            if returns:
                return ModelResponse(parts=[TextPart(str(returns[-1].content))])
            return ModelResponse(parts=[ToolCallPart(tool.NAME, TOKEN, tool_call_id="c1")])

        ctx.user_questions.register_provider(KeyedStore(SECRET_ANSWER))
        kept = Secrets()
        agent = Agent(FunctionModel(model), tools=[ask_user_question_tool(ctx, on_secrets=kept)])
        result = await agent.run("go")
        assert result.output == PLACEHOLDER_TEXT
        assert kept.kept == [("c1", {"token": CLEAR})]

    async def test_openai_agents(self, ctx: Any) -> None:
        """The Agents SDK's live tool: the output is the placeholder text."""
        pytest.importorskip("agents", reason="needs the openai-agents extra")
        from agents import Agent, RunConfig, Runner
        from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

        from dsh_user_questions.adapters.openai_agents import ask_user_question_tool

        outputs: list[str] = []

        def finish(call: Any) -> Any:
            items = call.input if isinstance(call.input, list) else []
            outputs.extend(
                str(i["output"])
                for i in items
                if isinstance(i, dict) and i.get("type") == "function_call_output"
            )
            return [assistant_message("done")]

        ctx.user_questions.register_provider(KeyedStore(SECRET_ANSWER))
        kept = Secrets()
        model = ScriptedModel(
            [[function_call(tool.NAME, json.dumps(TOKEN), call_id="c1")], ModelStep.respond(finish)]
        )
        agent = Agent(name="a", model=model, tools=[ask_user_question_tool(ctx, on_secrets=kept)])
        await Runner.run(agent, "go", run_config=RunConfig(tracing_disabled=True))
        assert outputs == [PLACEHOLDER_TEXT]
        assert kept.kept == [("c1", {"token": CLEAR})]
