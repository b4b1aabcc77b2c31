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
import logging
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
from ._providercall import call_provider_impl, is_direct, provider_impls
from ._waiting import (
    Deadline,
    Flight,
    Receipt,
    finished_result,
    flights,
    receipt_for,
    start_provider,
    task_finished,
    wait_for_provider,
    wait_for_task,
)
from .errors import UserQuestionError
from .payloads import AskUserQuestionAnswer, AskUserQuestionRequest
from .rules import check_answer

__all__ = ["SupportsHarnessContext", "UserQuestionProvider", "UserQuestionService", "check_answer"]

_OBSERVER_FAILED = "user-questions observer %s failed"
_log = logging.getLogger("dsh_user_questions")

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

    **A receipt means taken.** A provider tells its human "accepted" only once its `receipt`
    is ``True``: ``ask()`` returned the answer to its caller. The receipt is ``False`` when the
    caller's task was cancelled as the answer landed, the answer was refused as
    ``BAD_ANSWER``, or the ask was aborted, timed out or withdrawn by ``aclose()``::

        @hookimpl
        async def dsh_user_questions_ask(request):
            taken = receipt(request)  # dsh_user_questions.providing.receipt
            answer = await page.wait_for_answer(request)
            page.confirm_when(taken)  # "Answer sent" only if `await taken` is True
            return answer
    """

    def __init__(self, ctx: SupportsHarnessContext) -> None:
        self._ctx = ctx
        self._lock = threading.Lock()
        self._registration: _Registration | None = None
        pm = ctx.plugin_manager
        self._pm = pm
        self._provider_hook: pluggy.HookCaller = getattr(pm.hook, PROVIDER_HOOK)
        live = getattr(self._provider_hook, "_hookimpls", None)
        # pluggy's own list of the hook's implementations (read, never changed), if it has one.
        self._live_impls: list[pluggy.HookImpl] | None = live if isinstance(live, list) else None
        self._direct: tuple[pluggy.HookImpl, Callable[..., object], object] | None = None
        self._asked = OneByOne(pm, "dsh_user_questions_asked")
        self._answered = OneByOne(pm, "dsh_user_questions_answered")
        self._failed = OneByOne(pm, "dsh_user_questions_failed")
        self._observed = _Observed(pm)
        import asyncio  # whoever asks runs a loop; deferred to keep the import light

        self._current_task = asyncio.current_task
        self._running_loop = asyncio.get_running_loop
        self._cancelled = asyncio.CancelledError
        self._leftovers: set[asyncio.Future[Any]] = set()

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

        One trip, in this order: the observers hear of the ask (``dsh_user_questions_asked``);
        the request is checked: its signal has not aborted (``ASK_ABORTED``), it has questions
        (``EMPTY_QUESTIONS``); the caller is checked: a given agent is the registry's live
        object of its id (``CALLER_NOT_LIVE``) and a root (``DELEGATED_CALLER``); the rest of
        the request's rules (`rules.check_request`: ``BAD_INTENT``, ``BAD_QUESTION``); the one
        provider is called with this very request (a copy whose ``signal`` also fires on the
        timeout, when there is one; ``NO_PROVIDER``, ``DUPLICATE_PROVIDER``) and waited for,
        the abort, the timeout and ``aclose()`` ending the wait in one place; the answer is
        checked (``BAD_ANSWER``, `rules.check_answer`); the observers hear of the outcome
        (``dsh_user_questions_answered`` with secrets redacted, or ``_failed``).

        ``timeout`` (seconds; default ``request.timeout``; ``None``: wait as long as it takes)
        withdraws the question when it expires, exactly like an abort, and raises
        ``ASK_TIMED_OUT``; the timer is the asking loop's own (``loop.call_later``). An abort
        while the provider is pending raises ``ASK_ABORTED`` (chained from the reason) and
        cancels it (see the class docstring for an abort racing an answer); ``aclose()`` of the
        context withdraws it likewise (``ASK_ABORTED``, "the harness context closed"). The
        provider learns whether its answer was taken through `receipt`.
        """
        observed = self._observed()
        started = time.perf_counter() if observed else 0.0
        if observed:
            await self._asked.acall(_OBSERVER_FAILED, request=request)
        given = request
        flight: Flight | None = None
        deadline: Deadline | None = None
        taken = False
        try:
            try:
                # 1. Check the request (the spec's order: aborted, empty, caller, rules).
                signal = request.signal
                if signal is not None and signal.aborted:
                    raise UserQuestionError.aborted_by(signal)
                if request.agent is not None:
                    if not request.questions:
                        raise UserQuestionError.empty_questions()
                    # 2. Check the caller.
                    self._check_caller(request.agent)
                _check_request(request)
                # 3. Call the provider and wait: abort, timeout and aclose() all end it here.
                if timeout is None:
                    timeout = request.timeout
                if timeout is not None:
                    deadline = Deadline(check_seconds(timeout, "timeout"))
                    deadline.start_clock(self._running_loop())
                    # The provider sees the deadline through the request's signal, as it sees
                    # aborts.
                    signal = (
                        deadline.signal
                        if signal is None
                        else AbortSignal.any([signal, deadline.signal])
                    )
                    given = _with_signal(request, signal)
                flight = flights[id(given)] = Flight(self, given, self._current_task())
                result = self._call_provider(given)
                if type(result) is CoroutineType or inspect.isawaitable(result):
                    if signal is None:
                        result = await result
                    else:
                        task = flight.task = start_provider(result)
                        if task.done():
                            result = finished_result(task, signal)
                        else:
                            if deadline is not None:
                                deadline.arm()  # only a pending provider needs the timer
                            result = await wait_for_task(task, signal)
                # 4. Check the answer.
                answer = check_answer(request.questions, result)
            except BaseException as error:
                if (
                    flight is None
                    or not flight.withdrawn
                    or not isinstance(error, self._cancelled)
                    or _still_cancelled(flight.caller)
                ):
                    raise
                # Withdrawn by aclose(): once the provider's own clean-up is over, the caller
                # gets ASK_ABORTED like any withdrawn ask.
                if flight.task is not None and not flight.task.done():
                    await task_finished(flight.task).wait()
                raise UserQuestionError.context_closed() from None
            # 5. Tell the observers (never the clear text of a secret).
            if observed:
                await self._answered.acall(
                    _OBSERVER_FAILED,
                    request=request,
                    answer=rules.redact_secrets(request, answer),
                    wait_seconds=time.perf_counter() - started,
                )
            taken = True
            return answer
        except BaseException as error:
            if observed:
                await self._failed.acall(
                    _OBSERVER_FAILED,
                    request=request,
                    error=error,
                    wait_seconds=time.perf_counter() - started,
                )
            raise
        finally:
            if deadline is not None:
                deadline.disarm()
            if flight is not None:
                if flights.get(id(given)) is flight:
                    del flights[id(given)]
                leftover = flight.task
                if leftover is not None and not leftover.done():
                    # Cancelled but still cleaning up: aclose() waits for it too.
                    self._leftovers.add(leftover)
                    leftover.add_done_callback(self._leftovers.discard)
                flight.end(taken)

    def ask_sync(
        self, request: AskUserQuestionRequest, timeout: float | None = None
    ) -> AskUserQuestionAnswer:
        """`ask` for synchronous code: from any thread, with or without a running loop there.

        The ask runs on this service's question loop (a daemon thread started on the first
        call), the calling thread waiting; from that loop's own thread, on a fresh loop in a
        helper thread. Raises as `ask` does; see ``dsh_user_questions._sync``.
        """
        from ._sync import run_sync

        return run_sync(self, lambda: self.ask(request, timeout))

    def receipt(self, request: AskUserQuestionRequest) -> Receipt:
        """The `Receipt` of the ask whose provider got ``request``: "a receipt means taken".

        ``await service.receipt(request)`` is ``True`` only once ``ask()`` returned the answer
        to its caller; ``False`` when the caller was cancelled as the answer landed, the answer
        was refused as ``BAD_ANSWER``, or the ask was aborted, timed out or withdrawn. Same as
        `dsh_user_questions.providing.receipt`, which plugin providers use.
        """
        return receipt_for(request)

    async def asettle(self, grace: float) -> None:
        """Withdraw every ask of this service in flight and wait for the providers' clean-up.

        Called by ``HarnessContext.aclose()`` before its closing hooks. Each pending ask's caller
        gets ``ASK_ABORTED``; its provider's work is cancelled and awaited, as are provider
        tasks of asks that ended (aborted, timed out) but are still cleaning up, all within
        ``grace`` seconds (then a warning is logged and closing goes on).
        """
        ends = [flight.withdraw() for flight in list(flights.values()) if flight.owner is self]
        ends += [task_finished(task) for task in list(self._leftovers)]
        if not ends:
            return
        import asyncio

        waits = [asyncio.ensure_future(end.wait()) for end in ends]
        _done, pending = await asyncio.wait(waits, timeout=grace)
        for wait in pending:
            wait.cancel()
        if pending:
            _log.warning(
                "%d user question(s) were still cleaning up after %g s of closing",
                len(pending),
                grace,
            )

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

    def _call_provider(self, request: AskUserQuestionRequest) -> object:
        """Call the one provider (``NO_PROVIDER`` / ``DUPLICATE_PROVIDER`` unless exactly one)."""
        registration = self._registration
        direct = self._direct
        if direct is not None and registration is None:
            # The last ask's one plain implementation, called directly (see
            # `call_provider_impl`) while it is still the hook's only one and the manager's
            # call path is still the plain one (tracing replaces it).
            live = self._live_impls
            try:
                if (
                    live is not None
                    and len(live) == 1
                    and live[0] is direct[0]
                    and self._pm._inner_hookexec is direct[2]
                ):
                    return direct[1](request)
            except IndexError:  # another thread unregistered it just now: the long way
                pass
        everything = self._provider_hook.get_hookimpls()
        if registration is not None and not everything:
            return registration.provider.ask(request)
        impls = provider_impls(everything) if len(everything) > 1 else everything
        if registration is None and len(impls) == 1:
            # The implementation seen here is the one called, even if another thread
            # unregisters it meanwhile (never a silent None from an empty hook).
            impl = everything[0]
            if len(everything) == 1 and is_direct(self._pm, impl):
                self._direct = (impl, impl.function, self._pm._inner_hookexec)
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
        found = [getattr(hook, "_hookimpls", None) for hook in self._hooks]
        lists: list[list[Any]] = [impls for impls in found if isinstance(impls, list)]
        self._lists = lists if len(lists) == len(found) else None

    def __call__(self) -> bool:
        lists = self._lists
        if lists is not None:
            asked, answered, failed = lists
            if not (asked or answered or failed):
                return False
            if len(asked) == 1 and len(answered) == 1 and len(failed) == 1:
                # One plugin observing all three (the core's own observers): ask it once.
                plugin = asked[0].plugin
                if answered[0].plugin is plugin and failed[0].plugin is plugin:
                    return _busy(plugin)
            impls: list[Any] = [impl for found in lists for impl in found]
        else:
            impls = [impl for hook in self._hooks for impl in hook.get_hookimpls()]
        return any(_busy(plugin) for plugin in {id(i.plugin): i.plugin for i in impls}.values())


