"""The strict answer check of the web protocol.

The page is a network client, so its posts are checked before they can settle a question: the
core's `dsh_user_questions.check_answer` rules (items name asked questions at most once, offered
labels only, single-select limits, no blank custom text), plus one rule of this protocol: the
page sends exactly one item per asked question, in the order asked (a skipped one as
``{"id": ..., "selected": []}``), so nothing the human saw is silently dropped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    UserQuestionError,
    check_answer,
)

__all__ = ["check_page_answer"]


def check_page_answer(
    questions: Sequence[AskUserQuestionItem], answer: object
) -> AskUserQuestionAnswer:
    """Check a posted answer (wire form or payload) against ``questions``; return the payload.

    Raises `UserQuestionError` ``BAD_ANSWER`` naming the first rule the answer breaks.
    """
    checked = check_answer(questions, answer)
    expected = [question.id for question in questions]
    got = [item.id for item in checked.answers]
    if got != expected:
        raise UserQuestionError.bad_answer(
            "answers must be exactly one item per asked question in the order asked:"
            f" expected {_quote(expected)}, got {_quote(got)}"
        )
    return checked


def _quote(value: object) -> str:
    # JSON quoting keeps model-written ids unambiguous and on one line.
    return json.dumps(value, ensure_ascii=False)
