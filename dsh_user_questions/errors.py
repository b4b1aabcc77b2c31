"""Errors of the user-questions seam: one exception type, a stable code, exact messages.

The hierarchy::

    Exception
     +-- HarnessError                  message, code, problems
          +-- UserQuestionError        code: a UserQuestionErrorCode
               +-- AskAbortedError         ASK_ABORTED
               +-- AskTimedOutError        ASK_TIMED_OUT (also a TimeoutError)
               +-- AskCancelledError       ASK_CANCELLED
               +-- NotInteractiveError     NOT_INTERACTIVE
               +-- InvalidRequestError     EMPTY_QUESTIONS, BAD_INTENT, BAD_AUDIENCE,
               |                           BAD_QUESTION, INVALID_ARGS
               +-- BadAnswerError          BAD_ANSWER, NOT_IN_AUDIENCE
               +-- ProviderSetupError      NO_PROVIDER, DUPLICATE_PROVIDER, CONTEXT_CLOSED
               +-- CallerRefusedError      CALLER_NOT_LIVE, DELEGATED_CALLER, ASKED_ELSEWHERE
               +-- StoreError              STORE_UNUSABLE

`OUTCOMES` is the one table of what each code means to every surface: its family class, its
message, the exit status of ``dsh-ask``, the answer to an MCP elicitation, whether a durable
question stays pending, whether it is the user's own choice. Callers route by class (``except
AskCancelledError``) or by that table (``err.outcome.exit_status``), never by comparing codes.
The messages are public too (a model reads them through the tool), so each one is built in
exactly one place: the constructors of `UserQuestionError`.

Import the error classes from the package root (``from dsh_user_questions import
AskCancelledError``); this module's own public names are the table: `OUTCOMES` and `Outcome`.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

import attrs

from ._abort import AbortError

if TYPE_CHECKING:
    from ._abort import AbortSignal

# The error classes and `is_timeout` are imported from the package root (their one documented
# path: ``from dsh_user_questions import AskCancelledError``); this module adds the table.
__all__ = ["OUTCOMES", "Outcome"]


class UserQuestionErrorCode(str, enum.Enum):
    """The stable codes of `UserQuestionError`; each compares equal to its plain string."""

    ASK_ABORTED = "ASK_ABORTED"
    ASK_TIMED_OUT = "ASK_TIMED_OUT"
    EMPTY_QUESTIONS = "EMPTY_QUESTIONS"
    CALLER_NOT_LIVE = "CALLER_NOT_LIVE"
    DELEGATED_CALLER = "DELEGATED_CALLER"
    BAD_INTENT = "BAD_INTENT"
    NO_PROVIDER = "NO_PROVIDER"
    DUPLICATE_PROVIDER = "DUPLICATE_PROVIDER"
    ASK_CANCELLED = "ASK_CANCELLED"
    BAD_ANSWER = "BAD_ANSWER"
    INVALID_ARGS = "INVALID_ARGS"
    BAD_QUESTION = "BAD_QUESTION"
    NOT_INTERACTIVE = "NOT_INTERACTIVE"
    STORE_UNUSABLE = "STORE_UNUSABLE"
    ASKED_ELSEWHERE = "ASKED_ELSEWHERE"
    CONTEXT_CLOSED = "CONTEXT_CLOSED"
    BAD_AUDIENCE = "BAD_AUDIENCE"
    NOT_IN_AUDIENCE = "NOT_IN_AUDIENCE"

    def __str__(self) -> str:
        return self.value


# No slots: a family may also subclass a builtin exception with a layout of its own
# (`AskTimedOutError` is a `TimeoutError`).
@attrs.define(auto_exc=True, init=False, slots=False)
class HarnessError(Exception):
    """An error a harness service reports to its caller: a message and a stable code.

    ``str(err)`` is the message alone. The cause, if any, is chained with ``raise ... from``.
    ``problems`` lists each fault as data, for errors about bad input (``BAD_ANSWER``,
    ``INVALID_ARGS``): each is ``"<where>: <what is wrong>"`` or a sentence naming both;
    it is empty for the other errors.
    """

    message: str
    code: str
    problems: tuple[str, ...]

    def __init__(self, message: str, code: str, *, problems: Iterable[str] = ()) -> None:
        super().__init__(message, code)
        self.message = message
        self.code = code
        self.problems = tuple(problems)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[object, ...]:
        # Pickled with its problems (Exception's default would keep only the two arguments).
        return (_rebuild, (type(self), self.message, self.code, self.problems), self.__dict__)


def _rebuild(
    kind: type[HarnessError], message: str, code: str, problems: tuple[str, ...]
) -> HarnessError:
    return kind(message, code, problems=problems)


_ABORTED = "ask_user_question was aborted before the user answered"
_TIMED_OUT = "the user did not answer ask_user_question in time"
_EMPTY = "ask_user_question requires at least one question"
_NOT_LIVE = "human interaction requires the exact live calling agent when an agent is supplied"
_DELEGATED = (
    "human interaction is unavailable while the calling agent is owned by another live agent;"
    " include the unresolved question or decision in the child agent's final result"
)
_NO_PROVIDER = "no user-questions provider is registered"
_DUPLICATE = "a user-questions provider is already registered"
_CANCELLED = "the user cancelled ask_user_question"
_NOT_INTERACTIVE = (
    "the user cannot be reached from here (nothing can show ask_user_question to a person);"
    " proceed on an assumption you state, or include the question in your final result"
)
_STORE = "the user-questions store is unusable"
_ELSEWHERE = "another live harness is asking this question"
_CLOSED = "the harness context closed"
_CONTEXT_CLOSED = "the harness context is closed, so ask_user_question cannot reach the user"
_AUDIENCE = "the request's audience "
_NOT_IN_AUDIENCE = "may not answer this question: it is for "
_SIGN_IN = "sign in so the page knows who you are"


def is_timeout(signal: AbortSignal | None) -> bool:
    """Whether ``signal`` aborted because an ask's own timeout expired: the one verdict.

    True when its reason is an `AskTimedOutError` (what the timer of ``ask(timeout=...)`` and
    ``AskUserQuestionRequest(timeout=...)`` aborts with; a plain `TimeoutError`, such as
    ``AbortSignal.timeout()``'s, is an abort). Every surface that settles an ask (the service,
    providers, the inbox's records and ``resume()``) decides between ``ASK_TIMED_OUT`` and
    ``ASK_ABORTED`` through this function.
    """
    return signal is not None and signal.aborted and isinstance(signal.reason, AskTimedOutError)


@attrs.define(auto_exc=True, init=False)
class UserQuestionError(HarnessError):
    """The error of the user-questions service; ``code`` is a `UserQuestionErrorCode`.

    Build one with the constructors below so the message is always the exact one. Each outcome
    family has a subclass (`AskAbortedError`, `AskTimedOutError`, `AskCancelledError`,
    `NotInteractiveError`, `InvalidRequestError`, `BadAnswerError`, `ProviderSetupError`,
    `CallerRefusedError`, `StoreError`), so ``except`` can pick a family by type; the code
    still tells the exact outcome. ``UserQuestionError(message, code)`` itself builds the
    subclass of that code's family (an unknown code stays a plain `UserQuestionError`).
    """

    def __new__(cls, *args: object, **kwargs: object) -> UserQuestionError:
        if cls is UserQuestionError and len(args) >= 2 and isinstance(args[1], str):
            row = OUTCOMES.get(str(args[1]))
            if row is not None:
                return row.family.__new__(row.family, *args, **kwargs)
        return super().__new__(cls)

    @property
    def outcome(self) -> Outcome:
        """This error's row of `OUTCOMES` (a code not in the table: a plain failure's row)."""
        row = OUTCOMES.get(str(self.code))
        if row is None:
            return Outcome(str(self.code), type(self), self.message, 1, "error", False, False)
        return row

    @classmethod
    def aborted(cls, detail: str | None = None) -> UserQuestionError:
        """``ASK_ABORTED``: the request's signal aborted before the user answered.

        ``detail`` (e.g. why a provider stopped) follows the exact message after ``": "``.
        """
        message = _ABORTED if detail is None else f"{_ABORTED}: {detail}"
        return cls(message, UserQuestionErrorCode.ASK_ABORTED)

    @classmethod
    def context_closed(cls) -> UserQuestionError:
        """``ASK_ABORTED``: the harness context closed (``aclose()``) while the ask was pending.

        The message is ``ask_user_question was aborted before the user answered: the harness
        context closed``.
        """
        return cls.aborted(_CLOSED)

    @classmethod
    def asked_after_close(cls) -> UserQuestionError:
        """``CONTEXT_CLOSED``: an ask of a harness context that has closed (``aclose()``).

        Raised before anything else is checked; no provider is called.
        """
        return cls(_CONTEXT_CLOSED, UserQuestionErrorCode.CONTEXT_CLOSED)

    @classmethod
    def timed_out(cls) -> UserQuestionError:
        """``ASK_TIMED_OUT``: the ask's own timeout expired before the user answered."""
        return cls(_TIMED_OUT, UserQuestionErrorCode.ASK_TIMED_OUT)

    @classmethod
    def aborted_by(cls, signal: AbortSignal, detail: str | None = None) -> UserQuestionError:
        """The error for an ask withdrawn by ``signal``: the one place it is built.

        ``ASK_TIMED_OUT`` when the signal aborted because the ask's timeout expired (its reason
        is an `AskTimedOutError`, see `is_timeout`), else ``ASK_ABORTED`` (with ``detail``).
        Either is chained from the signal's reason (wrapped in an `AbortError` when it is no
        exception), as ``raise ... from reason`` would, so ``raise
        UserQuestionError.aborted_by(signal)`` is all a provider writes.
        """
        reason = signal.reason
        error = cls.timed_out() if isinstance(reason, AskTimedOutError) else cls.aborted(detail)
        if signal.aborted:
            error.__cause__ = reason if isinstance(reason, BaseException) else AbortError(reason)
            error.__suppress_context__ = True
        return error

    @classmethod
    def empty_questions(cls) -> UserQuestionError:
        """``EMPTY_QUESTIONS``: the request has no question."""
        return cls(_EMPTY, UserQuestionErrorCode.EMPTY_QUESTIONS)

    @classmethod
    def caller_not_live(cls) -> UserQuestionError:
        """``CALLER_NOT_LIVE``: the agent is not the registry's live object of that id."""
        return cls(_NOT_LIVE, UserQuestionErrorCode.CALLER_NOT_LIVE)

    @classmethod
    def delegated_caller(cls) -> UserQuestionError:
        """``DELEGATED_CALLER``: the agent is owned by another agent, not a root."""
        return cls(_DELEGATED, UserQuestionErrorCode.DELEGATED_CALLER)

    @classmethod
    def bad_intent_label(cls, question_id: str, kind: str, approve: str) -> UserQuestionError:
        """``BAD_INTENT``: the intent's approve label names none of the question's options."""
        quoted = json.dumps(approve, ensure_ascii=False)
        return cls(
            f"question {question_id} declares intent {kind} whose approve label {quoted}"
            " names none of its options",
            UserQuestionErrorCode.BAD_INTENT,
        )

    @classmethod
    def bad_intent_detail(cls, question_id: str, kind: str) -> UserQuestionError:
        """``BAD_INTENT``: the question declares an intent but has no detail to review."""
        return cls(
            f"question {question_id} declares intent {kind} without the detail it reviews",
            UserQuestionErrorCode.BAD_INTENT,
        )

    @classmethod
    def bad_intent_approvals(
        cls, question_id: str, kind: str, approvals: int, problem: str
    ) -> UserQuestionError:
        """``BAD_INTENT``: the intent's ``approvals`` breaks a rule; the message is
        ``question <id> declares intent <kind> with approvals <n>, but <problem>``.

        The problems (`rules.check_request` words them): ``approvals must be at least 1``,
        ``only a plan-review or diff-review intent takes approvals``, ``the request has no
        audience to approve it``, ``its audience is only <m> people``, ``the request asks <m>
        questions (a review that needs several approvals is asked alone)``.
        """
        return cls(
            f"question {question_id} declares intent {kind} with approvals {approvals},"
            f" but {problem}",
            UserQuestionErrorCode.BAD_INTENT,
        )

    @classmethod
    def bad_audience(cls, problem: str) -> UserQuestionError:
        """``BAD_AUDIENCE``: the request's ``audience`` cannot be read; the message is
        ``the request's audience <problem>``.

        The problems (`team.People.expand` words them): ``entry <n> "<entry>" is not a person
        id or group:NAME (1 to 64 characters, no spaces or control characters)``, ``entry <n>
        "<entry>" names no group of the people file (<where>)``, ``entry <n> "<entry>" names a
        group without members``, ``needs the people file, which cannot be read: <why>``.
        """
        return cls(f"{_AUDIENCE}{problem}", UserQuestionErrorCode.BAD_AUDIENCE)

    @classmethod
    def not_in_audience(cls, person: str | None, audience: str) -> UserQuestionError:
        """``NOT_IN_AUDIENCE``: ``person`` may not answer a question that is for ``audience``.

        The message is ``<person> may not answer this question: it is for <audience>``; for no
        person (or the page's token holder, ``token``) it is ``this question is for
        <audience>: sign in so the page knows who you are``. Both names are inert text
        (`rules.inert_text`); ``audience`` is the request's entries joined with ``", "``.
        """
        from ._identity import TOKEN_HOLDER
        from .rules import inert_text

        if person is None or person == TOKEN_HOLDER:
            message = f"this question is for {inert_text(audience)}: {_SIGN_IN}"
        else:
            message = f"{inert_text(person)} {_NOT_IN_AUDIENCE}{inert_text(audience)}"
        return cls(message, UserQuestionErrorCode.NOT_IN_AUDIENCE)

    @classmethod
    def no_provider(cls, detail: str | None = None) -> UserQuestionError:
        """``NO_PROVIDER``: no user-questions provider is registered.

        ``detail`` (e.g. which provider the environment named) follows the exact message
        after ``": "``.
        """
        message = _NO_PROVIDER if detail is None else f"{_NO_PROVIDER}: {detail}"
        return cls(message, UserQuestionErrorCode.NO_PROVIDER)

    @classmethod
    def duplicate_provider(
        cls, *providers: str, installed: bool = False, fix: str | None = None
    ) -> UserQuestionError:
        """``DUPLICATE_PROVIDER``: more than one provider where exactly one may be.

        With no ``providers`` the message is the exact one. Otherwise it names them and says
        how to choose one: ``<exact>: <a> and <b> collide; <fix>`` (``installed``: ``<a> and
        <b> are all installed; <fix>``). Every place that refuses a provider builds it here.
        """
        if not providers:
            return cls(_DUPLICATE, UserQuestionErrorCode.DUPLICATE_PROVIDER)
        listed = (
            providers[0]
            if len(providers) == 1
            else ", ".join(providers[:-1]) + " and " + providers[-1]
        )
        message = f"{_DUPLICATE}: {listed} {'are all installed' if installed else 'collide'}"
        if fix:
            message += f"; {fix}"
        return cls(message, UserQuestionErrorCode.DUPLICATE_PROVIDER)

    @classmethod
    def cancelled(cls) -> UserQuestionError:
        """``ASK_CANCELLED``: the human closed the question (raised by providers)."""
        return cls(_CANCELLED, UserQuestionErrorCode.ASK_CANCELLED)

    @classmethod
    def bad_answer(cls, *problems: str, wire_form: bool = False) -> UserQuestionError:
        """``BAD_ANSWER``: the provider's answer breaks a rule of the request.

        Each problem names the answer item (or, with ``wire_form``, the path of a mapping that
        is no answer in wire form) and the rule; the message joins them with ``"; "`` and
        ``problems`` keeps them apart.
        """
        lead = "it is not in wire form: " if wire_form else ""
        return cls(
            "the user-questions provider gave a bad answer: " + lead + "; ".join(problems),
            UserQuestionErrorCode.BAD_ANSWER,
            problems=problems,
        )

    @classmethod
    def invalid_args(cls, *problems: str, limit: int | None = None) -> UserQuestionError:
        """``INVALID_ARGS``: tool arguments that break the schema; one problem per fault.

        With ``limit``, only the first ``limit`` problems are kept (in the message and in
        ``problems``) and the message ends ``(more violations not shown)`` when some were cut.
        """
        shown = problems if limit is None else problems[:limit]
        more = ("(more violations not shown)",) if len(shown) < len(problems) else ()
        return cls(
            "invalid arguments: " + "; ".join(shown + more),
            UserQuestionErrorCode.INVALID_ARGS,
            problems=shown,
        )

    @classmethod
    def bad_question(cls, question_id: str, *problems: str) -> UserQuestionError:
        """``BAD_QUESTION``: a question whose options an answer could not be read against.

        Each problem says what is wrong with question ``question_id`` (two labels that read
        the same, a label meaning the UI's own "Other" or "Skip", two recommended options of a
        single-select question, a secret question with options, a question without options that
        allows no free text); the message is
        ``question <id> <problem>; <problem>`` and ``problems`` keeps them apart.
        """
        quoted = json.dumps(question_id, ensure_ascii=False)
        return cls(
            f"question {quoted} " + "; ".join(problems),
            UserQuestionErrorCode.BAD_QUESTION,
            problems=problems,
        )

    @classmethod
    def key_in_use(cls, key: str) -> UserQuestionError:
        """``BAD_QUESTION``: a durable provider already holds ``key`` for other questions.

        A request's ``key`` names one question for good (asking again with it attaches to
        that question), so a request with other questions needs a key of its own.
        """
        quoted = json.dumps(key, ensure_ascii=False)
        return cls(
            f"the key {quoted} already names a question with other questions;"
            " a different question needs a key of its own",
            UserQuestionErrorCode.BAD_QUESTION,
        )

    @classmethod
    def asked_elsewhere(cls, key: str, detail: str) -> UserQuestionError:
        """``ASKED_ELSEWHERE``: a durable provider's record of ``key`` is leased to another
        live harness, which is asking it now.

        Never the question's answer: the call stays pending (a durable adapter raises, its run
        stays paused) and asks again once that harness stops or its lease goes stale. The
        message is ``another live harness is asking this question: key "<key>" (<detail>)``;
        ``detail`` says who holds it and when it is freed.
        """
        quoted = json.dumps(key, ensure_ascii=False)
        return cls(f"{_ELSEWHERE}: key {quoted} ({detail})", UserQuestionErrorCode.ASKED_ELSEWHERE)

    @classmethod
    def from_wire(cls, message: str, code: str) -> UserQuestionError:
        """An outcome carried as data (``{"message", "code"}``, e.g. through a framework's
        resume value) raised again as the error of its family, with its message unchanged."""
        return cls(message, code)

    @classmethod
    def not_interactive(cls, detail: str | None = None) -> UserQuestionError:
        """``NOT_INTERACTIVE``: the provider has no way to show the question to a person.

        Raised by a provider that can tell (the terminal provider without a usable terminal),
        never reported as a cancel. ``detail`` (why) follows the exact message after ``": "``.
        """
        message = _NOT_INTERACTIVE if detail is None else f"{_NOT_INTERACTIVE}: {detail}"
        return cls(message, UserQuestionErrorCode.NOT_INTERACTIVE)

    @classmethod
    def store_unusable(cls, reason: str) -> UserQuestionError:
        """``STORE_UNUSABLE``: a durable provider cannot read or write its store.

        ``reason`` says which store and why (never a password); the message is
        ``the user-questions store is unusable: <reason>``.
        """
        return cls(f"{_STORE}: {reason}", UserQuestionErrorCode.STORE_UNUSABLE)


