"""The strict answer check of the web protocol.

The core service checks every provider's answer itself (``BAD_ANSWER``); the web page is a
network client, so its posts are checked here first, with a reason per fault, and a bad post
leaves the question pending. The rules are the service's, plus ``exact``: the page must send
exactly one item per asked question, in the order asked (a skipped one as ``selected: []``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionItem, AskUserQuestionRequest

__all__ = ["answer_problems"]


def answer_problems(
    request: AskUserQuestionRequest | Iterable[AskUserQuestionItem],
    answer: AskUserQuestionAnswer,
    *,
    exact: bool = False,
) -> tuple[str, ...]:
    """Every way ``answer`` breaks the rules of ``request``, each as ``"<path>: <what>"``.

    An empty result means the answer is acceptable. The rules: every item names an asked
    question, at most once; selected labels are offered options of that question, without
    duplicates; a single-select has at most one selection and never both a selection and
    ``custom``; ``custom``, when present, is not blank. With ``exact``, the items must also be
    exactly the asked questions in the order asked.
    """
    questions = (
        request.questions if isinstance(request, AskUserQuestionRequest) else tuple(request)
    )
    by_id = {question.id: question for question in questions}
    problems: list[str] = []
    seen: set[str] = set()
    for index, item in enumerate(answer.answers):
        path = f"answers[{index}]"
        question = by_id.get(item.id)
        if question is None:
            problems.append(f"{path}.id: {_quote(item.id)} names no asked question")
            continue
        if item.id in seen:
            problems.append(f"{path}.id: question {_quote(item.id)} is answered more than once")
            continue
        seen.add(item.id)
        offered = {option.label for option in question.options}
        chosen: set[str] = set()
        for position, label in enumerate(item.selected):
            where = f"{path}.selected[{position}]"
            if label not in offered:
                problems.append(
                    f"{where}: {_quote(label)} is not an option of question {_quote(item.id)}"
                )
            elif label in chosen:
                problems.append(f"{where}: {_quote(label)} is selected more than once")
            chosen.add(label)
        if not question.multi_select:
            if len(item.selected) > 1:
                problems.append(
                    f"{path}.selected: question {_quote(item.id)} is single-select"
                    f" and takes at most one selection, got {len(item.selected)}"
                )
            if item.selected and item.custom is not None:
                problems.append(
                    f"{path}.custom: question {_quote(item.id)} is single-select"
                    " and takes a selection or custom text, not both"
                )
        if item.custom is not None and not item.custom.strip():
            problems.append(f"{path}.custom: custom text is blank")
    if exact:
        expected = [question.id for question in questions]
        got = [item.id for item in answer.answers]
        if got != expected:
            problems.append(
                "answers: expected exactly one item per asked question in the order asked"
                f" {_quote(expected)}, got {_quote(got)}"
            )
    return tuple(problems)


def _quote(value: object) -> str:
    # JSON quoting keeps model-written ids and labels unambiguous and on one line.
    return json.dumps(value, ensure_ascii=False)
