"""The model-facing tool ``ask_user_question``: its JSON Schema, its description and `run`.

The JSON Schema of the arguments is the single source of truth: `input_schema` gives the model
exactly the schema that `read_arguments` validates against. JSON Schema cannot say "ids are
unique" or "labels are unique within a question", nor rule out unpaired surrogates without
also ruling out emoji in some regex dialects, so those three rules are checked in the same
step and stated in the schema's descriptions.

Two validators read the one schema: fastjsonschema compiles it to Python for the common case,
a valid call (about 10 µs); only when that fails does jsonschema, the reference validator, list
every violation, so a model can correct all of them in one retry.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Final, Protocol

import attrs
import fastjsonschema

from .errors import HarnessError, UserQuestionError, UserQuestionErrorCode
from .payloads import (
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
)

if TYPE_CHECKING:
    import jsonschema

    from .harness import AbortSignal

__all__ = [
    "DESCRIPTION",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_HEADER_LENGTH",
    "MAX_ID_LENGTH",
    "MAX_LABEL_LENGTH",
    "MAX_OPTIONS",
    "MAX_QUESTIONS",
    "MAX_QUESTION_LENGTH",
    "MAX_REPORTED_VIOLATIONS",
    "NAME",
    "ToolResult",
    "anthropic_tool",
    "format_answer",
    "input_schema",
    "openai_tool",
    "read_arguments",
    "run",
]

NAME: Final = "ask_user_question"

MAX_QUESTIONS: Final = 6
MAX_OPTIONS: Final = 10
MAX_ID_LENGTH: Final = 64
MAX_HEADER_LENGTH: Final = 40
MAX_QUESTION_LENGTH: Final = 500
MAX_LABEL_LENGTH: Final = 80
MAX_DESCRIPTION_LENGTH: Final = 300
MAX_REPORTED_VIOLATIONS: Final = 20
"""An ``invalid arguments`` message lists at most this many violations, then says more exist."""

# C0 and C1 controls (ESC and CSI start terminal escape sequences; newline and tab are
# controls too), the line and paragraph separators, and the bidirectional embeddings, overrides
# and isolates of "Trojan Source". Written as \u escapes so the pattern reads the same in JSON,
# in Python's re and in ECMA-262.
_FORBIDDEN = r"\u0000-\u001F\u007F-\u009F\u2028\u2029\u202A-\u202E\u2066-\u2069"
# "$(?!\n)": in ECMA-262 "$" is the end of the text, but in Python's re it also matches before
# a final newline; the lookahead makes both dialects (and both validators) mean the end.
_END = r"$(?!\n)"
_TEXT_PATTERN: Final = f"^[^\\s{_FORBIDDEN}][^{_FORBIDDEN}]*{_END}"
_ID_PATTERN: Final = f"^[A-Za-z0-9][A-Za-z0-9_.-]*{_END}"
_FORBIDDEN_RE = re.compile(f"[{_FORBIDDEN}]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")

_TEXT_RULE = (
    " Plain text: it must not start with whitespace, and must not contain control characters"
    " (newlines and tabs included), terminal escape sequences, bidirectional overrides or"
    " unpaired surrogates."
)


def _text(what: str, max_length: int) -> dict[str, Any]:
    return {
        "type": "string",
        "description": f"{what} At most {max_length} characters.{_TEXT_RULE}",
        "minLength": 1,
        "maxLength": max_length,
        "pattern": _TEXT_PATTERN,
    }


# Keyword order matters for the report: a node's own rules come before its children's.
_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "description": f"The questions to ask the user in one {NAME} call.",
    "required": ["questions"],
    "additionalProperties": False,
    "properties": {
        "questions": {
            "type": "array",
            "description": (
                f"1 to {MAX_QUESTIONS} related questions, shown together. Each id must be"
                " unique within the call."
            ),
            "minItems": 1,
            "maxItems": MAX_QUESTIONS,
            "items": {
                "type": "object",
                "required": ["id", "question"],
                "additionalProperties": False,
                "properties": {
                    "id": {
                        "type": "string",
                        "description": (
                            "A short stable id for the question, echoed in the answer; unique"
                            " within the call. Letters, digits, '_', '-' and '.', starting with"
                            f" a letter or digit; at most {MAX_ID_LENGTH} characters."
                        ),
                        "minLength": 1,
                        "maxLength": MAX_ID_LENGTH,
                        "pattern": _ID_PATTERN,
                    },
                    "question": _text(
                        "The question itself, one or two sentences.", MAX_QUESTION_LENGTH
                    ),
                    "header": _text(
                        "Optional short tag shown above the question, e.g. 'Package manager'.",
                        MAX_HEADER_LENGTH,
                    ),
                    "options": {
                        "type": "array",
                        "description": (
                            f"Optional choices, at most {MAX_OPTIONS}; the recommended one first"
                            " with ' (Recommended)' at the end of its label. Labels must be"
                            " unique within the question, ignoring case and surrounding spaces."
                            " The user may always answer in their own words instead; omit"
                            " options to ask for free text only."
                        ),
                        "maxItems": MAX_OPTIONS,
                        "items": {
                            "type": "object",
                            "required": ["label"],
                            "additionalProperties": False,
                            "properties": {
                                "label": _text(
                                    "The choice as the user sees it, and as the answer names it.",
                                    MAX_LABEL_LENGTH,
                                ),
                                "description": _text(
                                    "Optional one-line consequence of choosing it.",
                                    MAX_DESCRIPTION_LENGTH,
                                ),
                            },
                        },
                    },
                    "multi_select": {
                        "type": "boolean",
                        "description": "true when several options may be chosen; default false.",
                    },
                },
            },
        }
    },
}

DESCRIPTION: Final = f"""\
Ask the user one or more structured questions and wait for the answers. The call waits until \
the user answers; waiting costs nothing.

