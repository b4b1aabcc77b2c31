"""The service: provider slot, the order of checks, abort, cancellation, the answer check."""

from __future__ import annotations

import asyncio
import gc
import logging
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionIntent,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    UserQuestionError,
    UserQuestionErrorCode,
    UserQuestionService,
    hookimpl,
    plugin,
)
from dsh_user_questions.harness import (
    AbortController,
    AbortError,
    AbortSignal,
    Agent,
    HarnessContext,
)
from dsh_user_questions.rules import check_answer
from dsh_user_questions.testing import (
    WAIT_FOR_ABORT,
    ScriptedProvider,
    make_plan_question,
    make_question,
    make_request,
)

PNPM = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
PNPM_ANSWER = AskUserQuestionAnswer([AskUserQuestionAnswerItem(id="pkg", selected=["pnpm"])])


def holds_no_listener(signal: AbortSignal) -> bool:
    """Whether the signal keeps nothing to call (no mapping of listeners among its referents).

    Read through the garbage collector's view of the object, not a private attribute name.
    """
    return not any(isinstance(ref, dict) and ref for ref in gc.get_referents(signal))


class Plugin:
    """A provider plugin answering every request with ``answer``."""

    def __init__(self, answer: object = PNPM) -> None:
        self.answer = answer

    @hookimpl
    async def dsh_user_questions_ask(self, request: AskUserQuestionRequest) -> object:
        return self.answer


# The provider slot -----------------------------------------------------------------------------


async def test_registered_provider_answers(user_questions: UserQuestionService) -> None:
    """A provider given to register_provider answers ask()."""
    user_questions.register_provider(ScriptedProvider(PNPM_ANSWER))
    assert await user_questions.ask(make_request()) == PNPM_ANSWER


async def test_second_provider_is_refused_and_the_first_stays(
    user_questions: UserQuestionService,
) -> None:
    """register_provider raises DUPLICATE_PROVIDER while one is active; the active one stays."""
    first = ScriptedProvider()
    user_questions.register_provider(first)
    with pytest.raises(UserQuestionError) as info:
        user_questions.register_provider(ScriptedProvider())
    assert info.value.code == UserQuestionErrorCode.DUPLICATE_PROVIDER
    assert str(info.value).startswith("a user-questions provider is already registered")
    first.push(PNPM)
    assert await user_questions.ask(make_request()) == PNPM_ANSWER
    assert first.remaining == 0


def test_dispose_is_idempotent_and_removes_only_its_registration(
    user_questions: UserQuestionService,
) -> None:
    """An old dispose called after another provider took the slot changes nothing."""
    provider = ScriptedProvider()
    dispose_old = user_questions.register_provider(provider)
    dispose_old()
    dispose_old()
    dispose_new = user_questions.register_provider(provider)  # the same object again
    dispose_old()
    with pytest.raises(UserQuestionError, match="already registered"):
        user_questions.register_provider(ScriptedProvider())
    dispose_new()
    user_questions.register_provider(ScriptedProvider())


def test_a_provider_needs_an_ask_method(user_questions: UserQuestionService) -> None:
    """register_provider of an object without ask() is a TypeError."""
    with pytest.raises(TypeError, match="needs an ask\\(request\\) method; object has none"):
        user_questions.register_provider(object())  # type: ignore[arg-type]


async def test_provider_plugin_answers(dsh_context: HarnessContext) -> None:
    """A registered plugin implementing dsh_user_questions_ask is the provider."""
    dsh_context.register(Plugin(), name="ui")
    assert await dsh_context.user_questions.ask(make_request()) == PNPM_ANSWER


