"""A team: the request's ``audience`` and an intent's ``approvals`` (their wire form and the
rules ``ask()`` checks), the people file (`team.People`), `team.may_answer` and `team.tally`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import attrs
import pytest

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionIntent,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    UserQuestionError,
    UserQuestionService,
    WireFormatError,
    tool,
)
from dsh_user_questions._tool_schema import MAX_SHAPE_CHARS, published_schema, strict_schema
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.team import People, Settlement, may_answer, tally
from dsh_user_questions.testing import ScriptedProvider, make_plan_question, make_question

PEOPLE_TOML = """\
[people.ana]
tags = ["ana"]
[people.bo]
tags = ["bo", "oncall-pager"]

[groups]
oncall = ["ana", "bo"]
leads = ["cy"]
empty = []

[escalation]
after = 900
to = ["group:leads"]
"""


@pytest.fixture
def people_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "people.toml"
    path.write_text(PEOPLE_TOML, encoding="utf-8")
    monkeypatch.setenv("DSH_USER_QUESTIONS_PEOPLE", str(path))
    return path


@pytest.fixture
def people(people_file: Path) -> People:
    return People.load(people_file)


def review(approvals: int = 1, kind: str = "plan-review") -> AskUserQuestionItem:
    question = make_plan_question()
    assert question.intent is not None
    intent = attrs.evolve(question.intent, kind=kind, approvals=approvals)
    return attrs.evolve(question, intent=intent)


def request_for(*audience: str, approvals: int = 1) -> AskUserQuestionRequest:
    return AskUserQuestionRequest(questions=(review(approvals),), audience=audience)


def approve(by: str | None) -> AskUserQuestionAnswer:
    question = review()
    assert question.intent is not None
    item = AskUserQuestionAnswerItem(id=question.id, selected=(question.intent.approve,))
    return AskUserQuestionAnswer((item,), answered_by=by)


def reject(by: str | None, feedback: str = "not on a Friday") -> AskUserQuestionAnswer:
    item = AskUserQuestionAnswerItem(id=review().id, custom=feedback)
    return AskUserQuestionAnswer((item,), answered_by=by)


# The wire form and the schema ---------------------------------------------------------------


def test_audience_and_approvals_travel_on_the_wire_only_when_set() -> None:
    """``audience`` is written when not empty, ``approvals`` when not 1; both read back."""
    request = request_for("group:oncall", "cy", approvals=2)
    data = request.to_dict()
    assert data["audience"] == ["group:oncall", "cy"]
    assert data["questions"][0]["intent"]["approvals"] == 2
    assert AskUserQuestionRequest.from_dict(data) == request
    plain = AskUserQuestionRequest(questions=(review(),)).to_dict()
    assert "audience" not in plain
    assert "approvals" not in plain["questions"][0]["intent"]
    assert AskUserQuestionIntent.from_dict({"kind": "plan-review", "approve": "Go"}).approvals == 1


def test_audience_given_to_from_dict_wins() -> None:
    data = request_for("ana").to_dict()
    assert AskUserQuestionRequest.from_dict(data, audience=["bo"]).audience == ("bo",)


def test_bad_wire_audience_and_approvals_are_named() -> None:
    data = request_for("ana").to_dict()
    with pytest.raises(WireFormatError, match=r"audience\[1\]: must be a string"):
        AskUserQuestionRequest.from_dict({**data, "audience": ["ana", 3]})
    with pytest.raises(WireFormatError, match="audience: must be an array"):
        AskUserQuestionRequest.from_dict({**data, "audience": "ana"})
    with pytest.raises(WireFormatError, match="approvals: must be an integer"):
        AskUserQuestionIntent.from_dict({"kind": "plan-review", "approve": "Go", "approvals": "2"})
    for bad in (None, True, 2.0, "2"):
        with pytest.raises(TypeError, match="approvals must be an int"):
            AskUserQuestionIntent("plan-review", "Go", approvals=bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="audience must be an iterable"):
        AskUserQuestionRequest(questions=(review(),), audience="ana")  # type: ignore[arg-type]


def test_the_model_never_sees_audience_or_approvals() -> None:
    """Neither field is in any schema a model gets, and the shapes keep their size budget."""
    for schema in (published_schema(), strict_schema()):
        text = json.dumps(schema)
        assert "audience" not in text
        assert "approvals" not in text
    shapes = {
        "openai": tool.openai_tool(),
        "openai strict": tool.openai_tool(strict=True),
        "responses": tool.openai_responses_tool(),
        "anthropic": tool.anthropic_tool(),
        "gemini": tool.gemini_tool(),
        "mcp": tool.mcp_tool(),
    }
    for name, shape in shapes.items():
        text = json.dumps(shape, separators=(",", ":"))
        assert "audience" not in text, name
        assert "approvals" not in text, name
        assert len(text) <= MAX_SHAPE_CHARS, name


async def test_a_model_writing_an_audience_is_refused() -> None:
    """A model cannot set the audience: the key is not in its arguments' schema."""
    arguments = {"questions": [make_question().to_dict()], "audience": ["me"]}
    async with HarnessContext() as ctx:
        result = await tool.run(ctx, arguments)
    assert result.is_error
    assert "audience" in result.content