@attrs.define(auto_exc=True, init=False)
class AskAbortedError(UserQuestionError):
    """``ASK_ABORTED``: the request's signal withdrew the question before the user answered."""


@attrs.define(auto_exc=True, init=False)
class AskTimedOutError(UserQuestionError, TimeoutError):
    """``ASK_TIMED_OUT``: the ask's own timeout expired before the user answered.

    Also a `TimeoutError`, so ``except TimeoutError`` catches it. It is the abort reason of an
    ask's own timeout, too (see `is_timeout`); the error its caller gets is chained from it.
    """

    def __init__(self, message: str, code: str, *, problems: Iterable[str] = ()) -> None:
        super().__init__(message, code, problems=problems)
        # OSError's constructor read the two arguments as (errno, strerror): they are not.
        self.args = (message, code)
        self.errno = None
        self.strerror = message


@attrs.define(auto_exc=True, init=False)
class AskCancelledError(UserQuestionError):
    """``ASK_CANCELLED``: a person closed the question without answering."""


@attrs.define(auto_exc=True, init=False)
class NotInteractiveError(UserQuestionError):
    """``NOT_INTERACTIVE``: nothing here can show the question to a person."""


@attrs.define(auto_exc=True, init=False)
class InvalidRequestError(UserQuestionError):
    """The question itself is wrong: ``EMPTY_QUESTIONS``, ``BAD_INTENT``, ``BAD_AUDIENCE``,
    ``BAD_QUESTION``, ``INVALID_ARGS``."""


