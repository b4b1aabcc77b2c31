"""Durable asks across a kill -9: LangGraph, pydantic-ai, the Agents SDK, the inbox, two engines.

Issue 19, points 2, 3 and 4. A harness process asks one question through the inbox and is killed
with SIGKILL while it waits; the question is answered with ``dsh-inbox answer``; a new process
resumes the run (the same LangGraph thread on a persistent checkpointer, the pydantic-ai
message history saved with ``ModelMessagesTypeAdapter``, or the Agents SDK's ``RunState``).
The model receives the answer exactly once, and the inbox holds one record: the question was
never asked twice.

SQLite: ``langgraph-checkpoint-sqlite`` and the inbox on SQLite files. PostgreSQL:
``langgraph-checkpoint-postgres`` and the inbox in a real server that the inbox tests' fixture
starts from Debian's ``postgresql`` package (skipped without it, except under ``CI=true``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dsh_user_questions_inbox", reason="the durable tests need the inbox provider")

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(__file__).resolve().parents[1] / "durable_harness.py"
ANSWER = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
PKG_ARGS = {
    "questions": [
        {"id": "pkg", "question": "Which one?", "options": [{"label": "pnpm"}, {"label": "npm"}]}
    ]
}
ANSWER_TEXT = '{"answers":[{"id":"pkg","selected":["pnpm"]}]}'
WAIT = float(os.environ.get("DSH_DURABLE_TEST_WAIT", "90"))


@pytest.fixture(scope="module")
def postgres() -> Iterator[Any]:
    """One PostgreSQL server for the module (the inbox tests' own fixture code)."""
    sys.path.insert(0, str(ROOT / "providers" / "inbox" / "tests"))
    try:
        from _postgres import PostgresServer, find_bin
    finally:
        sys.path.pop(0)
    bindir = find_bin()
    if bindir is None:
        message = "PostgreSQL is not installed (Debian package postgresql)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    server = PostgresServer(bindir)
    server.start()
    yield server
    server.destroy()


def _stores(engine: str, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[str, str]:
    """The inbox URL and the checkpoint store (a file, or a database of its own)."""
    if engine == "sqlite":
        return f"sqlite:///{tmp_path / 'inbox.db'}", str(tmp_path / "checkpoints.db")
    pytest.importorskip("psycopg")
    server = request.getfixturevalue("postgres")
    return server.new_database(), server.new_database()


def _inbox_command() -> list[str]:
    script = Path(sys.executable).with_name("dsh-inbox")
    return (
        [str(script)] if script.exists() else [sys.executable, "-m", "dsh_user_questions_inbox.cli"]
    )


def _inbox(
    env: dict[str, str], *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_inbox_command(), *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )


def _records(env: dict[str, str]) -> list[dict[str, Any]]:
    listed = _inbox(env, "list", "--all", "--json")
    assert listed.returncode == 0, listed.stderr
    records: list[dict[str, Any]] = json.loads(listed.stdout)
    return records


def _wait_for_pending(env: dict[str, str], harness: subprocess.Popen[str]) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        pending = [r for r in _records(env) if r["state"] == "pending"]
        if pending:
            (record,) = pending
            return record
        assert harness.poll() is None, harness.communicate()
        time.sleep(0.2)
    raise AssertionError("the harness never asked")


def _harness(env: dict[str, str], *args: str) -> list[str]:
    return [sys.executable, str(HARNESS), *args]


@pytest.mark.flaky(reruns=2)
@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
@pytest.mark.parametrize("framework", ["langgraph", "pydantic-ai", "openai-agents"])
def test_a_run_killed_while_waiting_resumes_and_the_model_gets_the_answer_once(
    engine: str, framework: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if framework == "langgraph":
        pytest.importorskip("langgraph")
        pytest.importorskip(
            "langgraph.checkpoint.sqlite" if engine == "sqlite" else "langgraph.checkpoint.postgres"
        )
    elif framework == "pydantic-ai":
        pytest.importorskip("pydantic_ai")
    else:
        pytest.importorskip("agents")
    inbox_url, checkpoint = _stores(engine, tmp_path, request)
    seen = tmp_path / "seen.jsonl"
    env = {
        **os.environ,
        "DSH_USER_QUESTIONS_PROVIDER": "inbox",
        "DSH_USER_QUESTIONS_INBOX": inbox_url,
        "DSH_TEST_SEEN": str(seen),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    assert _inbox(env, "init").returncode == 0  # `dsh-inbox list` needs the store to exist
    args = (
        ("langgraph", checkpoint)
        if framework == "langgraph"
        else (framework, str(tmp_path / "saved.json"))
    )

    first = subprocess.Popen(
        _harness(env, *args), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        record = _wait_for_pending(env, first)
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.communicate(timeout=WAIT)
    assert first.returncode == -signal.SIGKILL
    assert not seen.exists()  # the model has not been given anything yet

    answered = _inbox(env, "answer", record["id"], stdin=json.dumps(ANSWER))
    assert answered.returncode == 0, answered.stderr

    second = subprocess.run(
        _harness(env, *args), env=env, capture_output=True, text=True, timeout=WAIT
    )
    assert second.returncode == 0, second.stderr
    done = json.loads(second.stdout.splitlines()[-1])
    assert done == {"event": "done", "output": ANSWER_TEXT}
    given = [json.loads(line) for line in seen.read_text().splitlines()]
    assert [g["content"] for g in given] == [ANSWER_TEXT]  # once, and nothing else
    records = _records(env)
    assert [r["id"] for r in records] == [record["id"]]  # never asked twice
    assert records[0]["state"] == "answered"


class TestOneInboxInProcess:
    """Issue 26, with the real inbox on a SQLite file, in one process.

    Two runs that reuse a tool call id (pydantic-ai's ``TestModel``, whose call id is always
    ``pyd_ai_tool_call_id__ask_user_question``; the Agents SDK with a scripted model reusing
    ``call_id``): the second run's question must reach the inbox as a new pending record (with
    keys of the call id alone it was handed the first run's answer). And a secret through
    LangGraph: the model and the checkpoint tables get the placeholder.
    """

    @pytest.fixture
    async def inbox_ctx(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
        from dsh_user_questions.harness import HarnessContext

        monkeypatch.setenv("DSH_USER_QUESTIONS_PROVIDER", "inbox")
        monkeypatch.setenv("DSH_USER_QUESTIONS_INBOX", f"sqlite:///{tmp_path / 'inbox.db'}")
        monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
        async with HarnessContext() as ctx:
            ctx.load_entrypoints()
            yield ctx

    @staticmethod
    async def _answered(asking: Any, custom: str, seen_ids: set[str]) -> Any:
        """Answer the one new pending record while ``asking`` waits; its result."""
        import asyncio

        from dsh_user_questions_inbox import open_inbox

        task = asyncio.ensure_future(asking)
        with open_inbox() as inbox:
            deadline = time.monotonic() + WAIT
            while True:
                fresh = [r for r in inbox.records(state="pending") if r.id not in seen_ids]
                if fresh:
                    break
                assert not task.done(), f"answered without asking anyone: {task.result()!r}"
                assert time.monotonic() < deadline, "the run never asked"
                await asyncio.sleep(0.05)  # the inbox has no event to await from here
            (record,) = fresh
            seen_ids.add(record.id)
            question = record.request["questions"][0]["id"]
            answer = {"answers": [{"id": question, "selected": [], "custom": custom}]}
            inbox.answer(record.id, answer, surface="test")
        return await asyncio.wait_for(task, WAIT)

    async def test_two_pydantic_ai_test_model_runs(self, inbox_ctx: Any) -> None:
        """The second TestModel run is asked, not handed the first run's answer."""
        pytest.importorskip("pydantic_ai")
        from pydantic_ai import Agent, DeferredToolRequests
        from pydantic_ai.models.test import TestModel

        from dsh_user_questions.adapters.pydantic_ai import answer_deferred, ask_user_question_tool

        agent = Agent(
            TestModel(),
            output_type=[str, DeferredToolRequests],
            tools=[ask_user_question_tool(deferred=True)],
        )
        seen_ids: set[str] = set()
        outputs = []
        for custom in ("first", "second"):
            run = await agent.run("go")
            results = await self._answered(answer_deferred(run.output, inbox_ctx), custom, seen_ids)
            (output,) = results.calls.values()
            outputs.append(output)
        assert ['"custom":"first"' in outputs[0], '"custom":"second"' in outputs[1]] == [True, True]
        assert len(seen_ids) == 2

    async def test_two_agents_sdk_runs_reusing_a_call_id(self, inbox_ctx: Any) -> None:
        """The second run (another run_id, the same call_id) is asked and gets its own answer."""
        pytest.importorskip("agents")
        from agents import Agent, RunConfig, Runner
        from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

        from dsh_user_questions import tool
        from dsh_user_questions.adapters.openai_agents import (
            answer_interruptions,
            ask_user_question_tool,
        )

        question = {"questions": [{"id": "name", "question": "Project name?"}]}
        seen_ids: set[str] = set()
        outputs = []
        for run_id, custom in (("run-1", "first"), ("run-2", "second")):
            model = ScriptedModel(
                [
                    [function_call(tool.NAME, json.dumps(question), call_id="call-1")],
                    ModelStep.respond(lambda _call: [assistant_message("done")]),
                ]
            )
            agent = Agent(name="a", model=model, tools=[ask_user_question_tool(durable=True)])
            offline = RunConfig(tracing_disabled=True)
            paused = await Runner.run(agent, "go", context=inbox_ctx, run_config=offline)
            state = await self._answered(
                answer_interruptions(paused, inbox_ctx, run_id=run_id), custom, seen_ids
            )
            done = await Runner.run(agent, state, context=inbox_ctx, run_config=offline)
            outputs.append(
                [
                    i.output
                    for i in done.new_items
                    if getattr(i, "type", "") == "tool_call_output_item"
                ]
            )
        assert len(seen_ids) == 2
        assert '"custom":"first"' in str(outputs[0])
        assert '"custom":"second"' in str(outputs[1])

    async def test_a_secret_through_langgraph_and_the_inbox(
        self, inbox_ctx: Any, tmp_path: Path
    ) -> None:
        """The real inbox, a SQLite checkpointer: the model and the tables see the placeholder."""
        pytest.importorskip("langgraph.checkpoint.sqlite")
        sys.path.insert(0, str(ROOT / "tests"))
        from _langgraph_graphs import ScriptedChatModel, tool_node_graph
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        from dsh_user_questions import rules
        from dsh_user_questions.adapters.langgraph import answer_interrupts, ask_user_question_tool

        clear = "npm_s3cr3t_0123abcd"
        question = {"questions": [{"id": "token", "question": "Your npm token?", "secret": True}]}
        model = ScriptedChatModel(script=[question], seen=[])
        kept: list[dict[str, str]] = []
        checkpoints = tmp_path / "checkpoints"
        checkpoints.mkdir()
        async with AsyncSqliteSaver.from_conn_string(str(checkpoints / "c.db")) as saver:
            graph = tool_node_graph(model, ask_user_question_tool(), saver)
            config: Any = {"configurable": {"thread_id": "t1"}}
            asking = answer_interrupts(
                graph,
                {"messages": [("user", "go")]},
                config,
                inbox_ctx,
                on_secrets=lambda _key, secrets: kept.append(dict(secrets)),
            )
            await self._answered(asking, clear, set())
        assert kept == [{"token": clear}]
        (seen,) = model.seen
        assert rules.SECRET_PLACEHOLDER in seen["content"]
        assert clear not in seen["content"]
        stored = b"".join(p.read_bytes() for p in sorted(checkpoints.iterdir()))
        assert clear.encode() not in stored


class TestALeaseRefusalKeepsTheCallPending:
    """Issue 35: a key another live harness is asking is refused with ``ASKED_ELSEWHERE``,
    which every durable adapter raises (the call stays pending; the model is told nothing).
    Once that lease is stale, the same call asked again attaches to the record and the model
    gets the human's answer, once."""

    HOLDER = "another-host.invalid:1:abc"

    @pytest.fixture
    async def inbox_ctx(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
        from dsh_user_questions.harness import HarnessContext

        monkeypatch.setenv("DSH_USER_QUESTIONS_PROVIDER", "inbox")
        monkeypatch.setenv("DSH_USER_QUESTIONS_INBOX", f"sqlite:///{tmp_path / 'inbox.db'}")
        monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
        async with HarnessContext() as ctx:
            ctx.load_entrypoints()
            yield ctx

    def _leased_elsewhere(self, key: str, arguments: Any) -> str:
        """The record of ``key``, asked (and leased) by a live harness of another host."""
        from dsh_user_questions_inbox import open_inbox

        from dsh_user_questions import AskUserQuestionRequest
        from dsh_user_questions.tool import read_arguments

        request = AskUserQuestionRequest(questions=read_arguments(arguments), key=key)
        with open_inbox() as inbox:
            inbox.beat(self.HOLDER)
            return inbox.add(request, harness="elsewhere", lease=self.HOLDER).id

    def _stale_and_answered(self, question_id: str, answer: Any = ANSWER) -> None:
        """That harness went away (its heartbeat aged) and the human answered meanwhile."""
        from dsh_user_questions_inbox import open_inbox
        from dsh_user_questions_inbox._lease import STALE_SECONDS

        with open_inbox() as inbox:
            inbox._engine.write(
                "UPDATE dsh_inbox_leases SET beat = :old WHERE holder = :holder",
                {"old": time.time() - STALE_SECONDS - 1, "holder": self.HOLDER},
            )
            assert inbox.answer(question_id, answer, surface="test").applied

    @staticmethod
    def _records() -> list[Any]:
        from dsh_user_questions_inbox import open_inbox

        with open_inbox() as inbox:
            return inbox.records()

    async def test_langgraph(self, inbox_ctx: Any, tmp_path: Path) -> None:
        """answer_interrupts raises ASKED_ELSEWHERE and the graph stays paused."""
        pytest.importorskip("langgraph.checkpoint.sqlite")
        sys.path.insert(0, str(ROOT / "tests"))
        from _langgraph_graphs import ScriptedChatModel, tool_node_graph
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        from dsh_user_questions import CallerRefusedError
        from dsh_user_questions.adapters.langgraph import (
            answer_interrupts,
            ask_user_question_tool,
            key_of,
        )

        model = ScriptedChatModel(script=[PKG_ARGS], seen=[])
        question_id = self._leased_elsewhere(key_of("t-1", "call-0-0"), PKG_ARGS)
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "c.db")) as saver:
            graph = tool_node_graph(model, ask_user_question_tool(), saver)
            config: Any = {"configurable": {"thread_id": "t-1"}}
            go = {"messages": [("user", "go")]}
            with pytest.raises(CallerRefusedError) as refused:
                await answer_interrupts(graph, go, config, inbox_ctx)
            assert refused.value.code == "ASKED_ELSEWHERE"
            assert model.seen == []  # the refusal never became the model's text
            assert (await graph.aget_state(config)).interrupts  # still paused on the question
            self._stale_and_answered(question_id)
            await answer_interrupts(graph, go, config, inbox_ctx)
        assert [seen["content"] for seen in model.seen] == [ANSWER_TEXT]
        assert [record.id for record in self._records()] == [question_id]

    async def test_pydantic_ai(self, inbox_ctx: Any) -> None:
        """answer_deferred raises ASKED_ELSEWHERE; the deferred call gets no result."""
        pytest.importorskip("pydantic_ai")
        from pydantic_ai import Agent, DeferredToolRequests
        from pydantic_ai.models.test import TestModel

        from dsh_user_questions import CallerRefusedError
        from dsh_user_questions.adapters.pydantic_ai import (
            answer_deferred,
            ask_user_question_tool,
            key_of,
        )

        agent = Agent(
            TestModel(),
            output_type=[str, DeferredToolRequests],
            tools=[ask_user_question_tool(deferred=True)],
        )
        run = await agent.run("go")
        (call,) = run.output.calls
        question = call.args["questions"][0]["id"]  # TestModel's own arguments
        answer = {"answers": [{"id": question, "selected": [], "custom": "pnpm"}]}
        key = key_of(run.run_id, call.tool_call_id)
        question_id = self._leased_elsewhere(key, call.args)
        with pytest.raises(CallerRefusedError) as refused:
            await answer_deferred(run.output, inbox_ctx)
        assert refused.value.code == "ASKED_ELSEWHERE"
        self._stale_and_answered(question_id, answer)
        results = await answer_deferred(run.output, inbox_ctx)
        assert results.calls == {call.tool_call_id: json.dumps(answer, separators=(",", ":"))}
        assert [record.id for record in self._records()] == [question_id]

    async def test_openai_agents(self, inbox_ctx: Any) -> None:
        """answer_interruptions raises ASKED_ELSEWHERE; the approval stays pending."""
        pytest.importorskip("agents")
        from agents import Agent, RunConfig, Runner
        from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

        from dsh_user_questions import CallerRefusedError, tool
        from dsh_user_questions.adapters.openai_agents import (
            answer_interruptions,
            ask_user_question_tool,
            key_of,
        )

        model = ScriptedModel(
            [
                [function_call(tool.NAME, json.dumps(PKG_ARGS), call_id="call:1")],
                ModelStep.respond(lambda _call: [assistant_message("done")]),
            ]
        )
        agent = Agent(name="a", model=model, tools=[ask_user_question_tool(durable=True)])
        offline = RunConfig(tracing_disabled=True)
        paused = await Runner.run(agent, "go", context=inbox_ctx, run_config=offline)
        question_id = self._leased_elsewhere(key_of("user:42", "call:1"), PKG_ARGS)
        state = paused.to_state()
        with pytest.raises(CallerRefusedError) as refused:
            await answer_interruptions(state, inbox_ctx, run_id="user:42")
        assert refused.value.code == "ASKED_ELSEWHERE"
        assert len(state.get_interruptions()) == 1  # nothing settled
        self._stale_and_answered(question_id)
        state = await answer_interruptions(state, inbox_ctx, run_id="user:42")
        done = await Runner.run(agent, state, context=inbox_ctx, run_config=offline)
        outputs = [
            i.output for i in done.new_items if getattr(i, "type", "") == "tool_call_output_item"
        ]
        assert outputs == [ANSWER_TEXT]
        assert [record.id for record in self._records()] == [question_id]
