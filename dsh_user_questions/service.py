"""The user-questions service: ``ctx.user_questions``.

A caller builds an `AskUserQuestionRequest` and awaits `UserQuestionService.ask`; exactly one
provider shows it to the human. The service checks the request, refuses callers that may not
reach the human, races the provider against the request's abort signal, and checks the answer.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs
import pluggy

from ._discovery import PROVIDER_HOOK, is_provider
from .errors import UserQuestionError
from .harness import AbortError, AbortSignal, SupportsAgentRegistry
from .payloads import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    WireFormatError,
)

if TYPE_CHECKING:
    import asyncio

__all__ = ["SupportsHarnessContext", "UserQuestionProvider", "UserQuestionService", "check_answer"]

ProviderResult = AskUserQuestionAnswer | Mapping[str, Any] | Awaitable[Any]


class UserQuestionProvider(Protocol):
    """A UI that shows a request's questions to the human and returns the answer.

    ``ask`` may be ``async def`` (preferred) or a plain function returning the answer, a mapping
    in its wire form, or an awaitable of either.
    """

    def ask(self, request: AskUserQuestionRequest, /) -> ProviderResult: ...


class SupportsHarnessContext(Protocol):
    """What the service needs of a harness context."""

    @property
    def plugin_manager(self) -> pluggy.PluginManager: ...

    @property
    def agents(self) -> SupportsAgentRegistry | None: ...


@attrs.define(eq=False)
class _Registration:
    provider: UserQuestionProvider


class UserQuestionService:
    """Asks the human through the one active provider; ``ctx.user_questions``.

    A provider comes either from `register_provider` or from a registered plugin implementing
    ``dsh_user_questions_ask``; at most one of all of them is active.
    """

    def __init__(self, ctx: SupportsHarnessContext) -> None:
        self._ctx = ctx
        self._lock = threading.Lock()
        self._registration: _Registration | None = None
        hook = ctx.plugin_manager.hook
        self._provider_hook = getattr(hook, PROVIDER_HOOK)
        self._asked = hook.dsh_user_questions_asked
        self._answered = hook.dsh_user_questions_answered
        self._failed = hook.dsh_user_questions_failed

    # Providers ---------------------------------------------------------------------------------

    def register_provider(self, provider: UserQuestionProvider) -> Callable[[], None]:
        """Make ``provider`` the active one; returns a dispose function.

        Raises ``DUPLICATE_PROVIDER`` while another provider is active (the active one stays).
        The dispose function is idempotent and only ever removes this registration.
        """
        if not callable(getattr(provider, "ask", None)):
            raise TypeError(
                f"a user-questions provider needs an ask(request) method;"
                f" {type(provider).__name__} has none"
            )
        registration = _Registration(provider)
        with self._lock:
            active = self._describe_active()
            if active:
                raise UserQuestionError.duplicate_provider(
                    f"{_describe(provider)} collides with the active {active[0]};"
                    " dispose of the active provider first"
                )
            self._registration = registration

        def dispose() -> None:
            with self._lock:
                if self._registration is registration:
                    self._registration = None

        return dispose

    def admit_plugin(self, plugin: object, name: str) -> None:
        """Refuse a plugin that would make a second provider (called on plugin registration)."""
        if not is_provider(self._ctx.plugin_manager, plugin):
            return
        with self._lock:
            others = [a for a in self._describe_active() if a != f"provider plugin {name!r}"]
            if others:
                raise UserQuestionError.duplicate_provider(
                    f"provider plugin {name!r} collides with the active {others[0]};"
                    " unregister one of them, or with installed providers choose one with"
                    " DSH_USER_QUESTIONS_PROVIDER=<entry-point name>"
                )

    def _describe_active(self) -> list[str]:
        active = [f"provider plugin {self._plugin_name(i.plugin)!r}" for i in self._hookimpls()]
        if self._registration is not None:
            active.append(_describe(self._registration.provider))
        return active

    def _plugin_name(self, plugin: object) -> str:
        return self._ctx.plugin_manager.get_name(plugin) or repr(plugin)

    def _hookimpls(self) -> list[pluggy.HookImpl]:
        return self._provider_hook.get_hookimpls()  # type: ignore[no-any-return]

    # Asking ------------------------------------------------------------------------------------

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        """Ask the active provider and wait for the human's checked answer.

        Checks, in order: the signal has not aborted (``ASK_ABORTED``); there is a question
        (``EMPTY_QUESTIONS``); a given agent is the registry's live object of its id
        (``CALLER_NOT_LIVE``) and a root (``DELEGATED_CALLER``); each intent approves one of its
        question's options and has a detail (``BAD_INTENT``); a provider is active
        (``NO_PROVIDER``). Then the provider is called with this very request. An abort while it
        is pending raises ``ASK_ABORTED`` (chained from the reason) and cancels it; the answer
        is checked (``BAD_ANSWER``).
        """
        if not (
            self._asked.get_hookimpls()
            or self._answered.get_hookimpls()
            or self._failed.get_hookimpls()
        ):
            # The body of `_ask`, inlined: the unobserved ask is the hot path.
            result = self._call_provider(request)
            if inspect.isawaitable(result):
                signal = request.signal
                result = await result if signal is None else await _wait(result, signal)
            return check_answer(request.questions, result)
        started = time.perf_counter()
        _notify(self._asked, request=request)
        try:
            answer = await self._ask(request)
        except BaseException as error:
            waited = time.perf_counter() - started
            _notify(self._failed, request=request, error=error, wait_seconds=waited)
            raise
        waited = time.perf_counter() - started
        _notify(self._answered, request=request, answer=answer, wait_seconds=waited)
        return answer

    async def _ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        result = self._call_provider(request)
        if inspect.isawaitable(result):
            signal = request.signal
            result = await result if signal is None else await _wait(result, signal)
        return check_answer(request.questions, result)

    async def resume(
        self, question_id: str, *, signal: AbortSignal | None = None
    ) -> AskUserQuestionAnswer:
        """Wait again for a question asked before (by this process or one that died).

        Only a provider that keeps questions can: a registered provider object with a
        ``resume(question_id, *, signal=None)`` method, or a provider plugin implementing
        ``dsh_user_questions_resume``. Returns the answer, or raises as ``ask()`` would
        (``ASK_ABORTED`` when ``signal`` aborts or the question was withdrawn, ``ASK_CANCELLED``,
        ``NO_PROVIDER``...); an id the provider does not know is a `LookupError`, a provider
        that keeps no questions a `NotImplementedError`. Observer hooks are not called.
        """
        if signal is not None and signal.aborted:
            raise UserQuestionError.aborted() from _reason(signal)
        registration = self._registration
        impls = self._hookimpls()
        result: object = None
        if registration is not None and not impls:
            method = getattr(registration.provider, "resume", None)
            if method is not None:
                result = method(question_id, signal=signal)
            active = _describe(registration.provider)
        elif registration is None and len(impls) == 1:
            result = self._ctx.plugin_manager.hook.dsh_user_questions_resume(
                question_id=question_id, signal=signal
            )
            active = f"provider plugin {self._plugin_name(impls[0].plugin)!r}"
        elif registration is None and not impls:
            raise UserQuestionError.no_provider()
        else:
            raise UserQuestionError.duplicate_provider(
                " and ".join(self._describe_active()) + " are all active"
            )
        if result is None:
            raise NotImplementedError(
                f"the active {active} keeps no questions, so it cannot resume {question_id!r}"
            )
        if inspect.isawaitable(result):
            result = await result if signal is None else await _wait(result, signal)
        if isinstance(result, AskUserQuestionAnswer):
            return result
        if isinstance(result, Mapping):
            return AskUserQuestionAnswer.from_dict(result)
        raise UserQuestionError.bad_answer(
            f"resume gave {type(result).__name__}, not an AskUserQuestionAnswer"
        )

    def _call_provider(self, request: AskUserQuestionRequest) -> object:
        """Check the request in the documented order, then call the one provider."""
        signal = request.signal
        if signal is not None and signal.aborted:
            raise UserQuestionError.aborted() from _reason(signal)
        questions = request.questions
        if not questions:
            raise UserQuestionError.empty_questions()
        if request.agent is not None:
            self._check_caller(request.agent)
        for question in questions:
            intent = question.intent
            if intent is not None:
                if not any(option.label == intent.approve for option in question.options):
                    raise UserQuestionError.bad_intent_label(
                        question.id, intent.kind, intent.approve
                    )
                if question.detail is None:
                    raise UserQuestionError.bad_intent_detail(question.id, intent.kind)
        registration = self._registration
        impls = self._hookimpls()
        if registration is not None and not impls:
            return registration.provider.ask(request)
        if registration is None and len(impls) == 1:
            return self._provider_hook(request=request)
        if registration is None and not impls:
            raise UserQuestionError.no_provider()
        raise UserQuestionError.duplicate_provider(
            " and ".join(self._describe_active()) + " are all active; a question needs"
            " exactly one provider"
        )

    def _check_caller(self, agent: object) -> None:
        agents = self._ctx.agents
        agent_id = getattr(agent, "id", None)
        if agents is None or not isinstance(agent_id, str) or agents.get(agent_id) is not agent:
            raise UserQuestionError.caller_not_live()
        if not any(root is agent for root in agents.roots()):
            raise UserQuestionError.delegated_caller()


async def _wait(awaitable: Awaitable[Any], signal: AbortSignal) -> Any:
    """Await the provider's work, unless the signal aborts first: then cancel it."""
    import asyncio  # imported by whoever runs the loop; deferred to keep the import light

    loop = asyncio.get_running_loop()
    waker = _Waker(loop)
    # Listen before the provider starts, so an abort during the wait is always ours to report
    # (chained from its reason) even when the provider listens to the signal too.
    remove = signal.add_listener(waker.on_abort)
    try:
        task = _start(loop, awaitable)
    except BaseException:
        remove()
        raise
    if task.done():
        # An instant provider (eager start, Python 3.12+): no task switch at all.
        remove()
        return task.result()
    task.add_done_callback(waker)
    try:
        await waker.waiter
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        remove()
    if task.done():
        return task.result()
    task.cancel()
    raise UserQuestionError.aborted() from _reason(signal)


