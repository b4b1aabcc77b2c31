"""MCP elicitation both ways, in memory through the official SDK's client and server sessions.

``elicitation_callback(ctx)``: a server elicits a raw form schema; the client's harness asks it
through a ``ScriptedProvider``. ``ElicitationProvider(mcp_context)``: a server-side harness asks
its questions; the client's callback sees the elicitation (a recording fake, or our callback).
"""

# No "from __future__ import annotations": the SDK reads MCPServer tools' annotations at run time.
import datetime
import itertools
import json
from typing import Any, Literal

import anyio
import anyio.lowlevel
import attrs
import pytest

pytest.importorskip("mcp", reason="the MCP tests need the mcp extra")

import mcp_types as types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError, NoBackChannelError
from pydantic import AnyUrl, BaseModel, EmailStr, Field

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    UserQuestionError,
    UserQuestionErrorCode,
    plugin,
)
from dsh_user_questions.harness import AbortController, HarnessContext
from dsh_user_questions.mcp import ElicitationProvider, elicitation_callback
from dsh_user_questions.mcp._callback import (
    MAX_ELICITATION_ROUNDS,
    UnsupportedElicitation,
    questions_for_elicitation,
)
from dsh_user_questions.mcp._provider import elicitation_schema
from dsh_user_questions.plan_review import read_plan_review
from dsh_user_questions.rules import check_request
from dsh_user_questions.testing import WAIT_FOR_ABORT, ScriptedProvider
from dsh_user_questions.testing import make_plan_question as plan_question

TIMEOUT = 30


def _harness(provider: Any) -> HarnessContext:
    ctx = HarnessContext()
    ctx.register(plugin)
    ctx.user_questions.register_provider(provider)
    return ctx


def _eliciting_server() -> Server[Any]:
    """A server whose ``elicit`` tool sends the form it is given and returns the client's reply."""

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        schema = {"type": "object", "properties": {"message": {}, "schema": {}, "url": {}}}
        return types.ListToolsResult(tools=[types.Tool(name="elicit", input_schema=schema)])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        try:
            if "url" in args:
                result = await ctx.session.elicit_url(
                    "Sign in", args["url"], "e-1", related_request_id=ctx.request_id
                )
            else:
                result = await ctx.session.elicit_form(
                    args["message"], args["schema"], related_request_id=ctx.request_id
                )
        except MCPError as err:
            return types.CallToolResult(
                content=[types.TextContent(text=f"refused: {err.message}")], is_error=True
            )
        reply = result.model_dump(mode="json", exclude_none=True, include={"action", "content"})
        return types.CallToolResult(content=[types.TextContent(text=json.dumps(reply))])

    return Server("eliciting", on_list_tools=list_tools, on_call_tool=call_tool)


async def _elicit(
    provider: ScriptedProvider, schema: dict[str, Any], message: str = "Set up the project"
) -> dict[str, Any]:
    """Elicit ``schema`` from a client whose harness answers through ``provider``."""
    callback = elicitation_callback(_harness(provider))
    with anyio.fail_after(TIMEOUT):
        async with Client(
            _eliciting_server(), mode="legacy", elicitation_callback=callback
        ) as client:
            result = await client.call_tool("elicit", {"message": message, "schema": schema})
    text = result.content[0].text  # type: ignore[union-attr]
    if result.is_error:
        return {"refused": text}
    reply: dict[str, Any] = json.loads(text)
    return reply


EVERY_KIND: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pkg": {"type": "string", "title": "Package manager", "enum": ["pnpm", "npm"]},
        "license": {
            "type": "string",
            "description": "Which license?",
            "oneOf": [{"const": "mit", "title": "MIT"}, {"const": "apache", "title": "Apache 2.0"}],
        },
        "typed": {"type": "boolean", "title": "Ship type hints?", "default": True},
        "name": {"type": "string", "title": "Project name", "minLength": 2, "maxLength": 20},
        "ratio": {"type": "number", "title": "Coverage goal", "minimum": 0, "maximum": 1},
        "workers": {"type": "integer", "title": "Workers", "minimum": 1, "maximum": 8},
        "targets": {
            "type": "array",
            "title": "Targets",
            "items": {"type": "string", "enum": ["linux", "mac", "windows"]},
            "minItems": 1,
        },
        "extras": {
            "type": "array",
            "title": "Extras",
            "items": {
                "anyOf": [{"const": "docs", "title": "Docs"}, {"const": "ci", "title": "CI"}]
            },
        },
    },
    "required": ["pkg", "name"],
}

EVERY_KIND_ANSWER = {
    "answers": [
        {"id": "pkg", "selected": ["pnpm"]},
        {"id": "license", "selected": ["Apache 2.0"]},
        {"id": "typed", "selected": ["No"]},
        {"id": "name", "selected": [], "custom": "demo"},
        {"id": "ratio", "selected": [], "custom": "0.85"},
        {"id": "workers", "selected": [], "custom": "4"},
        {"id": "targets", "selected": ["linux", "windows"]},
        {"id": "extras", "selected": ["Docs", "CI"]},
    ]
}


# elicitation_callback ------------------------------------------------------------------------


