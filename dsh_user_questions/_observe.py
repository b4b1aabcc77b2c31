"""Observability out of the box: every ask logged, and traced when OpenTelemetry is installed.

Both are observers of the three observer hooks (``dsh_user_questions_asked``, ``..._answered``,
``..._failed``), registered on every harness context by the core plugin
(`dsh_user_questions.plugin`) next to its ``user_questions`` service:

- `AskLog` writes two records per ask on the ``dsh_user_questions`` logger at INFO: one when it
  starts (question ids, headers, the provider) and one when it ends (the same, the outcome code
  and the wait in seconds, and who answered when the surface named them: ``answered_by``,
  logged through `rules.inert_text`). Each record also carries them as attributes
  (``question_ids``, ``headers``, ``provider``, ``outcome``, ``wait_seconds``,
  ``answered_by``) for structured handlers. The answer
  itself, custom text included, is never logged unless asked for: with the environment variable
  ``DSH_USER_QUESTIONS_LOG_ANSWERS=1`` (or ``AskLog(include_answers=True)``) the end record
  holds the answer too, and even then a secret question's text is `rules.SECRET_PLACEHOLDER`.
  Model-written headers are logged through `rules.inert_text`.
- `AskTracer` (needs ``opentelemetry-api``, the ``[otel]`` extra) makes one span
  ``ask_user_question`` per ask with the same attributes (prefixed ``dsh.user_questions.``), its
  status an error for an ask that failed other than by the human's choice, and records each
  ask's wait on the histogram ``dsh.user_questions.wait`` (seconds; attributes outcome and
  provider). Without an OpenTelemetry SDK configured both are no-ops of the API.

Outcome codes: ``ANSWERED``, a `UserQuestionError`'s code (``ASK_CANCELLED``,
``ASK_TIMED_OUT``, ...), ``CANCELLED`` when the asking task was cancelled, and the exception's
class name for anything else a provider raised.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from ._markers import hookimpl
from ._payloads import AskUserQuestionAnswer, AskUserQuestionRequest
from .errors import UserQuestionError
from .rules import inert_text, redact_secrets

if TYPE_CHECKING:
    import pluggy

__all__ = [
    "ANSWERED",
    "CANCELLED",
    "LOGGER_NAME",
    "LOG_ANSWERS_ENV",
    "PLUGIN_NAME",
    "AskLog",
    "AskTracer",
    "outcome_code",
    "watch",
]

LOGGER_NAME: Final = "dsh_user_questions"
LOG_ANSWERS_ENV: Final = "DSH_USER_QUESTIONS_LOG_ANSWERS"
ANSWERED: Final = "ANSWERED"
CANCELLED: Final = "CANCELLED"
PLUGIN_NAME: Final = "user_questions.observe"
"""The name under which the core plugin registers its observers (block it to silence them)."""
SDK_LOOK_EVERY: Final = 1.0
"""Seconds between looks at OpenTelemetry's global providers while none is set."""

_log = logging.getLogger(LOGGER_NAME)


def outcome_code(error: BaseException | None) -> str:
    """The outcome code of an ask that ended with ``error`` (``None``: answered)."""
    if error is None:
        return ANSWERED
    if isinstance(error, UserQuestionError):
        return str(getattr(error.code, "value", error.code))
    if isinstance(error, asyncio.CancelledError):
        return CANCELLED
    return type(error).__name__


def _chosen(error: BaseException) -> bool:
    """Whether an ask ended by the human's (or the caller's) choice, not by a failure."""
    if isinstance(error, UserQuestionError):
        return error.outcome.chosen
    return isinstance(error, asyncio.CancelledError)


ProviderName = Callable[[], str]


def _unknown() -> str:
    return "unknown"


def _facts(request: AskUserQuestionRequest, provider: str) -> dict[str, Any]:
    return {
        "question_ids": [question.id for question in request.questions],
        "headers": [inert_text(question.header or "") for question in request.questions],
        "provider": provider,
    }


