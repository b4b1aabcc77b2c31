"""`ProviderConformance`: the provider contract as one pytest test per rule."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import tempfile
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar

import pytest

from .. import plugin as core_plugin
from .._loops import run
from .._markers import hookimpl
from .._payloads import (
    AskUserQuestionAnswer,
    AskUserQuestionInput,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    AskUserQuestionUpload,
)
from ..errors import BadAnswerError, UserQuestionError, UserQuestionErrorCode
from ..harness import AbortController, HarnessContext
from ..plan_review import read_plan_review
from . import _inert
from ._driver import ProviderDriver
from ._replies import (
    Approve,
    Attach,
    Choose,
    Enter,
    KeepPlanning,
    Other,
    Reply,
    Skip,
    TalkInstead,
    expected_item,
)
from ._requests import (
    ALLOWED,
    CHECKS,
    COLOUR,
    FRUIT,
    INPUTS,
    NAME,
    OPTIONS_ONLY,
    PKG,
    PLAN,
    PLAN_REVIEW,
    RECOMMENDED,
    REFUSED,
    SECRET,
    SECRET_TEXT,
    TYPED,
    request,
)
from ._session import ErrorLog, Session, expect_code, outcome

__all__ = ["ProviderConformance"]

Check = Callable[[Session], Awaitable[None]]

_TIMEOUT_SECONDS = 3.0


class ProviderConformance:
    """The provider contract, one test per rule; subclass it in a test module and `connect`.

    Each test builds a fresh `HarnessContext` with `dsh_user_questions.plugin` registered
    (under its entry-point name ``user_questions``), lets `connect` put the provider on it, asks
    through ``ctx.user_questions`` as a harness would, plays the human with the driver, and
    closes the context with ``await ctx.aclose()``. Each test runs its own event loop, so no
    async pytest plugin is needed. A test fails with what the human did, what the caller got and
    what the screen showed; anything logged at ERROR meanwhile fails it too.

    To leave a rule out (say, your UI has no skip control), name its test in `opt_out` with the
    reason, which pytest reports as the skip's reason; a blank reason or a name that is no test
    of the suite fails the run. (Overriding a test with one that calls ``pytest.skip("why")``
    still works.)

    **What the third release's checks expect** (issues 21 and 22):

    - *Answer rules* (``test_custom_text_with_*``, ``test_over_long_custom_text_*``): custom
      text `rules.check_answer` refuses never comes back as an answer. Best: the surface refuses
      it and keeps the question open (the driver's ``reply`` may then raise); the suite answers
      again and expects that answer. Also fine: ``ask()`` raises ``BAD_ANSWER`` (the service's
      own check). Returning the text changed (controls stripped, cut short) fails: those are
      words the human never wrote. Text every rule allows comes back exactly
      (``test_custom_text_every_rule_allows_comes_back_unchanged``).
    - *Inert text*: every word `rules.inert_text` makes of the model's texts is on the screen,
      its ``<U+XXXX>`` stand-ins included, and no character ``inert_text`` would replace is.
    - *A receipt means taken* (``test_an_answer_landing_as_the_caller_is_cancelled_*``): the
      caller's task is cancelled right as the answer lands (from an ``answered`` observer);
      the surface must not tell the human the answer was taken (`ReceiptDriver`).
    - *Recommended*: a recommended option is never chosen for the human: a skip stays a skip
      and another choice stays that choice.
    - *Secrets*: the asker gets a secret answer's text; after answering it is on no screen, in
      no log record of any level and logger, and (with a `StoreDriver`) nowhere at rest.
    - *Options only* (``test_no_free_text_when_allow_other_is_false``): on a question with
      ``allow_other`` false the human cannot give words of their own. The driver, told to type
      `Other`, should find no control for it and raise (or its words should be refused at the
      surface); the question stays open and a choice then answers it. The provider handing
      the words back (``ask()`` then raises ``BAD_ANSWER``) fails.
    """

    timeout: ClassVar[float] = 20.0
    """Seconds to wait for anything to show up on the screen, go away, or return."""

    opt_out: ClassVar[Mapping[str, str]] = {}
    """Tests this provider leaves out, each with the reason (``{"test_name": "why"}``)."""

    input_types: ClassVar[frozenset[str]] = frozenset()
    """The typed inputs this provider renders (of ``rules.INPUT_TYPES``); the checks of the
    others are skipped, saying so."""

    def _renders(self, kind: str) -> None:
        if kind not in self.input_types:
            pytest.skip(
                f"the provider does not declare input type {kind!r} (input_types); declare it"
                " once its surface renders it"
            )

    @pytest.fixture(autouse=True)
    def _opted_out(self, request: pytest.FixtureRequest) -> None:
        known = {name for name in dir(ProviderConformance) if name.startswith("test_")}
        unknown = sorted(set(self.opt_out) - known)
        if unknown:
            pytest.fail(f"opt_out names no test of the conformance suite: {unknown}")
        name = getattr(request.node, "originalname", request.node.name)
        if name in self.opt_out:
            reason = self.opt_out[name]
            if not isinstance(reason, str) or not reason.strip():
                pytest.fail(f"opt_out[{name!r}] must say why the provider leaves the rule out")
            pytest.skip(f"opted out: {reason}")

    def connect(self, ctx: HarnessContext) -> AbstractAsyncContextManager[ProviderDriver]:
        """Install the provider on ``ctx`` and give a driver for its UI; undo it on exit.

        Install it as a harness would: ``ctx.user_questions.register_provider(provider)``,
        ``ctx.register(plugin)``, or ``ctx.load_entrypoints()`` for an installed distribution.
        Write it as an ``@contextlib.asynccontextmanager`` method yielding the driver.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must implement connect(ctx): install the provider on ctx"
            " and yield a ProviderDriver for its UI"
        )

    # The answers ------------------------------------------------------------------------------

    def test_shows_header_question_detail_and_options(self) -> None:
        """The human sees the header, question, detail and every option with its description."""
        self._run(_shows_everything)

    def test_single_select_returns_the_chosen_option(self) -> None:
        """Picking one option of a single-select returns exactly that label."""
        self._run(_answers(request(PKG), [Choose("npm")]))

    def test_multi_select_returns_every_checked_option(self) -> None:
        """Checking two options of a multi-select returns exactly those labels."""
        self._run(_answers(request(CHECKS), [Choose("lint", "tests")]))

    def test_free_text_question_returns_the_typed_text(self) -> None:
        """A question without options returns the typed text as ``custom``, unchanged."""
        self._run(_answers(request(NAME), [Other(TYPED)]))

    def test_other_on_single_select_replaces_the_pick(self) -> None:
        """Other on a single-select returns the typed text and no selection."""
        self._run(_answers(request(PKG), [Other(TYPED)]))

    def test_other_on_multi_select_adds_to_the_picks(self) -> None:
        """Other on a multi-select returns the checked labels and the typed text."""
        self._run(_answers(request(CHECKS), [Other(TYPED, "types")]))

    def test_skip_returns_an_empty_selection(self) -> None:
        """Skip keeps the question in the answer as ``{id, selected: []}``."""
        self._run(_answers(request(PKG), [Skip()]))

    def test_several_questions_are_answered_together(self) -> None:
        """A request of several questions returns one item per question, each as given."""
        self._run(
            _answers(
                request(PKG, CHECKS, NAME),
                [Choose("yarn"), Choose("types", "tests"), Other("parsnip")],
            )
        )

    def test_several_questions_with_skip_and_other(self) -> None:
        """Skip and Other on some questions of several leave the others' answers intact."""
        self._run(_answers(request(CHECKS, PKG), [Skip(), Other(TYPED)]))

    # Plan review ------------------------------------------------------------------------------

    def test_plan_review_approve(self) -> None:
        """Approving a plan returns the approve label, which `read_plan_review` approves."""
        self._run(_plan_review([Approve()], approved=True, feedback=None))

    def test_plan_review_keep_planning_with_feedback(self) -> None:
        """Keep planning with feedback returns the feedback as the plan-review's text."""
        feedback = "Also migrate the docs first"
        self._run(_plan_review([KeepPlanning(feedback)], approved=False, feedback=feedback))

    def test_plan_review_keep_planning_without_feedback(self) -> None:
        """Keep planning without feedback returns the keep-planning option, not an approval."""
        self._run(_plan_review([KeepPlanning()], approved=False, feedback=None))

    def test_plan_review_talk_instead_cancels(self) -> None:
        """Talk instead on a plan review makes ask() raise ASK_CANCELLED."""
        self._run(_talk_instead)

    # Ending without an answer -----------------------------------------------------------------

    def test_user_cancel_raises_ask_cancelled(self) -> None:
        """The human closing the question makes ask() raise ASK_CANCELLED and clears it."""
        self._run(_user_cancel)

    def test_abort_withdraws_the_question(self) -> None:
        """Aborting the request's signal raises ASK_ABORTED and takes the question off screen."""
        self._run(_abort(in_thread=False))

    def test_abort_from_another_thread_withdraws_the_question(self) -> None:
        """An abort from another thread raises ASK_ABORTED and takes the question off screen."""
        self._run(_abort(in_thread=True))

    def test_timeout_withdraws_the_question(self) -> None:
        """An ask whose timeout expires raises ASK_TIMED_OUT and takes the question off screen."""
        self._run(_timeout)

    def test_cancelled_caller_task_withdraws_the_question(self) -> None:
        """Cancelling the task awaiting ask() takes the question off screen."""
        self._run(_cancel_caller)

    def test_next_ask_after_an_abort_is_answered(self) -> None:
        """After an abort nothing is left behind: the next question is shown and answered."""
        self._run(_ask_after_abort)

    # Several callers --------------------------------------------------------------------------

    def test_concurrent_asks_each_get_their_own_answer(self) -> None:
        """Two asks pending at once each get the answer given to their own question."""
        self._run(_concurrent)

    def test_aborting_one_ask_leaves_the_other_answerable(self) -> None:
        """An abort of one of two pending asks leaves the other shown and answerable."""
        self._run(_abort_one_of_two)

    # Model text is inert ----------------------------------------------------------------------

    def test_escape_sequences_are_shown_inert(self) -> None:
        """Terminal escapes, BEL, backspace and CR in model text reach the screen as text."""
        self._run(_inert_text(_inert.ESCAPES))

    def test_bidi_controls_are_shown_inert(self) -> None:
        """Bidirectional overrides and isolates in model text never reach the screen live."""
        self._run(_inert_text(_inert.BIDI))

    def test_markup_is_shown_as_text(self) -> None:
        """HTML tags and script in model text are shown as their characters."""
        self._run(_inert_text(_inert.MARKUP))

    def test_lookalikes_and_zero_width_are_shown_with_stand_ins(self) -> None:
        """Look-alike letters and zero-width characters show as `rules.inert_text` stand-ins."""
        self._run(_inert_text(_inert.LOOKALIKES))

    # The answer rules (rules.check_answer) -----------------------------------------------------

    def test_custom_text_with_control_characters_is_never_an_answer(self) -> None:
        """Custom text with terminal escapes is refused, never handed back as the answer."""
        self._run(_refused("control characters"))

    def test_custom_text_with_bidi_controls_is_never_an_answer(self) -> None:
        """Custom text with a bidi override is refused, never handed back as the answer."""
        self._run(_refused("bidi controls"))

    def test_over_long_custom_text_is_never_an_answer(self) -> None:
        """Custom text over rules.MAX_CUSTOM_CHARS is refused, never handed back (or cut)."""
        self._run(_refused("over-long text"))

    def test_custom_text_every_rule_allows_comes_back_unchanged(self) -> None:
        """Right-to-left text with a bidi mark, accents and a dash come back exactly."""
        self._run(_answers(request(NAME), [Other(ALLOWED)]))

    # A receipt means taken ---------------------------------------------------------------------

    def test_an_answer_landing_as_the_caller_is_cancelled_is_not_reported_taken(self) -> None:
        """When the caller is cancelled as the answer lands, the surface never says "taken"."""
        self._run(_cancelled_as_it_lands)

    # Recommended and secret --------------------------------------------------------------------

    def test_a_recommended_option_is_never_picked_for_the_human(self) -> None:
        """A skip of a question with a recommended option stays a skip; another pick stays."""
        self._run(_recommended)

    def test_a_secret_is_not_shown_logged_or_stored_after_answering(self) -> None:
        """The asker gets the secret; no screen, log record or store holds it afterwards."""
        self._run(_secret)

    def test_no_free_text_when_allow_other_is_false(self) -> None:
        """A question with allow_other false takes no words of the human's own: no Other."""
        self._run(_options_only)

    # Typed inputs (declared in input_types) -----------------------------------------------------

    def test_number_input_returns_the_number(self) -> None:
        """A number entered on a number question comes back as that JSON number."""
        self._renders("number")
        self._run(_answers(request(INPUTS["number"]), [Enter(64)], look=_shows("GB")))

    def test_number_out_of_range_is_never_an_answer(self) -> None:
        """A number above the maximum is refused (at the surface, or ask() raises BAD_ANSWER)."""
        self._renders("number")
        self._run(_out_of_range)

    def test_date_input_returns_the_date(self) -> None:
        """A date entered comes back as its ISO string, YYYY-MM-DD."""
        self._renders("date")
        self._run(_answers(request(INPUTS["date"]), [Enter("2027-02-28")]))

    def test_time_input_returns_the_time(self) -> None:
        """A time entered comes back as HH:MM."""
        self._renders("time")
        self._run(_answers(request(INPUTS["time"]), [Enter("09:45")]))

    def test_datetime_input_returns_it_with_its_offset(self) -> None:
        """A date and time entered comes back as RFC 3339 with its offset."""
        self._renders("datetime")
        self._run(_answers(request(INPUTS["datetime"]), [Enter("2027-03-01T17:30:00+01:00")]))

    def test_files_input_returns_the_picked_paths(self) -> None:
        """Files picked among a workspace's candidates come back as their relative paths."""
        self._renders("files")
        self._run(_files)

    def test_upload_input_returns_the_file_it_wrote(self) -> None:
        """An attached file comes back as a record (name, size, sha256) of a file with its bytes."""
        self._renders("upload")
        self._run(_upload)

    # Closing the context ----------------------------------------------------------------------

    def test_aclose_with_a_question_pending(self) -> None:
        """ctx.aclose() with a question pending returns; the ask ends cleanly or stays open."""
        self._run(_aclose_pending)

    def test_aclose_after_an_answer(self) -> None:
        """ctx.aclose() after an answered question returns and logs no error."""
        self._run(_aclose_idle)

    # Running one check ------------------------------------------------------------------------

    def _run(self, check: Check) -> None:
        run(self._session(check))

    async def _session(self, check: Check) -> None:
        log = ErrorLog()
        root = logging.getLogger()
        root.addHandler(log)
        try:
            ctx = HarnessContext()
            ctx.register(core_plugin, name="user_questions")
            async with self.connect(ctx) as driver:
                session = Session(ctx, driver, self.timeout)
                try:
                    await check(session)
                finally:
                    await session.finish()
                    if not session.closed:
                        await _aclose(session)
        finally:
            root.removeHandler(log)
        if log.records:
            raise AssertionError(f"errors were logged during the check: {log.describe()}")