async def test_every_field_kind_round_trips_through_the_callback() -> None:
    """Enum, titled enum, boolean, string, number, integer and multi-selects come back typed."""
    provider = ScriptedProvider(EVERY_KIND_ANSWER)
    reply = await _elicit(provider, EVERY_KIND)
    assert reply == {
        "action": "accept",
        "content": {
            "pkg": "pnpm",
            "license": "apache",
            "typed": False,
            "name": "demo",
            "ratio": 0.85,
            "workers": 4,
            "targets": ["linux", "windows"],
            "extras": ["docs", "ci"],
        },
    }
    questions = {q.id: q for q in provider.requests[0].questions}
    assert [o.label for o in questions["license"].options] == ["MIT", "Apache 2.0"]
    assert [o.label for o in questions["typed"].options] == ["Yes", "No"]
    assert questions["targets"].multi_select
    assert questions["extras"].multi_select
    assert not questions["pkg"].multi_select
    assert questions["name"].options == ()
    assert questions["ratio"].options == ()
    assert questions["pkg"].detail is not None
    assert "Set up the project" in questions["pkg"].detail


async def test_ranges_are_shown_as_text_in_the_detail() -> None:
    """What a question cannot carry (range, length, count, default) is written in its detail."""
    provider = ScriptedProvider(EVERY_KIND_ANSWER)
    await _elicit(provider, EVERY_KIND)
    detail = {q.id: q.detail or "" for q in provider.requests[0].questions}
    assert "A number from 0 to 1" in detail["ratio"]
    assert "A whole number from 1 to 8" in detail["workers"]
    assert "2 to 20 characters" in detail["name"]
    assert "Choose at least 1" in detail["targets"]
    assert "Default: Yes (skip to keep it)." in detail["typed"]  # by its title, not the raw true
    typed = next(q for q in provider.requests[0].questions if q.id == "typed")
    assert [o.recommended for o in typed.options] == [True, False]
    assert "Optional." in detail["typed"]
    assert "Optional" not in detail["name"]
    assert detail["name"].startswith("Required.")


async def test_an_answer_out_of_range_is_asked_again_with_the_problem() -> None:
    """A number out of its range (or not a number) is asked again, alone, saying what was wrong."""
    schema = {
        "type": "object",
        "properties": {
            "workers": {"type": "integer", "minimum": 1, "maximum": 8},
            "pkg": {"type": "string", "enum": ["pnpm", "npm"]},
        },
    }
    provider = ScriptedProvider(
        {
            "answers": [
                {"id": "workers", "selected": [], "custom": "12"},
                {"id": "pkg", "selected": ["npm"]},
            ]
        },
        {"answers": [{"id": "workers", "selected": [], "custom": "3"}]},
    )
    reply = await _elicit(provider, schema)
    assert reply == {"action": "accept", "content": {"workers": 3, "pkg": "npm"}}
    again = provider.requests[1].questions
    assert [q.id for q in again] == ["workers"]
    assert again[0].question == (
        'workers (your answer "12" was refused: it must be a whole number from 1 to 8)'
    )


class TestNoOtherOnChoices:
    """Boolean and enum fields are choices among their values: no "Other" free text."""

    async def test_choice_fields_allow_no_other_and_text_fields_do(self) -> None:
        """Enum, titled enum, boolean and array-of-enum questions have allow_other False;
        string, number and integer questions keep free text."""
        provider = ScriptedProvider(EVERY_KIND_ANSWER)
        await _elicit(provider, EVERY_KIND)
        allow = {q.id: q.allow_other for q in provider.requests[0].questions}
        assert allow == {
            "pkg": False,
            "license": False,
            "typed": False,
            "name": True,
            "ratio": True,
            "workers": True,
            "targets": False,
            "extras": False,
        }
        check_request(provider.requests[0])

    async def test_own_words_for_an_enum_never_reach_the_server(self) -> None:
        """A provider that answers an enum with its own words anyway gives a BAD_ANSWER: the
        server gets an error, never the words."""
        schema = {
            "type": "object",
            "properties": {"pkg": {"type": "string", "enum": ["pnpm", "npm"]}},
        }
        provider = ScriptedProvider({"answers": [{"id": "pkg", "selected": [], "custom": "bun"}]})
        reply = await _elicit(provider, schema)
        assert reply == {
            "refused": "refused: the user-questions provider gave a bad answer: answers[0]"
            ' (question "pkg") has custom text, but the question takes only its options'
            " (allow_other is false)"
        }
        assert len(provider.requests) == 1


async def test_a_skipped_optional_field_is_left_out() -> None:
    """A skipped optional field without a default is absent from the content."""
    provider = ScriptedProvider({"answers": [{"id": "pkg", "selected": ["pnpm"]}]})
    schema = {
        "type": "object",
        "properties": {
            "pkg": {"type": "string", "enum": ["pnpm", "npm"]},
            "typed": {"type": "boolean"},
        },
    }
    assert await _elicit(provider, schema) == {"action": "accept", "content": {"pkg": "pnpm"}}


async def test_nothing_answered_declines() -> None:
    """Every question skipped is a decline."""
    provider = ScriptedProvider({"answers": []})
    assert await _elicit(provider, EVERY_KIND) == {"action": "decline"}


async def test_a_required_field_skipped_twice_declines() -> None:
    """A required field left unanswered, asked again and skipped again, is a decline."""
    provider = ScriptedProvider(
        {"answers": [{"id": "license", "selected": ["MIT"]}]}, {"answers": []}
    )
    assert await _elicit(provider, EVERY_KIND) == {"action": "decline"}
    assert [q.id for q in provider.requests[1].questions] == ["pkg", "name"]


SEP_1034: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}


