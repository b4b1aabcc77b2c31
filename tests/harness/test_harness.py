"""The host seam: abort signals, the agent registry and the harness context."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import weakref
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from dsh_user_questions import _abort, hookimpl, plugin
from dsh_user_questions.harness import (
    AbortController,
    AbortError,
    AbortSignal,
    Agent,
    AgentRegistry,
    HarnessContext,
)

# Abort signals ---------------------------------------------------------------------------------


def listeners_on(signal: AbortSignal) -> int:
    """How many listeners ``signal`` holds (white box: what a leak would pile up on a source).

    What work that is over costs in bytes is a benchmark (benchmarks/bench_signals.py); the
    tests count what is left behind, which does not depend on the machine.
    """
    listeners = signal._listeners
    return 0 if listeners is None else len(listeners)


def live_timers() -> int:
    """Entries the shared timer thread still waits to run (cancelled ones not counted)."""
    return _abort._timers.pending()


def timer_entries() -> int:
    """Entries in the timer's heap, cancelled ones included (they leave it in batches)."""
    return len(_abort._timers._heap)


def made_and_dropped(make: Callable[[], AbortSignal], times: int = 10_000) -> list[Any]:
    """Weak references to ``times`` signals made by ``make`` and dropped at once."""
    refs = [weakref.ref(make()) for _ in range(times)]
    gc.collect()
    return refs


