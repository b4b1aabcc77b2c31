"""The Claude Agent SDK adapter: Claude Code's AskUserQuestion and ExitPlanMode, end to end.

Each input is what Claude Code sends to ``can_use_tool``; each answer comes from a
`ScriptedProvider` (a human who picks by the labels shown) and goes back in Claude Code's own
answer shape, typed with the SDK's own result classes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")

from _frameworks import PICK_NPM, ask_in_terminal
from claude_agent_sdk import (
    ClaudeAgentOptions,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)

from dsh_user_questions import (
    AskUserQuestionRequest,
    UserQuestionError,
    plugin,
)
from dsh_user_questions.adapters.claude_agent_sdk import can_use_tool
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import ScriptedProvider

Pick = Callable[[AskUserQuestionRequest], Any]


@pytest.fixture
async def ctx() -> AsyncIterator[HarnessContext]:
    """A fresh harness context with the user-questions plugin."""
    async with HarnessContext() as context:
        context.register(plugin)
        yield context


def picks(**chosen: list[str] | str) -> Pick:
    """A human who picks, per question id, these labels (a str is their own words)."""

    def step(request: AskUserQuestionRequest) -> dict[str, Any]:
        answers = []
        for question in request.questions:
            if question.id not in chosen:
                continue
            choice = chosen[question.id]
            if isinstance(choice, str):
                answers.append({"id": question.id, "custom": choice})
            else:
                labels = [option.label for option in question.options]
                assert all(label in labels for label in choice), labels
                answers.append({"id": question.id, "selected": choice})
        return {"answers": answers}

    return step


async def ask(
    ctx: HarnessContext, tool_input: dict[str, Any], *steps: Any, tool: str = "AskUserQuestion"
) -> tuple[PermissionResultAllow | PermissionResultDeny, list[AskUserQuestionRequest]]:
    """Call the adapter's callback as the SDK does; the result and what the human was asked."""
    provider = ScriptedProvider(*steps)
    ctx.user_questions.register_provider(provider)
    result = await can_use_tool(ctx)(tool, tool_input, ToolPermissionContext(tool_use_id="tu_1"))
    return result, provider.requests


def claude_question(
    question: str, header: str, *labels: str, multi: bool = False
) -> dict[str, Any]:
    """A question as Claude Code writes it: no id, ``multiSelect``, options with descriptions."""
    return {
        "question": question,
        "header": header,
        "options": [{"label": label, "description": f"About {label}."} for label in labels],
        "multiSelect": multi,
    }


def allowed_answers(result: PermissionResultAllow | PermissionResultDeny) -> dict[str, str]:
    """The answers of an allow result (the test fails on a deny)."""
    assert isinstance(result, PermissionResultAllow), result
    assert result.updated_input is not None
    answers: dict[str, str] = result.updated_input["answers"]
    return answers


AUTH = "Which authentication should the API use?"