class TestDefaultsAndRequiredFields:
    """Enter on a defaulted field sends its default; a required field is asked until answered."""

    async def test_every_field_skipped_sends_every_default(self) -> None:
        """SEP-1034: a form of defaults, each field skipped (Enter), is accepted with them."""
        provider = ScriptedProvider(
            {"answers": [{"id": name, "selected": []} for name in SEP_1034["properties"]]}
        )
        reply = await _elicit(provider, SEP_1034)
        assert reply == {
            "action": "accept",
            "content": {
                "name": "John Doe",
                "age": 30,
                "score": 95.5,
                "status": "active",
                "verified": True,
            },
        }
        detail = {q.id: q.detail or "" for q in provider.requests[0].questions}
        assert "Default: 30 (skip to keep it)." in detail["age"]
        assert "Default: active (skip to keep it)." in detail["status"]

    async def test_an_answer_replaces_the_default(self) -> None:
        """A field the human answers sends the answer; a skipped one next to it, its default."""
        provider = ScriptedProvider({"answers": [{"id": "age", "selected": [], "custom": "41"}]})
        reply = await _elicit(provider, SEP_1034)
        assert reply["content"]["age"] == 41
        assert reply["content"]["name"] == "John Doe"

    async def test_a_skipped_required_field_is_asked_again_keeping_the_other_answers(
        self,
    ) -> None:
        """Skipping a required field asks it alone, marked; the answers given before are kept."""
        provider = ScriptedProvider(
            {"answers": [{"id": "license", "selected": ["MIT"]}, {"id": "typed", "selected": []}]},
            {
                "answers": [
                    {"id": "pkg", "selected": ["npm"]},
                    {"id": "name", "selected": [], "custom": "demo"},
                ]
            },
        )
        reply = await _elicit(provider, EVERY_KIND)
        assert reply == {
            "action": "accept",
            "content": {"license": "mit", "typed": True, "pkg": "npm", "name": "demo"},
        }
        again = provider.requests[1].questions
        assert [q.id for q in again] == ["pkg", "name"]
        assert again[1].question == (
            "Project name (required: answer it, or skip it again to decline the whole form)"
        )
        assert (again[1].detail or "").startswith("Required.")

    async def test_the_whole_form_skipped_declines_at_once(self) -> None:
        """Skipping every field of a form with a required field is the human's decline."""
        provider = ScriptedProvider({"answers": []})
        assert await _elicit(provider, EVERY_KIND) == {"action": "decline"}
        assert len(provider.requests) == 1

    async def test_the_re_asking_stops_after_max_rounds(self) -> None:
        """An answer refused round after round ends in a decline after the last round allowed."""
        schema = {
            "type": "object",
            "properties": {"workers": {"type": "integer", "minimum": 1, "maximum": 8}},
        }
        wrong = {"answers": [{"id": "workers", "selected": [], "custom": "99"}]}
        provider = ScriptedProvider(*[wrong] * (MAX_ELICITATION_ROUNDS + 1))
        assert await _elicit(provider, schema) == {"action": "decline"}
        assert len(provider.requests) == MAX_ELICITATION_ROUNDS

    async def test_each_round_yields_to_the_event_loop(self) -> None:
        """A provider answering at once still lets the loop's other tasks run between rounds."""
        ticks = 0
        seen: list[int] = []

        class AtOnce:
            def ask(self, request: AskUserQuestionRequest) -> dict[str, Any]:
                seen.append(ticks)
                return {"answers": [{"id": "workers", "selected": [], "custom": "99"}]}

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await anyio.lowlevel.checkpoint()

        schema = {
            "type": "object",
            "properties": {"workers": {"type": "integer", "minimum": 1, "maximum": 8}},
        }
        ctx = HarnessContext()
        ctx.register(plugin)
        ctx.user_questions.register_provider(AtOnce())
        callback = elicitation_callback(ctx)
        params = types.ElicitRequestFormParams(message="m", requested_schema=schema)
        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as group:
                group.start_soon(ticker)
                result = await callback(None, params)
                group.cancel_scope.cancel()
        assert isinstance(result, types.ElicitResult)
        assert result.action == "decline"
        assert len(seen) == MAX_ELICITATION_ROUNDS
        assert all(later > earlier for earlier, later in itertools.pairwise(seen))


async def test_closing_the_question_cancels() -> None:
    """The provider's ASK_CANCELLED (the human closed the form) is a cancel."""
    provider = ScriptedProvider(UserQuestionError.cancelled())
    assert await _elicit(provider, EVERY_KIND) == {"action": "cancel"}


async def test_a_timeout_cancels() -> None:
    """With a timeout, a human who never answers makes the elicitation a cancel."""
    provider = ScriptedProvider(WAIT_FOR_ABORT)
    callback = elicitation_callback(_harness(provider), timeout=0.2)
    schema = {"type": "object", "properties": {"pkg": {"type": "string", "enum": ["a", "b"]}}}
    with anyio.fail_after(TIMEOUT):
        async with Client(
            _eliciting_server(), mode="legacy", elicitation_callback=callback
        ) as client:
            result = await client.call_tool("elicit", {"message": "m", "schema": schema})
    assert json.loads(result.content[0].text) == {"action": "cancel"}  # type: ignore[union-attr]
    assert provider.requests[0].timeout == 0.2


