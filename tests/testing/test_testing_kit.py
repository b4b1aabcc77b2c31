"""The public testing kit: ScriptedProvider and the pytest fixtures."""

from __future__ import annotations

import asyncio

import pytest

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    UserQuestionError,
    UserQuestionService,
)
from dsh_user_questions.harness import AbortController, HarnessContext
from dsh_user_questions.testing import (
    WAIT_FOR_ABORT,
    ScriptedProvider,
    ScriptExhausted,
    make_request,
)

PNPM = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}


class TestFixtures:
    """The kit's pytest fixtures: a fresh context with the service, the scripted provider."""

    def test_fixtures_give_a_fresh_context_with_the_service(
        self, dsh_context: HarnessContext, user_questions: UserQuestionService
    ) -> None:
        """dsh_context has the plugin registered; user_questions is its service."""
        assert dsh_context.user_questions is user_questions
        assert dsh_context.agents is not None

    async def test_scripted_provider_fixture_is_registered(
        self, user_questions: UserQuestionService, scripted_provider: ScriptedProvider
    ) -> None:
        """The scripted_provider fixture is the active provider of user_questions."""
        scripted_provider.push(PNPM)
        answer = await user_questions.ask(make_request())
        assert answer == AskUserQuestionAnswer.from_dict(PNPM)
        assert scripted_provider.remaining == 0


class TestScriptedProvider:
    """ScriptedProvider plays its steps in order and says when it runs out."""

    async def test_steps_are_played_in_order_and_requests_recorded(self) -> None:
        """Each ask plays the next step; requests lists every request received."""
        provider = ScriptedProvider(PNPM, {"answers": []})
        first, second = make_request(), make_request()
        assert await provider.ask(first) == PNPM
        assert await provider.ask(second) == {"answers": []}
        assert provider.requests == [first, second]

    async def test_exception_steps_are_raised(self) -> None:
        """An exception instance or class in the script is raised."""
        provider = ScriptedProvider(UserQuestionError.cancelled(), KeyError)
        with pytest.raises(UserQuestionError, match="cancelled"):
            await provider.ask(make_request())
        with pytest.raises(KeyError):
            await provider.ask(make_request())

    async def test_callable_steps_compute_the_answer(self) -> None:
        """A callable step gets the request; an async one is awaited."""

        def echo(request: AskUserQuestionRequest) -> object:
            return {"answers": [{"id": request.questions[0].id, "custom": "sync"}]}

        async def later(request: AskUserQuestionRequest) -> object:
            await asyncio.sleep(0)
            return {"answers": [{"id": request.questions[0].id, "custom": "async"}]}

        provider = ScriptedProvider(echo, later)
        assert await provider.ask(make_request()) == {"answers": [{"id": "pkg", "custom": "sync"}]}
        assert await provider.ask(make_request()) == {"answers": [{"id": "pkg", "custom": "async"}]}

    async def test_running_out_of_script_says_so(self) -> None:
        """Asking past the end of the script raises ScriptExhausted naming the questions."""
        provider = ScriptedProvider()
        with pytest.raises(
            ScriptExhausted, match="asked 1 times but scripted 0 steps; questions: pkg"
        ):
            await provider.ask(make_request())

    async def test_wait_for_abort_ends_with_ask_aborted(self) -> None:
        """WAIT_FOR_ABORT waits for the request's signal, then raises ASK_ABORTED."""
        controller = AbortController()
        provider = ScriptedProvider(WAIT_FOR_ABORT)
        task = asyncio.ensure_future(provider.ask(make_request(signal=controller.signal)))
        await asyncio.sleep(0.01)
        assert not task.done()
        controller.abort()
        with pytest.raises(UserQuestionError) as info:
            await asyncio.wait_for(task, 5)
        assert info.value.code == "ASK_ABORTED"

    async def test_scripted_provider_works_as_a_plugin(self, dsh_context: HarnessContext) -> None:
        """Registered with ctx.register, the scripted provider answers through the hook."""
        provider = ScriptedProvider(PNPM)
        dsh_context.register(provider, name="script")
        answer = await dsh_context.user_questions.ask(make_request())
        assert answer == AskUserQuestionAnswer.from_dict(PNPM)
        assert len(provider.requests) == 1
