"""`elicitation_callback`: an MCP server's form-mode elicitation, asked through our provider.

Each field of the requested schema becomes one question, with the field's name as its id:

- a string ``enum`` (or ``oneOf`` of ``const``/``title``): a single-select question whose
  options are the titles (the values where there are none); the answer is the value;
- an ``array`` whose ``items`` are such an enum: a multi-select question;
- a ``boolean``: a single select of ``Yes`` and ``No``;
- a ``string``, ``number`` or ``integer``: a free-text question.

What a question cannot carry is written into its detail as text and checked on the way back:
a number's range and kind, a string's length and format, how many items to pick. An answer that
breaks them (``abc`` for a number, a custom text for an enum) is asked again, with the problem
said, until it is right or the human closes the form. Defaults are shown as text; a skipped
field is left out of the content so the server applies its own default.

Outcomes: every field answered as required is ``accept``; nothing answered, or a required
field skipped, is ``decline``; the human closing the question (``ASK_CANCELLED``), an abort
or a timeout is ``cancel``. A field that maps to no question (a nested object, an array of free
values, a type union...) refuses the whole elicitation with an ``INVALID_PARAMS`` error naming
it, rather than dropping it; so does URL mode, which has nothing to ask.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import mcp_types as types

from ..errors import UserQuestionError, UserQuestionErrorCode
from ..payloads import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
)

__all__ = ["UnsupportedElicitation", "elicitation_callback", "questions_for_elicitation"]

YES = "Yes"
NO = "No"


class UnsupportedElicitation(ValueError):
    """The requested schema has a field no question can ask; the message names it and why."""


Value = str | int | float | bool | list[str]


@attrs.frozen
class _Field:
    """One field of the form: the question asking it and how its answer reads back."""

    name: str
    required: bool
    question: AskUserQuestionItem
    read: Callable[[AskUserQuestionAnswerItem], Value]
    """The field's value from an answer item; raises `ValueError` saying what is wrong."""


def questions_for_elicitation(
    message: str, requested_schema: Mapping[str, Any]
) -> tuple[AskUserQuestionItem, ...]:
    """The questions asking ``requested_schema``'s fields (the message is the first's detail).

    Raises `UnsupportedElicitation` naming the first field that maps to no question.
    """
    return tuple(field.question for field in _fields(message, requested_schema))


def _fields(message: str, schema: Mapping[str, Any]) -> list[_Field]:
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise UnsupportedElicitation("the requested schema must be an object schema")
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        raise UnsupportedElicitation("the requested schema has no properties to ask")
    required = schema.get("required") or []
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        raise UnsupportedElicitation("the requested schema's required must be a list of names")
    unknown = [name for name in required if name not in properties]
    if unknown:
        raise UnsupportedElicitation(f"required field {unknown[0]!r} is not among the properties")
    fields = []
    for index, (name, prop) in enumerate(properties.items()):
        intro = message if index == 0 else None
        fields.append(_field(str(name), prop, name in required, intro))
    return fields


def _field(name: str, prop: object, required: bool, intro: str | None) -> _Field:
    if not isinstance(prop, Mapping):
        raise UnsupportedElicitation(f"field {name!r} is not a schema object")
    kind = prop.get("type")
    notes: list[str] = []
    title = _optional_text(prop.get("title"))
    description = _optional_text(prop.get("description"))
    question_text = description or title or name
    header = title if description else None
    if "default" in prop:
        notes.append(f"Default: {json.dumps(prop['default'], ensure_ascii=False)}.")
    if not required:
        notes.append("Optional.")

    def item(options: tuple[AskUserQuestionOption, ...] = (), multi: bool = False) -> Any:
        detail = "\n\n".join(part for part in (intro, " ".join(notes)) if part)
        return AskUserQuestionItem(
            id=name,
            question=question_text,
            header=header,
            detail=detail or None,
            options=options,
            multi_select=multi,
        )

    if kind == "string" and ("enum" in prop or "oneOf" in prop or "anyOf" in prop):
        choices = _choices(name, prop)
        question = item(tuple(AskUserQuestionOption(label) for label in choices))
        return _Field(name, required, question, _single(choices))
    if kind == "array":
        items = prop.get("items")
        if not isinstance(items, Mapping):
            raise UnsupportedElicitation(f"field {name!r} is an array without an items schema")
        choices = _choices(name, {"type": "string", **items})
        low, high = _whole(prop.get("minItems")), _whole(prop.get("maxItems"))
        if low is not None or high is not None:
            notes.append(_count_rule(low, high) + ".")
        question = item(tuple(AskUserQuestionOption(label) for label in choices), multi=True)
        return _Field(name, required, question, _multi(choices, low, high))
    if kind == "boolean":
        question = item((AskUserQuestionOption(YES), AskUserQuestionOption(NO)))
        return _Field(name, required, question, _boolean)
    if kind == "string":
        low, high = _whole(prop.get("minLength")), _whole(prop.get("maxLength"))
        text_format = prop.get("format")
        if text_format is not None and not isinstance(text_format, str):
            raise UnsupportedElicitation(f"field {name!r} has a format that is not a string")
        if low is not None or high is not None:
            notes.append(_length_rule(low, high) + ".")
        if text_format:
            notes.append(f"Format: {text_format}.")
        return _Field(name, required, item(), _string(low, high, text_format))
    if kind in ("number", "integer"):
        least, most = _number(name, prop.get("minimum")), _number(name, prop.get("maximum"))
        notes.append(_number_rule(kind, least, most) + ".")
        return _Field(name, required, item(), _numeric(kind == "integer", least, most))
    raise UnsupportedElicitation(
        f"field {name!r} of type {json.dumps(kind)} cannot be asked as a question"
        " (supported: string, number, integer, boolean, enum, array of enum)"
    )