async def test_an_unmappable_field_is_refused_naming_it() -> None:
    """A nested object is refused with an error naming the field; nobody is asked."""
    schema = {
        "type": "object",
        "properties": {
            "pkg": {"type": "string", "enum": ["pnpm", "npm"]},
            "address": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
    provider = ScriptedProvider()
    reply = await _elicit(provider, schema)
    assert "'address'" in reply["refused"]
    assert "cannot be asked" in reply["refused"]
    assert provider.requests == []


@pytest.mark.parametrize(
    ("prop", "problem"),
    [
        ({"type": "array", "items": {"type": "string"}}, "need enum, oneOf or anyOf"),
        ({"type": ["string", "null"]}, "cannot be asked"),
        ({"enum": ["a", "b"]}, "cannot be asked"),
        ({"type": "string", "enum": [1, 2]}, "enum must be a list of strings"),
        ({"type": "integer", "minimum": "one"}, "minimum and maximum must be numbers"),
    ],
)
def test_each_unsupported_shape_says_why(prop: dict[str, Any], problem: str) -> None:
    """Fields no question can ask raise UnsupportedElicitation naming the field and the reason."""
    with pytest.raises(UnsupportedElicitation, match=problem) as caught:
        questions_for_elicitation("m", {"type": "object", "properties": {"x": prop}})
    assert "'x'" in str(caught.value)


async def test_url_mode_is_refused() -> None:
    """URL-mode elicitation has nothing to ask and is refused with an error."""
    callback = elicitation_callback(_harness(ScriptedProvider()))
    with anyio.fail_after(TIMEOUT):
        async with Client(
            _eliciting_server(), mode="legacy", elicitation_callback=callback
        ) as client:
            result = await client.call_tool("elicit", {"url": "https://example.com/login"})
    assert result.is_error
    assert "URL-mode elicitation is not supported" in result.content[0].text  # type: ignore[union-attr]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    properties=st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=5),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(
                    st.sampled_from(["type", "enum", "items", "oneOf", "title"]), inner
                )
            ),
            max_leaves=6,
        ),
        max_size=3,
    )
)
def test_any_schema_maps_or_is_refused_cleanly(properties: dict[str, Any]) -> None:
    """Whatever a server sends, the mapping gives questions or an UnsupportedElicitation."""
    try:
        questions = questions_for_elicitation("m", {"type": "object", "properties": properties})
    except UnsupportedElicitation:
        return
    assert [q.id for q in questions] == list(properties)


class Signup(BaseModel):
    """A form a Python SDK server validates the reply against (``ctx.elicit`` with pydantic)."""

    email: EmailStr = Field(description="Your email")
    homepage: AnyUrl = Field(description="Your homepage")
    birthday: datetime.date = Field(description="Your birthday")
    meeting: datetime.datetime = Field(description="When shall we meet?")
    workers: int = Field(ge=1, le=8, description="Workers")
    ratio: float = Field(ge=0, le=1, description="Coverage goal")
    nick: str = Field(min_length=2, max_length=10, description="Nickname")
    plan: Literal["free", "pro"] = Field(description="Plan")


def _validating_server() -> MCPServer:
    """A server built with the official SDK whose tool elicits `Signup` and reports the reply."""
    server = MCPServer("validating")

    @server.tool()
    async def signup(ctx: Context) -> str:
        try:
            result = await ctx.elicit("Sign up, please", schema=Signup)
        except ValueError as err:  # the SDK refuses content that breaks the schema
            return f"refused: {err}"
        if result.action != "accept":
            return result.action
        return result.data.model_dump_json()

    return server


def _texts(**answers: str) -> dict[str, Any]:
    return {
        "answers": [{"id": key, "selected": [], "custom": text} for key, text in answers.items()]
    }


async def test_a_validating_server_accepts_every_answer_the_human_finishes() -> None:
    """Bad emails, URIs, dates, date-times, ranges and lengths are asked again, never sent."""
    wrong = _texts(
        email="a@",
        homepage="example.com",
        birthday="2024-02-30",
        meeting="2025-03-31T14:30:00",
        workers="9",
        ratio="1.5",
        nick="x",
    )
    wrong["answers"].append({"id": "plan", "selected": ["pro"]})
    still_wrong = _texts(
        email="me@example",
        homepage="http://",
        birthday="31.03.2025",
        meeting="2025-03-31 14:30",
        workers="2.5",
        ratio="lots",
        nick="far too long a name",
    )
    right = _texts(
        email="me@example.com",
        homepage="https://example.com/me",
        birthday="2024-02-29",
        meeting="2025-03-31T14:30:00+02:00",
        workers="8",
        ratio="0.5",
        nick="mo",
    )
    provider = ScriptedProvider(wrong, still_wrong, right)
    callback = elicitation_callback(_harness(provider))
    with anyio.fail_after(TIMEOUT):
        async with Client(
            _validating_server(), mode="legacy", elicitation_callback=callback
        ) as client:
            result = await client.call_tool("signup", {})
    text = result.content[0].text  # type: ignore[union-attr]
    assert not text.startswith("refused"), text
    assert json.loads(text) == {
        "email": "me@example.com",
        "homepage": "https://example.com/me",
        "birthday": "2024-02-29",
        "meeting": "2025-03-31T14:30:00+02:00",
        "workers": 8,
        "ratio": 0.5,
        "nick": "mo",
        "plan": "pro",
    }
    assert len(provider.requests) == 3
    again = {q.id: q.question for q in provider.requests[1].questions}
    assert sorted(again) == sorted(set(Signup.model_fields) - {"plan"})
    first = {q.id: q.detail for q in provider.requests[0].questions}
    assert first["email"] == (
        "Sign up, please\n\nRequired. Format: an email address, like name@example.com."
    )
    assert first["workers"] == "Required. A whole number from 1 to 8."
    assert again["email"] == (
        'Your email (your answer "a@" was refused: it must be an email address, like'
        " name@example.com: There must be something after the @-sign.)"
    )
    assert 'answer "example.com" was refused: it must be a full address' in again["homepage"]
    assert 'answer "2024-02-30" was refused: it must be a date as YYYY-MM-DD' in again["birthday"]
    assert "with its time zone" in again["meeting"]
    assert again["workers"].endswith("it must be a whole number from 1 to 8)")
    assert again["ratio"].endswith("it must be a number from 0 to 1)")
    assert again["nick"].endswith("it must be 2 to 10 characters (you gave 1))")
    third = {q.id: q.question for q in provider.requests[2].questions}
    assert "The part after the @-sign is not valid. It should have a period." in third["email"]
    assert 'answer "lots" was refused: it must be a number' in third["ratio"]


