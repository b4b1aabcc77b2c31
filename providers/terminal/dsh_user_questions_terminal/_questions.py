"""What both modes need to know about a question and to say about an answer."""

from __future__ import annotations

from dsh_user_questions import AskUserQuestionAnswerItem, AskUserQuestionItem, UserQuestionError

from ._inert import inert_text

__all__ = ["describe_answer", "title", "unusable_stream"]


def title(item: AskUserQuestionItem) -> str:
    """A short inert name for the question: its header, else its question."""
    return inert_text(item.header or item.question)


def describe_answer(answer: AskUserQuestionAnswerItem | None) -> str:
    """The answer in a few inert words, for the summary and the recap."""
    if answer is None:
        return "(not answered)"
    parts = [inert_text(label) for label in answer.selected]
    if answer.custom is not None:
        parts.append(f"\u201c{inert_text(answer.custom)}\u201d")
    return ", ".join(parts) if parts else "(skipped)"


def unusable_stream(name: str, why: str) -> UserQuestionError:
    """``ASK_ABORTED`` naming the stream the terminal provider cannot use and why.

    The human cannot be asked at all (the question never reached them), so the ask stops as a
    provider that stopped, not as a human who declined (``ASK_CANCELLED``).
    """
    return UserQuestionError.aborted(f"the terminal provider cannot use {name}: {why}")
