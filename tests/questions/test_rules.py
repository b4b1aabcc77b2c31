"""The request and answer rules that the service applies and providers import."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_user_questions import (
    AskUserQuestionIntent,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    BadAnswerError,
    InvalidRequestError,
    UserQuestionError,
    plugin,
)
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.rules import (
    MAX_CUSTOM_CHARS,
    SECRET_PLACEHOLDER,
    check_answer,
    check_request,
    inert_text,
    is_plan_review,
    redact_secrets,
    reserved_label,
)
from dsh_user_questions.testing import make_plan_question, make_question, make_request


def test_check_request_refuses_an_empty_request() -> None:
    """No question is EMPTY_QUESTIONS, as ask() says."""
    with pytest.raises(UserQuestionError) as info:
        check_request(AskUserQuestionRequest(questions=()))
    assert info.value.code == "EMPTY_QUESTIONS"


@pytest.mark.parametrize(
    ("question", "message"),
    [
        (
            make_plan_question(intent=AskUserQuestionIntent("plan-review", "Ship")),
            'question plan-review declares intent plan-review whose approve label "Ship"'
            " names none of its options",
        ),
        (
            make_plan_question(detail=None),
            "question plan-review declares intent plan-review without the detail it reviews",
        ),
    ],
)
def test_check_request_refuses_a_broken_intent(question: object, message: str) -> None:
    """An intent naming no option, or without a detail, is BAD_INTENT with its exact message."""
    with pytest.raises(UserQuestionError) as info:
        check_request(make_request(make_question(), question))  # type: ignore[arg-type]
    assert info.value.code == "BAD_INTENT"
    assert str(info.value) == message


def test_check_request_passes_a_good_request() -> None:
    """A plain question and a plan review pass."""
    check_request(make_request(make_question(), make_plan_question()))


def test_is_plan_review_only_for_a_valid_plan_review() -> None:
    """Only a plan-review intent that names an option, with a detail, is drawn as a review."""
    assert is_plan_review(make_plan_question())
    assert not is_plan_review(make_question())
    assert not is_plan_review(make_plan_question(detail=None))
    assert not is_plan_review(make_plan_question(intent=AskUserQuestionIntent("plan-review", "X")))
    assert not is_plan_review(make_plan_question(intent=AskUserQuestionIntent("other", "Approve")))


def test_check_answer_takes_the_request_and_lists_every_problem() -> None:
    """check_answer(request, answer) reports all broken rules as problems, in item order."""
    request = make_request(make_question())
    wire = {
        "answers": [
            {"id": "nope", "selected": []},
            {"id": "pkg", "selected": ["pnpm", "npm"]},
        ]
    }
    with pytest.raises(UserQuestionError) as info:
        check_answer(request, wire)
    assert info.value.code == "BAD_ANSWER"
    assert info.value.problems == (
        'answers[0] (question "nope") names no question that was asked',
        'answers[1] (question "pkg") selects 2 options of a single-select question',
    )
    assert str(info.value) == "the user-questions provider gave a bad answer: " + "; ".join(
        info.value.problems
    )


def test_check_answer_reports_wire_form_problems_with_their_paths() -> None:
    """A mapping that is no answer in wire form gives each path as a problem."""
    with pytest.raises(UserQuestionError) as info:
        check_answer(make_request(), {"answers": [{"id": "pkg", "selected": "pnpm"}]})
    assert info.value.code == "BAD_ANSWER"
    assert info.value.problems == ("answers[0].selected: must be an array, not a string",)
    assert "it is not in wire form: answers[0].selected" in str(info.value)


def test_check_answer_returns_the_payload() -> None:
    """A good wire-form answer comes back as the payload, for a request or its questions."""
    request = make_request()
    wire = {"answers": [{"id": "pkg", "selected": ["npm"]}]}
    assert check_answer(request, wire) == check_answer(request.questions, wire)
    assert check_answer(request, wire).answers[0].selected == ("npm",)


# Request rules that protect an answer's meaning (every ask(), not only the tool's) -------------


@pytest.mark.parametrize(
    ("labels", "problem"),
    [
        (
            ["pnpm", "PNPM "],
            'option 1 "PNPM " reads the same as option 0 "pnpm" (labels must differ ignoring case'
            " and spaces)",
        ),
        (
            ["npm", "Other"],
            'option 1 "Other" reads as the UI\'s own "Other" choice, which every UI adds itself;'
            " leave it out",
        ),
        (
            ["npm", "Skip."],
            'option 1 "Skip." reads as the UI\'s own "Skip" choice, which every UI adds itself;'
            " leave it out",
        ),
    ],
)
def test_check_request_refuses_options_an_answer_could_not_tell_apart(
    labels: list[str], problem: str
) -> None:
    """Duplicate labels (case and spaces ignored) and labels meaning Other or Skip are
    BAD_QUESTION, naming the question and the options."""
    question = make_question(options=[AskUserQuestionOption(label) for label in labels])
    with pytest.raises(InvalidRequestError) as info:
        check_request(make_request(question))
    assert info.value.code == "BAD_QUESTION"
    assert info.value.problems == (problem,)
    assert str(info.value) == f'question "pkg" {problem}'


@pytest.mark.parametrize(
    "label",
    [
        "Other",
        "other:",
        " O ther ",
        "\uff2f\uff54\uff48\uff45\uff52",
        "SKIP",
        "Skip.",
    ],
)
def test_reserved_label_reads_common_spellings(label: str) -> None:
    """Other and Skip themselves are found after NFKC, case folding, spaces and
    punctuation."""
    assert reserved_label(label) in ("Other", "Skip")


@pytest.mark.parametrize(
    "label",
    [
        "Other tools",
        "Otherwise",
        "Skipper",
        "pnpm (Recommended)",
        "Skip tests",
        "None of the above",
        "Something else",
        "Others",
        "Other (please specify)",
        "Skip this question",
    ],
)
def test_reserved_label_leaves_ordinary_labels(label: str) -> None:
    """A label that says more than "Other" or "Skip" is an ordinary choice the model offers."""
    assert reserved_label(label) is None


def test_a_single_select_recommends_at_most_one_option() -> None:
    """Two recommended options on a single-select are BAD_QUESTION; a multi-select may have
    more."""
    options = [
        AskUserQuestionOption("a", recommended=True),
        AskUserQuestionOption("b", recommended=True),
    ]
    with pytest.raises(UserQuestionError) as info:
        check_request(make_request(make_question(options=options)))
    assert info.value.code == "BAD_QUESTION"
    check_request(make_request(make_question(options=options, multi_select=True)))


def test_a_secret_question_takes_free_text_only() -> None:
    """A secret question with options is BAD_QUESTION."""
    with pytest.raises(UserQuestionError) as info:
        check_request(make_request(make_question(secret=True)))
    assert info.value.code == "BAD_QUESTION"
    check_request(make_request(make_question(options=(), secret=True)))


def lambda_provider(seen: list[object]) -> object:
    class Provider:
        async def ask(self, request: AskUserQuestionRequest) -> object:
            seen.append(request)
            return {"answers": []}

    return Provider()


async def test_ask_applies_the_request_rules_for_every_caller() -> None:
    """ask() itself refuses an "Other" option before any provider sees it."""
    async with HarnessContext() as ctx:
        ctx.register(plugin)
        seen: list[object] = []
        ctx.user_questions.register_provider(lambda_provider(seen))
        question = make_question(
            options=[AskUserQuestionOption("npm"), AskUserQuestionOption("Other")]
        )
        with pytest.raises(UserQuestionError) as info:
            await ctx.user_questions.ask(make_request(question))
    assert info.value.code == "BAD_QUESTION"
    assert seen == []


# Answer rules for every surface --------------------------------------------------------------


@pytest.mark.parametrize(
    ("custom", "problem"),
    [
        (
            "x" * (MAX_CUSTOM_CHARS + 1),
            f"has custom text of {MAX_CUSTOM_CHARS + 1} characters (at most {MAX_CUSTOM_CHARS})",
        ),
        (
            "\x1b[2J\x1b]0;pwned\x07",
            "has custom text with control character U+001B at index 0 (only tab and newline"
            " may be typed)",
        ),
        (
            "abc\u202eevil",
            "has custom text with control character U+202E at index 3 (only tab and newline"
            " may be typed)",
        ),
        ("   ", "has blank custom text"),
    ],
)
def test_check_answer_refuses_custom_text_no_surface_may_store(custom: str, problem: str) -> None:
    """Too long, terminal escapes and bidi overrides in custom are BAD_ANSWER problems."""
    request = make_request(make_question(options=()))
    with pytest.raises(BadAnswerError) as info:
        check_answer(request, {"answers": [{"id": "pkg", "custom": custom}]})
    assert info.value.problems == (f'answers[0] (question "pkg") {problem}',)


@pytest.mark.parametrize(
    "custom", ["line one\nline two\ttabbed", "a\r\nb", "שלום \u200f ok", "x" * MAX_CUSTOM_CHARS]
)
def test_check_answer_keeps_ordinary_typing(custom: str) -> None:
    """Newlines, tabs, CR LF, right-to-left marks and the longest text pass."""
    request = make_request(make_question(options=()))
    check_answer(request, {"answers": [{"id": "pkg", "custom": custom}]})


# Inert text -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("npm", "npm"),
        ("npm\u200b", "npm<U+200B>"),
        ("n\u0440m", "n<U+0440>m"),
        ("\x1b[2J\x07", "<U+001B>[2J<U+0007>"),
        ("a\u202eb", "a<U+202E>b"),
        (
            "caf\u00e9 \u041f\u0440\u0438\u0432\u0435\u0442",
            "caf\u00e9 \u041f\u0440\u0438\u0432\u0435\u0442",
        ),
        ("\U0001f468\u200d\U0001f469", "\U0001f468\u200d\U0001f469"),
        ("\ud800", "<U+D800>"),
        ("a\tb", "a    b"),
    ],
)
def test_inert_text_shows_every_active_character_as_a_stand_in(text: str, shown: str) -> None:
    """Controls, bidi, zero-width and look-alike letters become <U+XXXX>; words of one script
    and emoji sequences stay."""
    assert inert_text(text) == shown


def test_inert_text_keeps_line_breaks_only_when_multiline() -> None:
    """Every line break is one space on a line, a newline in multiline text."""
    text = "a\r\nb\rc\nd\u2028e\x85f"
    assert inert_text(text) == "a b c d e f"
    assert inert_text(text, multiline=True) == "a\nb\nc\nd\ne\nf"


@given(st.text())
def test_inert_text_is_idempotent_and_leaves_no_active_character(text: str) -> None:
    """Twice is once, and no control, format or bidi character survives (newline aside)."""
    once = inert_text(text, multiline=True)
    assert inert_text(once, multiline=True) == once
    assert not any(
        unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") and c != "\n"
        for c in once
        if c != "\u200d"
    )


def test_redact_secrets_hides_only_secret_text() -> None:
    """The custom text of a secret question becomes the placeholder; other answers stay."""
    request = make_request(make_question(), make_question(id="token", options=(), secret=True))
    answer = check_answer(
        request,
        {"answers": [{"id": "pkg", "selected": ["npm"]}, {"id": "token", "custom": "hunter2"}]},
    )
    redacted = redact_secrets(request, answer)
    assert redacted.to_dict() == {
        "answers": [
            {"id": "pkg", "selected": ["npm"]},
            {"id": "token", "selected": [], "custom": SECRET_PLACEHOLDER},
        ]
    }
    plain = make_request(make_question())
    same = check_answer(plain, {"answers": [{"id": "pkg", "selected": ["npm"]}]})
    assert redact_secrets(plain, same) is same


def test_two_questions_with_one_id_are_refused() -> None:
    """An answer names its question by id, so ids are unique in every ask."""
    with pytest.raises(UserQuestionError) as info:
        check_request(make_request(make_question(), make_question()))
    assert info.value.code == "BAD_QUESTION"
    assert info.value.problems == ("is asked twice (question ids must be unique)",)


class TestAllowOther:
    """A question with ``allow_other`` false is answered only with its options."""

    def test_without_options_it_is_refused(self) -> None:
        """No options and no free text could never be answered: BAD_QUESTION naming it."""
        with pytest.raises(UserQuestionError) as info:
            check_request(make_request(make_question(id="ok", options=(), allow_other=False)))
        assert info.value.code == "BAD_QUESTION"
        assert str(info.value) == (
            'question "ok" has no options and allow_other is false; it could never be answered'
            " (give options, or allow free text)"
        )

    def test_with_options_it_is_asked(self) -> None:
        """With options it passes the request rules, single- and multi-select."""
        check_request(make_request(make_question(allow_other=False)))
        check_request(make_request(make_question(allow_other=False, multi_select=True)))

    @pytest.mark.parametrize("multi_select", [False, True])
    def test_custom_text_is_a_bad_answer(self, multi_select: bool) -> None:
        """custom on such a question is a BAD_ANSWER problem naming the item."""
        request = make_request(
            make_question(), make_question(id="b", allow_other=False, multi_select=multi_select)
        )
        wire = {"answers": [{"id": "pkg", "custom": "yarn"}, {"id": "b", "custom": "yarn"}]}
        with pytest.raises(BadAnswerError) as info:
            check_answer(request, wire)
        assert info.value.code == "BAD_ANSWER"
        assert info.value.problems == (
            'answers[1] (question "b") has custom text, but the question takes only its'
            " options (allow_other is false)",
        )

    def test_its_options_are_an_answer(self) -> None:
        """Selecting its options, or leaving it unanswered, passes."""
        request = make_request(make_question(allow_other=False, multi_select=True))
        check_answer(request, {"answers": [{"id": "pkg", "selected": ["pnpm", "npm"]}]})
        check_answer(request, {"answers": []})