@pytest.mark.parametrize(
    ("text_format", "refused", "accepted"),
    [
        ("email", ["a@", "@b.co", "a b@c.co", "a@b", "用户@example.com"], "a.b+c@example.org"),
        ("uri", ["example.com", "http://", "http://exa mple.com", "/relative"], "urn:isbn:123"),
        ("date", ["2025-02-29", "2025-2-1", "20250201", "2025-02-01T00:00:00Z"], "2024-02-29"),
        (
            "date-time",
            ["2025-03-31T14:30:00", "2025-03-31", "2025-03-31T25:00:00Z", "yesterday"],
            "2025-03-31T14:30:00.5-07:00",
        ),
    ],
)
async def test_each_mcp_format_is_checked_by_a_real_validator(
    text_format: str, refused: list[str], accepted: str
) -> None:
    """Each value that breaks its format is refused in turn; the first that fits is sent."""
    schema = {
        "type": "object",
        "properties": {"x": {"type": "string", "format": text_format}},
        "required": ["x"],
    }
    provider = ScriptedProvider(*(_texts(x=text) for text in [*refused, accepted]))
    reply = await _elicit(provider, schema)
    assert reply == {"action": "accept", "content": {"x": accepted}}
    asked = [request.questions[0].question for request in provider.requests[1:]]
    assert [
        f"your answer {json.dumps(text, ensure_ascii=False)} was refused" in question
        for question, text in zip(asked, refused, strict=True)
    ] == [True] * len(refused)


HEROES: dict[str, Any] = {
    "type": "object",
    "properties": {
        "hero": {
            "type": "string",
            "title": "Favourite hero",
            "oneOf": [
                {"const": "hero-1", "title": "Superman"},
                {"const": "hero-2", "title": "Batman"},
            ],
            "default": "hero-1",
        },
        "team": {
            "type": "array",
            "title": "Team",
            "items": {
                "anyOf": [
                    {"const": "hero-1", "title": "Superman"},
                    {"const": "hero-2", "title": "Batman"},
                    {"const": "hero-3", "title": "Robin"},
                ]
            },
            "default": ["hero-2", "hero-3"],
        },
    },
}


async def test_defaults_are_shown_by_their_titles_and_recommended() -> None:
    """A default is named by its option's title (never its raw value) and is the recommended one."""
    provider = ScriptedProvider({"answers": [{"id": "hero", "selected": ["Batman"]}]})
    reply = await _elicit(provider, HEROES)
    assert reply == {
        "action": "accept",
        "content": {"hero": "hero-2", "team": ["hero-2", "hero-3"]},
    }
    asked = {q.id: q for q in provider.requests[0].questions}
    assert asked["hero"].detail == (
        "Set up the project\n\nOptional. Default: Superman (skip to keep it)."
    )
    assert "Default: Batman, Robin (skip to keep it)." in (asked["team"].detail or "")
    assert "hero-" not in (asked["hero"].detail or "") + (asked["team"].detail or "")
    assert [o.recommended for o in asked["hero"].options] == [True, False]
    assert [o.recommended for o in asked["team"].options] == [False, True, True]


async def test_an_enum_value_meaning_other_is_one_row_and_still_answerable() -> None:
    """An enum "Other" or "Skip" is shown as a listed option, apart from the UI's own rows."""
    schema = {
        "type": "object",
        "properties": {
            "colour": {"type": "string", "enum": ["red", "Other", "skip"]},
            "case": {"type": "string", "enum": ["A b", "a  B"]},
        },
    }
    provider = ScriptedProvider(
        {
            "answers": [
                {"id": "colour", "selected": ["Listed option: Other"]},
                {"id": "case", "selected": ["a  B (a  B)"]},
            ]
        }
    )
    reply = await _elicit(provider, schema)
    assert reply == {"action": "accept", "content": {"colour": "Other", "case": "a  B"}}
    asked = {q.id: q for q in provider.requests[0].questions}
    assert [o.label for o in asked["colour"].options] == [
        "red",
        "Listed option: Other",
        "Listed option: skip",
    ]
    assert [o.label for o in asked["case"].options] == ["A b", "a  B (a  B)"]
    check_request(AskUserQuestionRequest(questions=tuple(asked.values())))  # no BAD_QUESTION


# ElicitationProvider ------------------------------------------------------------------------


def _asking_server(request: AskUserQuestionRequest) -> Server[Any]:
    """A low-level server whose ``ask`` tool asks ``request`` through an ElicitationProvider."""

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        tool = types.Tool(name="ask", input_schema={"type": "object"})
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, _params: types.CallToolRequestParams) -> types.CallToolResult:
        harness = _harness(ElicitationProvider(ctx))
        try:
            answer = await harness.user_questions.ask(request)
        except UserQuestionError as err:
            text = f"error {err.code}"
        else:
            text = json.dumps(answer.to_dict())
        return types.CallToolResult(content=[types.TextContent(text=text)])

    return Server("asking", on_list_tools=list_tools, on_call_tool=call_tool)


class RecordingClient:
    """An MCP client's elicitation callback that records each form and replies as scripted."""

    def __init__(self, *replies: types.ElicitResult) -> None:
        self.replies = list(replies)
        self.forms: list[types.ElicitRequestFormParams] = []

    async def __call__(self, _context: Any, params: Any) -> types.ElicitResult:
        self.forms.append(params)
        return self.replies.pop(0)