@attrs.define(auto_exc=True, init=False)
class BadAnswerError(UserQuestionError):
    """An answer that breaks a rule of the request: ``BAD_ANSWER`` (the provider's answer),
    ``NOT_IN_AUDIENCE`` (a surface refusing a person outside the request's audience)."""


@attrs.define(auto_exc=True, init=False)
class ProviderSetupError(UserQuestionError):
    """No provider or more than one (``NO_PROVIDER``, ``DUPLICATE_PROVIDER``), or none any more:
    the context has closed (``CONTEXT_CLOSED``)."""


@attrs.define(auto_exc=True, init=False)
class CallerRefusedError(UserQuestionError):
    """The caller may not reach the human: ``CALLER_NOT_LIVE``, ``DELEGATED_CALLER``, and
    ``ASKED_ELSEWHERE`` (another live harness is asking the same durable question now)."""


@attrs.define(auto_exc=True, init=False)
class StoreError(UserQuestionError):
    """``STORE_UNUSABLE``: a durable provider's store cannot be used (never a timeout)."""


@attrs.frozen
class Outcome:
    """One row of `OUTCOMES`: what one code means to each surface."""

    code: str
    """The code (a `UserQuestionErrorCode` for the table's rows)."""
    family: type[UserQuestionError]
    """The class of the error, caught with ``except``."""
    message: str
    """The exact message; ``<...>`` stands for what is filled in."""
    exit_status: int
    """The exit status of ``dsh-ask`` for it."""
    elicitation: Literal["cancel", "error"]
    """An MCP elicitation answered through the service: ``cancel`` (the elicitation's own
    action), or ``error`` (a JSON-RPC error with the message)."""
    keeps_pending: bool
    """A durable tool call (LangGraph, pydantic-ai, OpenAI Agents) stays pending: the run pauses
    and asks again later, rather than telling the model."""
    chosen: bool
    """The user's (or the caller's) choice rather than a failure of the ask: no error status in
    traces."""


