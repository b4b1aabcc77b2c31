"""`ElicitationProvider`: ask the MCP client's user, for a harness that is an MCP server.

A request becomes one form-mode ``elicitation/create``. Each question is a flat field named by
its id: a single select is a string ``oneOf`` of ``const``/``title`` (the title adds the
option's description); a multi select is an array of such choices; a question without options
is a string. A question with options also gets a ``<id>.other`` text field for the human's own
words (the "Other" answer), unless its ``allow_other`` is false. No field is required, so
every question may be skipped.

MCP forms have no place for a detail, so the details go into the message. A plan review
degrades to a labelled choice (``Approve`` / ``Keep planning``) with the plan in the message
and feedback in the "Other" field; ``read_plan_review`` reads the answer as usual. A
recommended option is the field's ``default`` (what the schema allows; a client may preselect
it) and its title says ``(recommended)``. Every text the client shows (message, titles) is
`rules.inert_text`; the ``const`` values stay the labels, so the answer reads back.

A secret question is never put into a form: MCP form mode cannot mask a field, and the spec
keeps sensitive input out of it (URL mode is its way, which needs a page of the server's own).
Such a request raises ``NOT_INTERACTIVE`` saying so, before anything is sent.

A question with ``input`` is one typed field: a number as ``number`` (``integer`` when its
step and minimum are whole) with ``minimum`` and ``maximum``; a date and a date-time as strings
of ``format`` ``date`` and ``date-time``; a time as a string with a ``pattern`` (MCP names no
time format); a files question as a choice (an array of choices when it takes several) among
its candidates when there are at most `MAX_ENUM_FILES`. A longer file list, or an upload (MCP
forms have no file input yet), raises ``NOT_INTERACTIVE`` before anything is sent.

``accept`` gives the answer (a value of the wrong type, or a field nobody asked, is
``BAD_ANSWER``); ``decline`` and ``cancel`` raise ``ASK_CANCELLED``. An abort of the
request cancels the pending elicitation (the SDK tells the client with
``notifications/cancelled``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from .._payloads import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionRequest,
)
from ..errors import UserQuestionError
from ..rules import inert_text
from ..view import QuestionView, request_view

__all__ = ["MAX_ENUM_FILES", "OTHER_SUFFIX", "ElicitationProvider", "elicitation_schema"]

OTHER_SUFFIX: Final = ".other"
"""The "Other" text field of question ``q`` is named ``q.other``."""

MAX_ENUM_FILES: Final = 25
"""The most candidates a files question may offer to be asked as an MCP form's choice."""

TIME_PATTERN: Final = "^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$"
"""The pattern of a time field (``HH:MM`` or ``HH:MM:SS``): MCP names no time format."""


def _whole(number: float | None) -> bool:
    return number is None or float(number).is_integer()


def _input_field(question: QuestionView, title: str) -> dict[str, Any]:
    """The one typed field of a question with ``input`` (files: a choice among few)."""
    given = question.input
    assert given is not None
    if given.type == "number":
        whole = given.step is not None and _whole(given.step) and _whole(given.min)
        field: dict[str, Any] = {"type": "integer" if whole else "number", "title": title}
        if given.unit:
            field["title"] = f"{title} ({given.unit})"
        if given.min is not None:
            field["minimum"] = given.min
        if given.max is not None:
            field["maximum"] = given.max
        if given.step is not None and not whole:
            field["description"] = f"In steps of {given.step:g}."
        return field
    if given.type in ("date", "datetime"):
        form = "date" if given.type == "date" else "date-time"
        return {"type": "string", "title": title, "format": form}
    if given.type == "time":
        return {
            "type": "string",
            "title": title,
            "pattern": TIME_PATTERN,
            "description": "A time as HH:MM or HH:MM:SS (24-hour).",
        }
    choices = [
        {"const": path, "title": shown}
        for path, shown in zip(given.candidates, given.shown, strict=True)
    ]
    if given.max_count == 1:
        return {"type": "string", "title": title, "oneOf": choices}
    field = {"type": "array", "title": title, "items": {"anyOf": choices}, "minItems": 1}
    if given.max_count is not None:
        field["maxItems"] = given.max_count
    return field