async def _ask_client(server: Any, callback: Any) -> str:
    with anyio.fail_after(TIMEOUT):
        async with Client(server, mode="legacy", elicitation_callback=callback) as client:
            result = await client.call_tool("ask", {})
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text


PKG = AskUserQuestionItem(
    id="pkg",
    question="Which package manager?",
    header="Tooling",
    options=(AskUserQuestionOption("pnpm", "Fast"), AskUserQuestionOption("npm")),
)
TARGETS = AskUserQuestionItem(
    id="targets",
    question="Which targets?",
    options=(AskUserQuestionOption("linux"), AskUserQuestionOption("mac")),
    multi_select=True,
)
NAME = AskUserQuestionItem(id="name", question="Project name?", detail="Used on PyPI.")
THREE = AskUserQuestionRequest(questions=(PKG, TARGETS, NAME))


async def test_provider_maps_each_question_to_a_flat_field() -> None:
    """Single select: oneOf with titles; multi: array of titled choices; Other text; free text."""
    client = RecordingClient(types.ElicitResult(action="decline"))
    await _ask_client(_asking_server(THREE), client)
    form = client.forms[0]
    assert form.requested_schema == elicitation_schema(THREE)[1]
    props = form.requested_schema["properties"]
    assert props["pkg"]["oneOf"] == [
        {"const": "pnpm", "title": "pnpm: Fast"},
        {"const": "npm", "title": "npm"},
    ]
    assert props["pkg"]["title"] == "Tooling: Which package manager?"
    assert props["targets"]["type"] == "array"
    assert props["targets"]["items"]["anyOf"][1] == {"const": "mac", "title": "mac"}
    assert props["pkg.other"]["type"] == "string"
    assert props["targets.other"]["type"] == "string"
    assert props["name"] == {"type": "string", "title": "Project name?"}
    assert "name.other" not in props
    assert "Used on PyPI." in form.message


async def test_provider_reads_choices_other_text_and_free_text() -> None:
    """Accepted content becomes the answer: selections, own words and free text."""
    content = {
        "pkg": "npm",
        "targets": ["linux", "mac"],
        "targets.other": "freebsd",
        "name": "demo",
    }
    client = RecordingClient(types.ElicitResult(action="accept", content=content))
    text = await _ask_client(_asking_server(THREE), client)
    assert json.loads(text) == {
        "answers": [
            {"id": "pkg", "selected": ["npm"]},
            {"id": "targets", "selected": ["linux", "mac"], "custom": "freebsd"},
            {"id": "name", "selected": [], "custom": "demo"},
        ]
    }


class TestProviderWithoutOther:
    """The ElicitationProvider honours ``allow_other=False``: no ``<id>.other`` field."""

    async def test_no_other_field_is_sent(self) -> None:
        """A choice question that allows no free text gets its choice field only."""
        closed = AskUserQuestionRequest(
            questions=(
                attrs.evolve(PKG, allow_other=False),
                attrs.evolve(TARGETS, allow_other=False),
            )
        )
        client = RecordingClient(types.ElicitResult(action="decline"))
        await _ask_client(_asking_server(closed), client)
        assert sorted(client.forms[0].requested_schema["properties"]) == ["pkg", "targets"]

    async def test_an_other_value_sent_anyway_is_bad_answer(self) -> None:
        """A client answering the field that was not asked gets BAD_ANSWER, not own words."""
        closed = AskUserQuestionRequest(questions=(attrs.evolve(PKG, allow_other=False),))
        content = {"pkg": "npm", "pkg.other": "bun"}
        client = RecordingClient(types.ElicitResult(action="accept", content=content))
        assert await _ask_client(_asking_server(closed), client) == "error BAD_ANSWER"


async def test_provider_single_select_own_words_replace_the_choice() -> None:
    """A single select's Other text wins over a choice, as the answer encoding says."""
    content = {"pkg": "npm", "pkg.other": "bun"}
    client = RecordingClient(types.ElicitResult(action="accept", content=content))
    text = await _ask_client(_asking_server(AskUserQuestionRequest(questions=(PKG,))), client)
    assert json.loads(text) == {"answers": [{"id": "pkg", "selected": [], "custom": "bun"}]}


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_provider_decline_and_cancel_are_ask_cancelled(action: str) -> None:
    """The client user's decline or cancel is ASK_CANCELLED."""
    client = RecordingClient(types.ElicitResult(action=action))  # type: ignore[arg-type]
    text = await _ask_client(_asking_server(THREE), client)
    assert text == f"error {UserQuestionErrorCode.ASK_CANCELLED}"


async def test_provider_plan_review_is_a_labelled_choice_with_the_plan_in_the_message() -> None:
    """Plan review: the plan is in the message, Approve / Keep planning a choice, feedback Other."""
    question = plan_question()
    request = AskUserQuestionRequest(questions=(question,))
    content = {"plan-review": "Keep planning", "plan-review.other": "Add tests first"}
    client = RecordingClient(types.ElicitResult(action="accept", content=content))
    text = await _ask_client(_asking_server(request), client)
    form = client.forms[0]
    assert question.detail is not None
    assert question.detail in form.message
    choices = form.requested_schema["properties"]["plan-review"]["oneOf"]
    assert [c["const"] for c in choices] == ["Approve", "Keep planning"]
    assert form.requested_schema["properties"]["plan-review.other"]["title"] == "Feedback"
    outcome = read_plan_review(AskUserQuestionAnswer.from_dict(json.loads(text)))
    assert not outcome.approved
    assert outcome.feedback == "Add tests first"