async def _aclose(session: Session) -> None:
    session.closed = True
    try:
        await asyncio.wait_for(session.ctx.aclose(), session.timeout)
    except asyncio.TimeoutError:
        raise AssertionError(f"ctx.aclose() did not return within {session.timeout:g} s") from None


def _describe_replies(replies: Sequence[Reply]) -> str:
    return ", ".join(repr(reply) for reply in replies)


def _answers(
    req: AskUserQuestionRequest,
    replies: Sequence[Reply],
    *,
    look: Callable[[str], None] | None = None,
) -> Check:
    """Ask ``req``, give ``replies``, and compare the answer with what the human did.

    ``look(screen)`` checks the screen once the first question is shown.
    """

    async def check(session: Session) -> None:
        task = session.ask(req)
        screen = await session.shown(req.questions[0].question, task)
        if look is not None:
            look(screen)
        did = f"the human gave {_describe_replies(replies)}"
        await session.driver.reply(req, replies)
        answer = await session.answer_of(task, did)
        got = {item.id: item for item in answer.answers}
        for question, reply in zip(req.questions, replies, strict=True):
            expected = expected_item(question, reply)
            item = got.get(question.id)
            if item != expected:
                shown = "nothing" if item is None else item.to_dict()
                raise AssertionError(
                    f"the human gave {reply!r} to question {question.id!r}; ask() should return"
                    f" {expected.to_dict()} for it but returned {shown}"
                    f" (whole answer {answer.to_dict()})"
                )
        extra = set(got) - {question.id for question in req.questions}
        if extra:
            raise AssertionError(f"the answer has items for questions never asked: {extra}")
        # An answered question may leave a record behind (a terminal's recap line), so its
        # text is not required to go; a withdrawn or closed one is (see the checks below).

    return check