def _not_in_a_form(request: AskUserQuestionRequest) -> str | None:
    """Why a typed question of ``request`` cannot be an MCP form field, or None."""
    for question in request.questions:
        given = question.input
        if given is None:
            continue
        quoted = json.dumps(question.id, ensure_ascii=False)
        if given.type == "upload":
            return f"MCP form elicitation has no file upload for question {quoted}"
        if given.type == "files" and len(given.candidates or ()) > MAX_ENUM_FILES:
            return (
                f"question {quoted} offers {len(given.candidates or ())} files, more than an"
                f" MCP form's choice lists well (at most {MAX_ENUM_FILES})"
            )
        if given.type == "files" and not given.candidates:
            return f"question {quoted} offers no file to choose"
    return None


def _one_line(shown: str) -> str:
    return " ".join(shown.split("\n"))


def _choice_titles(question: QuestionView) -> list[dict[str, str]]:
    choices = []
    for option in question.options:
        title = option.shown
        if option.description:
            title += f": {_one_line(option.description)}"
        if option.recommended:
            title += " (recommended)"
        choices.append({"const": option.label, "title": title})
    return choices


def _field_title(question: QuestionView) -> str:
    text = _one_line(question.question)
    return f"{question.header}: {text}" if question.header else text


def elicitation_schema(request: AskUserQuestionRequest) -> tuple[str, dict[str, Any]]:
    """The message and the ``requested_schema`` of the elicitation asking ``request``.

    Every text a client shows (the message, titles) is the core's view of the questions
    (`dsh_user_questions.view.request_view`): inert; an option's ``const`` is its wire label.
    """
    views = request_view(request)
    properties: dict[str, Any] = {}
    count = len(views)
    lines = [
        views[0].question
        if count == 1
        else f"Please answer these {count} questions (each may be skipped)."
    ]
    for question in views:
        if question.detail_text:
            label = f"{question.header or inert_text(question.id)}" if count > 1 else None
            detail = question.detail_text
            lines.append(f"{label}:\n{detail}" if label else detail)
        title = _field_title(question)
        if question.input is not None:
            properties[question.id] = _input_field(question, title)
        elif question.options:
            choices = _choice_titles(question)
            recommended = [option.label for option in question.options if option.recommended]
            field: dict[str, Any]
            if question.multi_select:
                field = {
                    "type": "array",
                    "title": title,
                    "description": "Choose any number of these.",
                    "items": {"anyOf": choices},
                }
                if recommended:
                    field["default"] = recommended
            else:
                field = {"type": "string", "title": title, "oneOf": choices}
                if recommended:
                    field["default"] = recommended[0]
            properties[question.id] = field
            if not question.other:
                continue
            properties[question.id + OTHER_SUFFIX] = {
                "type": "string",
                "title": "Feedback" if question.kind == "plan-review" else "Other: your own words",
                "description": (
                    "Your own answer instead of a choice."
                    if not question.multi_select
                    else "Your own words, added to the choices."
                ),
            }
        else:
            properties[question.id] = {"type": "string", "title": title}
    return "\n\n".join(lines), {"type": "object", "properties": properties}


def _expected(request: AskUserQuestionRequest) -> dict[str, type]:
    """The form's field names and the type each value must have (``list``, ``str``; a typed
    field's ``float`` for a number, ``tuple`` for files)."""
    expected: dict[str, type] = {}
    for question in request.questions:
        if question.input is not None:
            expected[question.id] = _INPUT_KINDS.get(question.input.type, str)
            continue
        expected[question.id] = list if question.options and question.multi_select else str
        if question.options and question.allow_other:
            expected[question.id + OTHER_SUFFIX] = str
    return expected


def _fits(value: object, kind: type) -> bool:
    if kind is list:
        return isinstance(value, list) and all(isinstance(entry, str) for entry in value)
    if kind is float:  # a number field
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is tuple:  # a files field: one path, or a list of them
        return isinstance(value, str) or _fits(value, list)
    return isinstance(value, str)