class TestAbortSignal:
    """AbortSignal: pending, then aborted once with its reason; its listeners."""

    def test_signal_starts_pending_and_aborts_once_with_its_reason(self) -> None:
        """abort() sets aborted and reason; a second abort changes nothing."""
        controller = AbortController()
        signal = controller.signal
        assert (signal.aborted, signal.reason) == (False, None)
        first, second = ValueError("first"), ValueError("second")
        controller.abort(first)
        controller.abort(second)
        assert signal.aborted
        assert signal.reason is first

    def test_abort_without_reason_gives_an_abort_error(self) -> None:
        """An abort with no reason records an AbortError as the reason."""
        controller = AbortController()
        controller.abort()
        assert isinstance(controller.signal.reason, AbortError)
        with pytest.raises(AbortError):
            controller.signal.throw_if_aborted()

    def test_listeners_run_once_and_can_be_removed(self) -> None:
        """A listener hears the abort once; a removed listener hears nothing."""
        controller = AbortController()
        heard: list[str] = []
        controller.signal.add_listener(lambda: heard.append("kept"))
        remove = controller.signal.add_listener(lambda: heard.append("removed"))
        remove()
        remove()  # idempotent
        controller.abort()
        controller.abort()
        assert heard == ["kept"]

    def test_listener_added_after_abort_runs_at_once(self) -> None:
        """Adding a listener to an aborted signal calls it immediately."""
        signal = AbortSignal.abort("why")
        heard: list[object] = []
        signal.add_listener(lambda: heard.append(signal.reason))
        assert heard == ["why"]

    def test_a_failing_listener_does_not_stop_the_others(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A listener that raises is logged and the next listener still runs."""
        controller = AbortController()
        heard: list[str] = []

        def bad() -> None:
            raise RuntimeError("listener broke")

        controller.signal.add_listener(bad)
        controller.signal.add_listener(lambda: heard.append("second"))
        controller.abort()
        assert heard == ["second"]
        assert "an abort listener failed" in caplog.text

    def test_removed_listeners_are_released(self) -> None:
        """Removing a listener drops the signal's reference to it."""
        controller = AbortController()

        class Listener:
            def __call__(self) -> None:
                return None

        listener = Listener()
        ref = weakref.ref(listener)
        remove = controller.signal.add_listener(listener)
        remove()
        del listener
        gc.collect()
        assert ref() is None

    async def test_abort_from_another_thread_wakes_an_asyncio_waiter(self) -> None:
        """A signal aborted on another thread wakes the loop through call_soon_threadsafe."""
        controller = AbortController()
        loop = asyncio.get_running_loop()
        woken = loop.create_future()
        controller.signal.add_listener(lambda: loop.call_soon_threadsafe(woken.set_result, True))
        thread = threading.Thread(target=controller.abort, args=("from thread",))
        thread.start()
        assert await asyncio.wait_for(woken, 5) is True
        thread.join()

    def test_concurrent_aborts_call_each_listener_once(self) -> None:
        """Many threads aborting at once still run every listener exactly once."""
        for _ in range(50):
            controller = AbortController()
            calls: list[int] = []
            for i in range(5):
                controller.signal.add_listener(lambda i=i, calls=calls: calls.append(i))
            threads = [threading.Thread(target=controller.abort) for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert sorted(calls) == [0, 1, 2, 3, 4]

    @pytest.mark.parametrize("bad", [KeyboardInterrupt, SystemExit, asyncio.CancelledError])
    def test_a_listener_raising_a_base_exception_skips_no_other_listener(
        self,
        bad: type[BaseException],
    ) -> None:
        """Every listener runs; the first non-Exception is raised to the aborting code
        afterwards."""
        controller = AbortController()
        heard: list[str] = []

        def raising() -> None:
            heard.append("raising")
            raise bad()

        controller.signal.add_listener(lambda: heard.append("first"))
        controller.signal.add_listener(raising)
        controller.signal.add_listener(lambda: heard.append("last"))
        with pytest.raises(bad):
            controller.abort()
        assert heard == ["first", "raising", "last"]
        assert controller.signal.aborted


class TestTimeoutSignal:
    """AbortSignal.timeout: one shared timer thread, deadlines in order."""

    def test_timeout_signal_works_without_an_event_loop(self) -> None:
        """AbortSignal.timeout aborts with a TimeoutError with no loop running."""
        signal = AbortSignal.timeout(0.01)
        fired = threading.Event()
        signal.add_listener(fired.set)
        assert fired.wait(5)
        assert isinstance(signal.reason, TimeoutError)

    async def test_timeout_signal_made_before_the_loop_wakes_an_awaiting_task(self) -> None:
        """A timeout signal aborts from the timer thread and wakes an asyncio waiter safely."""
        signal = AbortSignal.timeout(0.02)
        loop = asyncio.get_running_loop()
        woken = loop.create_future()
        signal.add_listener(lambda: loop.call_soon_threadsafe(woken.set_result, signal.reason))
        reason = await asyncio.wait_for(woken, 5)
        assert isinstance(reason, TimeoutError)

    def test_timeouts_fire_in_order_of_their_deadline(self) -> None:
        """The timer thread aborts signals in deadline order, whatever order they were scheduled
        in."""
        order: list[float] = []
        done = threading.Event()
        signals = []
        for seconds in (0.6, 0.2, 0.4):
            signal = AbortSignal.timeout(seconds)
            signal.add_listener(lambda s=seconds: (order.append(s), len(order) == 3 and done.set()))
            signals.append(signal)
        assert done.wait(10)
        assert order == [0.2, 0.4, 0.6]

    def test_timer_thread_is_a_daemon(self) -> None:
        """The shared timer thread never keeps the interpreter alive."""
        AbortSignal.timeout(60)
        time.sleep(0)
        timers = [t for t in threading.enumerate() if t.name == "dsh-abort-timers"]
        assert timers
        assert all(t.daemon for t in timers)

    @pytest.mark.parametrize("seconds", [float("inf"), 1e10, threading.TIMEOUT_MAX * 2])
    def test_a_huge_timeout_never_stops_later_timeouts(self, seconds: float) -> None:
        """AbortSignal.timeout(inf / 1e10) stays pending and the timer still fires short
        timeouts."""
        huge = AbortSignal.timeout(seconds)
        huge.add_listener(lambda: None)
        time.sleep(0.2)  # let the timer thread start waiting for the huge deadline
        assert fires_within(10)
        time.sleep(0.2)  # and again, now that it waits for nothing shorter
        assert fires_within(10)
        assert not huge.aborted

    @pytest.mark.parametrize("bad", [KeyboardInterrupt, SystemExit, asyncio.CancelledError])
    def test_a_timed_listener_raising_a_base_exception_never_kills_the_timer(
        self,
        bad: type[BaseException],
    ) -> None:
        """A timeout's listener raising SystemExit & co is logged; the next timeout still fires."""
        signal = AbortSignal.timeout(0.01)
        after = threading.Event()

        def raising() -> None:
            raise bad()

        signal.add_listener(raising)
        signal.add_listener(after.set)
        assert after.wait(10)
        assert fires_within(10)

    def test_timeout_signals_that_are_dropped_leave_the_timer(self) -> None:
        """10,000 AbortSignal.timeout(300) made and dropped are gone, and the timer waits for
        none of them nor keeps an entry for each (its bytes: benchmarks/bench_signals.py)."""
        waiting = live_timers()
        refs = made_and_dropped(lambda: AbortSignal.timeout(300))
        assert not any(ref() is not None for ref in refs)
        assert live_timers() <= waiting
        assert timer_entries() < 1_000  # the cancelled entries are dropped as they pile up

    def test_a_dropped_timeout_signal_with_a_listener_still_fires(self) -> None:
        """A timeout signal nobody holds but that has a listener still aborts (the timer keeps
        it)."""
        fired = threading.Event()
        AbortSignal.timeout(0.01).add_listener(fired.set)
        gc.collect()
        assert fired.wait(10)

    def test_a_bad_timeout_is_refused(self) -> None:
        """A negative or NaN timeout is a ValueError, a non-number a TypeError."""
        with pytest.raises(ValueError, match="seconds must be a number of seconds >= 0"):
            AbortSignal.timeout(-1)
        with pytest.raises(ValueError, match="got nan"):
            AbortSignal.timeout(float("nan"))
        with pytest.raises(TypeError, match="got str"):
            AbortSignal.timeout("5")  # type: ignore[arg-type]


class TestAny:
    """AbortSignal.any: aborted by the first of its sources, holding nothing once dropped."""

    def test_any_aborts_with_the_first_source_reason(self) -> None:
        """AbortSignal.any aborts when one source does, with that source's reason."""
        a, b = AbortController(), AbortController()
        combined = AbortSignal.any([a.signal, b.signal])
        assert not combined.aborted
        b.abort("b went first")
        a.abort("a later")
        assert combined.aborted
        assert combined.reason == "b went first"

    def test_any_of_an_aborted_signal_is_aborted_at_once(self) -> None:
        """AbortSignal.any of an already aborted source is aborted already."""
        combined = AbortSignal.any([AbortController().signal, AbortSignal.abort("done")])
        assert combined.aborted
        assert combined.reason == "done"

    def test_any_releases_its_listeners_on_the_sources_once_aborted(self) -> None:
        """After the combined signal aborts, the other sources hold no listener for it."""
        a, b = AbortController(), AbortController()
        combined = AbortSignal.any([a.signal, b.signal])
        assert listeners_on(b.signal) == 1
        a.abort()
        assert listeners_on(b.signal) == 0
        refs = made_and_dropped(lambda: AbortSignal.any([b.signal, a.signal]))
        assert listeners_on(b.signal) == 0
        assert not any(ref() is not None for ref in refs)
        assert combined.aborted
        assert not b.signal.aborted

    def test_a_deep_chain_of_any_aborts(self) -> None:
        """any(any(any(...))) 5,000 deep aborts at the far end (no recursion limit)."""
        root = AbortController()
        chain = [root.signal]
        for _ in range(5_000):
            chain.append(AbortSignal.any([chain[-1]]))
        root.abort("deep")
        assert chain[-1].aborted
        assert chain[-1].reason == "deep"

    def test_any_signals_that_are_dropped_leave_their_sources(self) -> None:
        """Per-ask any([session, ask]) signals cost the session nothing once dropped."""
        session = AbortController()
        refs = made_and_dropped(lambda: AbortSignal.any([session.signal, AbortController().signal]))
        assert not any(ref() is not None for ref in refs)
        assert listeners_on(session.signal) == 0
        heard: list[str] = []
        kept = AbortSignal.any([session.signal])
        kept.add_listener(lambda: heard.append("kept"))
        session.abort()
        assert heard == ["kept"]

    def test_per_ask_any_of_a_session_and_a_timeout_holds_nothing_once_dropped(self) -> None:
        """any([session, AbortSignal.timeout(300)]) made and dropped 10,000 times holds nothing."""
        session = AbortController()
        waiting = live_timers()
        refs = made_and_dropped(lambda: AbortSignal.any([session.signal, AbortSignal.timeout(300)]))
        assert not any(ref() is not None for ref in refs)
        assert listeners_on(session.signal) == 0
        assert live_timers() <= waiting
        assert timer_entries() < 1_000
        assert not session.signal.aborted

    def test_any_follows_a_signal_of_another_kind(self) -> None:
        """any() takes any object with aborted, reason and add_listener (a harness's own signal)."""

        class HarnessSignal:
            def __init__(self) -> None:
                self.aborted = False
                self.reason: object = None
                self.listeners: list[Callable[[], object]] = []

            def add_listener(self, listener: Callable[[], object]) -> Callable[[], None]:
                self.listeners.append(listener)
                return lambda: self.listeners.remove(listener)

            def abort(self, reason: object) -> None:
                self.aborted, self.reason = True, reason
                for listener in list(self.listeners):
                    listener()

        theirs = HarnessSignal()
        combined = AbortSignal.any([AbortController().signal, theirs])  # type: ignore[list-item]
        theirs.abort("their reason")
        assert combined.aborted
        assert combined.reason == "their reason"
        with pytest.raises(TypeError, match="takes abort signals, got int"):
            AbortSignal.any([1])  # type: ignore[list-item]


# Agents ----------------------------------------------------------------------------------------


class TestAgentRegistry:
    """The agent registry: identity, registration order, owners, detaching."""

    def test_agents_are_compared_by_identity(self) -> None:
        """Two agents with the same id are different agents."""
        assert Agent("a") != Agent("a")
        agent = Agent("a")
        assert agent == agent

    def test_registry_get_and_roots_in_registration_order(self) -> None:
        """get finds a live agent by id; roots lists unowned agents in the order they entered."""
        registry = AgentRegistry()
        first, second, child = Agent("first"), Agent("second"), Agent("child")
        registry.enter(first)
        registry.enter(second)
        registry.enter(child, owner=first)
        assert registry.get("child") is child
        assert registry.get("nobody") is None
        assert registry.roots() == [first, second]

    def test_detach_is_idempotent_and_removes_only_its_entry(self) -> None:
        """An old detach does not remove a new agent that reuses the id."""
        registry = AgentRegistry()
        old = Agent("a")
        detach_old = registry.enter(old)
        detach_old()
        new = Agent("a")
        registry.enter(new)
        detach_old()
        assert registry.get("a") is new

    def test_a_duplicate_live_id_is_an_error(self) -> None:
        """Entering a second live agent with the same id raises ValueError."""
        registry = AgentRegistry()
        registry.enter(Agent("a"))
        with pytest.raises(ValueError, match="an agent with id 'a' is live already"):
            registry.enter(Agent("a"))

    def test_owner_must_be_live(self) -> None:
        """Entering an agent owned by an agent that is not live raises ValueError."""
        with pytest.raises(ValueError, match="the owner 'ghost' of agent 'child' is not live"):
            AgentRegistry().enter(Agent("child"), owner=Agent("ghost"))

    def test_owned_agent_stays_owned_after_its_owner_detaches(self) -> None:
        """A child does not become a root when its owner goes away."""
        registry = AgentRegistry()
        owner, child = Agent("owner"), Agent("child")
        detach_owner = registry.enter(owner)
        registry.enter(child, owner=owner)
        detach_owner()
        assert registry.roots() == []
        assert registry.get("child") is child

    def test_agent_id_must_be_a_string(self) -> None:
        """Agent(1) is a TypeError."""
        with pytest.raises(TypeError, match="Agent id must be a str"):
            Agent(1)  # type: ignore[arg-type]


# The context -----------------------------------------------------------------------------------


class TestHarnessContext:
    """HarnessContext: the services its plugins give, vetoes and hook checks."""

    def test_context_has_no_user_questions_before_the_plugin(self) -> None:
        """Before the plugin is registered, get returns None and the attribute is missing."""
        ctx = HarnessContext()
        assert ctx.get("user_questions") is None
        with pytest.raises(AttributeError, match="no service 'user_questions'"):
            _ = ctx.user_questions

    def test_registering_the_plugin_gives_the_service(self) -> None:
        """After ctx.register(plugin), ctx.user_questions is the service and get returns it."""
        ctx = HarnessContext()
        ctx.register(plugin)
        assert ctx.user_questions is ctx.get("user_questions")
        assert type(ctx.user_questions).__name__ == "UserQuestionService"

    def test_unregistering_the_plugin_removes_its_service(self) -> None:
        """The services a plugin added leave with it."""
        ctx = HarnessContext()
        ctx.register(plugin)
        ctx.unregister(plugin)
        assert ctx.get("user_questions") is None

    def test_agents_none_means_no_registry(self) -> None:
        """HarnessContext(agents=None) has no registry; the default makes a fresh one."""
        assert HarnessContext(agents=None).agents is None
        assert isinstance(HarnessContext().agents, AgentRegistry)
        own = AgentRegistry()
        assert HarnessContext(agents=own).agents is own

    def test_two_plugins_giving_one_service_name_is_an_error(self) -> None:
        """A second plugin providing user_questions is refused and the first stays."""
        ctx = HarnessContext()
        ctx.register(plugin)
        first = ctx.user_questions

        class Other:
            @hookimpl
            def dsh_context_services(self, ctx: HarnessContext) -> dict[str, object]:
                return {"user_questions": object()}

        with pytest.raises(ValueError, match="has a service named 'user_questions' already"):
            ctx.register(Other())
        assert ctx.user_questions is first

    def test_a_vetoed_plugin_is_unregistered_with_its_services(self) -> None:
        """A plugin refused by dsh_plugin_registered leaves no trace in the context."""
        ctx = HarnessContext()

        class Guard:
            @hookimpl
            def dsh_plugin_registered(self, ctx: HarnessContext, plugin: object, name: str) -> None:
                if name == "bad":
                    raise PermissionError("bad plugin")

        class Bad:
            @hookimpl
            def dsh_context_services(self, ctx: HarnessContext) -> dict[str, object]:
                return {"thing": 1}

        ctx.register(Guard())
        bad = Bad()
        with pytest.raises(PermissionError):
            ctx.register(bad, name="bad")
        assert ctx.plugin_manager.get_plugin("bad") is None
        assert ctx.get("thing") is None

    def test_services_of_plugins_registered_directly_on_the_manager(self) -> None:
        """pm.register (bypassing ctx.register) still adds the plugin's services."""
        ctx = HarnessContext()
        ctx.plugin_manager.register(plugin)
        assert ctx.get("user_questions") is not None

    def test_a_misspelled_hook_fails_loudly_on_check(self) -> None:
        """check_pending reports a dsh_ hook name no spec knows."""
        ctx = HarnessContext()
        ctx.register(SimpleNamespace(dsh_user_questions_asks=hookimpl(lambda request: None)))
        with pytest.raises(Exception, match="unknown hook 'dsh_user_questions_asks'"):
            ctx.plugin_manager.check_pending()


class TestAclose:
    """HarnessContext.aclose: the closing hooks, newest first, with pluggy's semantics."""

    async def test_aclose_runs_closing_hooks_newest_first_and_survives_failures(
        self,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        """aclose calls every dsh_context_closing newest first, then awaits what they returned.

        One pluggy call (as pluggy and datasette do): the implementations run newest first, the
        awaitables they returned are awaited in that order; a failing one is logged.
        """
        ctx = HarnessContext()
        closed: list[str] = []

        class Sync:
            @hookimpl
            def dsh_context_closing(self, ctx: HarnessContext) -> None:
                closed.append("sync")

        class Async:
            @hookimpl
            def dsh_context_closing(self, ctx: HarnessContext) -> Any:
                closed.append("async called")
                return self.close()

            async def close(self) -> None:
                await asyncio.sleep(0)
                closed.append("async awaited")

        class Broken:
            @hookimpl
            def dsh_context_closing(self, ctx: HarnessContext) -> None:
                raise RuntimeError("cannot close")

        ctx.register(Sync())
        ctx.register(Broken(), name="broken")
        ctx.register(Async())
        await ctx.aclose()
        assert closed == ["async called", "sync", "async awaited"]
        assert "plugin broken failed to close" in caplog.text

    async def test_aclose_matches_arguments_by_name(self) -> None:
        """A closing hook taking no ctx (def dsh_context_closing(self)) is called, as pluggy
        allows."""
        ctx = HarnessContext()
        closed: list[str] = []

        class NoArgs:
            @hookimpl
            def dsh_context_closing(self) -> None:
                closed.append("no args")

        ctx.register(NoArgs())
        await ctx.aclose()
        assert closed == ["no args"]

    async def test_aclose_runs_wrappers_around_closing_hooks(self) -> None:
        """A wrapper=True implementation of dsh_context_closing runs around the closing call."""
        ctx = HarnessContext()
        events: list[str] = []

        class Wrapper:
            @hookimpl(wrapper=True)
            def dsh_context_closing(self, ctx: HarnessContext) -> object:
                events.append("before")
                result = yield
                events.append("after")
                return result

        class Closer:
            @hookimpl
            def dsh_context_closing(self, ctx: HarnessContext) -> None:
                events.append("close")

        ctx.register(Wrapper())
        ctx.register(Closer())
        await ctx.aclose()
        assert events == ["before", "close", "after"]


# Waiting for an abort --------------------------------------------------------------------------


class TestWait:
    """AbortSignal.wait: returns once aborted, from any thread; cancelled cleanly."""

    async def test_wait_returns_once_aborted_from_another_thread(self) -> None:
        """await signal.wait() wakes when another thread aborts the signal."""
        controller = AbortController()
        waiting = asyncio.ensure_future(controller.signal.wait())
        await asyncio.sleep(0)
        assert not waiting.done()
        threading.Thread(target=controller.abort, args=("elsewhere",)).start()
        await asyncio.wait_for(waiting, 10)
        assert controller.signal.reason == "elsewhere"

    async def test_wait_returns_at_once_for_an_aborted_signal_and_on_the_loop_thread(self) -> None:
        """wait() of an aborted signal returns at once; an abort on the loop's thread wakes it."""
        await AbortSignal.abort("done").wait()
        controller = AbortController()
        waiting = asyncio.ensure_future(controller.signal.wait())
        await asyncio.sleep(0)
        controller.abort()
        await asyncio.wait_for(waiting, 10)

    async def test_cancelling_a_wait_leaves_nothing_behind(self) -> None:
        """A cancelled wait() stops waiting and keeps no listener (no memory per cancelled wait)."""
        controller = AbortController()

        async def cancelled_wait() -> None:
            task = asyncio.ensure_future(controller.signal.wait())
            await asyncio.sleep(0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        for _ in range(1000):
            await cancelled_wait()
        assert listeners_on(controller.signal) == 0
        assert asyncio.all_tasks() == {asyncio.current_task()}
        assert not controller.signal.aborted


# Signals that never die ------------------------------------------------------------------------


def fires_within(seconds: float) -> bool:
    """Whether a fresh short timeout signal aborts within ``seconds`` (the timer is alive)."""
    fired = threading.Event()
    signal = AbortSignal.timeout(0.01)
    signal.add_listener(fired.set)
    return fired.wait(seconds)


# Hooks through pluggy --------------------------------------------------------------------------
