"""The rules of a request and of its answer: the one place they are written.

The service applies them to every ask; providers import them instead of redefining them (a
provider checking what its human posted uses `check_answer`; one drawing a plan-review card
asks `is_plan_review`).

Where a new rule goes: a rule about what may be asked goes in `check_request` (with its
`UserQuestionError` constructor in ``errors.py`` and a row in the README's error table); a rule
about what may be answered goes in `check_answer` (a new ``BAD_ANSWER`` problem needs no new
code). Rules that need the harness (is the caller a live root agent?) stay in the service.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Mapping, Sequence

from .errors import UserQuestionError
from .payloads import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    WireFormatError,
)
from .plan_review import PLAN_REVIEW_INTENT

__all__ = ["check_answer", "check_request", "is_plan_review"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def check_request(request: AskUserQuestionRequest) -> None:
    """Check what ``ask()`` checks of the request itself, in its order; raise the first breach.

    There is at least one question (``EMPTY_QUESTIONS``); for each question in order with an
    ``intent``, the approve label is one of that question's options (``BAD_INTENT``, label
    message), and it has a ``detail``, the empty string included (``BAD_INTENT``, detail
    message).
    """
    questions = request.questions
    if not questions:
        raise UserQuestionError.empty_questions()
    for question in questions:
        intent = question.intent
        if intent is not None:
            if not any(option.label == intent.approve for option in question.options):
                raise UserQuestionError.bad_intent_label(question.id, intent.kind, intent.approve)
            if question.detail is None:
                raise UserQuestionError.bad_intent_detail(question.id, intent.kind)


def is_plan_review(question: AskUserQuestionItem) -> bool:
    """Whether a provider should show ``question`` as a plan-review card.

    True when its intent is ``plan-review``, the approve label is one of its options and it has
    a ``detail`` (the plan): exactly the questions `check_request` lets through with that intent.
    """
    intent = question.intent
    return (
        intent is not None
        and intent.kind == PLAN_REVIEW_INTENT
        and question.detail is not None
        and any(option.label == intent.approve for option in question.options)
    )


def check_answer(
    request: AskUserQuestionRequest | Sequence[AskUserQuestionItem], answer: object
) -> AskUserQuestionAnswer:
    """Check an answer against the questions asked; return it as a payload.

    ``request`` is the request (or its questions); ``answer`` is an `AskUserQuestionAnswer` or
    a mapping in its wire form. Every item must name an asked question, at most once; selected
    labels must be options of that question, each at most once; a single-select has at most
    one selection and never both a selection and ``custom``; ``custom`` is never blank and
    holds no unpaired surrogate (it is handed on to a model, and no model API takes one). Omitted
    questions are allowed (unanswered). Breaches raise one ``BAD_ANSWER`` whose ``problems``
    lists each, naming the item and the rule.
    """
    questions = request.questions if isinstance(request, AskUserQuestionRequest) else request
    if isinstance(answer, AskUserQuestionAnswer):
        checked = answer
    elif isinstance(answer, Mapping):
        try:
            checked = AskUserQuestionAnswer.from_dict(answer)
        except WireFormatError as error:
            raise UserQuestionError.bad_answer(*error.problems, wire_form=True) from error
    else:
        if inspect.iscoroutine(answer):
            answer.close()  # refused, never awaited: close it so Python does not warn
        raise UserQuestionError.bad_answer(
            f"expected an AskUserQuestionAnswer or a mapping in wire form,"
            f" got {type(answer).__name__}"
        )
    by_id = {question.id: question for question in questions}
    seen: set[str] = set()
    problems: list[str] | None = None
    for index, item in enumerate(checked.answers):
        question = by_id.get(item.id)
        if question is None:
            problems = _add(problems, index, item, "names no question that was asked")
            continue
        if item.id in seen:
            problems = _add(problems, index, item, "answers that question a second time")
            continue
        seen.add(item.id)
        selected = item.selected
        custom = item.custom
        if selected:
            labels = {option.label for option in question.options}
            for label in selected:
                if label not in labels:
                    problems = _add(
                        problems,
                        index,
                        item,
                        f"selects {_q(label)}, which is not one of its options",
                    )
            if len(selected) > 1 and len(set(selected)) != len(selected):
                problems = _add(problems, index, item, "selects an option more than once")
            if not question.multi_select:
                if len(selected) > 1:
                    problems = _add(
                        problems,
                        index,
                        item,
                        f"selects {len(selected)} options of a single-select question",
                    )
                if custom is not None:
                    problems = _add(
                        problems,
                        index,
                        item,
                        "has both a selection and custom text on a single-select question",
                    )
        if custom is not None and not custom.strip():
            problems = _add(problems, index, item, "has blank custom text")
        elif custom is not None and not custom.isascii() and _LONE_SURROGATE.search(custom):
            # Refused, not repaired: no model API takes a lone surrogate, and replacing it
            # would hand the model words the human never wrote.
            problems = _add(
                problems, index, item, "has custom text with an unpaired surrogate (not Unicode)"
            )
    if problems:
        raise UserQuestionError.bad_answer(*problems)
    return checked


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _add(
    problems: list[str] | None, index: int, item: AskUserQuestionAnswerItem, problem: str
) -> list[str]:
    # Built only on failure: quoting the id costs more than the whole check.
    problems = [] if problems is None else problems
    problems.append(f"answers[{index}] (question {_q(item.id)}) {problem}")
    return problems
