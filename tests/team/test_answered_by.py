"""Who answered: ``AskUserQuestionAnswer.answered_by`` on the wire, in the observers' log and
span, never in the model's text."""

from __future__ import annotations

import json
import logging

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
    WireFormatError,
    tool,
)
from dsh_user_questions import _observe as observe
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.rules import redact_secrets
from dsh_user_questions.testing import ScriptedProvider, make_request

PKG = AskUserQuestionItem(
    id="pkg",
    header="Package",
    question="Which package manager?",
    options=(AskUserQuestionOption("pnpm"), AskUserQuestionOption("npm")),
)
TOKEN = AskUserQuestionItem(id="token", header="Token", question="Your npm token?", secret=True)
ANSWER = {"answers": [{"id": "pkg", "selected": ["pnpm"]}], "answered_by": "ana"}


def test_answered_by_travels_on_the_wire_only_when_set() -> None:
    """Written when set, read back, and a wrong type named by its key."""
    answer = AskUserQuestionAnswer.from_dict(ANSWER)
    assert answer.answered_by == "ana"
    assert answer.to_dict() == ANSWER
    assert "answered_by" not in AskUserQuestionAnswer(answer.answers).to_dict()
    with pytest.raises(WireFormatError, match="answered_by: must be a string"):
        AskUserQuestionAnswer.from_dict({"answers": [], "answered_by": 7})


def test_redaction_keeps_who_answered() -> None:
    """A secret's redacted answer (what observers and records see) still names its person."""
    answer = AskUserQuestionAnswer(
        [AskUserQuestionAnswerItem(id="token", custom="hunter2")], answered_by="ana"
    )
    assert redact_secrets(make_request(TOKEN), answer).answered_by == "ana"


async def test_the_models_text_never_names_who_answered(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """The tool's result is the answers as before: no ``answered_by``, no name."""
    scripted_provider.push(ANSWER)
    result = await tool.run(dsh_context, {"questions": [PKG.to_dict()]})
    assert not result.is_error
    assert json.loads(result.content) == {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
    assert "ana" not in result.content


async def test_the_end_record_names_who_answered_inert(
    dsh_context: HarnessContext,
    scripted_provider: ScriptedProvider,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The log's end record says ``by`` whom, through inert_text, and carries the attribute."""
    caplog.set_level(logging.INFO, logger="dsh_user_questions")
    scripted_provider.push({**ANSWER, "answered_by": "ana\x1b[2J"})
    await dsh_context.user_questions.ask(make_request(PKG))
    end = [r for r in caplog.records if r.name == "dsh_user_questions"][-1]
    assert " by ana<U+001B>[2J" in end.getMessage()
    assert "\x1b" not in end.getMessage()
    assert end.answered_by == "ana\x1b[2J"  # type: ignore[attr-defined]


async def test_the_span_names_who_answered(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """``dsh.user_questions.answered_by`` on an answered ask's span; absent when unknown."""
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    tracer = observe.AskTracer(
        lambda: "the test UI",
        tracer_provider=tracer_provider,
        meter_provider=MeterProvider(metric_readers=[InMemoryMetricReader()]),
    )
    dsh_context.register(tracer, name="test-otel")
    scripted_provider.push(ANSWER, {"answers": [{"id": "pkg", "selected": ["npm"]}]})
    await dsh_context.user_questions.ask(make_request(PKG))
    await dsh_context.user_questions.ask(make_request(PKG))
    named, unnamed = spans.get_finished_spans()
    assert (named.attributes or {})["dsh.user_questions.answered_by"] == "ana"
    assert "dsh.user_questions.answered_by" not in (unnamed.attributes or {})
