"""Errors of the user-questions seam: one exception type, a stable code, exact messages.

Callers route on ``err.code``; the messages are public too (a model reads them through the
tool), so each one is built in exactly one place: the constructors of `UserQuestionError`.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable

import attrs

__all__ = ["HarnessError", "UserQuestionError", "UserQuestionErrorCode"]


class UserQuestionErrorCode(str, enum.Enum):
    """The stable codes of `UserQuestionError`; each compares equal to its plain string."""

    ASK_ABORTED = "ASK_ABORTED"
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
    ``problems`` lists each fault as data for errors about bad input (``INVALID_ARGS``); it
    is empty for the other errors.
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
_EMPTY = "ask_user_question requires at least one question"
_NOT_LIVE = "human interaction requires the exact live calling agent when an agent is supplied"
_DELEGATED = (
    "human interaction is unavailable while the calling agent is owned by another live agent;"
    " include the unresolved question or decision in the child agent's final result"
)
_NO_PROVIDER = "no user-questions provider is registered"
_DUPLICATE = "a user-questions provider is already registered"
_CANCELLED = "the user cancelled ask_user_question"


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
    def duplicate_provider(cls, detail: str | None = None) -> UserQuestionError:
        """``DUPLICATE_PROVIDER``: a second provider while one is active.

        ``detail`` says which providers collide and how to choose one; it follows the exact
        message after ``": "``.
        """
        message = _DUPLICATE if detail is None else f"{_DUPLICATE}: {detail}"
        return cls(message, UserQuestionErrorCode.DUPLICATE_PROVIDER)

    @classmethod
    def cancelled(cls) -> UserQuestionError:
        """``ASK_CANCELLED``: the human closed the question (raised by providers)."""
        return cls(_CANCELLED, UserQuestionErrorCode.ASK_CANCELLED)

    @classmethod
    def bad_answer(cls, problem: str) -> UserQuestionError:
        """``BAD_ANSWER``: the provider's answer breaks a rule of the request."""
        return cls(
            f"the user-questions provider gave a bad answer: {problem}",
            UserQuestionErrorCode.BAD_ANSWER,
        )
