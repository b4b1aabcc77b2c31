"""Errors of the user-questions seam: one exception type, a stable code, exact messages.

Callers route on ``err.code``; the messages are public too (a model reads them through the
tool), so each one is built in exactly one place: the constructors of `UserQuestionError`.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

import attrs

from ._abort import AbortError

if TYPE_CHECKING:
    from ._abort import AbortSignal

__all__ = ["AskTimeoutError", "HarnessError", "UserQuestionError", "UserQuestionErrorCode"]


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

    def __str__(self) -> str:
        return self.value


@attrs.define(auto_exc=True, init=False)
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


class AskTimeoutError(TimeoutError):
    """The abort reason of an ask whose own timeout expired (``ask(request, timeout=...)``).

    `UserQuestionError.aborted_by` turns a signal aborted with it into ``ASK_TIMED_OUT``.
    """


@attrs.define(auto_exc=True, init=False)
class UserQuestionError(HarnessError):
    """The error of the user-questions service; ``code`` is a `UserQuestionErrorCode`.

    Build one with the constructors below so the message is always the exact one.
    """

    @classmethod
    def aborted(cls, detail: str | None = None) -> UserQuestionError:
        """``ASK_ABORTED``: the request's signal aborted before the user answered.

        ``detail`` (e.g. why a provider stopped) follows the exact message after ``": "``.
        """
        message = _ABORTED if detail is None else f"{_ABORTED}: {detail}"
        return cls(message, UserQuestionErrorCode.ASK_ABORTED)

    @classmethod
    def timed_out(cls) -> UserQuestionError:
        """``ASK_TIMED_OUT``: the ask's own timeout expired before the user answered."""
        return cls(_TIMED_OUT, UserQuestionErrorCode.ASK_TIMED_OUT)

    @classmethod
    def aborted_by(cls, signal: AbortSignal, detail: str | None = None) -> UserQuestionError:
        """The error for an ask withdrawn by ``signal``: the one place it is built.

        ``ASK_TIMED_OUT`` when the signal aborted because the ask's timeout expired (its reason
        is an `AskTimeoutError`), else ``ASK_ABORTED`` (with ``detail``). Either is chained
        from the signal's reason (wrapped in an `AbortError` when it is no exception), as
        ``raise ... from reason`` would, so ``raise UserQuestionError.aborted_by(signal)``
        is all a provider writes.
        """
        reason = signal.reason
        error = cls.timed_out() if isinstance(reason, AskTimeoutError) else cls.aborted(detail)
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
    def no_provider(cls) -> UserQuestionError:
        """``NO_PROVIDER``: nothing is registered to show the question to the human."""
        return cls(_NO_PROVIDER, UserQuestionErrorCode.NO_PROVIDER)

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
