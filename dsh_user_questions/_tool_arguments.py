"""Checking a model's ``ask_user_question`` arguments: the schema, then the rules it can't carry.

Two validators read the one schema (`_tool_schema.internal_schema`): fastjsonschema compiles it
to Python for the common case, a valid call; only when that fails does jsonschema, the
reference validator, list every violation, so a model can correct all of them in one retry.
Then the rules no portable schema keyword expresses are checked in code, wherever the shape
allows. Every problem is worded by `_json`, like the payloads' readers.
"""

from __future__ import annotations

import functools
import json
import operator
import re
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import attrs
import fastjsonschema

from . import _fields, _json
from ._inputs import input_problems
from ._payloads import (
    INPUT_TYPES,
    AskUserQuestionInput,
    AskUserQuestionItem,
    WireFormatError,
    _without_recommended_suffix,
)
from ._tool_schema import ID_PATTERN, LEADING_SPACES, internal_schema
from .rules import label_key, label_skeleton, reserved_label

if TYPE_CHECKING:
    import jsonschema

__all__ = ["MAX_REPORTED_VIOLATIONS", "check"]

MAX_REPORTED_VIOLATIONS = 20

TEXT_PROBLEM = (
    "must not contain control characters, terminal escape sequences or bidirectional overrides"
)
# Why a text breaks the text pattern, for the report: a character no text may hold, or white
# space first.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069]")
_LEADING_SPACE = re.compile(f"[{LEADING_SPACES}]")
# What the text pattern cannot say: a lone surrogate is no text, and only Python sees one.
_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_UNICODE = "must not contain unpaired surrogates (it is not valid Unicode text)"
PREVIEW_PROBLEM = (
    "must not contain control characters other than tab and newline, terminal escape sequences"
    " or bidirectional overrides"
)
# A preview is markdown of several lines: tab, LF and CR pass, every other character no text may
# hold does not.
_PREVIEW_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069]")


@functools.cache
def _fast_validator() -> Callable[[Any], Any]:
    # Draft 7 for both validators (fastjsonschema's newest); the schema's keywords mean the same
    # in every draft since 4.
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", **internal_schema()}
    return fastjsonschema.compile(schema, use_default=False, use_formats=False)


@functools.cache
def _full_validator() -> jsonschema.Draft7Validator:
    import jsonschema  # only invalid calls pay for the import

    return jsonschema.Draft7Validator(internal_schema())


def check(arguments: object) -> tuple[Any, list[str]]:
    """The parsed arguments (a ``null`` optional property dropped) and every problem found."""
    if isinstance(arguments, (str, bytes, bytearray)):
        try:
            data = json.loads(arguments)
        except RecursionError:
            return None, ["not valid JSON: nested too deeply"]
        except ValueError as err:  # JSONDecodeError, UnicodeDecodeError, too many digits
            return None, [f"not valid JSON: {_json_problem(err)}"]
    else:
        data = arguments
    data = _read_recommended(_drop_nulls(data))
    problems: list[str] = []
    try:
        _fast_validator()(data)
    except Exception as err:  # a JsonSchemaValueException, or a value no JSON parser makes
        problems = _explain(data, err)
    problems.extend(_code_rules(data))
    return data, problems


def _drop_nulls(data: object) -> object:
    """``data`` with every optional property whose value is ``null`` left out.

    OpenAI's strict mode makes a model send every property, ``null`` for "none"; the plain
    schema means the same by leaving it out. Which properties are optional comes from the
    payloads' field declarations. The caller's value is never changed.
    """
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        return data
    questions = [_without_nulls(AskUserQuestionItem, question) for question in data["questions"]]
    if all(new is old for new, old in zip(questions, data["questions"], strict=True)):
        return data  # the common case: nothing copied
    return {**data, "questions": questions}


# The model-written fields of each payload class, worked out once from its declarations (on its
# first check; its nested classes exist by then): for `_without_nulls`, (wire key, optional?,
# nested class or None) of the fields a null may stand for or that hold payloads; for
# `_text_rules`, (wire key, text rule or None, nested class or None) of the fields with a text
# rule or that hold payloads.
_NullPlan = tuple[tuple[str, bool, type | None], ...]
_TextPlan = tuple[tuple[str, str | None, type | None], ...]
_NULL_PLANS: dict[type, _NullPlan] = {}
_TEXT_PLANS: dict[type, _TextPlan] = {}
_ABSENT: Any = object()


def _null_plan(cls: type) -> _NullPlan:
    found = _NULL_PLANS[cls] = tuple(
        (wire.name, not _fields.required(attribute), None if wire.nested is None else wire.nested())
        for attribute, wire in _fields.wire_fields(cls)
        if wire.for_model and (wire.nested is not None or not _fields.required(attribute))
    )
    return found