Use it when you cannot do the task well without the user's decision: a choice between \
reasonable alternatives (a library, an approach, a name), a preference you cannot infer from \
the task or the code, or a requirement that is ambiguous. Do not ask what you can find out \
yourself (read the code, run a command), do not ask permission for routine steps, and do not \
ask again what the user already answered.

How to ask:
- Put related questions in one call (at most {MAX_QUESTIONS}). Give each a short stable "id" \
(letters, digits, "_", "-", "."), which the answer echoes, and a clear "question".
- When the answer is a choice, offer "options": usually 2 to 4 short, distinct labels (at most \
{MAX_OPTIONS}), each with an optional one-line "description" of its consequence. Put the option \
you recommend first and end its label with " (Recommended)".
- Set "multi_select": true when several options may be chosen together.
- "header" is an optional tag of a few words shown above the question.
- The user can always answer in their own words instead, or skip a question; omit "options" to \
ask for free text only.
- All text is shown as plain text on one line: no newlines, markup, control characters or \
escape sequences.

The result is JSON: {{"answers":[{{"id":"<question id>","selected":["<option label>"],\
"custom":"<the user's own words>"}}]}}. "selected" holds the chosen labels exactly as you wrote \
them; "custom" appears only when the user wrote an answer. A question missing from "answers", \
or with an empty "selected" and no "custom", was skipped: go on with your best judgement and \
say so. A result starting with "Error: invalid arguments:" lists every problem with its path; \
fix them all and call again. "Error: the user cancelled ask_user_question" means the user wants \
to talk instead: stop and wait for their next message. Other errors mean no one can answer \
now: go on without the answer, or ask in your reply."""


def input_schema() -> dict[str, Any]:
    """The JSON Schema of the tool's arguments (a fresh copy; changing it changes nothing)."""
    return copy.deepcopy(_SCHEMA)


def openai_tool() -> dict[str, Any]:
    """The tool in the shape of OpenAI-style function calling."""
    return {
        "type": "function",
        "function": {"name": NAME, "description": DESCRIPTION, "parameters": input_schema()},
    }


def anthropic_tool() -> dict[str, Any]:
    """The tool in the shape of Anthropic-style tool use."""
    return {"name": NAME, "description": DESCRIPTION, "input_schema": input_schema()}


# Validation ------------------------------------------------------------------------------------


@functools.cache
def _fast_validator() -> Callable[[Any], Any]:
    # Draft 7 for both validators (fastjsonschema's newest); the schema's keywords mean the same
    # in every draft since 4.
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", **_SCHEMA}
    return fastjsonschema.compile(schema, use_default=False, use_formats=False)


@functools.cache
def _full_validator() -> jsonschema.Draft7Validator:
    import jsonschema  # only invalid calls pay for the import

    return jsonschema.Draft7Validator(_SCHEMA)


def read_arguments(arguments: object) -> tuple[AskUserQuestionItem, ...]:
    """The questions of the tool's ``arguments`` (a JSON text, or an already parsed value).

    Raises `UserQuestionError` ``INVALID_ARGS`` with the message ``invalid arguments: `` and
    every violation as ``<path>: <problem>`` (the path omitted for the arguments as a whole),
    joined by ``"; "``. Paths are written ``questions[0].options[1].label``.
    """
    data, problems = _check(arguments)
    if problems:
        shown = problems[:MAX_REPORTED_VIOLATIONS]
        if len(problems) > MAX_REPORTED_VIOLATIONS:
            shown.append("(more violations not shown)")
        raise UserQuestionError(
            "invalid arguments: " + "; ".join(shown), UserQuestionErrorCode.INVALID_ARGS
        )
    return tuple(
        AskUserQuestionItem(
            id=question["id"],
            question=question["question"],
            header=question.get("header"),
            options=tuple(
                AskUserQuestionOption(option["label"], option.get("description"))
                for option in question.get("options", ())
            ),
            multi_select=question.get("multi_select", False),
        )
        for question in data["questions"]
    )