def test_provider_plugin_is_refused_while_a_provider_is_registered(
    dsh_context: HarnessContext,
) -> None:
    """ctx.register of a provider plugin raises DUPLICATE_PROVIDER and is undone."""
    dsh_context.user_questions.register_provider(ScriptedProvider())
    with pytest.raises(UserQuestionError) as info:
        dsh_context.register(Plugin(), name="web")
    assert info.value.code == "DUPLICATE_PROVIDER"
    assert "and provider plugin 'web' collide; unregister one of them" in str(info.value)
    assert dsh_context.plugin_manager.get_plugin("web") is None


def test_second_provider_plugin_is_refused(dsh_context: HarnessContext) -> None:
    """Two provider plugins through ctx.register: the second is refused, naming both."""
    dsh_context.register(Plugin(), name="terminal")
    with pytest.raises(UserQuestionError) as info:
        dsh_context.register(Plugin(), name="web")
    assert "provider plugin 'terminal' and provider plugin 'web' collide" in str(info.value)
    assert dsh_context.plugin_manager.get_plugin("terminal") is not None


def test_register_provider_is_refused_while_a_provider_plugin_is_active(
    dsh_context: HarnessContext,
) -> None:
    """register_provider raises DUPLICATE_PROVIDER when a provider plugin is registered."""
    dsh_context.register(Plugin(), name="terminal")
    with pytest.raises(
        UserQuestionError, match=r"provider plugin 'terminal' and provider .* collide"
    ):
        dsh_context.user_questions.register_provider(ScriptedProvider())


async def test_unregistering_the_provider_plugin_frees_the_slot(
    dsh_context: HarnessContext,
) -> None:
    """After the provider plugin is unregistered, another provider may register."""
    ui = Plugin()
    dsh_context.register(ui, name="ui")
    dsh_context.unregister(ui)
    dsh_context.user_questions.register_provider(ScriptedProvider(PNPM))
    assert await dsh_context.user_questions.ask(make_request()) == PNPM_ANSWER


async def test_ask_refuses_two_providers_that_slipped_in_before_the_service() -> None:
    """Providers registered before the plugin are never chosen silently: ask() refuses them."""
    ctx = HarnessContext()
    ctx.register(Plugin(), name="terminal")
    ctx.register(Plugin(), name="web")
    ctx.register(plugin)
    with pytest.raises(UserQuestionError) as info:
        await ctx.user_questions.ask(make_request())
    assert info.value.code == "DUPLICATE_PROVIDER"
    assert (
        "provider plugin 'terminal' and provider plugin 'web' collide; a question needs exactly"
        in (str(info.value))
    )


# The order of checks ---------------------------------------------------------------------------


def live_root(ctx: HarnessContext, agent_id: str = "root") -> Agent:
    agent = Agent(agent_id)
    assert ctx.agents is not None
    ctx.agents.enter(agent)  # type: ignore[attr-defined]
    return agent


async def expect_code(
    service: UserQuestionService, request: AskUserQuestionRequest, code: str
) -> UserQuestionError:
    with pytest.raises(UserQuestionError) as info:
        await service.ask(request)
    assert info.value.code == code
    return info.value