async def _shows_everything(session: Session) -> None:
    req = request(PKG)
    task = session.ask(req)
    screen = await session.shown(PKG.question, task)
    missing = _inert.missing_words(PKG, screen)
    if missing:
        raise AssertionError(
            f"the human should see the header, question, detail and options with descriptions,"
            f" but these words are missing: {missing}; the screen:\n{screen}"
        )
    await session.driver.reply(req, [Choose("pnpm")])
    await session.answer_of(task, "the human chose pnpm")


def _plan_shown(screen: str) -> None:
    missing = [word for word in PLAN.split() if word[0].isalpha() and word not in screen]
    if missing:
        raise AssertionError(
            f"the plan under review should be shown; missing {missing}; the screen:\n{screen}"
        )


def _plan_review(replies: Sequence[Reply], *, approved: bool, feedback: str | None) -> Check:
    item = expected_item(PLAN_REVIEW, replies[0])
    outcome = read_plan_review(AskUserQuestionAnswer(answers=(item,)))
    # The suite's own expectation must mean the decision to read_plan_review as well.
    assert (outcome.approved, outcome.feedback) == (approved, feedback), outcome
    return _answers(request(PLAN_REVIEW), replies, look=_plan_shown)


async def _talk_instead(session: Session) -> None:
    req = request(PLAN_REVIEW)
    task = session.ask(req)
    await session.shown(PLAN_REVIEW.question, task)
    await session.driver.reply(req, [TalkInstead()])
    error = await session.error_of(task, "the human chose Talk instead")
    expect_code(error, UserQuestionErrorCode.ASK_CANCELLED, "Talk instead")
    await session.gone(PLAN_REVIEW.question, "Talk instead")