class _Waker:
    """Wakes the caller of one ask when the provider finishes or the signal aborts.

    It stays the provider task's done callback for good, so a provider that finishes after
    the ask has ended still has its exception retrieved. A slotted object rather than closures:
    ten thousand pending asks each hold one.
    """

    __slots__ = ("_loop", "waiter")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.waiter: asyncio.Future[None] = loop.create_future()

    def __call__(self, task: asyncio.Future[Any] | None = None) -> None:
        if task is not None and not task.cancelled():
            # A provider left behind by an abort may still fail; nobody awaits it then, so
            # fetch its exception here rather than have asyncio report it as never retrieved.
            task.exception()
        if not self.waiter.done():
            self.waiter.set_result(None)

    def on_abort(self) -> None:
        import asyncio

        loop = self._loop
        if asyncio._get_running_loop() is loop:
            # Aborted on the loop's own thread: wake the caller now; the loop runs it next.
            self()
            return
        # RuntimeError: the loop is closed, so nobody waits any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self)


def _start(loop: asyncio.AbstractEventLoop, awaitable: Awaitable[Any]) -> asyncio.Future[Any]:
    """The provider's work as a task of its own, so an abort can leave it behind."""
    import asyncio

    if sys.version_info >= (3, 12) and loop.get_task_factory() is None:
        if asyncio.iscoroutine(awaitable):
            # Runs the provider at once up to its first real wait, as awaiting it directly
            # would; an instant provider then needs no task switch at all.
            return asyncio.Task(awaitable, loop=loop, eager_start=True)
    return asyncio.ensure_future(awaitable, loop=loop)


