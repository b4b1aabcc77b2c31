"""The strict answer check of the web protocol.

The page is a network client, so its posts are checked before they can settle a question: the
core's `dsh_user_questions.check_answer` rules (items name asked questions at most once, offered
labels only, single-select limits, no blank custom text), plus one rule of this protocol: the
page sends exactly one item per asked question, in the order asked (a skipped one as
``{"id": ..., "selected": []}``), so nothing the human saw is silently dropped.

Typed text is bounded like the model's own text: at most `MAX_CUSTOM_CHARS` characters, and
no control character but tab and newline (the page sends CR LF as LF), no lone surrogate.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionItem, UserQuestionError
from dsh_user_questions.rules import check_answer

__all__ = ["MAX_CUSTOM_CHARS", "check_page_answer", "problems_of"]

MAX_CUSTOM_CHARS = 10_000
"""The longest free text (``custom``) one answer item may carry."""

# C0 and C1 controls, DEL, and lone surrogates; tab and newline are ordinary typed text.
_FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def check_page_answer(
    questions: Sequence[AskUserQuestionItem], answer: object
) -> AskUserQuestionAnswer:
    """Check a posted answer (wire form or payload) against ``questions``; return the payload.

    Raises `UserQuestionError` ``BAD_ANSWER`` naming the first rule the answer breaks.
    """
    checked = check_answer(questions, answer)
    for index, item in enumerate(checked.answers):
        custom = item.custom
        if custom is None:
            continue
        if len(custom) > MAX_CUSTOM_CHARS:
            raise UserQuestionError.bad_answer(
                f"answers[{index}].custom: at most {MAX_CUSTOM_CHARS} characters, got {len(custom)}"
            )
        bad = _FORBIDDEN.search(custom.replace("\r\n", "\n"))
        if bad is not None:
            raise UserQuestionError.bad_answer(
                f"answers[{index}].custom: control character U+{ord(bad.group()):04X}"
                f" at {bad.start()} is not allowed"
            )
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


def problems_of(err: UserQuestionError) -> tuple[str, ...]:
    """The problems a ``BAD_ANSWER`` lists (paths from the posted body, ``answer.answers[0]...``),
    or its message as the one problem."""
    problems = err.problems or (err.message,)
    return tuple(f"answer.{p}" if p.startswith("answers") else p for p in problems)
