"""What both modes need to know about a question and to say about an answer."""

from __future__ import annotations

from collections.abc import Mapping

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    UserQuestionError,
)
from dsh_user_questions._input_text import size_text
from dsh_user_questions._problems import item_problem, shown_problem
from dsh_user_questions.rules import check_answer, inert_text
from dsh_user_questions.view import QuestionView

from ._i18n import N_, _

__all__ = [
    "SECRET_GIVEN",
    "answer_problem",
    "describe_answer",
    "describe_value",
    "one_line",
    "title",
    "unusable_stream",
]

SECRET_GIVEN = N_("(secret given)")
"""What the summary, the scrollback record and line mode's transcript show for a secret answer."""


def one_line(text: str) -> str:
    """A view's several-line text (already inert) on one line: a row or a heading is one."""
    return text.replace("\n", " ")


def title(view: QuestionView) -> str:
    """A short name for the question (inert, one line): its header, else its question."""
    return view.header or one_line(view.question)


def describe_answer(
    answer: AskUserQuestionAnswerItem | None,
    *,
    secret: bool = False,
    shown: Mapping[str, str] | None = None,
) -> str:
    """The answer in a few inert words, for the summary and the recap.

    ``shown`` maps each option label to the way the form showed it (invisible and look-alike
    characters as stand-ins); a ``secret`` answer's text is never shown.
    """
    if answer is None:
        return _("(not answered)")
    value = getattr(answer, "value", None)
    if value is not None:
        return describe_value(value)
    labels = shown or {}
    parts = [labels.get(label) or inert_text(label) for label in answer.selected]
    if answer.custom is not None:
        parts.append(_(SECRET_GIVEN) if secret else f"\u201c{inert_text(answer.custom)}\u201d")
    return ", ".join(parts) if parts else _("(skipped)")


def describe_value(value: object) -> str:
    """A typed answer's value in a few inert words: the number or date as given, the paths
    picked, the names and sizes of the files uploaded (never their bytes)."""
    if isinstance(value, (list, tuple)):
        parts = []
        for entry in value:
            name = getattr(entry, "name", None)
            if isinstance(name, str):  # an upload's record: its name and size, never more
                size = getattr(entry, "size", None)
                about = f" ({size_text(size)})" if isinstance(size, int) else ""
                parts.append(f"{inert_text(name)}{about}")
            else:
                parts.append(inert_text(str(entry)))
        return ", ".join(parts) if parts else _("(none)")
    return inert_text(str(value))


def unusable_stream(name: str, why: str) -> UserQuestionError:
    """``NOT_INTERACTIVE`` naming the stream the terminal provider cannot use and why.

    The human cannot be asked at all (the question never reached them), so the ask is neither a
    human who declined (``ASK_CANCELLED``) nor a withdrawal by the asker (``ASK_ABORTED``).
    """
    return UserQuestionError.not_interactive(f"the terminal provider cannot use {name}: {why}")


def answer_problem(item: AskUserQuestionItem, answer: AskUserQuestionAnswerItem) -> str | None:
    """Why the core's answer rules (`rules.check_answer`) refuse ``answer``, or ``None``.

    Both modes check what the person typed before taking it, so text the core would refuse
    (too long, control characters) is asked for again instead of failing the whole ask.
    """
    try:
        check_answer([item], AskUserQuestionAnswer([answer]))
    except UserQuestionError as error:
        problems = error.problems or (error.message,)
        # Beside its question, without the item's name, in the person's language: "answers[0]
        # (question "n") has value 12 above the maximum 9" reads "值 12 大于最大值 9".
        return "; ".join(inert_text(shown_problem(item_problem(p))) for p in problems)
    return None