# ask()'s rules ------------------------------------------------------------------------------


async def expect(service: UserQuestionService, request: AskUserQuestionRequest) -> str:
    with pytest.raises(UserQuestionError) as caught:
        await service.ask(request)
    return f"{caught.value.code}: {caught.value}"


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (
            request_for("ana", approvals=0),
            "BAD_INTENT: question plan-review declares intent plan-review with approvals 0,"
            " but approvals must be at least 1",
        ),
        (
            request_for(approvals=2),
            "BAD_INTENT: question plan-review declares intent plan-review with approvals 2,"
            " but the request has no audience to approve it",
        ),
        (
            request_for("ana", "ana", approvals=2),
            "BAD_INTENT: question plan-review declares intent plan-review with approvals 2,"
            " but its audience is only 1 person",
        ),
        (
            request_for("group:oncall", "bo", approvals=3),
            "BAD_INTENT: question plan-review declares intent plan-review with approvals 3,"
            " but its audience is only 2 people",
        ),
        (
            AskUserQuestionRequest(questions=(review(2), make_question()), audience=("ana", "bo")),
            "BAD_INTENT: question plan-review declares intent plan-review with approvals 2,"
            " but the request asks 2 questions (a review that needs several approvals is"
            " asked alone)",
        ),
        (
            AskUserQuestionRequest(questions=(review(2, kind="vote"),), audience=("ana", "bo")),
            "BAD_INTENT: question plan-review declares intent vote with approvals 2,"
            " but only a plan-review or diff-review intent takes approvals",
        ),
        (
            request_for("group:nobody"),
            'BAD_AUDIENCE: the request\'s audience entry 0 "group:nobody" names no group of the'
            " people file (PEOPLE)",
        ),
        (
            request_for("ana", "bo cy"),
            'BAD_AUDIENCE: the request\'s audience entry 1 "bo cy" is not a person id or'
            " group:NAME (1 to 64 characters, no spaces or control characters)",
        ),
        (
            request_for("x" * 65),
            f'BAD_AUDIENCE: the request\'s audience entry 0 "{"x" * 65}" is not a person id or'
            " group:NAME (1 to 64 characters, no spaces or control characters)",
        ),
        (
            request_for(""),
            'BAD_AUDIENCE: the request\'s audience entry 0 "" is not a person id or'
            " group:NAME (1 to 64 characters, no spaces or control characters)",
        ),
        (
            request_for("group:"),
            'BAD_AUDIENCE: the request\'s audience entry 0 "group:" is not a person id or'
            " group:NAME (1 to 64 characters, no spaces or control characters)",
        ),
        (
            request_for("group:empty"),
            'BAD_AUDIENCE: the request\'s audience entry 0 "group:empty" names a group without'
            " members",
        ),
    ],
)
async def test_ask_refuses_a_bad_audience_or_approvals(
    user_questions: UserQuestionService,
    people_file: Path,
    request_: AskUserQuestionRequest,
    message: str,
) -> None:
    """Each refusal's exact message (BAD_INTENT, BAD_AUDIENCE), before any provider."""
    assert await expect(user_questions, request_) == message.replace("PEOPLE", str(people_file))


