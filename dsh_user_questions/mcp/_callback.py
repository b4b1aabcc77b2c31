"""`elicitation_callback`: an MCP server's form-mode elicitation, asked through our provider.

Each field of the requested schema becomes one question, with the field's name as its id:

- a string ``enum`` (or ``oneOf`` of ``const``/``title``): a single-select question whose
  options are the titles (the values where there are none); the answer is the value;
- an ``array`` whose ``items`` are such an enum: a multi-select question;
- a ``boolean``: a single select of ``Yes`` and ``No``;
- a ``string``, ``number`` or ``integer``: a free-text question.

The choice questions (enum, array of enum, boolean) have ``allow_other=False``: no provider
offers its "Other" free-text answer there, since no words of the human's own fit the field.

What a question cannot carry is written into its detail as text and checked on the way back
with real validators (`jsonschema` and its format checker, ``email-validator``, pydantic; see
``_checks``): a number's range and kind, a string's length and format (``email``, ``uri``,
``date``, ``date-time``), how many items to pick. An answer that breaks them (``abc`` for a
number, ``a@`` for an email) is never sent to the server: it is asked again, alone with the
other fields still missing, the question saying which value was refused and why; the answers
already given are kept.

Defaults (SEP-1034): a field's ``default`` is shown by its title (and its option is the
recommended one, where the pointer starts); skipping the field (Enter on an empty text, the
skip row) sends that default, as a form pre-filled with it would. A skipped field without a
default is left out of the content. A required field says ``Required.``; skipped without a
default, it is asked again alone, saying that skipping it again declines the whole form.

Outcomes: every required field filled (answered or by its default) is ``accept``; nothing
answered and no default, a required field skipped twice, or no valid answer within
`MAX_ELICITATION_ROUNDS` rounds, is ``decline``; the human closing the question
(``ASK_CANCELLED``), an abort or a timeout is ``cancel``. Each round first yields to the event
loop, so a provider that answers at once cannot starve it. A field that maps to no question (a
nested object, an array of free values, a type union...) refuses the whole elicitation with an
``INVALID_PARAMS`` error naming it, rather than dropping it; so does URL mode, which has nothing
to ask. An enum title that means the UI's own "Other" or "Skip" is shown as
``Listed option: Other``, so the human sees the form's option and the UI's own apart.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio.lowlevel
import attrs
import mcp_types as types

from .._payloads import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
)
from ..errors import UserQuestionError
from ..rules import label_key, label_skeleton, reserved_label
from ._checks import FORMAT_RULES, check_schema, number_rule, problem_with

__all__ = [
    "MAX_ELICITATION_ROUNDS",
    "UnsupportedElicitation",
    "elicitation_callback",
    "questions_for_elicitation",
]

MAX_ELICITATION_ROUNDS = 10
"""Rounds of questions one elicitation may take (the first, then re-asks) before declining."""
YES = "Yes"
NO = "No"
LISTED = "Listed option: "
"""Put before an enum title that reads as the UI's own "Other" or "Skip" choice."""


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
    schema: Mapping[str, Any]
    """The field's own schema, which the value must pass (`_checks.problem_with`)."""


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
    field = _mapped(name, prop, required, intro)
    problem = check_schema(prop)
    if problem is not None:
        raise UnsupportedElicitation(f"field {name!r} is not a valid JSON Schema: {problem}")
    return field