class TestTenClaudeCodeQuestions:
    """Ten realistic AskUserQuestion inputs, asked and answered in Claude Code's shape."""

    async def test_an_auth_choice_with_a_recommended_option(self, ctx: HarnessContext) -> None:
        """ "(Recommended)" marks the option recommended; the answer names Claude's label."""
        tool_input = {
            "questions": [
                claude_question(AUTH, "Auth", "OAuth 2.0 (Recommended)", "API keys", "Sessions")
            ]
        }
        result, [request] = await ask(ctx, tool_input, picks(q1=["OAuth 2.0"]))
        options = request.questions[0].options
        assert [(o.label, o.recommended) for o in options] == [
            ("OAuth 2.0", True),
            ("API keys", False),
            ("Sessions", False),
        ]
        assert result.updated_input == {**tool_input, "answers": {AUTH: "OAuth 2.0 (Recommended)"}}

    async def test_a_four_option_multi_select(self, ctx: HarnessContext) -> None:
        """A multi-select's picks come back joined by ", ", in the human's order."""
        text = "Which features should the first release have?"
        labels = ("Dark mode", "Offline sync", "Push notifications", "CSV export")
        tool_input = {"questions": [claude_question(text, "Features", *labels, multi=True)]}
        result, [request] = await ask(ctx, tool_input, picks(q1=["Dark mode", "CSV export"]))
        assert request.questions[0].multi_select is True
        assert allowed_answers(result) == {text: "Dark mode, CSV export"}

    async def test_skip_as_an_action_is_claudes_own_choice(self, ctx: HarnessContext) -> None:
        """An option "Skip" is shown apart from the UI's skip and answered back as "Skip"."""
        text = "The users table has no index on email. Add one in this migration?"
        tool_input = {"questions": [claude_question(text, "Migration", "Add the index", "Skip")]}
        result, [request] = await ask(ctx, tool_input, picks(q1=["Skip (Claude's option)"]))
        assert [o.label for o in request.questions[0].options] == [
            "Add the index",
            "Skip (Claude's option)",
        ]
        assert allowed_answers(result) == {text: "Skip"}

    async def test_none_of_the_above_in_a_multi_select(self, ctx: HarnessContext) -> None:
        """ "None of the above" is an ordinary option of a multi-select."""
        text = "Which of these services does the app call?"
        labels = ("Stripe", "Twilio", "None of the above")
        tool_input = {"questions": [claude_question(text, "Services", *labels, multi=True)]}
        result, _ = await ask(ctx, tool_input, picks(q1=["None of the above"]))
        assert allowed_answers(result) == {text: "None of the above"}

    async def test_an_eighteen_character_header_is_kept(self, ctx: HarnessContext) -> None:
        """An 18-character header (over Claude Code's 12) reaches the human whole."""
        text = "Where should the staging app run?"
        tool_input = {"questions": [claude_question(text, "Deployment target", "Fly", "Render")]}
        tool_input["questions"][0]["header"] = "Deploy environment"
        result, [request] = await ask(ctx, tool_input, picks(q1=["Fly"]))
        assert request.questions[0].header == "Deploy environment"
        assert allowed_answers(result) == {text: "Fly"}

    async def test_a_two_line_question(self, ctx: HarnessContext) -> None:
        """A question of two lines is asked as written and answered under its whole text."""
        text = "Which test runner should I set up?\nThe repo has both jest and vitest configs."
        tool_input = {"questions": [claude_question(text, "Tests", "Vitest", "Jest")]}
        result, [request] = await ask(ctx, tool_input, picks(q1=["Vitest"]))
        assert request.questions[0].question == text
        assert allowed_answers(result) == {text: "Vitest"}

    async def test_options_with_previews(self, ctx: HarnessContext) -> None:
        """Each option's preview reaches the provider."""
        text = "Which layout for the settings page?"
        question = claude_question(text, "Layout", "Sidebar", "Tabs")
        question["options"][0]["preview"] = "```\n+------+---------+\n| nav  | content |\n```"
        question["options"][1]["preview"] = "```\n[General] [Billing]\n```"
        result, [request] = await ask(ctx, {"questions": [question]}, picks(q1=["Tabs"]))
        assert [o.preview for o in request.questions[0].options] == [
            option["preview"] for option in question["options"]
        ]
        assert allowed_answers(result) == {text: "Tabs"}

    async def test_something_else_and_the_humans_own_words(self, ctx: HarnessContext) -> None:
        """ "Something else" is an option; words typed in the UI's Other come back as they are."""
        text = "Which package manager?"
        tool_input = {
            "questions": [claude_question(text, "Tooling", "pnpm", "npm", "Something else")]
        }
        result, [request] = await ask(ctx, tool_input, picks(q1="bun, like the other repos"))
        assert [o.label for o in request.questions[0].options][-1] == "Something else"
        assert allowed_answers(result) == {text: "bun, like the other repos"}

    async def test_four_questions_of_four_options(self, ctx: HarnessContext) -> None:
        """Four questions of four options each: every answer under its own question's text."""
        texts = [f"Question {n}: which one?" for n in range(1, 5)]
        tool_input = {
            "questions": [
                claude_question(text, f"Part {n}", *(f"Choice {n}{c}" for c in "ABCD"))
                for n, text in enumerate(texts, 1)
            ]
        }
        chosen = {f"q{n}": [f"Choice {n}{'ABCD'[n - 1]}"] for n in range(1, 5)}
        result, [request] = await ask(ctx, tool_input, picks(**chosen))
        assert len(request.questions) == 4
        assert allowed_answers(result) == {
            text: f"Choice {n}{'ABCD'[n - 1]}" for n, text in enumerate(texts, 1)
        }

    async def test_an_other_option_and_a_skipped_question(self, ctx: HarnessContext) -> None:
        """Claude's "Other" is answered as "Other"; a question the human skipped has no entry."""
        first = claude_question("Which license?", "License", "MIT", "Apache-2.0", "Other")
        second = claude_question("Add a code of conduct?", "Community", "Yes", "No")
        result, _ = await ask(
            ctx, {"questions": [first, second]}, picks(q1=["Other (Claude's option)"])
        )
        assert allowed_answers(result) == {"Which license?": "Other"}