def _optional_text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _choices(name: str, prop: Mapping[str, Any]) -> dict[str, str]:
    """Option label -> enum value, from ``enum`` (+ ``enumNames``) or ``oneOf``/``anyOf``."""
    pairs: list[tuple[str, str]] = []
    if prop.get("type") != "string":
        raise UnsupportedElicitation(f"field {name!r}: only string enums can be asked")
    if "enum" in prop:
        values = prop["enum"]
        names = prop.get("enumNames")
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise UnsupportedElicitation(f"field {name!r}: enum must be a list of strings")
        if not isinstance(names, list) or len(names) != len(values):
            names = values
        pairs = [(str(title), value) for title, value in zip(names, values, strict=True)]
    else:
        entries = prop.get("oneOf", prop.get("anyOf"))
        if not isinstance(entries, list):
            raise UnsupportedElicitation(
                f"field {name!r}: an array's items (or a choice) need enum, oneOf or anyOf"
            )
        for entry in entries:
            if not isinstance(entry, Mapping) or not isinstance(entry.get("const"), str):
                raise UnsupportedElicitation(
                    f"field {name!r}: every oneOf/anyOf entry needs a string const"
                )
            title = entry.get("title")
            shown = title if isinstance(title, str) and title.strip() else entry["const"]
            pairs.append((shown, entry["const"]))
    if not pairs:
        raise UnsupportedElicitation(f"field {name!r} offers no choices")
    labels: dict[str, str] = {}
    for title, value in pairs:
        label = title.strip()
        # Labels must differ (ignoring case); a clash keeps both, told apart by their values.
        if any(label.casefold() == seen.casefold() for seen in labels):
            label = f"{label} ({value})"
        labels[label] = value
    return labels