def _check(arguments: object) -> tuple[Any, list[str]]:
    """The parsed arguments and their violations (empty when valid)."""
    if isinstance(arguments, (str, bytes, bytearray)):
        try:
            data = json.loads(arguments)
        except RecursionError:
            return None, ["not valid JSON: nested too deeply"]
        except ValueError as err:  # JSONDecodeError, UnicodeDecodeError, too many digits
            return None, [f"not valid JSON: {_first_line(str(err))}"]
    else:
        data = arguments
    problems: list[str] = []
    try:
        _fast_validator()(data)
    except Exception as err:  # a JsonSchemaValueException, or a value no JSON parser makes
        problems = _explain(data, err)
    problems.extend(_unwritable_rules(data))
    return data, problems


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
        problems.append(_at(keys, f"breaks the schema's {rule or 'rules'}"))
    return problems


_ARTICLES = {"object": "an object", "array": "an array", "integer": "an integer", "null": "null"}


def _kind(json_type: str) -> str:
    return _ARTICLES.get(json_type, f"a {json_type}")


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return f"Python {type(value).__name__}"


def _describe(error: jsonschema.ValidationError) -> Iterator[str]:
    """The problems one jsonschema error stands for, as ``<path>: <problem>``."""
    keys = list(error.absolute_path)
    # jsonschema types these as "maybe unset"; an error from iter_errors always has them.
    keyword: Any = error.validator
    value: Any = error.validator_value
    instance: Any = error.instance
    schema: Any = error.schema
    if keyword == "type":
        yield _at(keys, f"must be {_kind(str(value))}, not {_kind(_json_type(instance))}")
    elif keyword == "required" and isinstance(instance, dict):
        for name in value:
            if name not in instance:
                yield _at([*keys, name], "is required")
    elif keyword == "additionalProperties" and isinstance(instance, dict):
        allowed = list(schema.get("properties", {}))
        for name in instance:
            if name not in allowed:
                yield _at([*keys, name], _unknown_property(name, allowed))
    elif keyword == "minItems":
        yield _at(keys, f"must have at least {value} item{'s' if value != 1 else ''}")
    elif keyword == "maxItems":
        yield _at(keys, f"must have at most {value} items (got {len(instance)})")
    elif keyword == "minLength":
        yield _at(keys, "must not be empty" if value == 1 else f"must be at least {value} long")
    elif keyword == "maxLength":
        yield _at(keys, f"must be at most {value} characters (got {len(instance)})")
    elif keyword == "pattern" and instance == "":
        return  # "must not be empty" says it
    elif keyword == "pattern" and value == _ID_PATTERN:
        yield _at(
            keys,
            "must start with a letter or digit and contain only letters, digits, '_', '-' and '.'",
        )
    elif keyword == "pattern" and isinstance(instance, str):
        yield from _text_problems(keys, instance)
    else:  # a keyword this module's schema does not use; never echo the value itself
        yield _at(keys, f"breaks the schema's {keyword} rule")


def _text_problems(keys: list[Any], text: str) -> Iterator[str]:
    if text[:1].isspace():
        yield _at(keys, "must not start with whitespace")
    found = _FORBIDDEN_RE.search(text)
    if found:
        yield _at(
            keys,
            "must not contain control characters, terminal escape sequences or bidirectional"
            f" overrides (found U+{ord(found.group()):04X} at index {found.start()})",
        )


def _unknown_property(name: object, allowed: list[str]) -> str:
    hint = ""
    if isinstance(name, str):
        folded = _fold_name(name)
        for candidate in allowed:
            if _fold_name(candidate) == folded:
                hint = f" (did you mean {candidate}?)"
                break
    return f"unknown property{hint}; allowed: {', '.join(allowed)}"


def _fold_name(name: str) -> str:
    return name.replace("_", "").replace("-", "").casefold()