class TestAskEdges:
    """What Claude's input may hold beyond the ten, and failed asks."""

    async def test_a_long_header_is_shortened_not_refused(self, ctx: HarnessContext) -> None:
        """A header over our limit reaches the human shortened, ending in an ellipsis."""
        header = "A header far longer than anything a chip can hold"
        tool_input = {"questions": [claude_question("Go?", header, "Yes", "No")]}
        result, [request] = await ask(ctx, tool_input, picks(q1=["Yes"]))
        shown = request.questions[0].header
        assert shown is not None
        assert len(shown) == 40
        assert shown.endswith("\u2026")
        assert header.startswith(shown[:-1])
        assert allowed_answers(result) == {"Go?": "Yes"}

    async def test_extra_keys_are_kept_in_the_updated_input(self, ctx: HarnessContext) -> None:
        """Keys Claude sends that we do not read (metadata) go back unchanged."""
        tool_input = {
            "questions": [claude_question("Go?", "Go", "Yes", "No")],
            "metadata": {"source": "plan"},
        }
        result, _ = await ask(ctx, tool_input, picks(q1=["No"]))
        assert isinstance(result, PermissionResultAllow)
        assert result.updated_input == {**tool_input, "answers": {"Go?": "No"}}

    async def test_a_cancelled_ask_is_a_deny_with_the_tools_text(self, ctx: HarnessContext) -> None:
        """The human closing the question denies the call with the tool's Error text, naming
        the tool Claude called (AskUserQuestion), not ours."""
        tool_input = {"questions": [claude_question("Go?", "Go", "Yes", "No")]}
        result, _ = await ask(ctx, tool_input, UserQuestionError.cancelled())
        assert result == PermissionResultDeny(message="Error: the user cancelled AskUserQuestion")

    async def test_no_provider_is_a_deny_with_the_tools_text(self, ctx: HarnessContext) -> None:
        """Without a provider the call is denied with NO_PROVIDER's text."""
        callback = can_use_tool(ctx)
        result = await callback(
            "AskUserQuestion",
            {"questions": [claude_question("Go?", "Go", "Yes", "No")]},
            ToolPermissionContext(),
        )
        assert result == PermissionResultDeny(
            message="Error: no user-questions provider is registered"
        )

    async def test_unreadable_input_is_a_deny_naming_the_problem(self, ctx: HarnessContext) -> None:
        """Input that is no question list is denied with an invalid-arguments text."""
        result, requests = await ask(ctx, {"questions": [{"header": "Go"}]})
        assert isinstance(result, PermissionResultDeny)
        assert result.message == "Error: invalid arguments: questions[0].question: is required"
        assert requests == []

    async def test_look_alike_labels_are_a_deny(self, ctx: HarnessContext) -> None:
        """Two labels that look the same are refused before the human sees them; the deny
        names the question by its place in Claude's list (Claude sent no id, so no "q2")."""
        tool_input = {
            "questions": [
                claude_question("Go?", "Go", "Yes", "No"),
                claude_question("Which pod?", "Pod", "pop", "\u0440\u043e\u0440"),
            ]
        }
        result, requests = await ask(ctx, tool_input)
        assert isinstance(result, PermissionResultDeny)
        assert result.message.startswith('Error: question 2 option 1 "\\u0440\\u043e\\u0440" looks')
        assert '"q' not in result.message
        assert requests == []