def _reason(signal: AbortSignal) -> BaseException:
    reason = signal.reason
    return reason if isinstance(reason, BaseException) else AbortError(reason)


def _notify(hook: pluggy.HookCaller, **kwargs: Any) -> None:
    for impl in hook.get_hookimpls():
        try:
            impl.function(*[kwargs[name] for name in impl.argnames])
        except Exception:
            import logging  # only a failing observer needs it; the import is kept light

            logging.getLogger(__name__).exception(
                "user-questions observer %s failed", impl.plugin_name
            )


def _describe(provider: object) -> str:
    return f"provider {type(provider).__module__}.{type(provider).__qualname__}"


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _bad_item(index: int, item: AskUserQuestionAnswerItem, problem: str) -> UserQuestionError:
    # The message is built only on failure: quoting the id costs more than the whole check.
    return UserQuestionError.bad_answer(f"answers[{index}] (question {_q(item.id)}) {problem}")


def check_answer(questions: Sequence[AskUserQuestionItem], answer: object) -> AskUserQuestionAnswer:
    """Check a provider's answer against the questions asked; return it as a payload.

    ``answer`` is an `AskUserQuestionAnswer` or a mapping in its wire form. Every item must name
    an asked question, at most once; selected labels must be options of that question, each at
    most once; a single-select has at most one selection and never both a selection and
    ``custom``; ``custom`` is never blank. Omitted questions are allowed (unanswered). A breach
    raises ``BAD_ANSWER`` naming the item and the rule.
    """
    if isinstance(answer, AskUserQuestionAnswer):
        checked = answer
    elif isinstance(answer, Mapping):
        try:
            checked = AskUserQuestionAnswer.from_dict(answer)
        except WireFormatError as error:
            raise UserQuestionError.bad_answer(f"it is not in wire form: {error}") from error
    else:
        if inspect.iscoroutine(answer):
            answer.close()  # refused, never awaited: close it so Python does not warn
        raise UserQuestionError.bad_answer(
            f"expected an AskUserQuestionAnswer or a mapping in wire form,"
            f" got {type(answer).__name__}"
        )
    by_id = {question.id: question for question in questions}
    seen: set[str] = set()
    for index, item in enumerate(checked.answers):
        question = by_id.get(item.id)
        if question is None:
            raise _bad_item(index, item, "names no question that was asked")
        if item.id in seen:
            raise _bad_item(index, item, "answers that question a second time")
        seen.add(item.id)
        selected = item.selected
        custom = item.custom
        if selected:
            labels = {option.label for option in question.options}
            for label in selected:
                if label not in labels:
                    raise _bad_item(
                        index, item, f"selects {_q(label)}, which is not one of its options"
                    )
            if len(selected) > 1 and len(set(selected)) != len(selected):
                raise _bad_item(index, item, "selects an option more than once")
            if not question.multi_select:
                if len(selected) > 1:
                    raise _bad_item(
                        index, item, f"selects {len(selected)} options of a single-select question"
                    )
                if custom is not None:
                    raise _bad_item(
                        index,
                        item,
                        "has both a selection and custom text on a single-select question",
                    )
        if custom is not None and not custom.strip():
            raise _bad_item(index, item, "has blank custom text")
    return checked
