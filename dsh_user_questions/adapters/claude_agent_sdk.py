"""The Claude Agent SDK's ``can_use_tool`` callback: Claude Code's questions and plan approvals.

One line: ``ClaudeAgentOptions(can_use_tool=can_use_tool(ctx))``. Claude Code's own tools
reach the host through this callback:

- ``AskUserQuestion`` is read as Claude writes it (questions without ids, ``multiSelect``,
  ``header``, options with ``description`` and ``preview``, a label ending " (Recommended)"),
  asked through ``ctx.user_questions``, and allowed with Claude Code's answer shape:
  ``updated_input={**input, "answers": {<question text>: <label, labels joined by ", ", or
  the human's own words>}}``; a question the human skipped has no entry. An option Claude
  labels "Skip" or "Other" is Claude's own choice: the human sees it as "Skip (Claude's
  option)", apart from the UI's own skip, and the answer names it "Skip", as Claude offered
  it. A header longer than the tool's limit (40 characters) is shortened, not refused.
- ``ExitPlanMode`` (its input has the ``plan``) is our plan review
  (`dsh_user_questions.plan_review`): approve allows the call; keep planning denies it with
  the human's feedback as the message; talk instead (``ASK_CANCELLED``) denies it saying the
  user wants to talk first. A plan that does not start with a level-1 heading gets one.
  Without a plan (Claude Code sends ``{}`` while its plan file is not written yet; an empty
  plan alike) there is nothing to review, so the human is asked plainly whether Claude may
  leave plan mode, the question saying no plan was written (``Approve`` / ``Keep planning``,
  no plan-review intent: that is for a plan to show); the answers mean what they mean for a
  plan. Never denied unasked.
- Every other tool goes to ``then`` (your own callback). Without ``then`` it is **denied**:
  that is what the SDK does without a callback, where Claude Code denies a call that would
  need the user's permission, rather than allowing it.

A failed ask is a `PermissionResultDeny` whose message is the tool's ``Error: ...`` text
(`tool.ToolResult.from_error`) in Claude's terms: the tool Claude called (``AskUserQuestion``,
``ExitPlanMode``) instead of ours, and a question by its number in Claude's list (``question
1``) instead of the id this adapter gave it (Claude's questions have none).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, cast

import attrs

from .. import plan_review
from .._payloads import (
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    WireFormatError,
)
from .._review import Review
from .._tool_schema import MAX_HEADER_LENGTH
from ..errors import HarnessError, UserQuestionError
from ..rules import reserved_label
from ..tool import NAME, ToolResult
from ._common import missing_framework

try:
    from claude_agent_sdk import (
        PermissionResultAllow,
        PermissionResultDeny,
        ToolPermissionContext,
    )
except ImportError as err:  # pragma: no cover - exercised by tests/adapters/test_adapters_import.py
    raise missing_framework("claude_agent_sdk", "claude-agent-sdk", err) from err

__all__ = ["can_use_tool"]

CanUseTool = Callable[
    [str, dict[str, Any], ToolPermissionContext],
    Awaitable[PermissionResultAllow | PermissionResultDeny],
]
"""The SDK's ``can_use_tool`` callback type."""

_CLAUDES_OWN = " (Claude's option)"