async def _user_cancel(session: Session) -> None:
    req = request(PKG)
    task = session.ask(req)
    await session.shown(PKG.question, task)
    await session.driver.cancel(req)
    error = await session.error_of(task, "the human closed the question")
    expect_code(error, UserQuestionErrorCode.ASK_CANCELLED, "the human closed the question")
    await session.gone(PKG.question, "the human closed it")


def _abort(*, in_thread: bool) -> Check:
    async def check(session: Session) -> None:
        controller = AbortController()
        task = session.ask(request(PKG, signal=controller.signal))
        await session.shown(PKG.question, task)
        if in_thread:
            thread = threading.Thread(target=controller.abort, args=("the agent moved on",))
            thread.start()
            await asyncio.get_running_loop().run_in_executor(None, thread.join)
        else:
            controller.abort("the agent moved on")
        after = "the signal aborted" + (" in another thread" if in_thread else "")
        error = await session.error_of(task, after)
        expect_code(error, UserQuestionErrorCode.ASK_ABORTED, after)
        await session.gone(PKG.question, after)

    return check


async def _timeout(session: Session) -> None:
    # Long enough for any UI to show the question first, short enough not to slow the suite.
    task = session.ask(request(PKG), timeout=_TIMEOUT_SECONDS)
    await session.shown(PKG.question, task)
    after = f"the ask's timeout of {_TIMEOUT_SECONDS:g} s expired"
    await asyncio.wait({task}, timeout=_TIMEOUT_SECONDS)
    expect_code(await session.error_of(task, after), UserQuestionErrorCode.ASK_TIMED_OUT, after)
    await session.gone(PKG.question, after)