def _text_plan(cls: type) -> _TextPlan:
    found = _TEXT_PLANS[cls] = tuple(
        (wire.name, wire.text, None if wire.nested is None else wire.nested())
        for _attribute, wire in _fields.wire_fields(cls)
        if wire.for_model and (wire.text is not None or wire.nested is not None)
    )
    return found


def _without_nulls(cls: type, obj: object) -> object:
    """``obj`` (the wire form of a ``cls``) without its optional nulls; itself when it has none."""
    if not isinstance(obj, dict):
        return obj
    out: dict[Any, Any] | None = None
    plan = _NULL_PLANS.get(cls)
    for name, optional, nested in _null_plan(cls) if plan is None else plan:
        value = obj.get(name, _ABSENT)
        if value is _ABSENT:
            continue
        if value is None and optional:
            out = dict(obj) if out is None else out
            del out[name]
        elif nested is not None:
            if isinstance(value, list):
                new: object = [_without_nulls(nested, item) for item in value]
                changed = not all(map(operator.is_, new, value))  # type: ignore[call-overload]
            else:
                new = _without_nulls(nested, value)
                changed = new is not value
            if changed:
                out = dict(obj) if out is None else out
                out[name] = new
    return obj if out is None else out


def _read_recommended(data: object) -> object:
    """``data`` with each label ending " (Recommended)" read as `payloads.from_dict` reads it.

    The suffix is dropped and the option is ``recommended``, unless the option says
    ``recommended`` itself. The caller's value is never changed.
    """
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        return data
    changed = False
    questions = []
    for question in data["questions"]:
        options = question.get("options") if isinstance(question, dict) else None
        if isinstance(options, list):
            read = [_recommended_option(option) for option in options]
            if any(new is not old for new, old in zip(read, options, strict=True)):
                question = {**question, "options": read}
                changed = True
        questions.append(question)
    return {**data, "questions": questions} if changed else data


def _recommended_option(option: object) -> object:
    if not isinstance(option, dict) or "recommended" in option:
        return option
    label = option.get("label")
    plain = _without_recommended_suffix(label) if isinstance(label, str) else None
    return option if plain is None else {**option, "label": plain, "recommended": True}


def _explain(data: object, fast_error: Exception) -> list[str]:
    """Every schema violation of ``data``, with its path (the slow path of invalid calls)."""
    problems: list[str] = []
    seen: set[str] = set()
    try:
        for error in _full_validator().iter_errors(data):
            for problem in _describe(error):
                if problem not in seen:
                    seen.add(problem)
                    problems.append(problem)
            if len(problems) > MAX_REPORTED_VIOLATIONS:
                break
    except Exception:  # a value no JSON parser makes; keep what was found
        pass
    if not problems:
        # The two validators disagree, or the value is no JSON at all: say what the fast one saw.
        path = getattr(fast_error, "path", None)
        keys = list(path[1:]) if isinstance(path, list) else []
        rule = getattr(fast_error, "rule", None)
        problems.append(_json.at(keys, f"breaks the schema's {rule or 'rules'}"))
    return problems


def _describe(error: jsonschema.ValidationError) -> Iterator[str]:
    """The problems one jsonschema error stands for, as ``<path>: <problem>``."""
    keys = list(error.absolute_path)
    # jsonschema types these as "maybe unset"; an error from iter_errors always has them.
    keyword: Any = error.validator
    value: Any = error.validator_value
    instance: Any = error.instance
    schema: Any = error.schema
    if keyword == "type":
        yield _json.at(keys, _json.must_be(str(value), instance))
    elif keyword == "required" and isinstance(instance, dict):
        for name in value:
            if name not in instance:
                yield _json.at([*keys, name], _json.REQUIRED)
    elif keyword == "additionalProperties" and isinstance(instance, dict):
        allowed = list(schema.get("properties", {}))
        for name in instance:
            if name not in allowed:
                problem = _json.unknown_property(name, allowed)
                if name in _PLAN_KEYS and keys and isinstance(keys[-1], int):
                    problem += _PLAN_HINT
                yield _json.at([*keys, name], problem)
    elif keyword == "enum":
        yield _json.at(keys, "must be one of " + ", ".join(str(each) for each in value))
    elif keyword == "minItems":
        yield _json.at(keys, f"must have at least {value} item{'s' if value != 1 else ''}")
    elif keyword == "maxItems":
        yield _json.at(keys, f"must have at most {value} items (got {len(instance)})")
    elif keyword == "maxLength":
        yield _json.at(keys, f"must be at most {value} characters (got {len(instance)})")
    elif keyword == "pattern" and instance == "":
        yield _json.at(keys, "must not be empty")
    elif keyword == "pattern" and value == ID_PATTERN[:-1] + r"\Z":
        yield _json.at(
            keys,
            "must start with a letter or digit and contain only letters, digits, '_', '-' and '.'",
        )
    elif keyword == "pattern" and isinstance(instance, str):
        yield from _text_problems(keys, instance)
    else:  # a keyword this module's schema does not use; never echo the value itself
        yield _json.at(keys, f"breaks the schema's {keyword} rule")


