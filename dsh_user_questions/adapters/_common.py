"""What the adapters share: running the tool and telling invalid arguments apart."""

from __future__ import annotations

from typing import Any

from .. import tool
from ..errors import UserQuestionErrorCode


def is_invalid_arguments(result: tool.ToolResult) -> bool:
    """The call failed because the model's arguments broke the schema (``INVALID_ARGS``)."""
    return (
        result.error is not None and result.error.get("code") == UserQuestionErrorCode.INVALID_ARGS
    )


def missing_framework(adapter: str, extra: str, err: ImportError) -> ImportError:
    """The error of importing an adapter whose framework is not installed."""
    return ImportError(
        f"dsh_user_questions.adapters.{adapter} needs its framework:"
        f" pip install 'dsh-user-questions[{extra}]' ({err})"
    )


def context_of(deps: Any) -> Any:
    """The harness context in a framework's run dependencies.

    ``deps`` is the harness context itself (anything with ``get("user_questions")``) or holds
    it as ``deps.harness``.
    """
    if callable(getattr(deps, "get", None)):
        return deps
    harness = getattr(deps, "harness", None)
    if harness is not None and callable(getattr(harness, "get", None)):
        return harness
    raise TypeError(
        "ask_user_question has no harness context: pass one to the adapter, or run the agent"
        f" with deps that are the context or have it as .harness (got {type(deps).__name__})"
    )
