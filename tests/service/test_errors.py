"""Errors: a HarnessError with a message and a stable code, and the exact messages."""

from __future__ import annotations

import pickle

import pytest

import dsh_user_questions
from dsh_user_questions import (
    AskAbortedError,
    AskCancelledError,
    AskTimedOutError,
    BadAnswerError,
    CallerRefusedError,
    HarnessError,
    InvalidRequestError,
    NotInteractiveError,
    ProviderSetupError,
    StoreError,
    UserQuestionError,
    UserQuestionErrorCode,
    UserQuestionService,
    errors,
    is_timeout,
)
from dsh_user_questions import (
    _cli as cli,
)
from dsh_user_questions.adapters._common import KEEP_PENDING
from dsh_user_questions.errors import OUTCOMES
from dsh_user_questions.harness import AbortController, AbortError, AbortSignal
from dsh_user_questions.testing import WAIT_FOR_ABORT, ScriptedProvider, make_request

EXACT = [
    (
        UserQuestionError.aborted(),
        "ASK_ABORTED",
        "ask_user_question was aborted before the user answered",
    ),
    (
        UserQuestionError.empty_questions(),
        "EMPTY_QUESTIONS",
        "ask_user_question requires at least one question",
    ),
    (
        UserQuestionError.caller_not_live(),
        "CALLER_NOT_LIVE",
        "human interaction requires the exact live calling agent when an agent is supplied",
    ),
    (
        UserQuestionError.delegated_caller(),
        "DELEGATED_CALLER",
        "human interaction is unavailable while the calling agent is owned by another live"
        " agent; include the unresolved question or decision in the child agent's final result",
    ),
    (
        UserQuestionError.bad_intent_label("plan", "plan-review", "Approve ✓"),
        "BAD_INTENT",
        'question plan declares intent plan-review whose approve label "Approve ✓" names none'
        " of its options",
    ),
    (
        UserQuestionError.bad_intent_label("p", "plan-review", 'say "hi"'),
        "BAD_INTENT",
        'question p declares intent plan-review whose approve label "say \\"hi\\"" names none'
        " of its options",
    ),
    (
        UserQuestionError.bad_intent_detail("plan", "plan-review"),
        "BAD_INTENT",
        "question plan declares intent plan-review without the detail it reviews",
    ),
    (UserQuestionError.no_provider(), "NO_PROVIDER", "no user-questions provider is registered"),
    (
        UserQuestionError.duplicate_provider(),
        "DUPLICATE_PROVIDER",
        "a user-questions provider is already registered",
    ),
    (UserQuestionError.cancelled(), "ASK_CANCELLED", "the user cancelled ask_user_question"),
]


@pytest.mark.parametrize(("error", "code", "message"), EXACT)
def test_each_code_has_its_exact_message(error: UserQuestionError, code: str, message: str) -> None:
    """Every ready-made error carries its code and the spec's exact message as str()."""
    assert error.code == code
    assert error.message == message
    assert str(error) == message


def test_codes_compare_equal_to_plain_strings() -> None:
    """A code is a str enum: equal to, and formatted as, its plain string."""
    assert UserQuestionErrorCode.ASK_ABORTED == "ASK_ABORTED"
    assert f"{UserQuestionErrorCode.NO_PROVIDER}" == "NO_PROVIDER"
    assert isinstance(UserQuestionErrorCode.BAD_ANSWER, str)


def test_user_question_error_is_a_harness_error_built_positionally() -> None:
    """HarnessError(message, code) is positional; UserQuestionError is one."""
    error = UserQuestionError("boom", "SOME_CODE")
    assert isinstance(error, HarnessError)
    assert (error.message, error.code, str(error)) == ("boom", "SOME_CODE", "boom")
    assert HarnessError("m", "C").args == ("m", "C")