PLAN = "# Add caching\n\n1. Wrap the client\n2. Add a TTL setting"


class TestExitPlanMode:
    """ExitPlanMode is our plan review: approve, keep planning, talk instead."""

    async def test_approve_allows_the_call(self, ctx: HarnessContext) -> None:
        """Approving the plan allows ExitPlanMode with its input."""
        result, [request] = await ask(
            ctx,
            {"plan": PLAN},
            {"answers": [{"id": "plan-review", "selected": ["Approve"]}]},
            tool="ExitPlanMode",
        )
        assert request.questions[0].detail == PLAN
        assert result == PermissionResultAllow(updated_input={"plan": PLAN})

    async def test_keep_planning_denies_with_the_feedback(self, ctx: HarnessContext) -> None:
        """Keep planning denies the call with the human's words as the message."""
        answer = {"answers": [{"id": "plan-review", "custom": "Cache only GET requests."}]}
        result, _ = await ask(ctx, {"plan": PLAN}, answer, tool="ExitPlanMode")
        assert result == PermissionResultDeny(message="Cache only GET requests.")

    async def test_talk_instead_denies_saying_so(self, ctx: HarnessContext) -> None:
        """Closing the review (ASK_CANCELLED) denies the call: the user wants to talk."""
        result, _ = await ask(
            ctx, {"plan": PLAN}, UserQuestionError.cancelled(), tool="ExitPlanMode"
        )
        assert isinstance(result, PermissionResultDeny)
        assert result.message.startswith("The user wants to talk about the plan first")

    async def test_a_plan_without_a_heading_gets_one(self, ctx: HarnessContext) -> None:
        """A plan that does not start with a level-1 heading is reviewed under "# Plan"."""
        result, [request] = await ask(
            ctx,
            {"plan": "1. Do it"},
            {"answers": [{"id": "plan-review", "selected": ["Approve"]}]},
            tool="ExitPlanMode",
        )
        assert request.questions[0].detail == "# Plan\n\n1. Do it"
        assert result == PermissionResultAllow(updated_input={"plan": "1. Do it"})


class TestExitPlanModeWithoutAPlan:
    """Claude Code sends ExitPlanMode with ``{}`` while its plan file is not written yet: the
    human is asked plainly whether Claude may leave plan mode, never denied unasked.

    Each of these failed on main: ``{}`` was denied "permission to use ExitPlanMode was not
    granted" and an empty plan "Error: the plan is empty", the human asked nothing.
    """

    @pytest.mark.parametrize("tool_input", [{}, {"plan": "  "}, {"plan": None}])
    async def test_the_human_is_asked_saying_no_plan_was_written(
        self, ctx: HarnessContext, tool_input: dict[str, Any]
    ) -> None:
        """The question says no plan was written; it has Approve and Keep planning, no intent."""
        result, [request] = await ask(
            ctx, tool_input, picks(**{"leave-plan-mode": ["Approve"]}), tool="ExitPlanMode"
        )
        [question] = request.questions
        assert question.intent is None
        assert [option.label for option in question.options] == ["Approve", "Keep planning"]
        assert "no plan" in question.question
        assert question.detail is not None
        assert "no plan to review" in question.detail
        assert result == PermissionResultAllow(updated_input=tool_input)

    async def test_keep_planning_denies_with_the_humans_words(self, ctx: HarnessContext) -> None:
        """Keep planning with words: the deny's message is the human's words."""
        answer = {"answers": [{"id": "leave-plan-mode", "custom": "Plan the migration first."}]}
        result, _ = await ask(ctx, {}, answer, tool="ExitPlanMode")
        assert result == PermissionResultDeny(message="Plan the migration first.")

    async def test_keep_planning_alone_says_to_write_the_plan(self, ctx: HarnessContext) -> None:
        """Keep planning without words: the deny says to keep planning and write the plan."""
        result, _ = await ask(
            ctx, {}, picks(**{"leave-plan-mode": ["Keep planning"]}), tool="ExitPlanMode"
        )
        assert result == PermissionResultDeny(
            message="The user did not let you leave plan mode without a plan: keep planning,"
            " and write the plan first."
        )

    async def test_closing_the_question_is_talk_instead(self, ctx: HarnessContext) -> None:
        """Closing it (ASK_CANCELLED) denies saying the user wants to talk first."""
        result, _ = await ask(ctx, {}, UserQuestionError.cancelled(), tool="ExitPlanMode")
        assert result == PermissionResultDeny(
            message="The user wants to talk first: stop and wait for their next message"
            " (still in plan mode)."
        )

    async def test_no_provider_is_a_deny_with_the_tools_text(self, ctx: HarnessContext) -> None:
        """A failed ask is denied with the tool's Error text, as for a plan."""
        result = await can_use_tool(ctx)("ExitPlanMode", {}, ToolPermissionContext())
        assert result == PermissionResultDeny(
            message=f"Error: {UserQuestionError.no_provider().message}"
        )