async def test_aborted_signal_comes_first(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """An already aborted signal wins over every other fault; the provider is not called."""
    reason = TimeoutError("too late")
    controller = AbortController()
    controller.abort(reason)
    request = AskUserQuestionRequest(questions=[], agent=Agent("ghost"), signal=controller.signal)
    error = await expect_code(user_questions, request, "ASK_ABORTED")
    assert str(error) == "ask_user_question was aborted before the user answered"
    assert error.__cause__ is reason
    assert scripted_provider.requests == []


async def test_empty_questions_come_before_the_caller_check(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """No questions is EMPTY_QUESTIONS even when the agent is not live."""
    request = AskUserQuestionRequest(questions=[], agent=Agent("ghost"))
    await expect_code(user_questions, request, "EMPTY_QUESTIONS")
    assert scripted_provider.requests == []


async def test_not_live_caller_comes_before_bad_intent(dsh_context: HarnessContext) -> None:
    """An agent the registry does not hold is CALLER_NOT_LIVE, before any intent check."""
    bad = make_plan_question(detail=None)
    await expect_code(
        dsh_context.user_questions, make_request(bad, agent=Agent("ghost")), "CALLER_NOT_LIVE"
    )


async def test_an_equal_but_different_agent_is_not_live(dsh_context: HarnessContext) -> None:
    """Identity, not equality: an impostor equal to the live agent is CALLER_NOT_LIVE."""

    class ById(Agent):
        def __eq__(self, other: object) -> bool:
            return isinstance(other, Agent) and other.id == self.id

        __hash__ = Agent.__hash__

    assert dsh_context.agents is not None
    dsh_context.agents.enter(ById("root"))  # type: ignore[attr-defined]
    impostor = ById("root")
    await expect_code(dsh_context.user_questions, make_request(agent=impostor), "CALLER_NOT_LIVE")


async def test_a_detached_agent_is_not_live(dsh_context: HarnessContext) -> None:
    """A stale agent object (detached) is CALLER_NOT_LIVE."""
    agent = Agent("root")
    assert dsh_context.agents is not None
    detach = dsh_context.agents.enter(agent)  # type: ignore[attr-defined]
    detach()
    await expect_code(dsh_context.user_questions, make_request(agent=agent), "CALLER_NOT_LIVE")


async def test_an_agent_without_a_registry_is_not_live() -> None:
    """With agents=None, any supplied agent is CALLER_NOT_LIVE."""
    ctx = HarnessContext(agents=None)
    ctx.register(plugin)
    await expect_code(ctx.user_questions, make_request(agent=Agent("root")), "CALLER_NOT_LIVE")


async def test_an_owned_agent_is_a_delegated_caller(dsh_context: HarnessContext) -> None:
    """A live child owned by another agent is DELEGATED_CALLER, before intent checks."""
    root = live_root(dsh_context)
    child = Agent("child")
    assert dsh_context.agents is not None
    dsh_context.agents.enter(child, owner=root)  # type: ignore[attr-defined]
    error = await expect_code(
        dsh_context.user_questions,
        make_request(make_plan_question(detail=None), agent=child),
        "DELEGATED_CALLER",
    )
    assert "include the unresolved question or decision" in str(error)


async def test_a_child_stays_delegated_after_its_owner_detaches(
    dsh_context: HarnessContext,
) -> None:
    """Ownership outlives the owner: the orphaned child is still DELEGATED_CALLER."""
    owner = Agent("owner")
    child = Agent("child")
    assert dsh_context.agents is not None
    detach = dsh_context.agents.enter(owner)  # type: ignore[attr-defined]
    dsh_context.agents.enter(child, owner=owner)  # type: ignore[attr-defined]
    detach()
    await expect_code(dsh_context.user_questions, make_request(agent=child), "DELEGATED_CALLER")


async def test_a_live_root_may_ask(dsh_context: HarnessContext) -> None:
    """The exact live root agent passes the caller checks and reaches the provider."""
    provider = ScriptedProvider(PNPM)
    dsh_context.user_questions.register_provider(provider)
    root = live_root(dsh_context)
    assert await dsh_context.user_questions.ask(make_request(agent=root)) == PNPM_ANSWER


async def test_no_agent_means_no_registry_lookup() -> None:
    """An agentless request never touches the registry."""

    class Exploding:
        def get(self, agent_id: str) -> object:
            raise AssertionError("registry consulted")

        def roots(self) -> list[object]:
            raise AssertionError("registry consulted")

    ctx = HarnessContext(agents=Exploding())
    ctx.register(plugin)
    ctx.user_questions.register_provider(ScriptedProvider(PNPM))
    assert await ctx.user_questions.ask(make_request()) == PNPM_ANSWER


async def test_any_registry_with_get_and_roots_works() -> None:
    """The service relies on get and roots only: a harness's own registry works."""
    agent = Agent("mine")

    class Registry:
        def get(self, agent_id: str) -> object | None:
            return agent if agent_id == "mine" else None

        def roots(self) -> list[object]:
            return [agent]

    ctx = HarnessContext(agents=Registry())
    ctx.register(plugin)
    ctx.user_questions.register_provider(ScriptedProvider(PNPM))
    assert await ctx.user_questions.ask(make_request(agent=agent)) == PNPM_ANSWER


async def test_bad_intent_label_names_the_question(user_questions: UserQuestionService) -> None:
    """An approve label that is none of the question's options is BAD_INTENT (label message)."""
    bad = make_plan_question(intent=AskUserQuestionIntent("plan-review", "Approve ✓"))
    error = await expect_code(user_questions, make_request(bad), "BAD_INTENT")
    assert str(error) == (
        'question plan-review declares intent plan-review whose approve label "Approve ✓"'
        " names none of its options"
    )


async def test_bad_intent_label_is_checked_before_the_detail(
    user_questions: UserQuestionService,
) -> None:
    """A question with both faults reports the label first."""
    bad = make_plan_question(detail=None, intent=AskUserQuestionIntent("plan-review", "Yes"))
    error = await expect_code(user_questions, make_request(bad), "BAD_INTENT")
    assert "approve label" in str(error)


async def test_approve_must_name_an_option_of_that_same_question(
    user_questions: UserQuestionService,
) -> None:
    """An approve label found only on another question's options is still BAD_INTENT."""
    other = make_question(options=[AskUserQuestionOption("Ship it")])
    bad = make_plan_question(intent=AskUserQuestionIntent("plan-review", "Ship it"))
    await expect_code(user_questions, make_request(other, bad), "BAD_INTENT")


async def test_intent_without_detail(user_questions: UserQuestionService) -> None:
    """An intent on a question with no detail is BAD_INTENT (detail message)."""
    error = await expect_code(
        user_questions, make_request(make_plan_question(detail=None)), "BAD_INTENT"
    )
    assert str(error) == (
        "question plan-review declares intent plan-review without the detail it reviews"
    )


async def test_first_offending_question_wins(user_questions: UserQuestionService) -> None:
    """Of several bad intents, the first question in order is reported."""
    first = make_plan_question(id="one", detail=None)
    second = make_plan_question(id="two", intent=AskUserQuestionIntent("plan-review", "No"))
    error = await expect_code(user_questions, make_request(first, second), "BAD_INTENT")
    assert str(error).startswith("question one ")


async def test_an_empty_detail_passes(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """detail="" is a detail: the intent check passes."""
    scripted_provider.push({"answers": []})
    answer = await user_questions.ask(make_request(make_plan_question(detail="")))
    assert answer == AskUserQuestionAnswer([])


async def test_bad_intent_comes_before_no_provider(user_questions: UserQuestionService) -> None:
    """With no provider, a bad intent is still BAD_INTENT."""
    await expect_code(user_questions, make_request(make_plan_question(detail=None)), "BAD_INTENT")


async def test_no_provider(user_questions: UserQuestionService) -> None:
    """A valid request with nothing registered is NO_PROVIDER."""
    error = await expect_code(user_questions, make_request(), "NO_PROVIDER")
    assert str(error) == "no user-questions provider is registered"


# Calling the provider --------------------------------------------------------------------------


async def test_provider_gets_the_very_request_object(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """The provider receives the same request object the caller gave."""
    scripted_provider.push(PNPM)
    request = make_request()
    await user_questions.ask(request)
    assert scripted_provider.requests[0] is request


async def test_sync_provider_returning_an_answer(user_questions: UserQuestionService) -> None:
    """A plain function returning an answer works."""

    class Sync:
        def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
            return PNPM_ANSWER

    user_questions.register_provider(Sync())
    assert await user_questions.ask(make_request()) == PNPM_ANSWER


async def test_sync_provider_returning_an_awaitable(user_questions: UserQuestionService) -> None:
    """A plain function returning a future (with a signal present) is awaited."""

    class Later:
        def ask(self, request: AskUserQuestionRequest) -> asyncio.Future[object]:
            future = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().call_later(0.01, future.set_result, PNPM)
            return future

    user_questions.register_provider(Later())
    answer = await user_questions.ask(make_request(signal=AbortController().signal))
    assert answer == PNPM_ANSWER


async def test_wire_form_answer_is_turned_into_the_payload(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """A mapping answer comes back as an AskUserQuestionAnswer."""
    scripted_provider.push({"answers": [{"id": "pkg", "selected": [], "custom": "bun"}]})
    answer = await user_questions.ask(make_request())
    assert answer == AskUserQuestionAnswer([AskUserQuestionAnswerItem(id="pkg", custom="bun")])


async def test_provider_exceptions_propagate_unchanged(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """An exception of the provider's reaches the caller as the same object."""
    boom = OSError("screen gone")
    scripted_provider.push(boom)
    with pytest.raises(OSError, match="screen gone") as info:
        await user_questions.ask(make_request())
    assert info.value is boom


async def test_cancelled_by_the_user(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """A provider's ASK_CANCELLED reaches the caller."""
    scripted_provider.push(UserQuestionError.cancelled())
    error = await expect_code(user_questions, make_request(), "ASK_CANCELLED")
    assert str(error) == "the user cancelled ask_user_question"


async def test_a_coroutine_as_answer_is_refused_and_closed(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """An async provider returning an un-awaited coroutine gets BAD_ANSWER and no warning."""

    async def inner() -> object:
        return PNPM

    async def returns_a_coroutine(request: AskUserQuestionRequest) -> object:
        return inner()

    scripted_provider.push(returns_a_coroutine)
    error = await expect_code(user_questions, make_request(), "BAD_ANSWER")
    assert str(error).endswith("got coroutine")
    gc.collect()  # an unclosed coroutine would warn here, an error under filterwarnings=error


# Abort and cancellation ------------------------------------------------------------------------


class Hanging:
    """A provider that ignores signals and never answers; records its cancellation."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def ask(self, request: AskUserQuestionRequest) -> object:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        raise AssertionError("unreachable")


async def test_abort_while_pending_raises_and_cancels_the_provider(
    user_questions: UserQuestionService,
) -> None:
    """An abort during the wait raises ASK_ABORTED from the reason and cancels the provider."""
    provider = Hanging()
    user_questions.register_provider(provider)
    controller = AbortController()
    task = asyncio.ensure_future(user_questions.ask(make_request(signal=controller.signal)))
    await provider.started.wait()
    reason = RuntimeError("harness shutting down")
    controller.abort(reason)
    with pytest.raises(UserQuestionError) as info:
        await asyncio.wait_for(task, 5)
    assert info.value.code == "ASK_ABORTED"
    assert info.value.__cause__ is reason
    await asyncio.wait_for(provider.cancelled.wait(), 5)


async def test_abort_with_a_plain_reason_is_chained_as_abort_error(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """A non-exception reason is wrapped in an AbortError for the chain."""
    scripted_provider.push(WAIT_FOR_ABORT)
    controller = AbortController()
    asyncio.get_running_loop().call_later(0.01, controller.abort, "user closed the tab")
    error = await expect_code(user_questions, make_request(signal=controller.signal), "ASK_ABORTED")
    assert isinstance(error.__cause__, AbortError)
    assert error.__cause__.args == ("user closed the tab",)


async def test_a_provider_error_before_the_abort_wins(user_questions: UserQuestionService) -> None:
    """A provider that raises ASK_CANCELLED and then sees an abort still reports ASK_CANCELLED."""
    controller = AbortController()

    class CancelsThenAborts:
        async def ask(self, request: AskUserQuestionRequest) -> object:
            await asyncio.sleep(0)
            controller.abort()
            raise UserQuestionError.cancelled()

    user_questions.register_provider(CancelsThenAborts())
    await expect_code(user_questions, make_request(signal=controller.signal), "ASK_CANCELLED")


async def test_a_provider_that_finished_first_keeps_its_answer(
    user_questions: UserQuestionService,
) -> None:
    """An answer completed before the abort is observed is returned, not ASK_ABORTED."""
    controller = AbortController()

    class AnswersThenAborts:
        async def ask(self, request: AskUserQuestionRequest) -> object:
            await asyncio.sleep(0)
            controller.abort()
            return PNPM

    user_questions.register_provider(AnswersThenAborts())
    assert await user_questions.ask(make_request(signal=controller.signal)) == PNPM_ANSWER


async def test_cancelling_the_caller_cancels_the_provider(
    user_questions: UserQuestionService,
) -> None:
    """Cancelling the task awaiting ask() cancels the provider and propagates CancelledError."""
    for signal in (None, AbortController().signal):
        provider = Hanging()
        dispose = user_questions.register_provider(provider)
        task = asyncio.ensure_future(user_questions.ask(make_request(signal=signal)))
        await provider.started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(provider.cancelled.wait(), 5)
        dispose()


async def test_a_late_provider_failure_is_never_reported_as_unretrieved(
    user_questions: UserQuestionService,
) -> None:
    """A provider failing after the abort decided the outcome leaves no asyncio error report."""
    reports: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: reports.append(context))

    class FailsWhenCancelled:
        async def ask(self, request: AskUserQuestionRequest) -> object:
            try:
                await asyncio.Event().wait()
            finally:
                raise UserQuestionError.cancelled()

    user_questions.register_provider(FailsWhenCancelled())
    controller = AbortController()
    loop.call_later(0.01, controller.abort)
    await expect_code(user_questions, make_request(signal=controller.signal), "ASK_ABORTED")
    for _ in range(3):
        await asyncio.sleep(0)
    gc.collect()
    loop.set_exception_handler(None)
    assert reports == []


async def test_abort_listener_is_removed_after_the_ask(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """Once ask() returns, the signal holds no listener of the service."""
    controller = AbortController()

    async def slow(request: AskUserQuestionRequest) -> object:
        await asyncio.sleep(0)
        return PNPM

    scripted_provider.push(slow)
    await user_questions.ask(make_request(signal=controller.signal))
    assert holds_no_listener(controller.signal)


# The answer check ------------------------------------------------------------------------------

MULTI = AskUserQuestionItem(
    id="langs",
    question="Which languages?",
    options=[AskUserQuestionOption("py"), AskUserQuestionOption("rs")],
    multi_select=True,
)
FREE = AskUserQuestionItem(id="name", question="Project name?")


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (
            {"answers": [{"id": "nope", "selected": []}]},
            'answers[0] (question "nope") names no question that was asked',
        ),
        (
            {"answers": [{"id": "pkg", "selected": []}, {"id": "pkg", "selected": []}]},
            'answers[1] (question "pkg") answers that question a second time',
        ),
        (
            {"answers": [{"id": "pkg", "selected": ["yarn"]}]},
            'answers[0] (question "pkg") selects "yarn", which is not one of its options',
        ),
        (
            {"answers": [{"id": "langs", "selected": ["py", "py"]}]},
            'answers[0] (question "langs") selects an option more than once',
        ),
        (
            {"answers": [{"id": "pkg", "selected": ["pnpm", "npm"]}]},
            'answers[0] (question "pkg") selects 2 options of a single-select question',
        ),
        (
            {"answers": [{"id": "pkg", "selected": ["pnpm"], "custom": "bun"}]},
            'answers[0] (question "pkg") has both a selection and custom text on a'
            " single-select question",
        ),
        (
            {"answers": [{"id": "name", "selected": [], "custom": "  \n"}]},
            'answers[0] (question "name") has blank custom text',
        ),
        (
            {"answers": [{"id": "name", "selected": ["x"]}]},
            'answers[0] (question "name") selects "x", which is not one of its options',
        ),
        (None, "expected an AskUserQuestionAnswer or a mapping in wire form, got NoneType"),
        (["pnpm"], "expected an AskUserQuestionAnswer or a mapping in wire form, got list"),
        (
            {"answers": [{"id": "pkg", "selected": "pnpm"}]},
            "it is not in wire form: answers[0].selected: must be an array, not a string",
        ),
    ],
)
async def test_a_bad_answer_is_refused(
    user_questions: UserQuestionService,
    scripted_provider: ScriptedProvider,
    answer: object,
    problem: str,
) -> None:
    """Each breach of the answer rules is BAD_ANSWER naming the item and the rule."""
    scripted_provider.push(answer)
    error = await expect_code(
        user_questions, make_request(make_question(), MULTI, FREE), "BAD_ANSWER"
    )
    assert str(error) == f"the user-questions provider gave a bad answer: {problem}"


@pytest.mark.parametrize(
    "answer",
    [
        {"answers": []},
        {"answers": [{"id": "pkg", "selected": []}]},
        {"answers": [{"id": "pkg", "selected": [], "custom": "bun"}]},
        {"answers": [{"id": "langs", "selected": ["rs", "py"], "custom": "and zig"}]},
        {
            "answers": [
                {"id": "name", "selected": [], "custom": "dsh"},
                {"id": "pkg", "selected": ["npm"]},
            ]
        },
    ],
)
async def test_valid_answers_pass(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider, answer: object
) -> None:
    """Skips, custom overrides, multi-select with custom, any order, omitted items all pass."""
    scripted_provider.push(answer)
    result = await user_questions.ask(make_request(make_question(), MULTI, FREE))
    assert result.to_dict() == answer


def valid(questions: list[AskUserQuestionItem], answer: AskUserQuestionAnswer) -> bool:
    """The answer rules, written plainly as a reference for the property test."""
    by_id = {q.id: q for q in questions}
    ids = [item.id for item in answer.answers]
    if len(ids) != len(set(ids)) or not set(ids) <= set(by_id):
        return False
    for item in answer.answers:
        question = by_id[item.id]
        labels = [o.label for o in question.options]
        if any(s not in labels for s in item.selected) or len(set(item.selected)) < len(
            item.selected
        ):
            return False
        if not question.multi_select and (
            len(item.selected) > 1 or (item.selected and item.custom is not None)
        ):
            return False
        if item.custom is not None and item.custom.strip() == "":
            return False
    return True


labels = st.sampled_from(["a", "b", "c", "d"])
question_items = st.builds(
    AskUserQuestionItem,
    id=st.sampled_from(["q1", "q2", "q3"]),
    question=st.just("?"),
    options=st.lists(labels, max_size=3, unique=True).map(
        lambda ls: tuple(AskUserQuestionOption(label) for label in ls)
    ),
    multi_select=st.booleans(),
)
answer_items = st.builds(
    AskUserQuestionAnswerItem,
    id=st.sampled_from(["q1", "q2", "q3", "q4"]),
    selected=st.lists(labels, max_size=3),
    custom=st.none() | st.sampled_from(["", " ", "text"]),
)


@given(
    st.lists(question_items, min_size=1, max_size=3, unique_by=lambda q: q.id),
    st.lists(answer_items, max_size=4),
)
def test_answer_check_accepts_exactly_the_valid_answers(
    questions: list[AskUserQuestionItem], items: list[AskUserQuestionAnswerItem]
) -> None:
    """check_answer passes an answer iff the plainly written rules hold; else BAD_ANSWER."""
    answer = AskUserQuestionAnswer(items)
    try:
        result = check_answer(questions, answer)
    except UserQuestionError as error:
        assert error.code == "BAD_ANSWER"  # noqa: PT017 - the `else` checks the other outcome
        assert not valid(questions, answer)
    else:
        assert result is answer
        assert valid(questions, answer)


# Observers -------------------------------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, Any, ...]] = []  # type: ignore[misc]

    @hookimpl
    def dsh_user_questions_asked(self, request: AskUserQuestionRequest) -> None:
        self.events.append(("asked", request))

    @hookimpl
    def dsh_user_questions_answered(
        self, request: AskUserQuestionRequest, answer: AskUserQuestionAnswer, wait_seconds: float
    ) -> None:
        self.events.append(("answered", request, answer, wait_seconds))

    @hookimpl
    def dsh_user_questions_failed(self, error: BaseException, wait_seconds: float) -> None:
        self.events.append(("failed", error, wait_seconds))


async def test_observers_see_asked_and_answered_with_the_wait(
    dsh_context: HarnessContext, scripted_provider: ScriptedProvider
) -> None:
    """asked then answered, with the request, the answer and a non-negative wait."""
    recorder = Recorder()
    dsh_context.register(recorder)
    scripted_provider.push(PNPM)
    request = make_request()
    answer = await dsh_context.user_questions.ask(request)
    assert [e[0] for e in recorder.events] == ["asked", "answered"]
    assert recorder.events[0][1] is request
    _, seen_request, seen_answer, waited = recorder.events[1]
    assert seen_request is request
    assert seen_answer is answer
    assert waited >= 0


async def test_observers_see_failures_with_the_error(dsh_context: HarnessContext) -> None:
    """A failing ask is reported to failed with the very error the caller gets."""
    recorder = Recorder()
    dsh_context.register(recorder)
    error = await expect_code(dsh_context.user_questions, make_request(), "NO_PROVIDER")
    assert [e[0] for e in recorder.events] == ["asked", "failed"]
    assert recorder.events[1][1] is error


async def test_a_failing_observer_never_breaks_an_ask(
    dsh_context: HarnessContext,
    scripted_provider: ScriptedProvider,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An observer that raises is logged; other observers and the caller are unaffected."""

    class Broken:
        @hookimpl
        def dsh_user_questions_asked(self, request: AskUserQuestionRequest) -> None:
            raise RuntimeError("metrics down")

        @hookimpl
        def dsh_user_questions_answered(self, request: AskUserQuestionRequest) -> None:
            raise RuntimeError("metrics down")

    recorder = Recorder()
    dsh_context.register(Broken(), name="broken")
    dsh_context.register(recorder)
    scripted_provider.push(PNPM)
    with caplog.at_level(logging.ERROR):
        assert await dsh_context.user_questions.ask(make_request()) == PNPM_ANSWER
    assert [e[0] for e in recorder.events] == ["asked", "answered"]
    assert caplog.text.count("user-questions observer broken failed") == 2


async def test_observers_see_the_caller_cancelled(dsh_context: HarnessContext) -> None:
    """A cancelled caller is reported to failed as CancelledError."""
    recorder = Recorder()
    dsh_context.register(recorder)
    provider = Hanging()
    dsh_context.user_questions.register_provider(provider)
    task = asyncio.ensure_future(dsh_context.user_questions.ask(make_request()))
    await provider.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert recorder.events[-1][0] == "failed"
    assert isinstance(recorder.events[-1][1], asyncio.CancelledError)


async def test_a_timed_ask_gives_the_provider_a_copy_of_every_field(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """The copy a timed ask hands its provider differs from the request in its signal only."""
    scripted_provider.push({"answers": []})
    request = AskUserQuestionRequest(
        questions=[make_question()], signal=AbortController().signal, timeout=5.0, key="k-1"
    )
    await user_questions.ask(request)
    (copy,) = scripted_provider.requests
    assert copy is not request
    assert copy.signal is not request.signal
    assert copy == attrs.evolve(request, signal=copy.signal)