def test_duplicate_provider_may_say_which_and_how() -> None:
    """DUPLICATE_PROVIDER keeps the exact message, then names the providers and the fix."""
    error = UserQuestionError.duplicate_provider("a", "b", fix="pick one")
    assert (
        str(error) == "a user-questions provider is already registered: a and b collide; pick one"
    )
    installed = UserQuestionError.duplicate_provider("a", "b", "c", installed=True, fix="pick one")
    assert str(installed) == (
        "a user-questions provider is already registered: a, b and c are all installed; pick one"
    )
    assert installed.code == "DUPLICATE_PROVIDER"


def test_timed_out_has_its_own_code_and_exact_message() -> None:
    """ASK_TIMED_OUT is distinct from ASK_ABORTED and says the user did not answer in time."""
    error = UserQuestionError.timed_out()
    assert error.code == UserQuestionErrorCode.ASK_TIMED_OUT == "ASK_TIMED_OUT"
    assert str(error) == "the user did not answer ask_user_question in time"


def test_aborted_by_chains_the_signal_reason() -> None:
    """aborted_by gives ASK_ABORTED caused by the reason (an AbortError for a non-exception)."""
    controller = AbortController()
    reason = RuntimeError("the session ended")
    controller.abort(reason)
    error = UserQuestionError.aborted_by(controller.signal)
    assert error.code == "ASK_ABORTED"
    assert error.__cause__ is reason
    assert error.__suppress_context__
    text = AbortSignal.abort("plain text")
    wrapped = UserQuestionError.aborted_by(text, "the page closed")
    assert isinstance(wrapped.__cause__, AbortError)
    assert str(wrapped) == (
        "ask_user_question was aborted before the user answered: the page closed"
    )


def test_aborted_by_an_ask_timeout_is_timed_out() -> None:
    """A signal aborted with an AskTimedOutError gives ASK_TIMED_OUT, chained from it."""
    reason = UserQuestionError.timed_out()
    error = UserQuestionError.aborted_by(AbortSignal.abort(reason))
    assert error.code == "ASK_TIMED_OUT"
    assert error.__cause__ is reason
    plain_timeout = UserQuestionError.aborted_by(AbortSignal.abort(TimeoutError("yours")))
    assert plain_timeout.code == "ASK_ABORTED"


def test_problems_are_data() -> None:
    """BAD_ANSWER and INVALID_ARGS keep each problem apart; other errors have none."""
    bad = UserQuestionError.bad_answer("answers[0] one", "answers[1] two")
    assert bad.problems == ("answers[0] one", "answers[1] two")
    assert (
        str(bad) == "the user-questions provider gave a bad answer: answers[0] one; answers[1] two"
    )
    invalid = UserQuestionError.invalid_args("questions: required")
    assert (invalid.code, invalid.problems) == ("INVALID_ARGS", ("questions: required",))
    assert str(invalid) == "invalid arguments: questions: required"
    assert UserQuestionError.cancelled().problems == ()
    assert HarnessError("m", "C").problems == ()


def test_bad_answer_names_the_problem() -> None:
    """BAD_ANSWER carries the rule broken in its message."""
    error = UserQuestionError.bad_answer(
        'answers[0] (question "q") names no question that was asked'
    )
    assert error.code == UserQuestionErrorCode.BAD_ANSWER
    assert str(error).endswith('answers[0] (question "q") names no question that was asked')


def test_cause_is_chained() -> None:
    """raise ... from cause keeps the cause on __cause__."""
    cause = TimeoutError("late")
    with pytest.raises(UserQuestionError) as info:
        raise UserQuestionError.aborted() from cause
    assert info.value.__cause__ is cause


def test_errors_are_compared_by_identity() -> None:
    """Two errors with the same fields are different exceptions, and hashable."""
    assert UserQuestionError.cancelled() != UserQuestionError.cancelled()
    assert len({UserQuestionError.cancelled(), UserQuestionError.cancelled()}) == 2