def _text_problems(keys: list[Any], text: str) -> Iterator[str]:
    """Why a non-empty text breaks the text pattern: white space first, or an unsafe character."""
    if _LEADING_SPACE.match(text):
        yield _json.at(keys, "must not start with whitespace")
    found = _UNSAFE.search(text)
    if found:
        yield _json.at(keys, _found(found))


def _found(found: re.Match[str]) -> str:
    return f"{TEXT_PROBLEM} (found U+{ord(found.group()):04X} at index {found.start()})"


def _code_rules(data: object) -> Iterator[str]:
    """Violations of the rules no portable schema keyword carries, wherever the shape allows."""
    if not isinstance(data, dict):
        return
    questions = data.get("questions")
    if not isinstance(questions, list):
        return
    ids: dict[str, int] = {}
    for index, question in enumerate(questions):
        if not isinstance(question, dict):
            continue
        at: list[Any] = ["questions", index]
        id_ = question.get("id")
        if isinstance(id_, str):
            if id_ in ids:
                yield _json.at([*at, "id"], f"duplicates questions[{ids[id_]}].id")
            else:
                ids[id_] = index
        texts: list[str] = []
        _text_rules(AskUserQuestionItem, question, at, texts)
        yield from texts
        options = question.get("options", [])
        if isinstance(options, list):
            multi_select = question.get("multi_select")
            yield from _count_rules(at, len(options), multi_select)
            yield from _option_rules(at, options)
            if multi_select is not True:
                yield from _recommended_rule(at, options)
            if question.get("secret") is True:
                yield from _secret_rules(at, len(options), multi_select)
            if "input" in question:
                yield from _input_rules(at, question, len(options))
            elif question.get("allow_other") is False and not options:
                yield _json.at(
                    [*at, "allow_other"],
                    "may be false only with options (a question without options takes the"
                    " user's own words)",
                )


def _count_rules(at: list[Any], count: int, multi_select: object) -> Iterator[str]:
    if count == 1:
        yield _json.at(
            [*at, "options"], "must have no items (for a free-text answer) or at least 2 (got 1)"
        )
    if count < 2 and multi_select is True:
        yield _json.at(
            [*at, "multi_select"], f"may be true only with at least 2 options (got {count})"
        )


def _option_rules(at: list[Any], options: list[Any]) -> Iterator[str]:
    labels: dict[str, int] = {}
    looks: dict[str, int] = {}
    for position, option in enumerate(options):
        if not isinstance(option, dict):
            continue
        path = [*at, "options", position]
        label = option.get("label")
        if isinstance(label, str):
            folded = label_key(label)
            meaning = reserved_label(label)
            if meaning is not None:
                yield _json.at([*path, "label"], _RESERVED_HINTS[meaning])
            elif folded in labels:
                yield _json.at(
                    [*path, "label"],
                    f"duplicates {_json.path([*at, 'options', labels[folded], 'label'])}"
                    " (labels must differ ignoring case and surrounding spaces)",
                )
            else:
                labels[folded] = position
                look = label_skeleton(label)
                if look in looks:
                    first = options[looks[look]]["label"]
                    yield _json.at(
                        [*path, "label"],
                        f"looks the same as {_json.path([*at, 'options', looks[look], 'label'])}"
                        f" ({json.dumps(label)} and {json.dumps(first)}; labels must not look"
                        " alike: Unicode confusables, l, I and 1, 0 and O)",
                    )
                else:
                    looks[look] = position


