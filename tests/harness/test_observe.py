"""Observability: each ask's start and end logged at INFO, and an OpenTelemetry span per ask."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from dsh_user_questions import (
    AskUserQuestionItem,
    AskUserQuestionOption,
    UserQuestionError,
    UserQuestionErrorCode,
    hookimpl,
    plugin,
)
from dsh_user_questions import (
    _observe as observe,
)
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import WAIT_FOR_ABORT, ScriptedProvider, make_request

CUSTOM = "my very own words 7f3a"
SECRET = "hunter2-s3cret-91b"

PKG = AskUserQuestionItem(
    id="pkg",
    header="Package \x1b[31mmanager",
    question="Which package manager?",
    options=(AskUserQuestionOption("pnpm"), AskUserQuestionOption("npm")),
)
TOKEN = AskUserQuestionItem(id="token", header="Token", question="Your npm token?", secret=True)


def records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The records of the ``dsh_user_questions`` logger."""
    return [r for r in caplog.records if r.name == "dsh_user_questions"]


class TestLogs:
    """Each ask's start and end logged at INFO: the provider, the code, never the answers unless
    asked."""

    async def test_an_answered_ask_is_logged_at_start_and_end(
        self,
        dsh_context: HarnessContext,
        scripted_provider: ScriptedProvider,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        """Two INFO records: ids, headers (inert), provider; the end adds outcome and wait."""
        caplog.set_level(logging.INFO, logger="dsh_user_questions")
        scripted_provider.push({"answers": [{"id": "pkg", "selected": ["pnpm"]}]})
        await dsh_context.user_questions.ask(make_request(PKG))
        start, end = records(caplog)
        assert (start.levelno, end.levelno) == (logging.INFO, logging.INFO)
        provider = "provider dsh_user_questions.testing.ScriptedProvider"
        assert start.getMessage() == (
            f'ask started: questions pkg (headers "Package <U+001B>[31mmanager") via {provider}'
        )
        assert end.getMessage().startswith(
            f'ask ended: questions pkg (headers "Package <U+001B>[31mmanager") via {provider}:'
            " ANSWERED after "
        )
        assert end.question_ids == ["pkg"]  # type: ignore[attr-defined]
        assert end.headers == ["Package <U+001B>[31mmanager"]  # type: ignore[attr-defined]
        assert end.provider == provider  # type: ignore[attr-defined]
        assert end.outcome == "ANSWERED"  # type: ignore[attr-defined]
        assert 0 <= end.wait_seconds < 60  # type: ignore[attr-defined]
        assert "pnpm" not in start.getMessage() + end.getMessage()

    async def test_the_provider_plugin_is_named(self, caplog: pytest.LogCaptureFixture) -> None:
        """A provider plugin is named by its plugin name."""
        caplog.set_level(logging.INFO, logger="dsh_user_questions")
        async with HarnessContext() as ctx:
            ctx.register(plugin)
            ctx.register(ScriptedProvider({"answers": []}), name="my-ui")
            await ctx.user_questions.ask(make_request(PKG))
        assert [r.provider for r in records(caplog)] == ["provider plugin 'my-ui'"] * 2  # type: ignore[attr-defined]

    @pytest.mark.parametrize(
        ("step", "outcome"),
        [
            (UserQuestionError.cancelled(), "ASK_CANCELLED"),
            (RuntimeError("the UI broke"), "RuntimeError"),
        ],
    )
    async def test_a_failed_ask_is_logged_with_its_code(
        self,
        dsh_context: HarnessContext,
        scripted_provider: ScriptedProvider,
        caplog: pytest.LogCaptureFixture,
        step: BaseException,
        outcome: str,
    ) -> None:
        """An ask that ends without an answer is logged with the outcome code."""
        caplog.set_level(logging.INFO, logger="dsh_user_questions")
        scripted_provider.push(step)
        with pytest.raises(type(step)):
            await dsh_context.user_questions.ask(make_request(PKG))
        _, end = records(caplog)
        assert end.outcome == outcome  # type: ignore[attr-defined]
        assert f": {outcome} after " in end.getMessage()

    async def test_a_timeout_and_a_cancelled_caller_are_logged(
        self,
        dsh_context: HarnessContext,
        scripted_provider: ScriptedProvider,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        """A timeout logs ASK_TIMED_OUT; a cancelled caller task logs CANCELLED."""
        caplog.set_level(logging.INFO, logger="dsh_user_questions")
        started = asyncio.Event()

        async def hang(request: object) -> None:
            started.set()
            await asyncio.Event().wait()

        scripted_provider.push(WAIT_FOR_ABORT, hang)
        with pytest.raises(UserQuestionError) as caught:
            await dsh_context.user_questions.ask(make_request(PKG), timeout=0.01)
        assert caught.value.code == UserQuestionErrorCode.ASK_TIMED_OUT
        task = asyncio.ensure_future(dsh_context.user_questions.ask(make_request(PKG)))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        outcomes = [getattr(r, "outcome", None) for r in records(caplog)]
        assert outcomes == [None, "ASK_TIMED_OUT", None, "CANCELLED"]

    async def test_answers_and_custom_text_are_not_logged(
        self,
        dsh_context: HarnessContext,
        scripted_provider: ScriptedProvider,
        caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Custom text and secrets never reach a record by default, at any level."""
        monkeypatch.delenv(observe.LOG_ANSWERS_ENV, raising=False)
        caplog.set_level(logging.DEBUG)
        scripted_provider.push(
            {"answers": [{"id": "pkg", "custom": CUSTOM}, {"id": "token", "custom": SECRET}]}
        )
        await dsh_context.user_questions.ask(make_request(PKG, TOKEN))
        assert len(records(caplog)) == 2
        for record in caplog.records:
            text = record.getMessage() + repr(vars(record))
            assert CUSTOM not in text
            assert SECRET not in text

    async def test_answers_are_logged_when_asked_for_with_secrets_redacted(
        self,
        dsh_context: HarnessContext,
        scripted_provider: ScriptedProvider,
        caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """DSH_USER_QUESTIONS_LOG_ANSWERS=1 adds the answer to the end record; secrets stay out."""
        monkeypatch.setenv(observe.LOG_ANSWERS_ENV, "1")
        caplog.set_level(logging.INFO, logger="dsh_user_questions")
        scripted_provider.push(
            {"answers": [{"id": "pkg", "custom": CUSTOM}, {"id": "token", "custom": SECRET}]}
        )
        await dsh_context.user_questions.ask(make_request(PKG, TOKEN))
        _, end = records(caplog)
        assert CUSTOM in end.getMessage()
        assert "[secret given to the harness]" in end.getMessage()
        assert SECRET not in end.getMessage() + repr(vars(end))

    async def test_nothing_is_formatted_when_info_is_off(
        self,
        dsh_context: HarnessContext,
        scripted_provider: ScriptedProvider,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        """With the logger above INFO, an ask leaves no record."""
        caplog.set_level(logging.WARNING, logger="dsh_user_questions")
        scripted_provider.push({"answers": []})
        await dsh_context.user_questions.ask(make_request(PKG))
        assert records(caplog) == []


# OpenTelemetry ---------------------------------------------------------------------------------


@pytest.fixture
def telemetry() -> tuple[InMemorySpanExporter, InMemoryMetricReader, observe.AskTracer]:
    """An AskTracer exporting to memory, not registered yet."""
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    tracer = observe.AskTracer(
        lambda: "the test UI",
        tracer_provider=tracer_provider,
        meter_provider=MeterProvider(metric_readers=[reader]),
    )
    return spans, reader, tracer


def _waits(reader: InMemoryMetricReader) -> list[tuple[dict[str, object], int]]:
    data = reader.get_metrics_data()
    assert data is not None
    found = []
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == "dsh.user_questions.wait":
                    assert metric.unit == "s"
                    for point in metric.data.data_points:
                        found.append((dict(point.attributes or {}), point.count))
    return found


GLOBAL_SDK_SCRIPT = """
import asyncio
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from dsh_user_questions import plugin
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import ScriptedProvider, make_request, make_question
from dsh_user_questions._observe import SDK_LOOK_EVERY

async def main():
    async with HarnessContext() as ctx:
        ctx.register(plugin)
        ctx.user_questions.register_provider(ScriptedProvider({"answers": []}, {"answers": []}))
        await ctx.user_questions.ask(make_request(make_question()))  # no SDK yet: no span
        spans = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(spans))
        trace.set_tracer_provider(provider)  # the application configures the SDK later
        await asyncio.sleep(SDK_LOOK_EVERY)  # looked at again within that time
        await ctx.user_questions.ask(make_request(make_question()))
        print([s.name for s in spans.get_finished_spans()])

asyncio.run(main())
"""


class TestObserverPlugin:
    """The core plugin's observers: registered once, blocked with their plugin, free when idle."""

    def test_the_core_plugin_registers_the_observers_once(self) -> None:
        """Each context gets one observer plugin (log and trace); re-registering adds none."""
        ctx = HarnessContext()
        ctx.register(plugin)
        ctx.unregister(plugin)
        ctx.register(plugin)
        names = [name for name, _ in ctx.plugin_manager.list_name_plugin()]
        assert names.count(observe.PLUGIN_NAME) == 1
        assert ctx.plugin_manager.get_plugin(observe.PLUGIN_NAME).tracer is not None

    async def test_blocking_the_observer_plugin_silences_it(
        self,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        """A harness that wants no records blocks the plugin name before registering the core."""
        caplog.set_level(logging.INFO, logger="dsh_user_questions")
        async with HarnessContext() as ctx:
            ctx.plugin_manager.set_blocked(observe.PLUGIN_NAME)
            ctx.register(plugin)
            ctx.user_questions.register_provider(ScriptedProvider({"answers": []}))
            await ctx.user_questions.ask(make_request(PKG))
        assert records(caplog) == []

    async def test_an_idle_observer_costs_no_observer_calls(
        self,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        """With the logger off and no SDK the core's observer is idle: an ask whose observers are
        all idle calls none of them; checked on every ask, so turning INFO on logs again."""
        seen: list[str] = []

        class Idle:
            def __init__(self) -> None:
                self.idle = True

            def observer_idle(self) -> bool:
                return self.idle

            @hookimpl
            def dsh_user_questions_asked(self) -> None:
                seen.append("asked")

        async with HarnessContext() as ctx:
            ctx.register(plugin)
            idle = Idle()
            ctx.register(idle)
            ctx.user_questions.register_provider(ScriptedProvider(*[{"answers": []}] * 3))
            caplog.set_level(logging.WARNING, logger="dsh_user_questions")
            await ctx.user_questions.ask(make_request(PKG))
            assert (seen, records(caplog)) == ([], [])
            caplog.set_level(logging.INFO, logger="dsh_user_questions")
            await ctx.user_questions.ask(make_request(PKG))
            assert seen == ["asked"]  # once one observer has work, every observer is called
            assert len(records(caplog)) == 2
            idle.idle = False
            caplog.set_level(logging.WARNING, logger="dsh_user_questions")
            await ctx.user_questions.ask(make_request(PKG))
            assert seen == ["asked", "asked"]
            assert len(records(caplog)) == 2


GLOBAL_METER_SCRIPT = """
import asyncio
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from dsh_user_questions import plugin
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import ScriptedProvider, make_request, make_question

async def main():
    reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))  # metrics only, no tracer
    async with HarnessContext() as ctx:
        ctx.register(plugin)
        ctx.user_questions.register_provider(ScriptedProvider({"answers": []}))
        await ctx.user_questions.ask(make_request(make_question()))
    data = reader.get_metrics_data()
    names = [m.name for r in data.resource_metrics for s in r.scope_metrics for m in s.metrics]
    print(names)

asyncio.run(main())
"""


class TestSpans:
    """An OpenTelemetry span per ask, with its attributes and its status."""

    async def test_a_span_per_ask_with_its_attributes(
        self,
        dsh_context: HarnessContext,
        scripted_provider: ScriptedProvider,
        telemetry: tuple[InMemorySpanExporter, InMemoryMetricReader, observe.AskTracer],
    ) -> None:
        """Each ask makes one span with ids, headers, provider, outcome and wait; no answer text."""
        spans, reader, tracer = telemetry
        dsh_context.register(tracer, name="test-otel")
        scripted_provider.push(
            {"answers": [{"id": "pkg", "custom": CUSTOM}]}, UserQuestionError.cancelled()
        )
        await dsh_context.user_questions.ask(make_request(PKG))
        with pytest.raises(UserQuestionError):
            await dsh_context.user_questions.ask(make_request(TOKEN))
        answered, cancelled = spans.get_finished_spans()
        assert answered.name == "ask_user_question"
        assert dict(answered.attributes or {}) == {
            "dsh.user_questions.question_ids": ("pkg",),
            "dsh.user_questions.headers": ("Package <U+001B>[31mmanager",),
            "dsh.user_questions.provider": "the test UI",
            "dsh.user_questions.outcome": "ANSWERED",
            "dsh.user_questions.wait_seconds": answered.attributes[
                "dsh.user_questions.wait_seconds"
            ],  # type: ignore[index]
        }
        assert cancelled.attributes["dsh.user_questions.outcome"] == "ASK_CANCELLED"  # type: ignore[index]
        assert cancelled.status.status_code is not StatusCode.ERROR  # the human's choice
        assert CUSTOM not in repr([dict(s.attributes or {}) for s in (answered, cancelled)])
        assert sorted(_waits(reader), key=repr) == sorted(
            [
                (
                    {
                        "dsh.user_questions.outcome": "ANSWERED",
                        "dsh.user_questions.provider": "the test UI",
                    },
                    1,
                ),
                (
                    {
                        "dsh.user_questions.outcome": "ASK_CANCELLED",
                        "dsh.user_questions.provider": "the test UI",
                    },
                    1,
                ),
            ],
            key=repr,
        )

    async def test_a_provider_failure_is_an_error_span(
        self,
        dsh_context: HarnessContext,
        scripted_provider: ScriptedProvider,
        telemetry: tuple[InMemorySpanExporter, InMemoryMetricReader, observe.AskTracer],
    ) -> None:
        """A provider's own exception ends the span with an error status."""
        spans, _, tracer = telemetry
        dsh_context.register(tracer, name="test-otel")
        scripted_provider.push(RuntimeError("broken"))
        with pytest.raises(RuntimeError):
            await dsh_context.user_questions.ask(make_request(PKG))
        [span] = spans.get_finished_spans()
        assert span.status.status_code is StatusCode.ERROR
        assert span.attributes["dsh.user_questions.outcome"] == "RuntimeError"  # type: ignore[index]

    async def test_concurrent_asks_each_end_their_own_span(
        self,
        dsh_context: HarnessContext,
        scripted_provider: ScriptedProvider,
        telemetry: tuple[InMemorySpanExporter, InMemoryMetricReader, observe.AskTracer],
    ) -> None:
        """Two asks in flight at once end two spans, each with its own outcome."""
        spans, _, tracer = telemetry
        dsh_context.register(tracer, name="test-otel")
        started, release = asyncio.Event(), asyncio.Event()

        async def later(request: object) -> dict[str, list[object]]:
            started.set()
            await release.wait()
            return {"answers": []}

        scripted_provider.push(later, UserQuestionError.cancelled())
        first = asyncio.ensure_future(dsh_context.user_questions.ask(make_request(PKG)))
        await started.wait()
        with pytest.raises(UserQuestionError):
            await dsh_context.user_questions.ask(make_request(TOKEN))
        release.set()
        await first
        outcomes = [
            (s.attributes or {})["dsh.user_questions.question_ids"]
            for s in spans.get_finished_spans()
        ]
        assert outcomes == [("token",), ("pkg",)]

    def test_the_default_tracer_follows_the_global_sdk_once_it_is_set(self) -> None:
        """The core plugin's tracer does nothing without an SDK and traces once one is set (it
        looks at the global providers again within SDK_LOOK_EVERY seconds)."""
        done = subprocess.run(
            [sys.executable, "-c", GLOBAL_SDK_SCRIPT],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        assert done.stdout == "['ask_user_question']\n", done.stderr

    def test_a_global_meter_provider_alone_records_the_waits(self) -> None:
        """An application that sets only a global meter provider (an SDK) gets the wait histogram:
        the tracer's "is an SDK set" check reads both providers through the API's public getters."""
        done = subprocess.run(
            [sys.executable, "-c", GLOBAL_METER_SCRIPT],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        assert done.stdout == "['dsh.user_questions.wait']\n", done.stderr