def _content_problems(expected: Mapping[str, type], content: Mapping[str, Any]) -> list[str]:
    """Every field that was not asked, then every value of the wrong type, in a sentence each."""
    problems = [
        f"the MCP client answered {json.dumps(name)}, which was not asked"
        for name in content
        if name not in expected
    ]
    for name, kind in expected.items():
        value = content.get(name)
        if value is not None and not _fits(value, kind):
            wanted = _WANTED.get(kind, "a string")
            problems.append(f"the MCP client's {json.dumps(name)} is not {wanted}")
    return problems


def _own_words(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _answer_item(
    question: AskUserQuestionItem, content: Mapping[str, Any]
) -> AskUserQuestionAnswerItem | None:
    """The answer to ``question`` in the (type-checked) ``content``; ``None`` when left empty."""
    value = content.get(question.id)
    if question.input is not None:  # a typed field: its value (a files field's one path, a list)
        if value is None:
            return None
        typed = (value,) if question.input.type == "files" and isinstance(value, str) else value
        return AskUserQuestionAnswerItem(id=question.id, value=typed)
    if not question.options:
        custom = _own_words(value)
        return None if custom is None else AskUserQuestionAnswerItem(id=question.id, custom=custom)
    other = content.get(question.id + OTHER_SUFFIX) if question.allow_other else None
    custom = _own_words(other)
    selected: tuple[str, ...] = (value,) if isinstance(value, str) else tuple(value or ())
    if not question.multi_select and custom is not None:
        selected = ()  # a single select's own words replace the choice
    if not selected and custom is None:
        return None
    return AskUserQuestionAnswerItem(id=question.id, selected=selected, custom=custom)


def _read(request: AskUserQuestionRequest, content: Mapping[str, Any]) -> AskUserQuestionAnswer:
    """The answer in the accepted form ``content``; the service then checks it against the request.

    A value of the wrong type, or a field that was not asked, is ``BAD_ANSWER`` naming it:
    a client's reply is never half read. ``null`` means the field was left empty.
    """
    problems = _content_problems(_expected(request), content)
    if problems:
        raise UserQuestionError.bad_answer("; ".join(problems))
    items = (_answer_item(question, content) for question in request.questions)
    return AskUserQuestionAnswer(answers=tuple(item for item in items if item is not None))


_INPUT_KINDS: Final[dict[str, type]] = {"number": float, "files": tuple}
_WANTED: Final[dict[type, str]] = {
    list: "a list of option labels",
    float: "a number",
    tuple: "a file path or a list of them",
}


class ElicitationProvider:
    """A provider asking the connected MCP client's user through form-mode elicitation.

    ``mcp_context`` is the context of the MCP request being handled: the ``Context`` an
    ``MCPServer`` tool receives, or the low-level server's request context (anything with
    ``session`` and ``request_id``). Register it for the duration of that request::

        dispose = ctx.user_questions.register_provider(ElicitationProvider(mcp_ctx))
        try:
            ...  # the harness runs the agent, whose questions go to the client's user
        finally:
            dispose()

    The client must support elicitation over a connection that lets the server send requests
    (a handshake-era session); on a stateless 2026-07-28 request the SDK's
    ``NoBackChannelError`` propagates.
    """

    def __init__(self, mcp_context: Any) -> None:
        self._context = mcp_context

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        """Elicit the questions of ``request``; ``decline`` or ``cancel`` is ``ASK_CANCELLED``.

        A request with a secret question, an upload or more files than `MAX_ENUM_FILES` raises
        ``NOT_INTERACTIVE`` and elicits nothing.
        """
        secret = [question.id for question in request.questions if question.secret]
        if secret:
            raise UserQuestionError.not_interactive(
                "MCP form elicitation cannot mask the secret answer of question"
                f" {json.dumps(secret[0], ensure_ascii=False)}"
                " (a client shows and may keep form fields in clear)"
            )
        refused = _not_in_a_form(request)
        if refused is not None:
            raise UserQuestionError.not_interactive(refused)
        message, schema = elicitation_schema(request)
        # An MCPServer Context wraps the low-level request context, whose id keeps its type.
        request_context = getattr(self._context, "request_context", self._context)
        result = await request_context.session.elicit_form(
            message, schema, related_request_id=request_context.request_id
        )
        if result.action != "accept":
            raise UserQuestionError.cancelled()
        return _read(request, result.content or {})