async def _cancel_caller(session: Session) -> None:
    task = session.ask(request(PKG))
    await session.shown(PKG.question, task)
    task.cancel()
    error = await session.error_of(task, "the caller's task was cancelled")
    if not isinstance(error, asyncio.CancelledError):
        raise AssertionError(
            f"cancelling the caller's task should end ask() with CancelledError, not {error!r}"
        )
    await session.gone(PKG.question, "the caller's task was cancelled")


async def _ask_after_abort(session: Session) -> None:
    controller = AbortController()
    task = session.ask(request(PKG, signal=controller.signal))
    await session.shown(PKG.question, task)
    controller.abort()
    expect_code(
        await session.error_of(task, "the abort"), UserQuestionErrorCode.ASK_ABORTED, "the abort"
    )
    await _answers(request(COLOUR), [Choose("blue")])(session)


async def _concurrent(session: Session) -> None:
    first, second = request(COLOUR), request(FRUIT)
    replies = {COLOUR.question: [Choose("blue")], FRUIT.question: [Choose("pear")]}
    tasks = {COLOUR.question: session.ask(first), FRUIT.question: session.ask(second)}
    requests = {COLOUR.question: first, FRUIT.question: second}
    left = set(requests)
    while left:

        def ready(screen: str) -> bool:
            return any(text in screen or tasks[text].done() for text in left)

        ok, screen = await session.until(ready)
        for text in sorted(left):
            if tasks[text].done():
                raise AssertionError(
                    f"the caller who asked {text!r} got {outcome(tasks[text])} before the human"
                    " answered that question"
                )
        if not ok:
            raise AssertionError(
                f"with two asks pending, {sorted(left)} never showed; the screen:\n{screen}"
            )
        text = next(text for text in sorted(left) if text in screen)
        await session.driver.reply(requests[text], replies[text])
        answer = await session.answer_of(tasks[text], f"the human answered {text!r}")
        expected = expected_item(requests[text].questions[0], replies[text][0])
        if answer.answers != (expected,):
            raise AssertionError(
                f"the caller who asked {text!r} should get {expected.to_dict()} but got"
                f" {answer.to_dict()}"
            )
        left.discard(text)