async def test_a_group_without_a_people_file_is_refused(
    user_questions: UserQuestionService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DSH_USER_QUESTIONS_PEOPLE", raising=False)
    assert await expect(user_questions, request_for("group:oncall")) == (
        'BAD_AUDIENCE: the request\'s audience entry 0 "group:oncall" names no group of the'
        " people file (DSH_USER_QUESTIONS_PEOPLE is not set)"
    )


async def test_an_unreadable_people_file_is_refused_by_name(
    user_questions: UserQuestionService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "people.toml"
    bad.write_text("[groups]\noncall = [1]\n", encoding="utf-8")
    monkeypatch.setenv("DSH_USER_QUESTIONS_PEOPLE", str(bad))
    assert await expect(user_questions, request_for("group:oncall")) == (
        "BAD_AUDIENCE: the request's audience needs the people file, which cannot be read:"
        f" people file {bad}: groups.oncall[0]: is not a person id (1 to 64 characters, no"
        " spaces or control characters, not group:)"
    )


async def test_a_good_audience_reaches_the_provider(
    dsh_context: HarnessContext, people_file: Path
) -> None:
    provider = ScriptedProvider(approve("ana"))
    dsh_context.user_questions.register_provider(provider)
    request = request_for("group:oncall", approvals=2)
    assert (await dsh_context.user_questions.ask(request)).answered_by == "ana"
    assert provider.requests[0].audience == ("group:oncall",)


async def test_tool_run_puts_the_audience_on_the_request(dsh_context: HarnessContext) -> None:
    """``tool.run(..., audience=...)`` is the harness's way to set it: the provider sees it."""
    question = make_question()
    answer = AskUserQuestionAnswer(
        (AskUserQuestionAnswerItem(id=question.id, selected=(question.options[0].label,)),)
    )
    provider = ScriptedProvider(answer)
    dsh_context.user_questions.register_provider(provider)
    arguments = {"questions": [question.to_dict()]}
    result = await tool.run(dsh_context, arguments, audience=("ana", "bo"))
    assert not result.is_error, result.content
    assert provider.requests[0].audience == ("ana", "bo")


# The people file ----------------------------------------------------------------------------


def test_the_people_file_is_read(people: People, people_file: Path) -> None:
    assert dict(people.groups) == {
        "oncall": frozenset({"ana", "bo"}),
        "leads": frozenset({"cy"}),
        "empty": frozenset(),
    }
    assert people.tags["bo"] == ("bo", "oncall-pager")
    assert (people.escalate_after, people.escalate_to) == (900.0, ("group:leads",))
    assert People.from_env() == people
    assert people.expand(["group:oncall", "cy", "ana"]) == {"ana", "bo", "cy"}
    assert people.tags_for(["bo", "ana", "cy"]) == ("bo", "oncall-pager", "ana")


def test_no_people_file_is_no_people(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DSH_USER_QUESTIONS_PEOPLE", raising=False)
    assert People.from_env() == People()
    assert People().expand(["ana"]) == {"ana"}


def test_the_people_file_is_read_again_when_it_changes(people_file: Path) -> None:
    assert "ops" not in People.from_env().groups
    people_file.write_text(PEOPLE_TOML + "", encoding="utf-8")
    people_file.write_text(PEOPLE_TOML.replace("[groups]", '[groups]\nops = ["dee"]'), "utf-8")
    assert People.from_env().groups["ops"] == {"dee"}


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[groups\n", "not TOML: "),
        ("[groups]\noncall = [1]\n", "groups.oncall[0]: is not a person id"),
        ('[groups]\noncall = "ana"\n', "groups.oncall: must be a list of person ids"),
        ('[groups]\noncall = ["group:x"]\n', "groups.oncall[0]: is not a person id"),
        ('[people.ana]\ntags = "ana"\n', "people.ana.tags: must be a list of Apprise tags"),
        ('[people.ana]\ntag = ["ana"]\n', "people.ana.tag: unknown key (expected tags)"),
        ('[people."a b"]\n', "people.a b: is not a person id"),
        ("[team]\n", "team: unknown table"),
        ('[escalation]\nafter = 0\nto = ["ana"]\n', "escalation.after: must be a positive"),
        ("[escalation]\nafter = 60\n", "escalation.to: must be a non-empty list"),
        (
            '[escalation]\nafter = 60\nto = ["group:leads"]\n',
            'escalation.to: the request\'s audience entry 0 "group:leads" names no group',
        ),
    ],
)
def test_a_bad_people_file_is_named_with_its_key(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "people.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="people file") as caught:
        People.load(path)
    assert str(caught.value).startswith(f"people file {path}: {where}"), str(caught.value)


def test_a_toml_error_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "people.toml"
    path.write_text('[groups]\noncall = ["ana",, ]\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 2"):
        People.load(path)


def test_a_missing_people_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "nope.toml"
    monkeypatch.setenv("DSH_USER_QUESTIONS_PEOPLE", str(missing))
    with pytest.raises(ValueError, match=f"people file {missing} \\(DSH_USER_QUESTIONS_PEOPLE\\)"):
        People.from_env()


# may_answer ---------------------------------------------------------------------------------


def test_anyone_may_answer_without_an_audience(people: People) -> None:
    request = AskUserQuestionRequest(questions=(review(),))
    assert may_answer(request, "bo", people) is None
    assert may_answer(request, None, people) is None
    assert may_answer(request, "token", people) is None


def test_persons_and_group_members_may_answer(people: People) -> None:
    request = request_for("group:oncall", "cy")
    for person in ("ana", "bo", "cy"):
        assert may_answer(request, person, people) is None
    assert may_answer(request, "ana") is None  # the people file of the environment


def test_an_outsider_is_refused_with_the_exact_message(people: People) -> None:
    assert may_answer(request_for("group:oncall"), "dee", people) == (
        "dee may not answer this question: it is for group:oncall"
    )
    assert may_answer(request_for("ana", "cy"), "bo", people) == (
        "bo may not answer this question: it is for ana, cy"
    )


@pytest.mark.parametrize("person", [None, "token"])
def test_no_person_is_asked_to_sign_in(people: People, person: str | None) -> None:
    assert may_answer(request_for("group:oncall"), person, people) == (
        "this question is for group:oncall: sign in so the page knows who you are"
    )


def test_names_in_the_refusal_are_inert(people: People) -> None:
    """A name from a header cannot reorder or break the refusal's text."""
    message = may_answer(request_for("ana"), "eve\u202egnp.exe", people)
    assert message is not None
    assert "\u202e" not in message
    assert message.endswith(" may not answer this question: it is for ana")


# tally --------------------------------------------------------------------------------------


def test_the_first_answer_settles_a_request_needing_one() -> None:
    request = request_for("ana", "bo")
    first = approve("bo")
    assert tally(request, [first, approve("ana")]) == Settlement(first, ("bo",), 1, 1)
    assert tally(request, []) == Settlement(None, (), 1, 0)
    plain = AskUserQuestionRequest(questions=(make_question(),))
    answer = AskUserQuestionAnswer((), answered_by="ana")
    assert tally(plain, [answer]) == Settlement(answer, (), 1, 0)


def test_one_person_approving_twice_counts_once() -> None:
    request = request_for("group:oncall", approvals=2)
    settlement = tally(request, [approve("ana"), approve("ana")])
    assert settlement == Settlement(None, ("ana",), 2, 1)


def test_the_nth_distinct_approver_settles_it() -> None:
    request = request_for("ana", "bo", "cy", approvals=3)
    third = approve("cy")
    answers = [approve("ana"), approve("ana"), approve("bo"), third, approve("bo")]
    settlement = tally(request, answers)
    assert settlement == Settlement(third, ("ana", "bo", "cy"), 3, 3)
    assert settlement.settled is not None
    assert settlement.settled.answered_by == "cy"


def test_a_rejection_settles_at_once_with_its_answer() -> None:
    request = request_for("ana", "bo", approvals=2)
    rejection = reject("bo")
    settlement = tally(request, [approve("ana"), rejection, approve("cy")])
    assert settlement == Settlement(rejection, ("ana",), 2, 1)
    assert settlement.settled is not None
    assert settlement.settled.answered_by == "bo"
    assert tally(request, [rejection]).settled is rejection


def test_an_approval_by_no_one_counts_for_no_one() -> None:
    request = request_for("ana", "bo", approvals=2)
    assert tally(request, [approve(None), approve("ana")]) == Settlement(None, ("ana",), 2, 1)


def test_may_answer_names_an_unreadable_people_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A surface asking with a broken people file gets BAD_AUDIENCE naming it, not a crash."""
    bad = tmp_path / "people.toml"
    bad.write_text("[groups\n", encoding="utf-8")
    monkeypatch.setenv("DSH_USER_QUESTIONS_PEOPLE", str(bad))
    with pytest.raises(UserQuestionError, match=f"cannot be read: people file {bad}: not TOML"):
        may_answer(request_for("group:oncall"), "ana")
    assert may_answer(request_for("ana"), "ana") is None  # persons alone need no file


def test_check_request_takes_the_people_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """A surface holding its own `People` checks with them, not the environment's file."""
    from dsh_user_questions.rules import check_request

    monkeypatch.delenv("DSH_USER_QUESTIONS_PEOPLE", raising=False)
    people = People(groups={"ops": ["dee", "eve"]})
    check_request(request_for("group:ops", approvals=2), people)
    with pytest.raises(UserQuestionError, match="names no group"):
        check_request(request_for("group:ops"))


async def test_an_audience_is_checked_at_every_ask(
    dsh_context: HarnessContext, people_file: Path
) -> None:
    """The service keeps the verdict on a tuple of questions, but not for a request with an
    audience: the same questions asked again after the people file dropped the group are
    refused."""
    provider = ScriptedProvider(approve("ana"))
    dsh_context.user_questions.register_provider(provider)
    questions = (review(),)
    request = AskUserQuestionRequest(questions=questions, audience=("group:leads",))
    await dsh_context.user_questions.ask(request)
    await asyncio.to_thread(people_file.write_text, '[groups]\noncall = ["ana"]\n', "utf-8")
    again = AskUserQuestionRequest(questions=questions, audience=("group:leads",))
    with pytest.raises(UserQuestionError, match='entry 0 "group:leads" names no group'):
        await dsh_context.user_questions.ask(again)
    assert len(provider.requests) == 1
