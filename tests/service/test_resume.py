"""`UserQuestionService.resume`: waiting again, through the active provider, for an old question."""

from __future__ import annotations

import asyncio

import pytest

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionRequest,
    UserQuestionError,
    hookimpl,
)
from dsh_user_questions.harness import AbortController, AbortSignal, HarnessContext

ANSWER = AskUserQuestionAnswer([AskUserQuestionAnswerItem(id="pkg", selected=("pnpm",))])


class Keeper:
    """A provider that keeps answers by question id; resume() waits for one."""

    def __init__(self) -> None:
        self.answers: dict[str, asyncio.Future[AskUserQuestionAnswer]] = {}
        self.signals: list[AbortSignal | None] = []

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        raise AssertionError("not asked in these tests")

    def slot(self, question_id: str) -> asyncio.Future[AskUserQuestionAnswer]:
        return self.answers.setdefault(question_id, asyncio.get_running_loop().create_future())

    async def resume(
        self, question_id: str, *, signal: AbortSignal | None = None
    ) -> AskUserQuestionAnswer:
        self.signals.append(signal)
        if question_id == "unknown":
            raise LookupError(f"no question {question_id!r}")
        return await self.slot(question_id)


class KeeperPlugin:
    """The same, as a provider plugin implementing the resume hook."""

    def __init__(self, result: object) -> None:
        self.result = result

    @hookimpl
    def dsh_user_questions_ask(self, request: AskUserQuestionRequest) -> object:
        raise AssertionError("not asked in these tests")

    @hookimpl
    def dsh_user_questions_resume(self, question_id: str, signal: AbortSignal | None) -> object:
        return self.result


class TestResumeAbort:
    """An abort ends the renewed wait; an aborted signal never reaches the provider."""

    async def test_an_abort_ends_the_renewed_wait(self, dsh_context: HarnessContext) -> None:
        """An abort while the provider waits raises ASK_ABORTED, chained from the reason."""
        keeper = Keeper()
        dsh_context.user_questions.register_provider(keeper)
        controller = AbortController()
        resuming = asyncio.ensure_future(
            dsh_context.user_questions.resume("q1", signal=controller.signal)
        )
        await asyncio.sleep(0)
        reason = RuntimeError("moved on")
        controller.abort(reason)
        with pytest.raises(UserQuestionError) as caught:
            await resuming
        assert caught.value.code == "ASK_ABORTED"
        assert caught.value.__cause__ is reason

    async def test_an_aborted_signal_never_reaches_the_provider(
        self, dsh_context: HarnessContext
    ) -> None:
        """A signal aborted before resume() raises ASK_ABORTED without calling the provider."""
        keeper = Keeper()
        dsh_context.user_questions.register_provider(keeper)
        with pytest.raises(UserQuestionError) as caught:
            await dsh_context.user_questions.resume("q1", signal=AbortSignal.abort("no"))
        assert caught.value.code == "ASK_ABORTED"
        assert keeper.signals == []


class TestResume:
    """resume(): the active provider's answer for an old question, or why not."""

    async def test_resume_returns_the_registered_providers_answer(
        self,
        dsh_context: HarnessContext,
    ) -> None:
        """resume() hands the id and signal to the provider's resume() and returns its answer."""
        keeper = Keeper()
        dsh_context.user_questions.register_provider(keeper)
        keeper.slot("q1").set_result(ANSWER)
        controller = AbortController()
        assert await dsh_context.user_questions.resume("q1", signal=controller.signal) == ANSWER
        assert keeper.signals == [controller.signal]

    async def test_resume_through_a_provider_plugin(self, dsh_context: HarnessContext) -> None:
        """A provider plugin's dsh_user_questions_resume result (wire form too) is the answer."""
        dsh_context.register(KeeperPlugin(ANSWER.to_dict()), name="keeper")
        assert await dsh_context.user_questions.resume("q1") == ANSWER

    async def test_a_plugin_that_cannot_resume_says_so(self, dsh_context: HarnessContext) -> None:
        """A provider plugin whose resume hook gives None cannot resume: NotImplementedError."""
        dsh_context.register(KeeperPlugin(None), name="keeper")
        with pytest.raises(NotImplementedError, match="'keeper' keeps no questions"):
            await dsh_context.user_questions.resume("q1")

    async def test_a_bad_resume_result_is_bad_answer(self, dsh_context: HarnessContext) -> None:
        """Something that is not an answer is BAD_ANSWER, as for ask()."""
        dsh_context.register(KeeperPlugin(42), name="keeper")
        with pytest.raises(UserQuestionError) as caught:
            await dsh_context.user_questions.resume("q1")
        assert caught.value.code == "BAD_ANSWER"

    async def test_the_providers_errors_propagate(self, dsh_context: HarnessContext) -> None:
        """A provider's LookupError for an unknown id reaches the caller unchanged."""
        dsh_context.user_questions.register_provider(Keeper())
        with pytest.raises(LookupError, match="unknown"):
            await dsh_context.user_questions.resume("unknown")
