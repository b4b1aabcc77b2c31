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
from typing import TYPE_CHECKING, Any, Protocol

import attrs
import pluggy

from . import rules
from ._abort import AbortSignal, check_seconds
from ._agents import SupportsAgentRegistry
from ._discovery import PROVIDER_HOOK, is_provider
from ._hookcalls import OneByOne
from ._inputs import check_files
from ._payloads import AskUserQuestionAnswer, AskUserQuestionRequest
from ._waiting import (
    Deadline,
    Flight,
    Receipt,
    board,
    board_with,
    flight_of,
    flights,
    land,
    race,
    receipt_for,
    task_finished,
    wait_for_provider,
)
from .errors import UserQuestionError
from .rules import check_answer

if TYPE_CHECKING:
    import asyncio

__all__ = ["SupportsHarnessContext", "UserQuestionProvider", "UserQuestionService"]

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


def _resumed_answer(result: object) -> AskUserQuestionAnswer:
    """What a provider's ``resume`` gave, as an answer (``BAD_ANSWER`` when it is none)."""
    if isinstance(result, AskUserQuestionAnswer):
        return result
    if isinstance(result, Mapping):
        return AskUserQuestionAnswer.from_dict(result)
    raise UserQuestionError.bad_answer(
        f"resume gave {type(result).__name__}, not an AskUserQuestionAnswer"
    )


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
        # The provider hook's implementations when last looked at, and those that answer.
        self._seen_providers: tuple[list[pluggy.HookImpl], tuple[pluggy.HookImpl, ...]] = (
            [],
            (),
        )
        self._observers = _Observers(pm)
        self._leftovers: set[Any] = set()  # provider tasks cleaning up after their ask ended
        # Set by asettle() when the context closes: from then on every ask is refused. A service
        # added to a context that has closed already (a plugin registered after aclose()) starts so.
        self._shut = bool(getattr(ctx, "_closed", False))
        import asyncio  # whoever asks runs a loop; imported here to keep the import light

        self._current_task = asyncio.current_task

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
        impls = self._providers()
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

        One trip, in this order: the observers hear of the ask
        (``dsh_user_questions_asked``); the context has not closed (``CONTEXT_CLOSED``: no
        provider is called once ``aclose()`` began); the request is checked: its signal has
        not aborted (``ASK_ABORTED``), it has questions (``EMPTY_QUESTIONS``); the caller is
        checked: a given agent is the registry's live object of its id (``CALLER_NOT_LIVE``)
        and a root (``DELEGATED_CALLER``); the rest of the request's rules
        (`rules.check_request`: ``BAD_AUDIENCE``, ``BAD_INTENT``, ``BAD_QUESTION``); the one
        provider is called with this very request (a copy whose ``signal`` also fires on the
        timeout, when there is one, or an equal copy when another ask has this very object
        in flight; ``NO_PROVIDER``, ``DUPLICATE_PROVIDER``) and waited for, the abort, the
        timeout and ``aclose()`` ending the wait in one place; the answer is checked
        (``BAD_ANSWER``, `rules.check_answer`); the observers hear of the outcome
        (``dsh_user_questions_answered`` with secrets redacted, or ``_failed``).

        ``timeout`` (seconds; default ``request.timeout``; ``None``: wait as long as it takes)
        withdraws the question when it expires, exactly like an abort, and raises
        ``ASK_TIMED_OUT``; the timer is the asking loop's own (``loop.call_later``). An abort
        while the provider is pending raises ``ASK_ABORTED`` (chained from the reason) and
        cancels it (see the class docstring for an abort racing an answer); ``aclose()`` of the
        context withdraws it likewise (``ASK_ABORTED``, "the harness context closed"). The
        provider learns whether its answer was taken through `receipt`.
        """
        watched = self._observers.watching()
        started = 0.0
        if watched:  # the wait is timed only for observers that record it
            started = time.perf_counter()
            await self._observers.asked(request)
        given: AskUserQuestionRequest | None = None  # the request the provider gets, once booked
        taken = False
        try:
            try:
                self._check(request)  # 1. the request, 2. the caller, 1b. the request's rules
                given = self._depart(request, timeout)
                result = self._call_provider(given)  # 3. the provider, and the wait
                if given.signal is not None:
                    result = await self._race(given, result, given.signal)
                elif inspect.isawaitable(result):
                    result = await result
                answer = check_answer(request.questions, result)  # 4. the answer
                check_files(request.questions, answer)  # 4b. its files, where they are
            except BaseException as error:  # 5. the observers, whatever the outcome
                closed = await self._closed(given, error)
                if watched:
                    failure = error if closed is None else closed
                    await self._observers.failed(request, failure, time.perf_counter() - started)
                if closed is not None:
                    raise closed from None
                raise
            if watched:
                await self._observers.answered(request, answer, time.perf_counter() - started)
            taken = True
            return answer
        finally:
            if given is not None:
                land(given, taken, self._keep)

    def _depart(
        self, request: AskUserQuestionRequest, timeout: float | None
    ) -> AskUserQuestionRequest:
        """Book the ask in flight (`board`); returns the request its provider gets.

        That is ``request`` itself, unless the ask is timed (a copy whose signal also fires on
        the timeout) or another ask in flight has this very object (a copy of its own, so each
        ask's receipt and withdrawal reach that ask). A plain ask books a tuple, nothing more.
        """
        seconds = request.timeout if timeout is None else timeout
        if seconds is not None:
            return self._depart_timed(request, check_seconds(seconds, "timeout"))
        caller = self._current_task()
        if board((self, request, caller)):
            return request
        given = attrs.evolve(request)
        board((self, given, caller))
        return given

    def _depart_timed(
        self, request: AskUserQuestionRequest, seconds: float
    ) -> AskUserQuestionRequest:
        """Book a timed ask: its request is a copy whose signal also fires on the timeout."""
        deadline = Deadline(seconds)
        signal = request.signal
        signal = deadline if signal is None else AbortSignal.any([signal, deadline])
        given = attrs.evolve(request, signal=signal)
        caller = self._current_task()
        board_with((self, given, caller), Flight(caller, deadline))
        return given

    async def _race(
        self, given: AskUserQuestionRequest, result: object, signal: AbortSignal
    ) -> object:
        """Wait for the provider's answer unless the request's signal (the abort, the timeout)
        ends the wait first: the provider's work runs in a task of its own, left behind then."""
        if not inspect.isawaitable(result):
            return result
        return await race(given, result, signal)

    @staticmethod
    async def _closed(
        given: AskUserQuestionRequest | None, error: BaseException
    ) -> UserQuestionError | None:
        """``ASK_ABORTED`` ("the harness context closed") when ``error`` is the cancellation by
        which ``aclose()`` withdrew the ask, once the provider's own clean-up is over."""
        flight = None if given is None else flight_of(given, make=False)
        if flight is None or not flight.withdrawn_by(error):
            return None
        if flight.task is not None and not flight.task.done():
            await task_finished(flight.task).wait()
        return UserQuestionError.context_closed()

    def _keep(self, leftover: asyncio.Future[Any]) -> None:
        """Keep a provider task still cleaning up after its ask ended, for ``aclose()``."""
        self._leftovers.add(leftover)
        leftover.add_done_callback(self._leftovers.discard)

    def ask_sync(
        self, request: AskUserQuestionRequest, timeout: float | None = None
    ) -> AskUserQuestionAnswer:
        """`ask` for synchronous code, from any thread that runs no event loop.

        The ask runs on this service's question loop (a daemon thread started on the first
        call), the calling thread waiting; from that loop's own thread, on a fresh loop in a
        helper thread. Raises as `ask` does; from a thread running an event loop it raises
        `RuntimeError` at once, as ``asyncio.run()`` does (waiting would stop that loop until
        the human answers: ``await ask(...)`` there). See ``dsh_user_questions._sync``.
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

        Called by ``HarnessContext.aclose()`` before its closing hooks. From then on every ask
        (and `resume`) is refused with ``CONTEXT_CLOSED``. Each pending ask's caller gets
        ``ASK_ABORTED``; its provider's work is cancelled and awaited, as are provider
        tasks of asks that ended (aborted, timed out) but are still cleaning up, all within
        ``grace`` seconds (then a warning is logged and closing goes on).
        """
        self._shut = True
        mine = [given for owner, given, _ in list(flights.values()) if owner is self]
        ends = [flight.withdraw() for flight in map(flight_of, mine) if flight is not None]
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
        if self._shut:
            raise UserQuestionError.asked_after_close()
        if signal is not None and signal.aborted:
            raise UserQuestionError.aborted_by(signal)
        registration = self._registration
        impls = self._providers()
        result: object = None
        if registration is not None and not impls:
            method = getattr(registration.provider, "resume", None)
            if method is not None:
                result = method(question_id, signal=signal)
            active = _describe(registration.provider)
        elif registration is None and len(impls) == 1:
            result = self._pm.hook.dsh_user_questions_resume(question_id=question_id, signal=signal)
            if result is None and not self._providers():  # unregistered since it was chosen
                raise UserQuestionError.no_provider()
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
        return _resumed_answer(result)

    def _providers(self) -> tuple[pluggy.HookImpl, ...]:
        """The provider hook's answering implementations, worked out again only when the
        hook's implementations change (a plugin registered, unregistered or blocked): the
        public ``HookCaller.get_hookimpls()`` gives a fresh list each time, compared item by
        item (by identity: a plugin registered again has new implementations) with the last."""
        impls = self._provider_hook.get_hookimpls()
        seen, providers = self._seen_providers
        if impls != seen:
            providers = _answering(impls)
            self._seen_providers = (impls, providers)
        return providers

    def _call_provider(self, request: AskUserQuestionRequest) -> object:
        """Call the one provider (``NO_PROVIDER`` / ``DUPLICATE_PROVIDER`` unless exactly one)."""
        registration = self._registration
        providers = self._providers()
        if registration is None and len(providers) == 1:
            result = self._provider_hook(request=request)
            if result is None and not self._providers():
                # Unregistered (from another thread) since it was chosen: pluggy's None says
                # nobody implements the hook now. No provider answered; not a bad answer.
                raise UserQuestionError.no_provider()
            return result
        if registration is not None and not providers:
            return registration.provider.ask(request)
        if registration is None and not providers:
            raise UserQuestionError.no_provider()
        raise UserQuestionError.duplicate_provider(
            *self._describe_active(), fix="a question needs exactly one provider"
        )

    def _check(self, request: AskUserQuestionRequest) -> None:
        """Check the request, then its caller, then the request's own rules.

        In this order: the context has not closed (``CONTEXT_CLOSED``), the signal has not aborted
        (``ASK_ABORTED``), there are questions (``EMPTY_QUESTIONS``); the caller (`_check_caller`);
        `rules.check_request`, whose verdict on a tuple of questions is kept (a request with an
        ``audience`` is checked every time: the people file may change). A request's questions
        are a tuple of frozen items, and the rules read nothing else, so a tuple that passed once
        passes again: a request asked again (a harness re-asking, a scripted evaluation loop) skips
        the rules' label work, the biggest cost of an ask. The last few tuples are kept, held so
        that their ids stay theirs.
        """
        if self._shut:
            raise UserQuestionError.asked_after_close()
        signal = request.signal
        if signal is not None and signal.aborted:
            raise UserQuestionError.aborted_by(signal)
        questions = request.questions
        if not questions:
            raise UserQuestionError.empty_questions()
        agent = request.agent
        if agent is not None:
            self._check_caller(agent)
        if request.audience:  # its groups are read from the people file, which may change
            rules.check_request(request)
        elif _CHECKED.get(id(questions)) is not questions:
            rules.check_request(request)
            if len(_CHECKED) >= _CHECKED_MAX:
                _CHECKED.clear()
            _CHECKED[id(questions)] = questions

    def _check_caller(self, agent: object) -> None:
        """``CALLER_NOT_LIVE`` / ``DELEGATED_CALLER`` unless ``agent`` is the
        registry's live object of its id and a root."""
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


class _Observers:
    """The three observer hooks, called only when some observer has something to record."""

    __slots__ = ("_answered", "_asked", "_checks", "_failed", "_impls", "_seen")

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self._asked = OneByOne(pm, "dsh_user_questions_asked")
        self._answered = OneByOne(pm, "dsh_user_questions_answered")
        self._failed = OneByOne(pm, "dsh_user_questions_failed")
        # Each hook's public HookCaller.get_hookimpls (a fresh list per call), and the lists
        # they gave when last looked at, with the idle checks made of them.
        self._impls = tuple(
            getattr(pm.hook, name).get_hookimpls
            for name in (
                "dsh_user_questions_asked",
                "dsh_user_questions_answered",
                "dsh_user_questions_failed",
            )
        )
        self._seen: tuple[list[pluggy.HookImpl], ...] = ([], [], [])
        self._checks: _IdleChecks = ()

    def watching(self) -> bool:
        """Whether any observer plugin has something to record now.

        An observer with nothing to record (the core's log observer while its logger is off)
        says so with ``observer_idle()``, and the ask skips the observer calls. Which plugins
        observe, and their ``observer_idle`` methods, are read again only when the hooks'
        implementations change (a plugin registered, unregistered or blocked): each hook's
        implementations are compared, one by one, with those last seen.
        """
        asked, answered, failed = self._impls
        seen_asked, seen_answered, seen_failed = self._seen
        if asked() != seen_asked or answered() != seen_answered or failed() != seen_failed:
            self._see()
        checks = self._checks
        if checks is None:
            return True
        for idle in checks:  # noqa: SIM110 (any() with a generator costs more than the check)
            if not idle():
                return True
        return False

    def _see(self) -> None:
        """Look at the observer hooks' implementations again, and make their idle checks."""
        self._seen = seen = tuple(impls() for impls in self._impls)
        self._checks = _idle_checks(seen)

    async def asked(self, request: AskUserQuestionRequest) -> None:
        await self._asked.acall(_OBSERVER_FAILED, request=request)

    async def answered(
        self, request: AskUserQuestionRequest, answer: AskUserQuestionAnswer, wait: float
    ) -> None:
        # Never the clear text of a secret.
        shown = rules.redact_secrets(request, answer)
        await self._answered.acall(
            _OBSERVER_FAILED, request=request, answer=shown, wait_seconds=wait
        )

    async def failed(
        self, request: AskUserQuestionRequest, error: BaseException, wait: float
    ) -> None:
        await self._failed.acall(_OBSERVER_FAILED, request=request, error=error, wait_seconds=wait)


_IdleChecks = tuple[Callable[[], bool], ...] | None
"""Each observer plugin's ``observer_idle``, once each; ``None``: an observer has none."""


def _idle_checks(impls: tuple[list[pluggy.HookImpl], ...]) -> _IdleChecks:
    """The ``observer_idle`` methods `_Observers.watching` calls, read as the plugins register."""
    checks: dict[int, Callable[[], bool]] = {}
    for hook_impls in impls:
        for impl in hook_impls:
            plugin = impl.plugin
            idle = getattr(plugin, "observer_idle", None)
            if idle is None:
                return None  # an observer that is never idle: always watching
            checks[id(plugin)] = idle
    return tuple(checks.values())


_CHECKED: dict[int, tuple[object, ...]] = {}
_CHECKED_MAX = 256


def _answering(impls: list[pluggy.HookImpl]) -> tuple[pluggy.HookImpl, ...]:
    """The implementations that provide answers (wrappers around the hook do not)."""
    return tuple(impl for impl in impls if not (impl.wrapper or impl.hookwrapper))


def _describe(provider: object) -> str:
    return f"provider {type(provider).__module__}.{type(provider).__qualname__}"