class AskLog:
    """Logs each ask's start and end at INFO on the ``dsh_user_questions`` logger.

    ``provider`` names the active provider when called (the core plugin passes the service's);
    ``include_answers`` (default: the ``DSH_USER_QUESTIONS_LOG_ANSWERS`` environment variable
    is ``1``) adds the answer, secrets redacted, to the end record.
    """

    def __init__(
        self, provider: ProviderName = _unknown, *, include_answers: bool | None = None
    ) -> None:
        self.provider = provider
        self.include_answers = include_answers

    def _answers_wanted(self) -> bool:
        if self.include_answers is not None:
            return self.include_answers
        return os.environ.get(LOG_ANSWERS_ENV, "") == "1"

    @hookimpl
    def dsh_user_questions_asked(self, request: AskUserQuestionRequest) -> None:
        """Record the start of an ask."""
        if not _log.isEnabledFor(logging.INFO):
            return
        facts = _facts(request, self.provider())
        _log.info(
            "ask started: questions %s (headers %s) via %s",
            ",".join(facts["question_ids"]),
            _quoted(facts["headers"]),
            facts["provider"],
            extra=facts,
        )

    @hookimpl
    def dsh_user_questions_answered(
        self, request: AskUserQuestionRequest, answer: AskUserQuestionAnswer, wait_seconds: float
    ) -> None:
        """Record an ask that was answered."""
        self._ended(request, None, wait_seconds, answer)

    @hookimpl
    def dsh_user_questions_failed(
        self, request: AskUserQuestionRequest, error: BaseException, wait_seconds: float
    ) -> None:
        """Record an ask that ended without an answer."""
        self._ended(request, error, wait_seconds, None)

    def _ended(
        self,
        request: AskUserQuestionRequest,
        error: BaseException | None,
        wait_seconds: float,
        answer: AskUserQuestionAnswer | None,
    ) -> None:
        if not _log.isEnabledFor(logging.INFO):
            return
        facts = _facts(request, self.provider())
        facts["outcome"] = outcome_code(error)
        facts["wait_seconds"] = wait_seconds
        message = "ask ended: questions %s (headers %s) via %s: %s after %.3f s"
        args: list[object] = [
            ",".join(facts["question_ids"]),
            _quoted(facts["headers"]),
            facts["provider"],
            facts["outcome"],
            wait_seconds,
        ]
        if answer is not None and answer.answered_by is not None:
            facts["answered_by"] = answer.answered_by
            message += " by %s"
            args.append(inert_text(answer.answered_by))
        if answer is not None and self._answers_wanted():
            shown = json.dumps(
                redact_secrets(request, answer).to_dict(),
                ensure_ascii=False,
                separators=(",", ":"),
            )
            facts["answer"] = shown
            message += ": %s"
            args.append(inert_text(shown))
        _log.info(message, *args, extra=facts)


def _quoted(headers: list[str]) -> str:
    return ", ".join(f'"{header}"' for header in headers)


class AskTracer:
    """One OpenTelemetry span per ask and a histogram of the waits (``opentelemetry-api``).

    ``tracer_provider`` and ``meter_provider`` default to the global ones (set by the
    application, e.g. with the SDK); ``provider`` names the active user-questions provider.
    """

    def __init__(
        self,
        provider: ProviderName = _unknown,
        *,
        tracer_provider: Any = None,
        meter_provider: Any = None,
    ) -> None:
        from opentelemetry import metrics, trace

        from . import __version__

        self._trace = trace
        self._metrics = metrics
        self._error_status = trace.Status
        self._error_code = trace.StatusCode.ERROR
        self.provider = provider
        # With no provider given and none set globally (no SDK configured), the API does
        # nothing: skip the work, but look again (`configured`), for one set later. Once true,
        # true for good: a global provider is set only once.
        self._configured = (
            tracer_provider is not None
            or meter_provider is not None
            or "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
            or "OTEL_PYTHON_METER_PROVIDER" in os.environ
        )
        self._next_look = 0.0  # when to look at the global providers again
        self._tracer = trace.get_tracer(LOGGER_NAME, __version__, tracer_provider=tracer_provider)
        meter = metrics.get_meter(LOGGER_NAME, __version__, meter_provider=meter_provider)
        self._wait = meter.create_histogram(
            "dsh.user_questions.wait", unit="s", description="How long each ask waited"
        )
        # Spans by request: the same request object goes to asked, then answered or failed.
        self._spans: dict[int, list[Any]] = {}

    def configured(self) -> bool:
        """Whether spans and waits go anywhere: a provider given, or a global SDK set.

        The global providers are looked at through the API's public getters at most once every
        `SDK_LOOK_EVERY` seconds (each look reads the environment) until one is set, which is
        for good: an SDK the application sets later is followed within that time.
        """
        if self._configured:
            return True
        now = time.monotonic()
        if now < self._next_look:
            return False
        self._next_look = now + SDK_LOOK_EVERY
        self._configured = _global_sdk_set(self._trace, self._metrics)
        return self._configured

    @hookimpl
    def dsh_user_questions_asked(self, request: AskUserQuestionRequest) -> None:
        """Start the ask's span."""
        if not self.configured():
            return
        facts = _facts(request, self.provider())
        span = self._tracer.start_span(
            "ask_user_question",
            attributes={
                "dsh.user_questions.question_ids": facts["question_ids"],
                "dsh.user_questions.headers": facts["headers"],
                "dsh.user_questions.provider": facts["provider"],
            },
        )
        self._spans.setdefault(id(request), []).append(span)

    @hookimpl
    def dsh_user_questions_answered(
        self, request: AskUserQuestionRequest, answer: AskUserQuestionAnswer, wait_seconds: float
    ) -> None:
        """End the ask's span as answered (``dsh.user_questions.answered_by`` when known)."""
        self._ended(request, None, wait_seconds, answer.answered_by)

    @hookimpl
    def dsh_user_questions_failed(
        self, request: AskUserQuestionRequest, error: BaseException, wait_seconds: float
    ) -> None:
        """End the ask's span with its outcome."""
        self._ended(request, error, wait_seconds)

    def _ended(
        self,
        request: AskUserQuestionRequest,
        error: BaseException | None,
        wait_seconds: float,
        answered_by: str | None = None,
    ) -> None:
        spans = self._spans.get(id(request))
        if not spans and not self.configured():
            return
        outcome = outcome_code(error)
        provider = self.provider()
        self._wait.record(
            wait_seconds,
            {"dsh.user_questions.outcome": outcome, "dsh.user_questions.provider": provider},
        )
        if not spans:
            return
        span = spans.pop(0)
        if not spans:
            del self._spans[id(request)]
        span.set_attribute("dsh.user_questions.outcome", outcome)
        span.set_attribute("dsh.user_questions.wait_seconds", wait_seconds)
        if answered_by is not None:
            span.set_attribute("dsh.user_questions.answered_by", answered_by)
        if error is not None and not _chosen(error):
            span.set_status(self._error_status(self._error_code, outcome))
        span.end()