def test_aborted_may_say_why() -> None:
    """ASK_ABORTED keeps the exact message and appends a detail after a colon."""
    error = UserQuestionError.aborted("the web provider stopped")
    assert error.code == "ASK_ABORTED"
    assert str(error) == (
        "ask_user_question was aborted before the user answered: the web provider stopped"
    )


# Outcome families: catchable by type, still routed by code -------------------------------------

FAMILIES = [
    (UserQuestionError.aborted(), AskAbortedError),
    (UserQuestionError.timed_out(), AskTimedOutError),
    (UserQuestionError.cancelled(), AskCancelledError),
    (UserQuestionError.not_interactive(), NotInteractiveError),
    (UserQuestionError.empty_questions(), InvalidRequestError),
    (UserQuestionError.bad_intent_detail("q", "plan-review"), InvalidRequestError),
    (UserQuestionError.bad_question("q", "is odd"), InvalidRequestError),
    (UserQuestionError.invalid_args("x: is wrong"), InvalidRequestError),
    (UserQuestionError.bad_answer("answers[0]: is wrong"), BadAnswerError),
    (UserQuestionError.no_provider(), ProviderSetupError),
    (UserQuestionError.duplicate_provider(), ProviderSetupError),
    (UserQuestionError.caller_not_live(), CallerRefusedError),
    (UserQuestionError.delegated_caller(), CallerRefusedError),
    (UserQuestionError.store_unusable("/tmp/x.db: not a database"), StoreError),
]


@pytest.mark.parametrize(("error", "family"), FAMILIES)
def test_each_outcome_is_caught_by_its_family(error: UserQuestionError, family: type) -> None:
    """Every constructor builds its family's subclass, still a UserQuestionError with its code."""
    assert type(error) is family
    assert isinstance(error, UserQuestionError)
    with pytest.raises(family):
        raise error


@pytest.mark.parametrize(("error", "family"), FAMILIES)
def test_families_pickle_with_code_message_and_problems(
    error: UserQuestionError, family: type
) -> None:
    """A pickled outcome comes back as the same class, message, code and problems."""
    back = pickle.loads(pickle.dumps(error))
    assert (type(back), back.message, back.code, back.problems, str(back)) == (
        family,
        error.message,
        error.code,
        error.problems,
        str(error),
    )


def test_building_by_code_gives_the_family() -> None:
    """UserQuestionError(message, code) by hand is the family of the code; an unknown code is
    plain."""
    assert type(UserQuestionError("x", "ASK_CANCELLED")) is AskCancelledError
    assert type(UserQuestionError("x", "SOMETHING_NEW")) is UserQuestionError


def test_not_interactive_says_what_to_do_instead() -> None:
    """NOT_INTERACTIVE tells the model it cannot reach the user and how to go on."""
    error = UserQuestionError.not_interactive("no terminal")
    assert error.code == "NOT_INTERACTIVE"
    assert str(error) == (
        "the user cannot be reached from here (nothing can show ask_user_question to a person);"
        " proceed on an assumption you state, or include the question in your final result:"
        " no terminal"
    )


def test_is_timeout_is_the_one_verdict() -> None:
    """is_timeout is true only for a signal aborted by a timeout."""
    controller = AbortController()
    assert not is_timeout(controller.signal)
    assert not is_timeout(None)
    controller.abort(UserQuestionError.timed_out())
    assert is_timeout(controller.signal)
    other = AbortController()
    other.abort("stop")
    assert not is_timeout(other.signal)