def _text_rules(cls: type, obj: dict[Any, Any], at: list[Any], problems: list[str]) -> None:
    """The text rules of each model-written field of ``obj`` (the wire form of a ``cls``), from
    the declarations: no lone surrogate anywhere; a `_fields.TEXT_MARKDOWN` text's own
    characters; a `_fields.TEXT_PLAIN` text's whole rule, which its schema does not carry.
    Each problem is added to ``problems``."""
    plan = _TEXT_PLANS.get(cls)
    for name, rule, nested in _text_plan(cls) if plan is None else plan:
        value = obj.get(name)
        if value is None:
            continue
        if rule is not None:
            if isinstance(value, str):
                # The common case, an ASCII line, breaks no rule the schema leaves to code.
                if rule != _fields.TEXT_LINE or not value.isascii():
                    problems.extend(_text_rule(rule, [*at, name], value))
            elif isinstance(value, list):
                for index, text in enumerate(value):
                    if isinstance(text, str):
                        problems.extend(_text_rule(rule, [*at, name, index], text))
        elif nested is not None:
            if isinstance(value, dict):
                _text_rules(nested, value, [*at, name], problems)
            elif isinstance(value, list):
                for index, item in enumerate(value):
                    if isinstance(item, dict):
                        _text_rules(nested, item, [*at, name, index], problems)


def _text_rule(rule: str, keys: list[Any], text: str) -> Iterator[str]:
    if not text.isascii() and _SURROGATE.search(text):
        yield _json.at(keys, _NOT_UNICODE)
    if rule == _fields.TEXT_MARKDOWN:
        yield from _preview_problems(keys, text)
    elif rule == _fields.TEXT_PLAIN:
        if not text:
            yield _json.at(keys, "must not be empty")
        else:
            yield from _text_problems(keys, text)


def _input_rules(at: list[Any], question: dict[Any, Any], count: int) -> Iterator[str]:
    # The input rules of rules.check_request (`_inputs`), worded with paths: a typed answer
    # replaces options, and the input's fields fit its type. The harness gives a files
    # question its root and candidates (tool.run's workspace), never the model.
    if count:
        yield _json.at([*at, "input"], f"may be given only without options (got {count})")
    for flag in ("multi_select", "secret"):
        if question.get(flag) is True:
            yield _json.at([*at, flag], "may be true only without input")
    try:
        given = AskUserQuestionInput.from_dict(question["input"])
    except WireFormatError:
        return  # the schema's report says why
    if given.type not in INPUT_TYPES:
        return  # so does it for an unknown type
    if given.type == "files":
        given = attrs.evolve(given, root="/", candidates=())
    for keys, problem in input_problems(given):
        yield _json.at([*at, *keys], f"is {problem}")


def _preview_problems(keys: list[Any], preview: str) -> Iterator[str]:
    # The preview's own text rule (several lines of markdown), which its schema cannot carry.
    if not preview.strip():
        yield _json.at(keys, "must not be blank")
    found = _PREVIEW_UNSAFE.search(preview)
    if found:
        yield _json.at(
            keys,
            f"{PREVIEW_PROBLEM} (found U+{ord(found.group()):04X} at index {found.start()})",
        )


def _recommended_rule(at: list[Any], options: list[Any]) -> Iterator[str]:
    # The rule of rules.check_request ("at most one recommended per single-select"), worded
    # with the path of each extra flag so the model can fix it.
    first: int | None = None
    for position, option in enumerate(options):
        if isinstance(option, dict) and option.get("recommended") is True:
            if first is None:
                first = position
            else:
                yield _json.at(
                    [*at, "options", position, "recommended"],
                    f"must not be true: {_json.path([*at, 'options', first, 'recommended'])}"
                    " is already true, and a single-select question recommends at most one"
                    " option",
                )


def _secret_rules(at: list[Any], count: int, multi_select: object) -> Iterator[str]:
    # The secret rules of rules.check_request: a secret is typed, never chosen.
    if count:
        yield _json.at(
            [*at, "secret"],
            f"may be true only for a free-text question (no options; got {count})",
        )
    if multi_select is True:
        yield _json.at(
            [*at, "secret"], "may be true only for a single free-text answer, not with multi_select"
        )


_RESERVED_HINTS = {
    "Other": 'must not be "Other": the UI always adds an "Other" choice for the'
    " user's own words (and a way to skip); leave it out",
    "Skip": 'must not be "Skip": the UI always adds a way to skip (and an "Other" choice'
    " for the user's own words); leave it out",
}


# A model that puts a plan in a question: tell it, once, where a plan goes.
_PLAN_KEYS = frozenset({"detail", "plan", "intent"})
_PLAN_HINT = (
    " (a plan is not a question: the harness asks for its review itself when you leave plan"
    " mode, through dsh_user_questions.plan_review, so ask here only what you need to know)"
)


def _json_problem(err: ValueError) -> str:
    """What is wrong with a text that is not JSON, in JSON's words, never Python's."""
    if isinstance(err, (json.JSONDecodeError, UnicodeDecodeError)):
        return _first_line(str(err))
    # int() refuses a literal longer than Python's digit limit; to a model it is just too long.
    limit = sys.get_int_max_str_digits()
    return f"a number has more than {limit} digits" if limit else "a number cannot be read"


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else text
