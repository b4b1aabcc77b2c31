"""The strict answer check of the web protocol.

The page is a network client, so its posts are checked before they can settle a question: the
core's `dsh_user_questions.rules.check_answer` (every answer rule of every surface: items name
asked questions at most once, offered labels only, single-select limits, no blank custom text,
custom text at most `MAX_CUSTOM_CHARS` characters with no control character but tab and
newline, no bidi embedding or override, no lone surrogate), plus the one rule of this protocol:
the page sends exactly one item per asked question, in the order asked (a skipped one as
``{"id": ..., "selected": []}``), so nothing the human saw is silently dropped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionItem, UserQuestionError
from dsh_user_questions._identity import TOKEN_HOLDER
from dsh_user_questions.rules import check_answer

__all__ = ["check_page_answer", "problems_of"]


def check_page_answer(
    questions: Sequence[AskUserQuestionItem], answer: object, *, answered_by: str = TOKEN_HOLDER
) -> AskUserQuestionAnswer:
    """Check a posted answer (wire form or payload) against ``questions``; return the payload.

    Raises `UserQuestionError` ``BAD_ANSWER`` naming the rules the answer breaks. The answer's
    ``answered_by`` is ``answered_by``, whatever name the posted body claims: the person a
    trusted proxy named, else ``token`` (whoever held the page's token).
    """
    checked = check_answer(questions, answer)
    expected = [question.id for question in questions]
    got = [item.id for item in checked.answers]
    if got != expected:
        raise UserQuestionError.bad_answer(
            "answers must be exactly one item per asked question in the order asked:"
            f" expected {_quote(expected)}, got {_quote(got)}"
        )
    return AskUserQuestionAnswer(checked.answers, answered_by=answered_by)


def _quote(value: object) -> str:
    # JSON quoting keeps model-written ids unambiguous and on one line.
    return json.dumps(value, ensure_ascii=False)


def problems_of(err: UserQuestionError) -> tuple[str, ...]:
    """The problems a ``BAD_ANSWER`` lists (paths from the posted body, ``answer.answers[0]...``),
    or its message as the one problem."""
    problems = err.problems or (err.message,)
    return tuple(f"answer.{p}" if p.startswith("answers") else p for p in problems)