def _whole(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _number(name: str, value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UnsupportedElicitation(f"field {name!r}: minimum and maximum must be numbers")
    return value


def _count_rule(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f"Choose {low} to {high}"
    return f"Choose at least {low}" if low is not None else f"Choose at most {high}"


def _length_rule(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f"{low} to {high} characters"
    return f"At least {low} characters" if low is not None else f"At most {high} characters"


def _number_rule(kind: str, low: float | None, high: float | None) -> str:
    what = "A whole number" if kind == "integer" else "A number"
    if low is not None and high is not None:
        return f"{what} from {low:g} to {high:g}"
    if low is not None:
        return f"{what}, at least {low:g}"
    return f"{what}, at most {high:g}" if high is not None else what


# Reading answers back -------------------------------------------------------------------------


def _single(choices: dict[str, str]) -> Callable[[AskUserQuestionAnswerItem], Value]:
    def read(item: AskUserQuestionAnswerItem) -> Value:
        if item.custom is not None or len(item.selected) != 1:
            raise ValueError("choose one of the options; this field takes no other answer")
        return choices[item.selected[0]]

    return read


def _multi(
    choices: dict[str, str], low: int | None, high: int | None
) -> Callable[[AskUserQuestionAnswerItem], Value]:
    def read(item: AskUserQuestionAnswerItem) -> Value:
        if item.custom is not None:
            raise ValueError("choose among the options; this field takes no other answer")
        count = len(item.selected)
        if (low is not None and count < low) or (high is not None and count > high):
            raise ValueError(f"{_count_rule(low, high).lower()} options (you chose {count})")
        return [choices[label] for label in item.selected]

    return read


def _boolean(item: AskUserQuestionAnswerItem) -> Value:
    if item.custom is not None or len(item.selected) != 1:
        raise ValueError(f"choose {YES} or {NO}")
    return item.selected[0] == YES


def _string(
    low: int | None, high: int | None, text_format: str | None
) -> Callable[[AskUserQuestionAnswerItem], Value]:
    def read(item: AskUserQuestionAnswerItem) -> Value:
        text = item.custom or ""
        if (low is not None and len(text) < low) or (high is not None and len(text) > high):
            raise ValueError(f"{_length_rule(low, high).lower()} (got {len(text)})")
        if text_format == "email" and ("@" not in text or text.startswith("@")):
            raise ValueError("an email address, like name@example.com")
        return text

    return read


def _numeric(
    integer: bool, low: float | None, high: float | None
) -> Callable[[AskUserQuestionAnswerItem], Value]:
    kind = "integer" if integer else "number"

    def read(item: AskUserQuestionAnswerItem) -> Value:
        text = (item.custom or "").strip()
        value: int | float
        try:
            value = int(text) if integer else float(text)
        except ValueError:
            raise ValueError(f"{_number_rule(kind, low, high).lower()}, not {text!r}") from None
        if (
            not math.isfinite(value)
            or (low is not None and value < low)
            or (high is not None and value > high)
        ):
            raise ValueError(f"{_number_rule(kind, low, high).lower()}, not {text!r}")
        if not integer and value == int(value) and "." not in text and "e" not in text.lower():
            value = int(value)
        return value

    return read


def _answered(item: AskUserQuestionAnswerItem | None) -> bool:
    return item is not None and (bool(item.selected) or item.custom is not None)


async def _fill(
    service: Any, fields: list[_Field], agent: object | None, signal: Any, timeout: float | None
) -> types.ElicitResult:
    """Ask until every answered field reads back; the result to send to the server."""
    content: dict[str, Any] = {}
    pending = fields
    problems: dict[str, str] = {}
    while pending:
        questions = tuple(
            _with_problem(field.question, problems.get(field.name)) for field in pending
        )
        answer: AskUserQuestionAnswer = await service.ask(
            AskUserQuestionRequest(questions=questions, agent=agent, signal=signal, timeout=timeout)
        )
        by_id = {item.id: item for item in answer.answers}
        retry: list[_Field] = []
        problems = {}
        for field in pending:
            item = by_id.get(field.name)
            if not _answered(item):
                continue
            assert item is not None
            try:
                content[field.name] = field.read(item)
            except ValueError as err:
                problems[field.name] = str(err)
                retry.append(field)
        pending = retry
    if not content or any(field.required and field.name not in content for field in fields):
        return types.ElicitResult(action="decline")
    return types.ElicitResult(action="accept", content=content)


def _with_problem(question: AskUserQuestionItem, problem: str | None) -> AskUserQuestionItem:
    if problem is None:
        return question
    said = f"Your last answer did not fit: {problem}."
    detail = f"{said}\n\n{question.detail}" if question.detail else said
    return attrs.evolve(question, detail=detail)


def elicitation_callback(
    ctx: Any,
    *,
    agent: object | None = None,
    signal: Any = None,
    timeout: float | None = None,
) -> Callable[[Any, types.ElicitRequestParams], Any]:
    """The SDK client's ``elicitation_callback``, asking through ``ctx.user_questions``.

    ``Client(server, elicitation_callback=elicitation_callback(ctx))`` (or the same argument
    of ``ClientSession``). ``agent``, ``signal`` and ``timeout`` (seconds per question round)
    go into every request, as for ``ask()``; an abort or a timeout answers ``cancel``.
    """

    async def callback(
        context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        if not isinstance(params, types.ElicitRequestFormParams):
            return types.ErrorData(
                code=types.INVALID_PARAMS,
                message="URL-mode elicitation is not supported here; use form mode",
            )
        try:
            fields = _fields(params.message, params.requested_schema)
        except UnsupportedElicitation as err:
            return types.ErrorData(code=types.INVALID_PARAMS, message=f"cannot ask: {err}")
        service = ctx.get("user_questions")
        try:
            if service is None:
                raise UserQuestionError.no_provider()
            return await _fill(service, fields, agent, signal, timeout)
        except UserQuestionError as err:
            if err.code in (
                UserQuestionErrorCode.ASK_CANCELLED,
                UserQuestionErrorCode.ASK_ABORTED,
                UserQuestionErrorCode.ASK_TIMED_OUT,
            ):
                return types.ElicitResult(action="cancel")
            return types.ErrorData(code=types.INTERNAL_ERROR, message=err.message)

    return callback
