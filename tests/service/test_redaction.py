"""Observers see a secret answer redacted; the caller gets the clear text."""

from __future__ import annotations

from typing import Any

from dsh_user_questions import AskUserQuestionItem, AskUserQuestionRequest, hookimpl
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.rules import SECRET_PLACEHOLDER
from dsh_user_questions.testing import ScriptedProvider


async def test_observers_see_secrets_redacted_and_the_caller_the_clear_text(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """dsh_user_questions_answered gets the placeholder; ask() returns what the human typed."""
    seen: list[Any] = []

    class Observer:
        @hookimpl
        def dsh_user_questions_answered(self, answer: Any) -> None:
            seen.append(answer.to_dict())

    dsh_context.register(Observer())
    request = AskUserQuestionRequest(
        questions=[AskUserQuestionItem(id="token", question="Your API token?", secret=True)]
    )
    scripted_provider.push({"answers": [{"id": "token", "custom": "s3cr3t"}]})
    answer = await dsh_context.user_questions.ask(request)
    assert answer.answers[0].custom == "s3cr3t"
    assert seen == [{"answers": [{"id": "token", "selected": [], "custom": SECRET_PLACEHOLDER}]}]