def _mapped(name: str, prop: Mapping[str, Any], required: bool, intro: str | None) -> _Field:
    kind = prop.get("type")
    notes: list[str] = []
    title = _optional_text(prop.get("title"))
    description = _optional_text(prop.get("description"))
    question_text = description or title or name
    header = title if description else None
    default = prop.get("default")

    def item(
        options: tuple[AskUserQuestionOption, ...] = (),
        multi: bool = False,
        shown_default: str | None = None,
    ) -> Any:
        # A question with options is a choice among the field's values: no free text.
        said = list(notes)
        if "default" in prop:
            shown = shown_default or json.dumps(default, ensure_ascii=False)
            said.insert(0, f"Default: {shown} (skip to keep it).")
        said.insert(0, "Required." if required else "Optional.")
        detail = "\n\n".join(part for part in (intro, " ".join(said)) if part)
        return AskUserQuestionItem(
            id=name,
            question=question_text,
            header=header,
            detail=detail or None,
            options=options,
            multi_select=multi,
            allow_other=not options,
        )

    if kind == "string" and ("enum" in prop or "oneOf" in prop or "anyOf" in prop):
        choices = _choices(name, prop)
        options, shown = _options(choices, [default])
        return _Field(name, required, item(options, shown_default=shown), _single(choices), prop)
    if kind == "array":
        items = prop.get("items")
        if not isinstance(items, Mapping):
            raise UnsupportedElicitation(f"field {name!r} is an array without an items schema")
        choices = _choices(name, {"type": "string", **items})
        low, high = _whole(prop.get("minItems")), _whole(prop.get("maxItems"))
        if low is not None or high is not None:
            notes.append(_count_rule(low, high) + ".")
        defaults = default if isinstance(default, list) else [default]
        options, shown = _options(choices, defaults, multi=True)
        question = item(options, multi=True, shown_default=shown)
        return _Field(name, required, question, _multi(choices), prop)
    if kind == "boolean":
        yes_no = {YES: True, NO: False}
        options = tuple(
            AskUserQuestionOption(label, recommended=default is value)
            for label, value in yes_no.items()
        )
        shown = next((label for label, value in yes_no.items() if default is value), None)
        return _Field(name, required, item(options, shown_default=shown), _boolean, prop)
    if kind == "string":
        low, high = _whole(prop.get("minLength")), _whole(prop.get("maxLength"))
        text_format = prop.get("format")
        if text_format is not None and not isinstance(text_format, str):
            raise UnsupportedElicitation(f"field {name!r} has a format that is not a string")
        if low is not None or high is not None:
            notes.append(_length_rule(low, high) + ".")
        if text_format:
            notes.append(f"Format: {FORMAT_RULES.get(text_format, text_format)}.")
        return _Field(name, required, item(), _string, prop)
    if kind in ("number", "integer"):
        _number(name, prop.get("minimum"))
        _number(name, prop.get("maximum"))
        notes.append(number_rule(prop) + ".")
        return _Field(name, required, item(), _numeric(kind == "integer"), prop)
    raise UnsupportedElicitation(
        f"field {name!r} of type {json.dumps(kind)} cannot be asked as a question"
        " (supported: string, number, integer, boolean, enum, array of enum)"
    )


def _options(
    choices: dict[str, str], defaults: Sequence[object], *, multi: bool = False
) -> tuple[tuple[AskUserQuestionOption, ...], str | None]:
    """The options of ``choices``, a default's recommended, and the defaults by their titles."""
    picked = [label for label, value in choices.items() if value in defaults]
    if not multi:
        picked = picked[:1]
    options = tuple(AskUserQuestionOption(label, recommended=label in picked) for label in choices)
    return options, ", ".join(picked) or None


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
        label = title.strip() or json.dumps(value)
        if reserved_label(label) is not None:  # the UI's own Other or Skip is another row
            label = LISTED + label
        # Labels must differ and not look alike (`rules.label_key`, `rules.label_skeleton`): a
        # clash keeps both, told apart by their values, then by their places.
        for candidate in (label, f"{label} ({value})", f"{label} ({value}) #{len(labels) + 1}"):
            if all(
                label_key(candidate) != label_key(seen)
                and label_skeleton(candidate) != label_skeleton(seen)
                for seen in labels
            ):
                label = candidate
                break
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


# Reading answers back -------------------------------------------------------------------------
# Each reader turns an answer item into the field's typed value, or says the answer is of the
# wrong kind; `_checks.problem_with` then checks the value against the field's whole schema.


def _single(choices: dict[str, str]) -> Callable[[AskUserQuestionAnswerItem], Value]:
    def read(item: AskUserQuestionAnswerItem) -> Value:
        if item.custom is not None or len(item.selected) != 1:
            raise ValueError("it must be one of the options, not words of your own")
        return choices[item.selected[0]]

    return read


def _multi(choices: dict[str, str]) -> Callable[[AskUserQuestionAnswerItem], Value]:
    def read(item: AskUserQuestionAnswerItem) -> Value:
        if item.custom is not None:
            raise ValueError("it must be among the options, not words of your own")
        return [choices[label] for label in item.selected]

    return read


def _boolean(item: AskUserQuestionAnswerItem) -> Value:
    if item.custom is not None or len(item.selected) != 1:
        raise ValueError(f"it must be {YES} or {NO}")
    return item.selected[0] == YES


