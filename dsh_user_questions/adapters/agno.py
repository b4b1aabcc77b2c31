"""agno's paused runs answered through ``ctx.user_questions``.

An agno run pauses on requirements: a ``UserFeedbackTools`` question set (user feedback), a
tool's ``requires_user_input`` fields (user input), a tool's ``requires_confirmation``
(confirmation). `answer_requirements(ctx, run)` asks every active requirement of the paused
``run`` in one request and records each answer on its requirement, for
``agent.acontinue_run(run_response=run, requirements=run.requirements)``; `run_answering`
does the whole loop (run, answer, continue until the run is no longer paused).

What the human sees: a feedback question as agno's own (header, options, multi-select); each
input field as a free-text question (its description, or its name; a skip gives ``""``); a
confirmation as "Allow <tool>?" with the tool's arguments as detail, options Allow / Reject
(their own words reject, as the rejection's note; a skip rejects). A chosen label is answered
back under agno's own label; free text to a feedback question is one more selected entry.
A failed ask raises its `UserQuestionError`; external executions are left to the harness.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .._payloads import AskUserQuestionItem, AskUserQuestionOption, AskUserQuestionRequest
from .._sync import owner_of, run_sync
from ._common import missing_framework

try:
    from agno.run.requirement import RunRequirement
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise missing_framework("agno", "agno", err) from err

__all__ = ["answer_requirements", "answer_requirements_sync", "run_answering"]

ALLOW, REJECT = "Allow", "Reject"


def _questions(index: int, requirement: RunRequirement) -> list[AskUserQuestionItem]:
    if requirement.needs_user_feedback:
        return [
            AskUserQuestionItem(
                id=f"{index}.{n}",
                question=question.question,
                header=question.header,
                options=tuple(
                    AskUserQuestionOption(option.label, option.description)
                    for option in question.options or ()
                ),
                multi_select=question.multi_select,
            )
            for n, question in enumerate(requirement.user_feedback_schema or ())
        ]
    if requirement.needs_user_input:
        return [
            AskUserQuestionItem(id=f"{index}.{n}", question=field.description or field.name)
            for n, field in enumerate(requirement.user_input_schema or ())
        ]
    if requirement.needs_confirmation and requirement.tool_execution is not None:
        execution = requirement.tool_execution
        return [
            AskUserQuestionItem(
                id=f"{index}.0",
                question=f"Allow {execution.tool_name}?",
                detail="```json\n" + json.dumps(execution.tool_args or {}, indent=2) + "\n```",
                options=(
                    AskUserQuestionOption(ALLOW, "Run it with these arguments"),
                    AskUserQuestionOption(REJECT, "Do not run it"),
                ),
            )
        ]
    return []


def _record(index: int, requirement: RunRequirement, answers: dict[str, Any]) -> None:
    def picked(n: int) -> tuple[list[str], str | None]:
        item = answers.get(f"{index}.{n}")
        return ([], None) if item is None else (list(item.selected), item.custom)

    if requirement.needs_user_feedback:
        selections = {}
        for n, question in enumerate(requirement.user_feedback_schema or ()):
            labels, custom = picked(n)
            selections[question.question] = labels + ([custom] if custom else [])
        requirement.provide_user_feedback(selections)
    elif requirement.needs_user_input:
        values = {}
        for n, field in enumerate(requirement.user_input_schema or ()):
            labels, custom = picked(n)
            values[field.name] = custom or ""
        requirement.provide_user_input(values)
    elif requirement.needs_confirmation:
        labels, custom = picked(0)
        if labels == [ALLOW]:
            requirement.confirm()  # type: ignore[no-untyped-call]
        else:
            requirement.reject(custom)


async def answer_requirements(
    ctx: Any,
    run: Any,
    *,
    agent: object | None = None,
    signal: Any | None = None,
    audience: Iterable[str] = (),
) -> None:
    """Ask the human every active requirement of the paused ``run`` and record the answers.

    ``audience`` (person ids and ``group:NAME``) is who may answer, set by the harness.
    """
    pending = list(enumerate(run.active_requirements))
    questions = [question for index, each in pending for question in _questions(index, each)]
    if not questions:
        return
    request = AskUserQuestionRequest(
        questions=tuple(questions), agent=agent, signal=signal, audience=audience
    )
    answer = await ctx.user_questions.ask(request)
    answers = {item.id: item for item in answer.answers}
    for index, requirement in pending:
        _record(index, requirement, answers)


def answer_requirements_sync(
    ctx: Any,
    run: Any,
    *,
    agent: object | None = None,
    signal: Any | None = None,
    audience: Iterable[str] = (),
) -> None:
    """`answer_requirements` from synchronous code (``agent.run`` / ``agent.continue_run``)."""
    run_sync(
        owner_of(ctx),
        lambda: answer_requirements(ctx, run, agent=agent, signal=signal, audience=audience),
    )


async def run_answering(
    agno_agent: Any,
    ctx: Any,
    input: Any,
    *,
    signal: Any | None = None,
    audience: Iterable[str] = (),
    **options: Any,
) -> Any:
    """``agno_agent.arun(input, **options)``, answering each pause through ``ctx`` until done.

    ``audience`` (person ids and ``group:NAME``) is who may answer, set by the harness.
    """
    run = await agno_agent.arun(input, **options)
    while run.is_paused:
        await answer_requirements(ctx, run, signal=signal, audience=audience)
        run = await agno_agent.acontinue_run(run_response=run, requirements=run.requirements)
    return run