class TestOtherTools:
    """Every other tool goes to ``then``, or is denied without it."""

    async def test_other_tools_go_to_then(self, ctx: HarnessContext) -> None:
        """``then`` decides every tool the adapter does not handle, with the same arguments."""
        seen: list[tuple[str, dict[str, Any], ToolPermissionContext]] = []

        async def then(
            name: str, tool_input: dict[str, Any], context: ToolPermissionContext
        ) -> PermissionResultAllow | PermissionResultDeny:
            seen.append((name, tool_input, context))
            return PermissionResultAllow()

        context = ToolPermissionContext(tool_use_id="tu_9")
        result = await can_use_tool(ctx, then=then)("Bash", {"command": "ls"}, context)
        assert result == PermissionResultAllow()
        assert seen == [("Bash", {"command": "ls"}, context)]

    async def test_without_then_other_tools_are_denied(self, ctx: HarnessContext) -> None:
        """Without ``then`` another tool is denied, as the SDK does without a callback."""
        result = await can_use_tool(ctx)(
            "Bash", {"command": "rm -rf build"}, ToolPermissionContext()
        )
        assert result == PermissionResultDeny(message="permission to use Bash was not granted")

    def test_the_callback_is_what_the_options_take(self, ctx: HarnessContext) -> None:
        """``ClaudeAgentOptions(can_use_tool=...)`` takes the callback as it is."""
        callback = can_use_tool(ctx)
        assert ClaudeAgentOptions(can_use_tool=callback).can_use_tool is callback


class TestInAPty:
    def test_the_terminal_answer_is_claude_codes_answer(self, tmp_path: Path) -> None:
        """The SDK's callback, given Claude Code's AskUserQuestion, asks through the installed
        terminal provider in a real pseudo-terminal; the allow carries the label picked."""
        child = """
import asyncio, json
from claude_agent_sdk import ToolPermissionContext
from dsh_user_questions.adapters.claude_agent_sdk import can_use_tool
from test_adapter_claude_agent_sdk import claude_question

QUESTION = claude_question("Which package manager?", "Tooling", "pnpm", "npm")


async def main():
    async with ctx:
        result = await can_use_tool(ctx)(
            "AskUserQuestion", {"questions": [QUESTION]}, ToolPermissionContext(tool_use_id="t")
        )
    answered(json.dumps([result.behavior, (result.updated_input or {}).get("answers")]))


asyncio.run(main())
"""
        out = ask_in_terminal(child, tmp_path, PICK_NPM)
        assert json.loads(out) == ["allow", {"Which package manager?": "npm"}]