async def test_provider_works_from_an_mcpserver_tool_context() -> None:
    """The high-level MCPServer's Context works as the provider's MCP context."""
    server = MCPServer("high-level")

    @server.tool()
    async def ask(ctx: Context) -> str:
        harness = _harness(ElicitationProvider(ctx))
        answer = await harness.user_questions.ask(AskUserQuestionRequest(questions=(PKG,)))
        return json.dumps(answer.to_dict())

    client = RecordingClient(types.ElicitResult(action="accept", content={"pkg": "pnpm"}))
    text = await _ask_client(server, client)
    assert json.loads(text) == {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}


async def test_provider_and_callback_round_trip_every_question_kind() -> None:
    """Our provider on the server and our callback on the client: each question kind survives."""
    answer = {
        "answers": [
            {"id": "pkg", "selected": [], "custom": "bun"},
            {"id": "targets", "selected": ["mac"], "custom": "freebsd"},
            {"id": "name", "selected": [], "custom": "demo"},
        ]
    }
    # The callback sees the "Other" fields as questions of their own: answer them in turn.
    client_side = ScriptedProvider(
        lambda request: {
            "answers": [
                {"id": "pkg", "selected": []},
                {"id": "pkg.other", "selected": [], "custom": "bun"},
                {"id": "targets", "selected": ["mac"]},
                {"id": "targets.other", "selected": [], "custom": "freebsd"},
                {"id": "name", "selected": [], "custom": "demo"},
            ]
        }
    )
    text = await _ask_client(_asking_server(THREE), elicitation_callback(_harness(client_side)))
    assert json.loads(text) == answer
    asked = client_side.requests[0].questions
    assert [q.id for q in asked] == ["pkg", "pkg.other", "targets", "targets.other", "name"]
    assert [o.label for o in asked[0].options] == ["pnpm: Fast", "npm"]
    assert asked[2].multi_select


async def test_provider_abort_withdraws_the_elicitation() -> None:
    """Aborting the ask cancels the pending elicitation: ASK_ABORTED, and the client is told."""
    controller = AbortController()
    entered = anyio.Event()
    withdrawn = anyio.Event()

    async def never_answers(_context: Any, _params: Any) -> types.ElicitResult:
        entered.set()
        try:
            await anyio.sleep_forever()
        finally:
            withdrawn.set()
        raise AssertionError("unreachable")

    request = AskUserQuestionRequest(questions=(PKG,), signal=controller.signal)

    async def abort_when_asked() -> None:
        await entered.wait()
        controller.abort()

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(abort_when_asked)
            text = await _ask_client(_asking_server(request), never_answers)
        await withdrawn.wait()
    assert text == f"error {UserQuestionErrorCode.ASK_ABORTED}"


class FakeSession:
    """Stands in for the SDK's server session: replies to every form with one result."""

    def __init__(self, result: types.ElicitResult) -> None:
        self.result = result

    async def elicit_form(self, *_args: Any, **_kwargs: Any) -> types.ElicitResult:
        return self.result


class FakeMcpContext:
    """An MCP request context (``session`` and ``request_id``) around a FakeSession."""

    def __init__(self, result: types.ElicitResult) -> None:
        self.session = FakeSession(result)
        self.request_id = 1


_CLIENT_VALUES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.sampled_from(["pnpm", "npm", "linux", "mac", " ", ""])
    | st.text(max_size=6)
    | st.lists(st.sampled_from(["linux", "mac", "pnpm", "x"]) | st.text(max_size=3), max_size=4)
)


@settings(max_examples=150, deadline=None)
@given(
    content=st.dictionaries(
        st.sampled_from(["pkg", "pkg.other", "targets", "targets.other", "name", "x"]),
        _CLIENT_VALUES,
    )
)
async def test_any_client_content_is_an_answer_or_bad_answer(content: dict[str, Any]) -> None:
    """Whatever an MCP client sends back, ask() gives a checked answer or BAD_ANSWER."""
    harness = _harness(
        ElicitationProvider(FakeMcpContext(types.ElicitResult(action="accept", content=content)))
    )
    outcome: AskUserQuestionAnswer | UserQuestionError
    try:
        outcome = await harness.user_questions.ask(THREE)
    except UserQuestionError as err:
        outcome = err
    if isinstance(outcome, UserQuestionError):
        assert outcome.code == UserQuestionErrorCode.BAD_ANSWER
    else:
        assert {item.id for item in outcome.answers} <= {"pkg", "targets", "name"}


async def test_a_wrongly_typed_or_unasked_field_is_bad_answer() -> None:
    """A client's value of the wrong type, or a field nobody asked, is BAD_ANSWER naming it."""
    content = {"pkg": 5, "targets": "linux", "surprise": "x"}
    harness = _harness(
        ElicitationProvider(FakeMcpContext(types.ElicitResult(action="accept", content=content)))
    )
    with pytest.raises(UserQuestionError) as caught:
        await harness.user_questions.ask(THREE)
    assert caught.value.code == UserQuestionErrorCode.BAD_ANSWER
    assert '"surprise", which was not asked' in caught.value.message
    assert '"pkg" is not a string' in caught.value.message
    assert '"targets" is not a list of option labels' in caught.value.message


