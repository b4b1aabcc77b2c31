"""The user-questions service: ``ctx.user_questions``.

A caller builds an `AskUserQuestionRequest` and awaits `UserQuestionService.ask`; exactly one
provider shows it to the human. The service checks the request (`dsh_user_questions.rules`),
refuses callers that may not reach the human, races the provider against the request's abort
signal and timeout (`dsh_user_questions._waiting`), and checks the answer.

Where things go: a rule about requests or answers in ``rules.py``; a new outcome (error code)
as a constructor in ``errors.py`` plus its README row; a new provider is a distribution of its
own implementing the ``dsh_user_questions_ask`` hook (see ``providers/`` and the README's
"Write a provider"), never a change here.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from types import CoroutineType
from typing import Any, Protocol

import attrs
import pluggy

from . import rules
from ._abort import AbortSignal, check_seconds
from ._agents import SupportsAgentRegistry
from ._discovery import PROVIDER_HOOK, is_provider
from ._hookcalls import OneByOne
from ._providercall import call_provider_impl, provider_impls
from ._waiting import (
    Deadline,
    finished_result,
    start_provider,
    wait_for_provider,
    wait_for_task,
)
from .errors import UserQuestionError
from .payloads import AskUserQuestionAnswer, AskUserQuestionRequest
from .rules import check_answer

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

    **Abort versus answer.** When the request's signal aborts (or its timeout expires) while the
    provider is pending, exactly one outcome reaches the caller:

    - an answer the provider has already handed back (its ``ask`` returned, or its awaitable
      finished) before the service acts on the abort wins: the caller gets it;
    - a `UserQuestionError` the provider raised (e.g. ``ASK_CANCELLED``) wins likewise;
    - any other exception the provider raises once the signal has aborted becomes
      ``ASK_ABORTED`` (chained from the abort's reason), and so does a provider still pending:
      its work is cancelled.

    So a provider tells its human "accepted" only if its answer is taken: in one event-loop
    step, check that ``request.signal`` has not aborted and resolve what its ``ask`` awaits,
    and let ``ask`` return right after that await, awaiting nothing else. An abort seen by the
    service after that step cannot overtake the answer.
    """

    def __init__(self, ctx: SupportsHarnessContext) -> None:
        self._ctx = ctx
        self._lock = threading.Lock()
        self._registration: _Registration | None = None
        pm = ctx.plugin_manager
        self._pm = pm
        self._provider_hook: pluggy.HookCaller = getattr(pm.hook, PROVIDER_HOOK)
        self._asked = OneByOne(pm, "dsh_user_questions_asked")
        self._answered = OneByOne(pm, "dsh_user_questions_answered")
        self._failed = OneByOne(pm, "dsh_user_questions_failed")
        self._observed = _Observed(pm)

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
                    *active, _describe(provider), fix="dispose of the active provider first"
                )
            self._registration = registration

        def dispose() -> None:
            with self._lock:
                if self._registration is registration:
                    self._registration = None

        return dispose

    def admit_plugin(self, plugin: object, name: str) -> None:
        """Refuse a plugin that would make a second provider (called on plugin registration)."""
        if not is_provider(self._pm, plugin):
            return
        with self._lock:
            others = [a for a in self._describe_active() if a != f"provider plugin {name!r}"]
            if others:
                raise UserQuestionError.duplicate_provider(
                    *others,
                    f"provider plugin {name!r}",
                    fix="unregister one of them, or with installed providers choose one with"
                    " DSH_USER_QUESTIONS_PROVIDER=<entry-point name>",
                )

    def _describe_active(self) -> list[str]:
        # HookImpl.plugin_name, not pm.get_name(): no iteration over the manager's plugins,
        # which another thread may be changing.
        impls = provider_impls(self._provider_hook.get_hookimpls())
        active = [f"provider plugin {impl.plugin_name!r}" for impl in impls]
        registration = self._registration
        if registration is not None:
            active.append(_describe(registration.provider))
        return active

    # Asking ------------------------------------------------------------------------------------

    async def ask(
        self, request: AskUserQuestionRequest, timeout: float | None = None
    ) -> AskUserQuestionAnswer:
        """Ask the active provider and wait for the human's checked answer.

        Checks, in order: the signal has not aborted (``ASK_ABORTED``); the request's own rules
        (`rules.check_request`: ``EMPTY_QUESTIONS``, ``BAD_INTENT``), with the caller checked
        between them: a given agent is the registry's live object of its id
        (``CALLER_NOT_LIVE``) and a root (``DELEGATED_CALLER``); a provider is active
        (``NO_PROVIDER``). Then the provider is called with this very request (with a copy whose
        ``signal`` also fires on the timeout, when there is one).

        ``timeout`` (seconds; default ``request.timeout``; ``None``: wait as long as it takes)
        withdraws the question when it expires, exactly like an abort, and raises
        ``ASK_TIMED_OUT``. An abort while the provider is pending raises ``ASK_ABORTED``
        (chained from the reason) and cancels it (see the class docstring for an abort racing
        an answer); the answer is checked (``BAD_ANSWER``, `rules.check_answer`).
        """
        if timeout is None:
            timeout = request.timeout
        if not self._observed():
            # The body of `_ask`, inlined: the unobserved ask is the hot path.
            if timeout is not None:
                return await self._ask_with_timeout(request, timeout)
            result = self._call_provider(request)
            if type(result) is CoroutineType or inspect.isawaitable(result):
                signal = request.signal
                if signal is None:
                    result = await result
                else:
                    # wait_for_provider, inlined: an instant provider costs no extra frame.
                    task = start_provider(result)
                    if task.done():
                        result = finished_result(task, signal)
                    else:
                        result = await wait_for_task(task, signal)
            return check_answer(request.questions, result)
        started = time.perf_counter()
        await self._asked.acall("user-questions observer %s failed", request=request)
        try:
            if timeout is not None:
                answer = await self._ask_with_timeout(request, timeout)
            else:
                answer = await self._ask(request)
        except BaseException as error:
            waited = time.perf_counter() - started
            await self._failed.acall(
                "user-questions observer %s failed",
                request=request,
                error=error,
                wait_seconds=waited,
            )
            raise
        waited = time.perf_counter() - started
        await self._answered.acall(
            "user-questions observer %s failed", request=request, answer=answer, wait_seconds=waited
        )
        return answer

    async def _ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        result = self._call_provider(request)
        if inspect.isawaitable(result):
            signal = request.signal
            result = await result if signal is None else await wait_for_provider(result, signal)
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
            raise UserQuestionError.aborted_by(signal)
        registration = self._registration
        impls = provider_impls(self._provider_hook.get_hookimpls())
        result: object = None
        if registration is not None and not impls:
            method = getattr(registration.provider, "resume", None)
            if method is not None:
                result = method(question_id, signal=signal)
            active = _describe(registration.provider)
        elif registration is None and len(impls) == 1:
            result = self._pm.hook.dsh_user_questions_resume(question_id=question_id, signal=signal)
            active = f"provider plugin {impls[0].plugin_name!r}"
        elif registration is None and not impls:
            raise UserQuestionError.no_provider()
        else:
            raise UserQuestionError.duplicate_provider(
                *self._describe_active(), fix="a question needs exactly one provider"
            )
        if result is None:
            raise NotImplementedError(
                f"the active {active} keeps no questions, so it cannot resume {question_id!r}"
            )
        if inspect.isawaitable(result):
            result = await result if signal is None else await wait_for_provider(result, signal)
        if isinstance(result, AskUserQuestionAnswer):
            return result
        if isinstance(result, Mapping):
            return AskUserQuestionAnswer.from_dict(result)
        raise UserQuestionError.bad_answer(
            f"resume gave {type(result).__name__}, not an AskUserQuestionAnswer"
        )

    async def _ask_with_timeout(
        self, request: AskUserQuestionRequest, timeout: float
    ) -> AskUserQuestionAnswer:
        seconds = check_seconds(timeout, "timeout")
        signal = request.signal
        if signal is not None and signal.aborted:
            raise UserQuestionError.aborted_by(signal)
        with Deadline(seconds) as deadline:
            # The provider sees the deadline through the request's signal, as it sees aborts.
            combined = (
                deadline.signal if signal is None else AbortSignal.any([signal, deadline.signal])
            )
            return await self._ask(attrs.evolve(request, signal=combined))

    def _call_provider(self, request: AskUserQuestionRequest) -> object:
        """Check the request in the documented order, then call the one provider."""
        signal = request.signal
        if signal is not None and signal.aborted:
            raise UserQuestionError.aborted_by(signal)
        if request.agent is not None:
            if not request.questions:  # the documented order: EMPTY_QUESTIONS comes first
                raise UserQuestionError.empty_questions()
            self._check_caller(request.agent)
        rules.check_request(request)
        registration = self._registration
        everything = self._provider_hook.get_hookimpls()
        if registration is not None and not everything:
            return registration.provider.ask(request)
        impls = provider_impls(everything) if len(everything) > 1 else everything
        if registration is None and len(impls) == 1:
            # The implementation seen here is the one called, even if another thread
            # unregisters it meanwhile (never a silent None from an empty hook).
            return call_provider_impl(self._pm, self._provider_hook, everything, request)
        if registration is not None and not impls:
            return registration.provider.ask(request)
        if registration is None and not impls:
            raise UserQuestionError.no_provider()
        active = [f"provider plugin {impl.plugin_name!r}" for impl in impls]
        if registration is not None:
            active.append(_describe(registration.provider))
        raise UserQuestionError.duplicate_provider(
            *active, fix="a question needs exactly one provider"
        )

    def _check_caller(self, agent: object) -> None:
        agents = self._ctx.agents
        agent_id = getattr(agent, "id", None)
        if agents is None or not isinstance(agent_id, str) or agents.get(agent_id) is not agent:
            raise UserQuestionError.caller_not_live()
        is_root = getattr(agents, "is_root", None)
        if is_root is not None:
            if not is_root(agent):
                raise UserQuestionError.delegated_caller()
        elif not any(root is agent for root in agents.roots()):
            # A registry with only get() and roots(): one scan of its live roots.
            raise UserQuestionError.delegated_caller()


class _Observed:
    """Whether any observer hook has an implementation, without copying lists (every ask asks).

    Reads the implementation lists pluggy keeps on each hook caller; if a pluggy version has
    none under that name, it falls back to the public ``get_hookimpls()``.
    """

    __slots__ = ("_hooks", "_lists")

    def __init__(self, pm: pluggy.PluginManager) -> None:
        names = ("dsh_user_questions_asked", "dsh_user_questions_answered")
        self._hooks = [getattr(pm.hook, name) for name in (*names, "dsh_user_questions_failed")]
        lists = [getattr(hook, "_hookimpls", None) for hook in self._hooks]
        self._lists = lists if all(isinstance(impls, list) for impls in lists) else None

    def __call__(self) -> bool:
        lists = self._lists
        if lists is not None:
            return bool(lists[0] or lists[1] or lists[2])
        return any(hook.get_hookimpls() for hook in self._hooks)


def _describe(provider: object) -> str:
    return f"provider {type(provider).__module__}.{type(provider).__qualname__}"
