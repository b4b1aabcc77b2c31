"""The core's answer rules, as this distribution calls them.

Newer cores keep the request and answer rules in ``dsh_user_questions.rules``; older ones
export ``check_answer(questions, answer)`` from the package root. One seam, so the store and
the provider check answers exactly as ``ask()`` does, whichever core is installed.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest

__all__ = ["check_answer"]


def _rules() -> ModuleType | None:
    try:
        return importlib.import_module("dsh_user_questions.rules")
    except ImportError:
        return None


_RULES = _rules()


def check_answer(
    request: AskUserQuestionRequest, answer: AskUserQuestionAnswer | Mapping[str, Any]
) -> AskUserQuestionAnswer:
    """The checked answer, or ``BAD_ANSWER`` naming the rule it breaks."""
    if _RULES is None:
        from dsh_user_questions import check_answer as core_check

        return core_check(request.questions, answer)
    checked: AskUserQuestionAnswer = _RULES.check_answer(request, answer)
    return checked