class TestOutcomeTable:
    """errors.OUTCOMES: one row per code, read by every surface."""

    def test_every_code_has_one_row_of_its_family(self) -> None:
        """Each code has a row whose family is the class its constructor builds."""
        assert set(OUTCOMES) == {code.value for code in UserQuestionErrorCode}
        for code, row in OUTCOMES.items():
            error = UserQuestionError("x", code)
            assert type(error) is row.family
            assert error.outcome is row
            assert OUTCOMES[UserQuestionErrorCode(code)] is row

    def test_a_family_keeps_a_question_pending_for_all_its_codes_or_none(self) -> None:
        """Every row of a family agrees on "keeps pending", so the durable adapters' KEEP_PENDING
        (the families of those rows) catches exactly the codes that keep a call pending."""
        for row in OUTCOMES.values():
            assert row.keeps_pending == (row.family in KEEP_PENDING), row.code
        assert set(KEEP_PENDING) == {
            AskAbortedError,
            StoreError,
            ProviderSetupError,
            CallerRefusedError,
        }

    def test_the_chosen_outcomes_are_the_human_s_or_caller_s(self) -> None:
        """Only a cancel, an abort and a timeout are chosen; they also end an elicitation."""
        chosen = {code for code, row in OUTCOMES.items() if row.chosen}
        assert chosen == {"ASK_CANCELLED", "ASK_ABORTED", "ASK_TIMED_OUT"}
        cancels = {code for code, row in OUTCOMES.items() if row.elicitation == "cancel"}
        assert cancels == chosen

    def test_an_unknown_code_is_a_plain_failure(self) -> None:
        """An error of a code the table lacks gets a plain failure's row (exit 1, an error)."""
        row = UserQuestionError("something new", "SOMETHING_NEW").outcome
        assert (row.code, row.exit_status, row.elicitation) == ("SOMETHING_NEW", 1, "error")
        assert row.keeps_pending is False
        assert row.chosen is False

    def test_the_exit_statuses_are_the_cli_s(self) -> None:
        """The table's exit statuses are dsh-ask's documented ones."""
        statuses = {row.exit_status for row in OUTCOMES.values()}
        assert statuses == {
            cli.EXIT_INVALID,
            cli.EXIT_FAILURE,
            cli.EXIT_NOT_INTERACTIVE,
            cli.EXIT_TIMED_OUT,
            cli.EXIT_CANCELLED,
        }


class TestTimedOutIsATimeoutError:
    """AskTimedOutError is also the builtin TimeoutError, as attrs's errors are builtins too."""

    def test_except_timeout_error_catches_a_timed_out_ask(self) -> None:
        """``except TimeoutError`` catches ASK_TIMED_OUT, which keeps its code and message."""
        with pytest.raises(TimeoutError) as info:
            raise UserQuestionError.timed_out()
        assert isinstance(info.value, AskTimedOutError)
        assert info.value.code == "ASK_TIMED_OUT"
        assert str(info.value) == "the user did not answer ask_user_question in time"
        assert info.value.args == (info.value.message, info.value.code)

    def test_it_pickles_as_itself(self) -> None:
        """A pickled ASK_TIMED_OUT comes back an AskTimedOutError and a TimeoutError."""
        again = pickle.loads(pickle.dumps(UserQuestionError.timed_out()))
        assert isinstance(again, AskTimedOutError)
        assert isinstance(again, TimeoutError)
        assert again.code == "ASK_TIMED_OUT"

    def test_one_name_for_it(self) -> None:
        """The package exports one timeout class: AskTimedOutError (from its root)."""
        timeouts = [
            name
            for module in (dsh_user_questions, errors)
            for name in module.__all__
            if isinstance(getattr(module, name), type)
            and issubclass(getattr(module, name), TimeoutError)
        ]
        assert timeouts == ["AskTimedOutError"]

    async def test_a_timed_out_ask_is_caught_as_a_timeout_error(
        self, user_questions: UserQuestionService, scripted_provider: ScriptedProvider
    ) -> None:
        """ask(timeout=...) raises what ``except TimeoutError`` catches."""
        scripted_provider.push(WAIT_FOR_ABORT)
        with pytest.raises(TimeoutError) as info:
            await user_questions.ask(make_request(), timeout=0.01)
        assert isinstance(info.value, UserQuestionError)
        assert info.value.code == "ASK_TIMED_OUT"