def _unwritable_rules(data: object) -> Iterator[str]:
    """Violations of the rules JSON Schema cannot carry, wherever the shape allows checking."""
    if not isinstance(data, dict):
        return
    questions = data.get("questions")
    if not isinstance(questions, list):
        return
    ids: dict[str, int] = {}
    for index, question in enumerate(questions):
        if not isinstance(question, dict):
            continue
        id_ = question.get("id")
        if isinstance(id_, str):
            if id_ in ids:
                yield _at(["questions", index, "id"], f"duplicates questions[{ids[id_]}].id")
            else:
                ids[id_] = index
        for field in ("question", "header"):
            yield from _surrogates(["questions", index, field], question.get(field))
        options = question.get("options")
        if not isinstance(options, list):
            continue
        labels: dict[str, int] = {}
        for position, option in enumerate(options):
            if not isinstance(option, dict):
                continue
            path: list[Any] = ["questions", index, "options", position]
            label = option.get("label")
            if isinstance(label, str):
                folded = label.strip().casefold()
                if folded in labels:
                    yield _at(
                        [*path, "label"],
                        f"duplicates questions[{index}].options[{labels[folded]}].label"
                        " (labels must differ ignoring case and surrounding spaces)",
                    )
                else:
                    labels[folded] = position
            yield from _surrogates([*path, "label"], label)
            yield from _surrogates([*path, "description"], option.get("description"))


def _surrogates(keys: list[Any], text: object) -> Iterator[str]:
    if isinstance(text, str) and not text.isascii() and _SURROGATE_RE.search(text):
        yield _at(keys, "must not contain unpaired surrogates (it is not valid Unicode text)")


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def _at(keys: list[Any], problem: str) -> str:
    """``<path>: <problem>``, or the problem alone for the arguments as a whole."""
    if not keys:
        return problem
    parts: list[str] = []
    for key in keys:
        if isinstance(key, int) and not isinstance(key, bool):
            parts.append(f"[{key}]")
        elif isinstance(key, str) and _PLAIN_KEY.fullmatch(key):
            parts.append(f".{key}" if parts else key)
        else:
            # A name the model made up is quoted in ASCII and cut short, so no control
            # character or megabyte of text reaches a terminal through an error message.
            text = key if isinstance(key, str) else repr(key)
            if len(text) > 40:
                text = text[:40] + "..."
            parts.append(f"[{json.dumps(text)}]")
    return f"{''.join(parts)}: {problem}"


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else text


# Running the tool ------------------------------------------------------------------------------


@attrs.frozen
class ToolResult:
    """What the model gets back from a tool call.

    ``content`` is the text for the model; ``is_error`` says whether the call failed;
    ``error`` is ``{"name": <exception class name>, "code": <its code>}`` for a `HarnessError`.
    """

    content: str
    is_error: bool = False
    error: dict[str, str] | None = None

    @classmethod
    def from_error(cls, err: HarnessError) -> ToolResult:
        """The result of a failed call: ``Error: <message>`` and the error's name and code."""
        return cls(
            content=f"Error: {err.message}",
            is_error=True,
            error={"name": type(err).__name__, "code": str(getattr(err.code, "value", err.code))},
        )


def format_answer(answer: AskUserQuestionAnswer) -> str:
    """The compact JSON of an answer: ``{"answers":[{"id":..,"selected":[..],"custom":..}]}``.

    No spaces, no ASCII escaping; ``custom`` is left out when absent.
    """
    items = []
    for item in answer.answers:
        entry: dict[str, Any] = {"id": item.id, "selected": list(item.selected)}
        if item.custom is not None:
            entry["custom"] = item.custom
        items.append(entry)
    return json.dumps({"answers": items}, ensure_ascii=False, separators=(",", ":"))


class _Context(Protocol):
    def get(self, name: str) -> Any | None: ...


async def run(
    ctx: _Context,
    arguments: object,
    *,
    agent: object | None = None,
    signal: AbortSignal | None = None,
) -> ToolResult:
    """Run the tool: validate ``arguments``, ask through ``ctx.user_questions``, report.

    ``arguments`` is the JSON text the model sent or the value already parsed from it. Every
    value gives a `ToolResult`: the compact answer JSON, or ``Error: <message>`` for invalid
    arguments (``INVALID_ARGS``) and every `HarnessError` of the ask (a context without the
    user-questions service is ``NO_PROVIDER``). Cancelling the awaiting task propagates
    `asyncio.CancelledError`; any other exception from a provider propagates unchanged, as
    from `UserQuestionService.ask`, for the harness's own error handling.
    """
    try:
        questions = read_arguments(arguments)
        service = ctx.get("user_questions")
        if service is None:
            raise UserQuestionError.no_provider()
        answer = await service.ask(
            AskUserQuestionRequest(questions=questions, agent=agent, signal=signal)
        )
    except HarnessError as err:
        return ToolResult.from_error(err)
    return ToolResult(format_answer(answer))