async def _abort_one_of_two(session: Session) -> None:
    controller = AbortController()
    aborted = session.ask(request(COLOUR, signal=controller.signal))
    await session.shown(COLOUR.question, aborted)
    kept_request = request(FRUIT)
    kept = session.ask(kept_request)
    await asyncio.sleep(0)
    controller.abort()
    after = "one of two pending asks was aborted"
    expect_code(await session.error_of(aborted, after), UserQuestionErrorCode.ASK_ABORTED, after)
    await session.gone(COLOUR.question, after)
    await session.shown(FRUIT.question, kept)
    await session.driver.reply(kept_request, [Choose("apple")])
    answer = await session.answer_of(kept, "the human answered the remaining ask")
    expected = expected_item(FRUIT, Choose("apple"))
    if answer.answers != (expected,):
        raise AssertionError(f"the remaining ask should get {expected.to_dict()}, got {answer}")


def _inert_text(question: AskUserQuestionItem) -> Check:
    async def check(session: Session) -> None:
        req = request(question)
        task = session.ask(req)
        marker = question.question.split()[0] + " check"
        screen = await session.shown(marker, task)
        # Let the whole question draw before judging it.
        await asyncio.sleep(0.2)
        screen = await session.screen()
        live = _inert.live_characters(screen)
        if live:
            raise AssertionError(
                f"control or bidi characters from model text reached the screen live: {live};"
                " show them as visible stand-ins"
            )
        missing = _inert.missing_words(question, screen)
        if missing:
            raise AssertionError(
                f"parts of the model's text are not shown as characters: {missing} (a terminal"
                f" or browser acted on them instead); the screen:\n{screen}"
            )
        # End it; whether a cancel gives ASK_CANCELLED is another test's concern.
        await session.driver.cancel(req)

    return check


def _refused(rule: str) -> Check:
    text = REFUSED[rule]

    async def check(session: Session) -> None:
        req = request(NAME)
        task = session.ask(req)
        await session.shown(NAME.question, task)
        did = f"the human typed custom text with {rule} ({len(text)} characters)"
        # A surface that refuses the text may raise here; the question should then stay open.
        with contextlib.suppress(Exception):
            await session.driver.reply(req, [Other(text)])
        await asyncio.wait({task}, timeout=min(2.0, session.timeout))
        if task.done() and not task.cancelled() and task.exception() is None:
            answer = task.result()
            customs = [item.custom for item in answer.answers]
            how = "as typed" if text in customs else "changed" if any(customs) else "dropped"
            raise AssertionError(
                f"{did}, which rules.check_answer refuses, but ask() returned an answer with"
                f" the text {how}: {_shorten(answer.to_dict())}; refuse it at the surface (keep"
                " the question open) or let ask() raise BAD_ANSWER"
            )
        if task.done():
            error = await session.error_of(task, did)
            expect_code(error, UserQuestionErrorCode.BAD_ANSWER, did)
            return
        after = f"the surface refused custom text with {rule} and the human answered again"
        try:
            await session.driver.reply(req, [Other(TYPED)])
        except Exception:
            if not _refused_late(task):
                raise
        await asyncio.wait({task}, timeout=session.timeout)
        if _refused_late(task):
            return  # the service refused the text, only later than the suite first looked
        answer = await session.answer_of(task, after)
        expected = expected_item(NAME, Other(TYPED))
        if answer.answers != (expected,):
            raise AssertionError(
                f"after {after}, ask() should return {expected.to_dict()}, not {answer.to_dict()}"
            )

    return check


def _refused_late(task: asyncio.Task[AskUserQuestionAnswer]) -> bool:
    if not task.done() or task.cancelled():
        return False
    error = task.exception()
    return isinstance(error, BadAnswerError)