def _global_sdk_set(trace: Any, metrics: Any) -> bool:
    """Whether the application set a global tracer or meter provider (an SDK).

    Until one is set, the API's public getters hand out the API's own stand-in: a
    ``ProxyTracerProvider`` for traces, and for metrics a provider of the API package itself
    (``opentelemetry.metrics``), where an SDK's lives in its own package.
    """
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return True
    return not type(metrics.get_meter_provider()).__module__.startswith("opentelemetry.metrics")


def _otel_available() -> bool:
    try:
        import opentelemetry.metrics
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        return False
    return True


class _Observers:
    """The core plugin's observers as one plugin: one observer call per hook and ask."""

    def __init__(self, provider: ProviderName) -> None:
        self.log = AskLog(provider)
        self.tracer = AskTracer(provider) if _otel_available() else None

    def observer_idle(self) -> bool:
        """Whether there is nothing to record now: the service then skips the observer calls.

        True while the logger is off at INFO and no OpenTelemetry SDK is configured, so an ask
        nobody logs or traces costs what it costs without observers.
        """
        if _log.isEnabledFor(logging.INFO):
            return False
        tracer = self.tracer
        return tracer is None or not tracer.configured()

    def point_at(self, provider: ProviderName) -> None:
        self.log.provider = provider
        if self.tracer is not None:
            self.tracer.provider = provider

    @hookimpl
    def dsh_user_questions_asked(self, request: AskUserQuestionRequest) -> None:
        self.log.dsh_user_questions_asked(request)
        if self.tracer is not None:
            self.tracer.dsh_user_questions_asked(request)

    @hookimpl
    def dsh_user_questions_answered(
        self, request: AskUserQuestionRequest, answer: AskUserQuestionAnswer, wait_seconds: float
    ) -> None:
        if self.tracer is not None:
            self.tracer.dsh_user_questions_answered(request, answer, wait_seconds)
        self.log.dsh_user_questions_answered(request, answer, wait_seconds)

    @hookimpl
    def dsh_user_questions_failed(
        self, request: AskUserQuestionRequest, error: BaseException, wait_seconds: float
    ) -> None:
        if self.tracer is not None:
            self.tracer.dsh_user_questions_failed(request, error, wait_seconds)
        self.log.dsh_user_questions_failed(request, error, wait_seconds)


def watch(pm: pluggy.PluginManager, service: object) -> None:
    """Register the log observer (and the tracer, with OpenTelemetry installed) on ``pm``.

    Called by the core plugin for each context's service, as one plugin named
    ``user_questions.observe``; once per plugin manager (a second call points the observers at
    the new service). ``service`` names the provider for the records.
    """
    provider = _provider_name(service)
    existing = pm.get_plugin(PLUGIN_NAME)
    if isinstance(existing, _Observers):
        existing.point_at(provider)
    elif existing is None:
        pm.register(_Observers(provider), name=PLUGIN_NAME)


def _provider_name(service: object) -> ProviderName:
    # A weak reference: the observers must not keep a dropped context's service alive.
    ref = weakref.ref(service)

    def name() -> str:
        current = ref()
        if current is None:
            return "unknown"
        describe = getattr(current, "describe_provider", None)
        if describe is None:
            describe = getattr(current, "_describe_active", None)
        try:
            found = describe() if describe is not None else None
        except Exception:
            return "unknown"
        if isinstance(found, str):
            return found or "none"
        if isinstance(found, list):
            return " + ".join(str(entry) for entry in found) or "none"
        return "unknown"

    return name