def _busy(observer: object) -> bool:
    """Whether an observer plugin has something to record now.

    An observer with nothing to record (the core's log observer while its logger is off) says
    so with ``observer_idle()``, and the ask keeps the unobserved path.
    """
    idle = getattr(observer, "observer_idle", None)
    return idle is None or not idle()


_CHECKED: dict[int, tuple[object, ...]] = {}
_CHECKED_MAX = 256


def _check_request(request: AskUserQuestionRequest) -> None:
    """`rules.check_request`, once per questions tuple: requests are immutable.

    `rules.check_request` reads only ``request.questions`` (frozen items in a tuple), so a
    tuple that passed once passes again; the few last ones are kept (held, so their ids stay
    theirs) and a request asked again skips the rules' work.
    """
    questions = request.questions
    if _CHECKED.get(id(questions)) is questions:
        return
    rules.check_request(request)
    if len(_CHECKED) >= _CHECKED_MAX:
        _CHECKED.clear()
    _CHECKED[id(questions)] = questions


_REQUEST_FIELDS = tuple(field.name for field in attrs.fields(AskUserQuestionRequest))
_COPIED_FIELDS = tuple(name for name in _REQUEST_FIELDS if name != "signal")
_new = object.__new__
_set_questions, _set_agent, _set_signal, _set_timeout, _set_key = (
    getattr(AskUserQuestionRequest, name).__set__
    for name in ("questions", "agent", "signal", "timeout", "key")
)


def _with_signal(request: AskUserQuestionRequest, signal: AbortSignal) -> AskUserQuestionRequest:
    """A copy of ``request`` with ``signal``: ``attrs.evolve`` without re-running validators
    on fields that were validated when ``request`` was made.

    Every timed ask makes one, so the copy sets the slots directly; tests/test_service.py
    checks that it copies every field (`_COPIED_FIELDS`).
    """
    copy = _new(AskUserQuestionRequest)
    _set_questions(copy, request.questions)
    _set_agent(copy, request.agent)
    _set_signal(copy, signal)
    _set_timeout(copy, request.timeout)
    _set_key(copy, request.key)
    return copy


def _still_cancelled(task: object) -> bool:
    """After a withdrawal's cancel: whether someone else cancelled the task too (3.11+)."""
    uncancel = getattr(task, "uncancel", None)
    return uncancel is not None and uncancel() > 0


def _describe(provider: object) -> str:
    return f"provider {type(provider).__module__}.{type(provider).__qualname__}"