_C = UserQuestionErrorCode
_ROWS = (
    # code, family, message, dsh-ask exit, elicitation, keeps pending, chosen
    Outcome(_C.ASK_ABORTED, AskAbortedError, _ABORTED, 130, "cancel", True, True),
    Outcome(_C.ASK_TIMED_OUT, AskTimedOutError, _TIMED_OUT, 124, "cancel", False, True),
    Outcome(_C.EMPTY_QUESTIONS, InvalidRequestError, _EMPTY, 2, "error", False, False),
    Outcome(_C.CALLER_NOT_LIVE, CallerRefusedError, _NOT_LIVE, 1, "error", True, False),
    Outcome(_C.DELEGATED_CALLER, CallerRefusedError, _DELEGATED, 1, "error", True, False),
    Outcome(
        _C.BAD_INTENT,
        InvalidRequestError,
        'question <id> declares intent <kind> whose approve label "<approve>" names none of'
        " its options",
        2,
        "error",
        False,
        False,
    ),
    Outcome(_C.NO_PROVIDER, ProviderSetupError, _NO_PROVIDER, 1, "error", True, False),
    Outcome(_C.DUPLICATE_PROVIDER, ProviderSetupError, _DUPLICATE, 1, "error", True, False),
    Outcome(_C.ASK_CANCELLED, AskCancelledError, _CANCELLED, 130, "cancel", False, True),
    Outcome(
        _C.BAD_ANSWER,
        BadAnswerError,
        "the user-questions provider gave a bad answer: <problems>",
        1,
        "error",
        False,
        False,
    ),
    Outcome(
        _C.INVALID_ARGS,
        InvalidRequestError,
        "invalid arguments: <problems>",
        2,
        "error",
        False,
        False,
    ),
    Outcome(
        _C.BAD_QUESTION, InvalidRequestError, 'question "<id>" <problems>', 2, "error", False, False
    ),
    Outcome(_C.NOT_INTERACTIVE, NotInteractiveError, _NOT_INTERACTIVE, 3, "error", False, False),
    Outcome(_C.STORE_UNUSABLE, StoreError, f"{_STORE}: <reason>", 1, "error", True, False),
    Outcome(
        _C.ASKED_ELSEWHERE,
        CallerRefusedError,
        f'{_ELSEWHERE}: key "<key>" (<detail>)',
        1,
        "error",
        True,
        False,
    ),
    Outcome(_C.CONTEXT_CLOSED, ProviderSetupError, _CONTEXT_CLOSED, 1, "error", True, False),
    Outcome(
        _C.BAD_AUDIENCE, InvalidRequestError, f"{_AUDIENCE}<problem>", 2, "error", False, False
    ),
    Outcome(
        _C.NOT_IN_AUDIENCE,
        BadAnswerError,
        f"<person> {_NOT_IN_AUDIENCE}<audience>",
        1,
        "error",
        False,
        False,
    ),
)

OUTCOMES: Mapping[str, Outcome] = MappingProxyType({str(row.code): row for row in _ROWS})
"""Every code's `Outcome`, by code (a `UserQuestionErrorCode` or its plain string)."""