def _string(item: AskUserQuestionAnswerItem) -> Value:
    return item.custom or ""


def _numeric(integer: bool) -> Callable[[AskUserQuestionAnswerItem], Value]:
    what = "it must be a whole number" if integer else "it must be a number"

    def read(item: AskUserQuestionAnswerItem) -> Value:
        text = (item.custom or "").strip()
        value: int | float
        try:
            value = int(text) if integer else float(text)
        except ValueError:
            raise ValueError(what) from None
        if not math.isfinite(value):
            raise ValueError(f"{what} of finite size")
        if not integer and value == int(value) and "." not in text and "e" not in text.lower():
            value = int(value)
        return value

    return read


def _answered(item: AskUserQuestionAnswerItem | None) -> bool:
    return item is not None and (bool(item.selected) or item.custom is not None)


def _default(field: _Field) -> tuple[bool, Any]:
    """Whether the field has a default its own schema accepts, and that default."""
    if "default" not in field.schema:
        return False, None
    value = field.schema["default"]
    return problem_with(field.schema, value) is None, value


_REQUIRED_AGAIN = "required: answer it, or skip it again to decline the whole form"


async def _fill(
    service: Any, fields: list[_Field], agent: object | None, signal: Any, per_round: float | None
) -> types.ElicitResult:
    """Ask until every answered field fits its schema; the result to send to the server.

    No value that fails a check is ever put into the content: its field is asked again, alone
    with the other refused ones, its question saying which answer was refused and why. A
    skipped field takes its default; a skipped required field without one is asked again
    (the answers given so far are kept), and skipped again it declines the form.
    """
    content: dict[str, Any] = {}
    pending = fields
    why: dict[str, str] = {}
    for round_number in range(MAX_ELICITATION_ROUNDS):
        await anyio.lowlevel.checkpoint()  # a provider answering at once still lets others run
        questions = tuple(_again(field.question, why.get(field.name)) for field in pending)
        answer: AskUserQuestionAnswer = await service.ask(
            AskUserQuestionRequest(
                questions=questions, agent=agent, signal=signal, timeout=per_round
            )
        )
        by_id = {item.id: item for item in answer.answers}
        retry: list[_Field] = []
        missing = False  # a required field skipped without a default
        answered = False
        for field in pending:
            item = by_id.get(field.name)
            if not _answered(item):
                has_default, default = _default(field)
                if has_default:
                    content[field.name] = default
                elif field.required:
                    if why.get(field.name) == _REQUIRED_AGAIN:
                        return types.ElicitResult(action="decline")  # skipped twice
                    missing = True
                    why[field.name] = _REQUIRED_AGAIN
                    retry.append(field)
                else:
                    why.pop(field.name, None)
                continue
            assert item is not None
            answered = True
            try:
                value = field.read(item)
            except ValueError as err:
                problem: str | None = str(err)
            else:
                problem = problem_with(field.schema, value)
            if problem is None:
                content[field.name] = value
                why.pop(field.name, None)
            else:
                why[field.name] = _refused(item, problem)
                retry.append(field)
        if round_number == 0 and not answered and (missing or not content):
            return types.ElicitResult(action="decline")  # the whole form skipped
        pending = retry
        if not pending:
            if not content:
                return types.ElicitResult(action="decline")
            return types.ElicitResult(action="accept", content=content)
    return types.ElicitResult(
        action="decline"
    )  # no valid form within MAX_ELICITATION_ROUNDS rounds


_SHOWN_CHARS = 60


def _refused(item: AskUserQuestionAnswerItem, problem: str) -> str:
    """Why an answer is asked again: the answer given, quoted and cut short, and its problem."""
    text = item.custom if item.custom is not None else ", ".join(item.selected)
    if len(text) > _SHOWN_CHARS:
        text = text[:_SHOWN_CHARS] + "..."
    return f"your answer {json.dumps(text, ensure_ascii=False)} was refused: {problem}"


def _again(question: AskUserQuestionItem, why: str | None) -> AskUserQuestionItem:
    """The question asked again, saying ``why`` (a refused answer, or a required field)."""
    if why is None:
        return question
    return attrs.evolve(question, question=f"{question.question} ({why})")


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
            if err.outcome.elicitation == "cancel":
                return types.ElicitResult(action="cancel")
            return types.ErrorData(code=types.INTERNAL_ERROR, message=err.message)

    return callback