async def test_provider_without_a_back_channel_raises_the_sdk_error() -> None:
    """A stateless (2026-07-28) request cannot elicit: ask() raises the SDK's NoBackChannelError."""
    raised: list[BaseException] = []

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name="ask", input_schema={"type": "object"})]
        )

    async def call_tool(ctx: Any, _params: types.CallToolRequestParams) -> types.CallToolResult:
        harness = _harness(ElicitationProvider(ctx))
        try:
            await harness.user_questions.ask(THREE)
        except Exception as err:
            raised.append(err)
        return types.CallToolResult(content=[types.TextContent(text="done")])

    server = Server("stateless", on_list_tools=list_tools, on_call_tool=call_tool)
    client = RecordingClient()
    with anyio.fail_after(TIMEOUT):
        async with Client(server, mode="auto", elicitation_callback=client) as connected:
            await connected.call_tool("ask", {})
    assert [type(err) for err in raised] == [NoBackChannelError]
    assert client.forms == []


async def test_provider_recommended_option_is_the_default_and_said_in_its_title() -> None:
    """A recommended option is the field's default (single: a label; multi: the labels)."""
    pkg = AskUserQuestionItem(
        id="pkg",
        question="Which package manager?",
        options=(
            AskUserQuestionOption("pnpm", "Fast", recommended=True),
            AskUserQuestionOption("npm"),
        ),
    )
    targets = AskUserQuestionItem(
        id="targets",
        question="Which targets?",
        options=(
            AskUserQuestionOption("linux", recommended=True),
            AskUserQuestionOption("mac"),
            AskUserQuestionOption("windows", recommended=True),
        ),
        multi_select=True,
    )
    request = AskUserQuestionRequest(questions=(pkg, targets, NAME))
    client = RecordingClient(types.ElicitResult(action="accept", content={"pkg": "npm"}))
    text = await _ask_client(_asking_server(request), client)
    props = client.forms[0].requested_schema["properties"]
    assert props["pkg"]["default"] == "pnpm"
    assert props["pkg"]["oneOf"][0] == {"const": "pnpm", "title": "pnpm: Fast (recommended)"}
    assert props["targets"]["default"] == ["linux", "windows"]
    assert "default" not in props["name"]
    assert "default" not in elicitation_schema(THREE)[1]["properties"]["pkg"]
    assert json.loads(text) == {"answers": [{"id": "pkg", "selected": ["npm"]}]}


async def test_provider_recommended_round_trips_to_our_callback_as_recommended() -> None:
    """Our provider's default reaches our callback's question as the recommended option."""
    pkg = AskUserQuestionItem(
        id="pkg",
        question="Which package manager?",
        options=(AskUserQuestionOption("pnpm"), AskUserQuestionOption("npm", recommended=True)),
    )
    client_side = ScriptedProvider({"answers": [{"id": "pkg", "selected": ["pnpm"]}]})
    request = AskUserQuestionRequest(questions=(pkg,))
    await _ask_client(_asking_server(request), elicitation_callback(_harness(client_side)))
    asked = client_side.requests[0].questions[0]
    assert [(o.label, o.recommended) for o in asked.options] == [
        ("pnpm", False),
        ("npm (recommended)", True),
    ]
    assert "Default: npm (recommended) (skip to keep it)." in (asked.detail or "")


async def test_provider_refuses_a_secret_question_without_sending_a_form() -> None:
    """MCP forms cannot mask a field: a secret question is NOT_INTERACTIVE; nothing is sent."""
    token = AskUserQuestionItem(id="token", question="Your API token?", secret=True)
    client = RecordingClient()
    text = await _ask_client(_asking_server(AskUserQuestionRequest(questions=(PKG, token))), client)
    assert text == f"error {UserQuestionErrorCode.NOT_INTERACTIVE}"
    assert client.forms == []
    with pytest.raises(UserQuestionError) as caught:
        await ElicitationProvider(FakeMcpContext(types.ElicitResult(action="cancel"))).ask(
            AskUserQuestionRequest(questions=(token,))
        )
    assert caught.value.message == (
        UserQuestionError.not_interactive().message
        + ': MCP form elicitation cannot mask the secret answer of question "token"'
        " (a client shows and may keep form fields in clear)"
    )


async def test_provider_shows_model_text_inert_and_keeps_labels_as_values() -> None:
    """Titles and the message are inert text; each const is still the exact label."""
    tricky = AskUserQuestionItem(
        id="pick",
        question="Pick\u202e one",
        detail="line one\nwith \x1b[31m colour",
        options=(AskUserQuestionOption("a\u200bb"), AskUserQuestionOption("c")),
    )
    client = RecordingClient(types.ElicitResult(action="accept", content={"pick": "a\u200bb"}))
    text = await _ask_client(_asking_server(AskUserQuestionRequest(questions=(tricky,))), client)
    form = client.forms[0]
    prop = form.requested_schema["properties"]["pick"]
    assert prop["title"] == "Pick<U+202E> one"
    assert prop["oneOf"][0] == {"const": "a\u200bb", "title": "a<U+200B>b"}
    assert "\x1b" not in form.message
    assert "line one\n" in form.message
    assert json.loads(text) == {"answers": [{"id": "pick", "selected": ["a\u200bb"]}]}


@pytest.mark.parametrize(
    ("missing", "said"),
    [
        ("rfc3986_validator", "jsonschema cannot check the format(s) uri"),
        ("rfc3339_validator", "jsonschema cannot check the format(s) date-time"),
        ("email_validator", "needs email-validator to check elicitation answers"),
    ],
)
def test_without_a_format_package_the_import_names_the_extra(missing: str, said: str) -> None:
    """A format jsonschema would leave unchecked, silently, stops the import instead."""
    import subprocess
    import sys

    code = f"import sys; sys.modules[{missing!r}] = None; import dsh_user_questions.mcp"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1
    assert said in done.stderr
    assert "pip install 'dsh-user-questions[mcp]'" in done.stderr