def can_use_tool(
    ctx: Any, *, then: CanUseTool | None = None, audience: Iterable[str] = ()
) -> CanUseTool:
    """The ``can_use_tool`` callback answering Claude Code's questions through ``ctx``.

    ``audience`` (person ids and ``group:NAME``) is who may answer its questions and plan
    reviews (`tool.run`'s), set by the harness.
    """
    audience = tuple(audience)

    async def callback(
        tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        if tool_name == "AskUserQuestion":
            return await _ask(ctx, tool_input, audience)
        if tool_name == "ExitPlanMode":
            return await _review(ctx, tool_input, audience)
        if then is not None:
            return await then(tool_name, tool_input, context)
        return PermissionResultDeny(message=f"permission to use {tool_name} was not granted")

    return callback


async def _ask(
    ctx: Any, tool_input: dict[str, Any], audience: tuple[str, ...]
) -> PermissionResultAllow | PermissionResultDeny:
    try:
        request, offered = _read(tool_input)
        answer = await _service(ctx).ask(attrs.evolve(request, audience=audience))
    except HarnessError as err:
        return _deny(err, "AskUserQuestion")
    answers: dict[str, str] = {}
    for question, (text, labels) in zip(request.questions, offered, strict=True):
        for item in answer.answers:
            if item.id == question.id:
                words = [labels[label] for label in item.selected]
                words += [] if item.custom is None else [item.custom]
                if words:
                    answers[text] = ", ".join(words)
    return PermissionResultAllow(updated_input={**tool_input, "answers": answers})


_OUR_ID = re.compile(r'(?:question )?"q([1-9][0-9]*)"')
"""An id `_question` gave a question of Claude's, as the core's messages quote it."""


def _deny(err: HarnessError, claude_tool: str) -> PermissionResultDeny:
    """The tool's ``Error: ...`` text for ``err``, in Claude's terms: ``claude_tool`` where
    the text names our tool, and ``question N`` (its place in Claude's list) for our id."""
    text = ToolResult.from_error(err).content.replace(NAME, claude_tool)
    return PermissionResultDeny(message=_OUR_ID.sub(r"question \1", text))


def _read(tool_input: Mapping[str, Any]) -> tuple[AskUserQuestionRequest, list[Any]]:
    """The request Claude's input asks, and per question its text and Claude's labels."""
    raw = tool_input.get("questions")
    questions = (
        [_question(index, q) for index, q in enumerate(raw)] if isinstance(raw, list) else raw
    )
    try:
        request = AskUserQuestionRequest.from_dict({"questions": questions})
    except WireFormatError as err:
        raise UserQuestionError.invalid_args(*err.problems) from err
    offered, items = [], []
    for question, claudes in zip(
        request.questions, cast("list[Mapping[str, Any]]", raw), strict=True
    ):
        options = tuple(
            attrs.evolve(option, label=option.label + _CLAUDES_OWN)
            if reserved_label(option.label)
            else option
            for option in question.options
        )
        labels = [option["label"] for option in claudes.get("options") or ()]
        offered.append(
            (question.question, dict(zip((o.label for o in options), labels, strict=True)))
        )
        items.append(attrs.evolve(question, options=options))
    return attrs.evolve(request, questions=items), offered


def _question(index: int, question: object) -> object:
    if not isinstance(question, Mapping):
        return question
    header = question.get("header")
    if isinstance(header, str) and len(header) > MAX_HEADER_LENGTH:
        header = header[: MAX_HEADER_LENGTH - 1].rstrip() + "\u2026"
    read = {
        "id": f"q{index + 1}",
        "question": question.get("question"),
        "header": header,
        "options": [_option(option) for option in question.get("options") or ()],
        "multiSelect": question.get("multiSelect"),
    }
    return {key: value for key, value in read.items() if value is not None}


def _option(option: object) -> object:
    if not isinstance(option, Mapping):
        return option
    return {
        key: value
        for key, value in (
            ("label", option.get("label")),
            ("description", option.get("description")),
            ("preview", option.get("preview", option.get("markdown"))),
        )
        if value is not None
    }


_NO_PLAN = Review(
    question_id="leave-plan-mode",
    header="Plan mode",
    kind=plan_review.PLAN_REVIEW_INTENT,  # unused: the question below declares no intent
    approve=AskUserQuestionOption(
        plan_review.APPROVE, "Leave plan mode; Claude starts working without a written plan."
    ),
    reject=AskUserQuestionOption(
        plan_review.KEEP_PLANNING, "Stay in plan mode; your words go back to Claude."
    ),
    outcome=plan_review.PlanReviewOutcome,
)
_NO_PLAN_QUESTION = AskUserQuestionItem(
    id=_NO_PLAN.question_id,
    header=_NO_PLAN.header,
    question="Claude wants to leave plan mode but wrote no plan. Let it leave plan mode?",
    detail="Claude Code asked to leave plan mode without a plan (its plan file is not written"
    " yet), so there is no plan to review. Approve lets Claude leave plan mode and start"
    " working; Keep planning keeps it in plan mode (say what it should plan, if you like).",
    options=(_NO_PLAN.approve, _NO_PLAN.reject),
)


async def _review(
    ctx: Any, tool_input: dict[str, Any], audience: tuple[str, ...]
) -> PermissionResultAllow | PermissionResultDeny:
    plan = tool_input.get("plan")
    reviewed = isinstance(plan, str) and bool(plan.strip())
    try:
        if not isinstance(plan, str) or not reviewed:  # nothing to review: ask plainly
            outcome = await _NO_PLAN.ask(
                _service(ctx), _NO_PLAN_QUESTION, agent=None, signal=None, audience=audience
            )
        else:
            try:
                plan_review.plan_review_question(plan)
            except ValueError:  # not a plan under a level-1 heading: give it one
                plan = f"# Plan\n\n{plan}"
            outcome = await plan_review.review_plan(_service(ctx), plan, audience=audience)
    except HarnessError as err:
        return _deny(err, "ExitPlanMode")
    if outcome.approved:
        return PermissionResultAllow(updated_input=dict(tool_input))
    about = "about the plan " if reviewed else ""
    if outcome.talk_instead:
        return PermissionResultDeny(
            message=f"The user wants to talk {about}first: stop and wait for their"
            " next message (still in plan mode)."
        )
    rejected = (
        "The user did not approve the plan: keep planning."
        if reviewed
        else "The user did not let you leave plan mode without a plan: keep planning, and"
        " write the plan first."
    )
    return PermissionResultDeny(message=outcome.feedback or rejected)


def _service(ctx: Any) -> Any:
    service = ctx.get("user_questions")
    if service is None:
        raise UserQuestionError.no_provider()
    return service