def _shorten(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 300 else text[:300] + "..."


class _CancelAsItLands:
    """An observer that cancels the caller's task as the checked answer reaches it."""

    def __init__(self) -> None:
        self.task: asyncio.Task[AskUserQuestionAnswer] | None = None
        self.fired = False

    @hookimpl
    async def dsh_user_questions_answered(self, request: AskUserQuestionRequest) -> None:
        if self.task is not None and not self.fired:
            self.fired = True
            self.task.cancel()
            await asyncio.sleep(0)  # the cancellation lands here, inside ask()


async def _cancelled_as_it_lands(session: Session) -> None:
    canceller = _CancelAsItLands()
    session.ctx.register(canceller, name="conformance-canceller")
    try:
        req = request(COLOUR)
        task = session.ask(req)
        canceller.task = task
        await session.shown(COLOUR.question, task)
        await session.driver.reply(req, [Choose("blue")])
        error = await session.error_of(task, "the caller was cancelled as the answer landed")
        if not isinstance(error, asyncio.CancelledError):
            raise AssertionError(
                "the caller's task was cancelled as the answer landed, so ask() should end with"
                f" CancelledError, not {error!r}"
            )
    finally:
        session.ctx.unregister(canceller)
    said = await _receipt_shown(session, req)
    if said is True:
        raise AssertionError(
            "the surface told the human their answer was taken, but the caller was cancelled"
            " as it landed and never received it; say so only when"
            " dsh_user_questions.providing.receipt(request) is True"
        )


async def _receipt_shown(session: Session, req: AskUserQuestionRequest) -> bool | None:
    receipt = getattr(session.driver, "receipt", None)
    if receipt is None:
        raise AssertionError(
            "the suite cannot see what the surface tells the human about an answer: give the"
            " driver an async receipt(request) method (True: it said taken, False: not"
            " delivered, None: it says nothing), or opt out with the reason"
        )
    deadline = asyncio.get_running_loop().time() + min(2.0, session.timeout)
    while True:
        said: bool | None = await receipt(req)
        if said is not None or asyncio.get_running_loop().time() > deadline:
            return said
        await asyncio.sleep(0.05)


async def _recommended(session: Session) -> None:
    await _answers(request(RECOMMENDED), [Skip()])(session)
    await _answers(request(RECOMMENDED), [Choose("bun")])(session)


class _AllRecords(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.texts: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:
            message = repr(record.msg)
        self.texts.append(f"{record.name}: {message} {vars(record)!r}")


async def _secret(session: Session) -> None:
    records = _AllRecords()
    root = logging.getLogger()
    level = root.level
    root.addHandler(records)
    root.setLevel(logging.NOTSET)
    try:
        req = request(SECRET)
        task = session.ask(req)
        await session.shown(SECRET.question, task)
        await session.driver.reply(req, [Other(SECRET_TEXT)])
        answer = await session.answer_of(task, "the human typed the secret")
        expected = expected_item(SECRET, Other(SECRET_TEXT))
        if answer.answers != (expected,):
            raise AssertionError(
                f"the asker should get the secret as typed, {expected.to_dict()}, but got"
                f" {answer.to_dict()}"
            )
        await asyncio.sleep(0.2)  # let the surface draw what it shows after an answer
        screen = await session.screen()
    finally:
        root.removeHandler(records)
        root.setLevel(level)
    places: list[str] = []
    if SECRET_TEXT in screen:
        places.append(f"the screen after answering:\n{screen}")
    logged = [text for text in records.texts if SECRET_TEXT in text]
    if logged:
        places.append(f"log records: {logged[:3]}")
    stored_of: Any = getattr(session.driver, "stored", None)
    if stored_of is not None:
        stored: str = await stored_of()
        if SECRET_TEXT in stored:
            places.append("what the provider keeps at rest (the driver's stored())")
    if places:
        raise AssertionError(
            "a secret answer must reach only the asker, but its text is in " + "; ".join(places)
        )


async def _options_only(session: Session) -> None:
    req = request(OPTIONS_ONLY)
    task = session.ask(req)
    await session.shown(OPTIONS_ONLY.question, task)
    did = "the human tried to type their own words on a question with allow_other false"
    # The driver should find no Other control and raise; a surface refusing the words is fine.
    with contextlib.suppress(Exception):
        await session.driver.reply(req, [Other(TYPED)])
    await asyncio.wait({task}, timeout=min(2.0, session.timeout))
    if task.done():
        if not task.cancelled() and task.exception() is None:
            answer = task.result()
            if all(item.custom is None for item in answer.answers):
                return  # the driver did something else (a skip): no words, the rule holds
        error = await session.error_of(task, did)
        if isinstance(error, BadAnswerError):
            raise AssertionError(
                f"{did}, and the provider handed the words back as custom text (ask() raised"
                " BAD_ANSWER): offer no Other row, box or input where allow_other is false"
            )
        raise AssertionError(f"{did}; ask() should stay open, but it ended with {error!r}")
    after = "the human, offered no Other, chose an option"
    await session.driver.reply(req, [Choose("Apache-2.0")])
    answer = await session.answer_of(task, after)
    expected = expected_item(OPTIONS_ONLY, Choose("Apache-2.0"))
    if answer.answers != (expected,):
        raise AssertionError(
            f"after {after}, ask() should return {expected.to_dict()}, not {answer.to_dict()}"
        )


async def _aclose_pending(session: Session) -> None:
    req = request(PKG)
    task = session.ask(req)
    await session.shown(PKG.question, task)
    await _aclose(session)
    for _ in range(5):
        await asyncio.sleep(0)
    if task.done():
        error = await session.error_of(task, "ctx.aclose()")
        if not isinstance(error, UserQuestionError):
            raise AssertionError(
                f"ctx.aclose() ended the pending ask with {error!r}; withdraw it with a"
                " UserQuestionError (ASK_ABORTED) instead"
            )
        await session.gone(PKG.question, "ctx.aclose() withdrew it")
        return
    await session.driver.reply(req, [Choose("npm")])
    answer = await session.answer_of(task, "ctx.aclose() and then the human's answer")
    expected = expected_item(PKG, Choose("npm"))
    if answer.answers != (expected,):
        raise AssertionError(f"after ctx.aclose() the answer should be {expected}, got {answer}")


async def _aclose_idle(session: Session) -> None:
    await _answers(request(PKG), [Choose("pnpm")])(session)
    await _aclose(session)


def _shows(text: str) -> Callable[[str], None]:
    def look(screen: str) -> None:
        if text not in screen:
            raise AssertionError(f"the screen should show {text!r}, but shows:\n{screen}")

    return look


async def _out_of_range(session: Session) -> None:
    question = INPUTS["number"]
    req = request(question)
    task = session.ask(req)
    await session.shown(question.question, task)
    did = "the human entered 1024 where the maximum is 512"
    with contextlib.suppress(Exception):  # a surface refusing it may raise; it stays open then
        await session.driver.reply(req, [Enter(1024)])
    await asyncio.wait({task}, timeout=min(2.0, session.timeout))
    if task.done():
        if not task.cancelled() and task.exception() is None:
            raise AssertionError(f"{did}, and ask() returned it: {task.result().to_dict()}")
        expect_code(await session.error_of(task, did), UserQuestionErrorCode.BAD_ANSWER, did)
        return
    await session.driver.reply(req, [Enter(256)])
    answer = await session.answer_of(task, f"{did}, was refused, and entered 256")
    expected = expected_item(question, Enter(256))
    if answer.answers != (expected,):
        raise AssertionError(f"ask() should return {expected.to_dict()}, not {answer.to_dict()}")


def _write_file(path: str, data: bytes) -> None:
    with open(path, "wb") as file:
        file.write(data)


def _read_file(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


async def _files(session: Session) -> None:
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        for name in ("README.md", "docs/guide.md", "docs/notes.txt"):
            _write_file(os.path.join(root, name), name.encode())
        question = AskUserQuestionItem(
            id="sources",
            header="Sources",
            question="Which documents should the summary cover?",
            input=AskUserQuestionInput.files(root, pattern="**/*.md", max_count=2),
        )
        picked = ("README.md", "docs/guide.md")
        await _answers(request(question), [Enter(picked)], look=_shows("docs/guide.md"))(session)


async def _upload(session: Session) -> None:
    data = b"conformance upload \x00\x01\xff"
    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, "logo.bin")
        _write_file(source, data)
        question = AskUserQuestionItem(
            id="logo",
            header="Logo",
            question="Which logo file should the site use?",
            input=AskUserQuestionInput(type="upload", max_count=1),
        )
        req = request(question)
        task = session.ask(req)
        await session.shown(question.question, task)
        did = f"the human attached {source}"
        await session.driver.reply(req, [Attach(source)])
        answer = await session.answer_of(task, did)
    items = [item for item in answer.answers if item.id == "logo"]
    value = items[0].value if items else None
    if not isinstance(value, tuple) or len(value) != 1:
        raise AssertionError(f"{did}; ask() should return one upload, not {answer.to_dict()}")
    upload = value[0]
    assert isinstance(upload, AskUserQuestionUpload)
    digest = hashlib.sha256(data).hexdigest()
    if (upload.name, upload.size, upload.sha256) != ("logo.bin", len(data), digest):
        raise AssertionError(
            f"{did}; the record should say logo.bin, {len(data)} bytes, sha256 {digest}, not"
            f" {upload.to_dict()}"
        )
    if _read_file(upload.path) != data:
        raise AssertionError(f"{did}; the file at {upload.path} does not hold its bytes")
