"""The payloads of a question and its answer: immutable attrs classes and their JSON wire form.

Types are checked when a payload is built (a ``TypeError`` names the field); the rules no type
can carry (an empty request, an intent that names no option) are checked by
`UserQuestionService.ask`. Foreign data comes in through ``from_dict``, which reports every bad
field with its path in one `WireFormatError`, worded as the tool words its arguments' problems:
``questions[0].id: must be a string, not a number``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from . import _json

if TYPE_CHECKING:
    from .harness import AbortSignal

__all__ = [
    "KEY_PATTERN",
    "AskUserQuestionAnswer",
    "AskUserQuestionAnswerItem",
    "AskUserQuestionIntent",
    "AskUserQuestionItem",
    "AskUserQuestionOption",
    "AskUserQuestionRequest",
    "WireFormatError",
]

T = TypeVar("T")


class WireFormatError(ValueError):
    """Data in wire form that does not describe a payload.

    ``problems`` lists every fault found, each as ``"<path>: <what is wrong>"``.
    """

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems: tuple[str, ...] = tuple(problems)
        super().__init__("; ".join(self.problems))


def _timeout(instance: object, attribute: object, value: float | None) -> None:
    if value is not None:
        from ._abort import check_seconds

        check_seconds(value, "timeout")


def _as_tuple(value: Iterable[T], field: str) -> tuple[T, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(
            f"{field} must be an iterable of items (not a string), got {type(value).__name__}"
        )
    return tuple(value)


def _options(value: Iterable[AskUserQuestionOption]) -> tuple[AskUserQuestionOption, ...]:
    return _as_tuple(value, "options")


def _questions(value: Iterable[AskUserQuestionItem]) -> tuple[AskUserQuestionItem, ...]:
    return _as_tuple(value, "questions")


def _selected(value: Iterable[str]) -> tuple[str, ...]:
    return _as_tuple(value, "selected")


def _answers(value: Iterable[AskUserQuestionAnswerItem]) -> tuple[AskUserQuestionAnswerItem, ...]:
    return _as_tuple(value, "answers")


def _each(kind: type) -> Callable[[Any, attrs.Attribute[Any], tuple[Any, ...]], None]:
    def check(_instance: Any, attribute: attrs.Attribute[Any], value: tuple[Any, ...]) -> None:
        for index, item in enumerate(value):
            if not isinstance(item, kind):
                raise TypeError(
                    f"{attribute.name}[{index}] must be {kind.__name__}, got {type(item).__name__}"
                )

    return check


_str = attrs.validators.instance_of(str)
_opt_str = attrs.validators.optional(_str)
_bool = attrs.validators.instance_of(bool)

KEY_PATTERN = re.compile(r"[A-Za-z0-9._:/@+=#~-]{1,256}")
"""What a request's ``key`` may be: 1 to 256 letters, digits and ``._:/@+=#~-``."""

_KEY_RULE = "must be 1 to 256 characters, each a letter, digit or one of ._:/@+=#~-"


def _key(_instance: object, _attribute: object, value: str | None) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise TypeError(f"key must be a string or None, got {type(value).__name__}")
    if KEY_PATTERN.fullmatch(value) is None:
        raise ValueError(f"key {_KEY_RULE}, got {value[:80]!r}")


_RECOMMENDED_SUFFIX = re.compile(r"\s+\(recommended\)\s*\Z", re.IGNORECASE)


def _without_recommended_suffix(label: str) -> str | None:
    """``label`` without a final ``" (Recommended)"`` (any case), or None when it has none.

    Claude Code, and many models, mark the suggested option so; `AskUserQuestionOption.from_dict`
    and the tool read such a label as the option without the suffix, ``recommended``.
    """
    found = _RECOMMENDED_SUFFIX.search(label)
    return None if found is None or found.start() == 0 else label[: found.start()]


@attrs.frozen
class AskUserQuestionOption:
    """One option a question offers: the label the answer echoes, and what picking it means.

    ``recommended`` marks the option the asker suggests: a UI marks it and starts with it
    focused, never selected; nothing (a timeout, a skip, an empty answer) ever picks it. A
    single-select question recommends at most one option (`rules.check_request`).

    ``preview`` is markdown shown when the option is focused or expanded (a code snippet, a
    mock-up of a layout: what choosing it would look like); like every model-written text, a
    provider shows it inert (`rules.inert_text` with ``multiline=True``).

    In the wire form, a label ending in ``" (Recommended)"`` of an option that does not say
    ``recommended`` itself is read as the label without the suffix, ``recommended=True``
    (`_without_recommended_suffix`); ``to_dict`` writes ``"recommended": false`` for such a label
    that is not recommended, so every option reads back as it was.
    """

    label: str = attrs.field(validator=_str)
    description: str | None = attrs.field(default=None, validator=_opt_str)
    preview: str | None = attrs.field(default=None, kw_only=True, validator=_opt_str)
    recommended: bool = attrs.field(default=False, kw_only=True, validator=_bool)

    def to_dict(self) -> dict[str, Any]:
        """The wire form; ``description`` and ``preview`` are omitted when absent,
        ``recommended`` when false."""
        data: dict[str, Any] = {"label": self.label}
        if self.description is not None:
            data["description"] = self.description
        if self.preview is not None:
            data["preview"] = self.preview
        if self.recommended:
            data["recommended"] = True
        elif _without_recommended_suffix(self.label) is not None:
            data["recommended"] = False  # read back as written, not as a recommendation
        return data

    @classmethod
    def from_dict(cls, data: object) -> AskUserQuestionOption:
        """Build from the wire form; raises `WireFormatError` naming each bad field."""
        return _load(_read_option, data)


@attrs.frozen
class AskUserQuestionIntent:
    """A presentation intent: the question *is* a known kind of decision.

    Known kinds: ``plan-review`` (``detail`` is a plan, as markdown) and ``diff-review``
    (``detail`` is a unified diff); a UI that does not know a kind shows the generic form.

    ``approve`` names the option label that approves, so no UI relies on option order.
    """

    kind: str = attrs.field(validator=_str)
    approve: str = attrs.field(validator=_str)

    def to_dict(self) -> dict[str, Any]:
        """The wire form."""
        return {"kind": self.kind, "approve": self.approve}

    @classmethod
    def from_dict(cls, data: object) -> AskUserQuestionIntent:
        """Build from the wire form; raises `WireFormatError` naming each bad field."""
        return _load(_read_intent, data)


@attrs.frozen(kw_only=True)
class AskUserQuestionItem:
    """One question: its stable id, the text, and how it may be answered.

    ``detail`` is supporting text shown with the question (for a plan review, the plan as
    markdown); it is never an option. A question without options collects free text only.
    ``secret`` marks a free-text question whose answer is never shown or stored in clear outside
    the asking code (typed masked, kept out of records, logs and observers); it has no options.
    ``allow_other`` false means the human may only pick among the options: no UI offers its
    "Other" free-text answer, and an answer with ``custom`` text is refused; such a question
    needs options.
    """

    id: str = attrs.field(validator=_str)
    question: str = attrs.field(validator=_str)
    detail: str | None = attrs.field(default=None, validator=_opt_str)
    header: str | None = attrs.field(default=None, validator=_opt_str)
    options: tuple[AskUserQuestionOption, ...] = attrs.field(
        default=(), converter=_options, validator=_each(AskUserQuestionOption)
    )
    multi_select: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    intent: AskUserQuestionIntent | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(attrs.validators.instance_of(AskUserQuestionIntent)),
    )
    secret: bool = attrs.field(default=False, validator=_bool)
    allow_other: bool = attrs.field(default=True, validator=_bool)

    def to_dict(self) -> dict[str, Any]:
        """The wire form, snake_case (``multi_select``, as the model writes it); keys whose value
        is ``None`` are omitted, ``secret`` when false and ``allow_other`` when true."""
        data: dict[str, Any] = {"id": self.id, "question": self.question}
        if self.detail is not None:
            data["detail"] = self.detail
        if self.header is not None:
            data["header"] = self.header
        data["options"] = [option.to_dict() for option in self.options]
        data["multi_select"] = self.multi_select
        if self.intent is not None:
            data["intent"] = self.intent.to_dict()
        if self.secret:
            data["secret"] = True
        if not self.allow_other:
            data["allow_other"] = False
        return data

    @classmethod
    def from_dict(cls, data: object) -> AskUserQuestionItem:
        """Build from the wire form; raises `WireFormatError` naming each bad field."""
        return _load(_read_item, data)


@attrs.frozen(kw_only=True)
class AskUserQuestionRequest:
    """What a caller asks: one or more questions, and who asks, and a signal to withdraw it.

    ``timeout`` (seconds, ``None`` for none) withdraws the question when the user has not
    answered in time: ``ask()`` then raises ``ASK_TIMED_OUT``. ``key`` is a caller-chosen
    stable name for this question (e.g. a thread id and a tool-call id, `KEY_PATTERN`): a
    durable provider keeps one record per key, so asking again with it (after a crash, from
    another process) attaches to the same question; live providers may ignore it. The wire form
    carries ``questions``, ``key`` and ``timeout``; ``agent`` and ``signal`` never travel.
    """

    questions: tuple[AskUserQuestionItem, ...] = attrs.field(
        converter=_questions, validator=_each(AskUserQuestionItem)
    )
    agent: object | None = None
    signal: AbortSignal | None = None
    timeout: float | None = attrs.field(default=None, validator=_timeout)
    key: str | None = attrs.field(default=None, validator=_key)

    def to_dict(self) -> dict[str, Any]:
        """The wire form: the questions, then ``key`` and ``timeout`` when set."""
        data: dict[str, Any] = {"questions": [question.to_dict() for question in self.questions]}
        if self.key is not None:
            data["key"] = self.key
        if self.timeout is not None:
            data["timeout"] = self.timeout
        return data

    @classmethod
    def from_dict(
        cls,
        data: object,
        *,
        agent: object | None = None,
        signal: AbortSignal | None = None,
        timeout: float | None = None,
        key: str | None = None,
    ) -> AskUserQuestionRequest:
        """Build from the wire form; ``agent`` and ``signal`` come from the caller, and a
        ``timeout`` or ``key`` given here wins over the one in ``data``."""
        questions, wire_key, wire_timeout = _load(_read_request, data)
        return cls(
            questions=questions,
            agent=agent,
            signal=signal,
            timeout=wire_timeout if timeout is None else timeout,
            key=wire_key if key is None else key,
        )


@attrs.frozen(kw_only=True)
class AskUserQuestionAnswerItem:
    """The answer to one question, by its id: the picked labels and any free text.

    Single-select: ``custom`` overrides the pick and ``selected`` is then empty. Multi-select:
    ``custom`` may supplement ``selected``. A skipped question may be kept as
    ``{id, selected: []}``.
    """

    id: str = attrs.field(validator=_str)
    selected: tuple[str, ...] = attrs.field(default=(), converter=_selected, validator=_each(str))
    custom: str | None = attrs.field(default=None, validator=_opt_str)

    def to_dict(self) -> dict[str, Any]:
        """The wire form; ``selected`` is always written, ``custom`` only when present."""
        data: dict[str, Any] = {"id": self.id, "selected": list(self.selected)}
        if self.custom is not None:
            data["custom"] = self.custom
        return data

    @classmethod
    def from_dict(cls, data: object) -> AskUserQuestionAnswerItem:
        """Build from the wire form; raises `WireFormatError` naming each bad field."""
        return _load(_read_answer_item, data)


@attrs.frozen
class AskUserQuestionAnswer:
    """The human's answer to a request: one item per answered question, in any order."""

    answers: tuple[AskUserQuestionAnswerItem, ...] = attrs.field(
        converter=_answers, validator=_each(AskUserQuestionAnswerItem)
    )

    def to_dict(self) -> dict[str, Any]:
        """The wire form."""
        return {"answers": [item.to_dict() for item in self.answers]}

    @classmethod
    def from_dict(cls, data: object) -> AskUserQuestionAnswer:
        """Build from the wire form; raises `WireFormatError` naming each bad field."""
        return _load(_read_answer, data)


# The JSON edge. Each reader walks one shape, appends every fault it finds to ``problems`` with
# its path (worded by `_json`, as the tool's argument check words its own), and returns what it
# could build (or None); `_load` raises once with all of them.

_Problems = list[str]
_Keys = tuple[_json.Key, ...]


def _load(reader: Callable[[object, _Keys, _Problems], T | None], data: object) -> T:
    problems: _Problems = []
    value = reader(data, (), problems)
    if problems or value is None:
        raise WireFormatError(problems or ["could not be read"])
    return value


def _object(
    data: object,
    keys: _Keys,
    problems: _Problems,
    required: tuple[str, ...],
    optional: tuple[str, ...],
) -> Mapping[str, object] | None:
    if not isinstance(data, Mapping):
        problems.append(_json.at(keys, _json.must_be("object", data)))
        return None
    known = required + optional
    for key in data:
        if key not in known:
            problems.append(_json.at((*keys, key), _json.unknown_property(key, known)))
    for key in required:
        if key not in data:
            problems.append(_json.at((*keys, key), _json.REQUIRED))
    return data


def _string(
    data: Mapping[str, object],
    key: str,
    keys: _Keys,
    problems: _Problems,
    *,
    required: bool = False,
) -> str | None:
    value = data.get(key)
    if value is None and not (required and key in data):
        return None
    if not isinstance(value, str):
        problems.append(_json.at((*keys, key), _json.must_be("string", value)))
        return None
    return value


def _array(
    data: Mapping[str, object],
    key: str,
    keys: _Keys,
    problems: _Problems,
    *,
    required: bool = False,
) -> list[object]:
    value = data.get(key)
    if value is None and not (required and key in data):
        return []
    if not isinstance(value, (list, tuple)):
        problems.append(_json.at((*keys, key), _json.must_be("array", value)))
        return []
    return list(value)


def _read_option(data: object, keys: _Keys, problems: _Problems) -> AskUserQuestionOption | None:
    obj = _object(data, keys, problems, ("label",), ("description", "preview", "recommended"))
    if obj is None:
        return None
    before = len(problems)
    label = _string(obj, "label", keys, problems, required=True)
    description = _string(obj, "description", keys, problems)
    preview = _string(obj, "preview", keys, problems)
    recommended = _boolean(obj, "recommended", keys, problems)
    if len(problems) > before or label is None:
        return None
    if "recommended" not in obj:
        plain = _without_recommended_suffix(label)
        if plain is not None:
            label, recommended = plain, True
    return AskUserQuestionOption(label, description, preview=preview, recommended=recommended)


def _read_intent(data: object, keys: _Keys, problems: _Problems) -> AskUserQuestionIntent | None:
    obj = _object(data, keys, problems, ("kind", "approve"), ())
    if obj is None:
        return None
    before = len(problems)
    kind = _string(obj, "kind", keys, problems, required=True)
    approve = _string(obj, "approve", keys, problems, required=True)
    if len(problems) > before or kind is None or approve is None:
        return None
    return AskUserQuestionIntent(kind, approve)


def _boolean(
    data: Mapping[str, object],
    key: str,
    keys: _Keys,
    problems: _Problems,
    *,
    default: bool = False,
) -> bool:
    value = data.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        problems.append(_json.at((*keys, key), _json.must_be("boolean", value)))
        return default
    return value


# ``multiSelect`` is the seed's spelling: read for compatibility, never written.
_ITEM_KEYS = (
    "detail",
    "header",
    "options",
    "multi_select",
    "multiSelect",
    "intent",
    "secret",
    "allow_other",
)


def _read_item(data: object, keys: _Keys, problems: _Problems) -> AskUserQuestionItem | None:
    obj = _object(data, keys, problems, ("id", "question"), _ITEM_KEYS)
    if obj is None:
        return None
    before = len(problems)
    id_ = _string(obj, "id", keys, problems, required=True)
    question = _string(obj, "question", keys, problems, required=True)
    detail = _string(obj, "detail", keys, problems)
    header = _string(obj, "header", keys, problems)
    options = [
        _read_option(option, (*keys, "options", index), problems)
        for index, option in enumerate(_array(obj, "options", keys, problems))
    ]
    spelling = (
        "multiSelect" if "multiSelect" in obj and "multi_select" not in obj else "multi_select"
    )
    if "multiSelect" in obj and "multi_select" in obj:
        problems.append(
            _json.at((*keys, "multiSelect"), "give multi_select only (multiSelect is its old name)")
        )
    multi = _boolean(obj, spelling, keys, problems)
    secret = _boolean(obj, "secret", keys, problems)
    allow_other = _boolean(obj, "allow_other", keys, problems, default=True)
    raw_intent = obj.get("intent")
    intent = None if raw_intent is None else _read_intent(raw_intent, (*keys, "intent"), problems)
    if len(problems) > before or id_ is None or question is None:
        return None
    return AskUserQuestionItem(
        id=id_,
        question=question,
        detail=detail,
        header=header,
        options=[option for option in options if option is not None],
        multi_select=multi,
        intent=intent,
        secret=secret,
        allow_other=allow_other,
    )


def _read_request(
    data: object, keys: _Keys, problems: _Problems
) -> tuple[tuple[AskUserQuestionItem, ...], str | None, float | None] | None:
    obj = _object(data, keys, problems, ("questions",), ("key", "timeout"))
    if obj is None:
        return None
    items = [
        _read_item(item, (*keys, "questions", index), problems)
        for index, item in enumerate(_array(obj, "questions", keys, problems, required=True))
    ]
    key = _string(obj, "key", keys, problems)
    if key is not None and KEY_PATTERN.fullmatch(key) is None:
        problems.append(_json.at((*keys, "key"), _KEY_RULE))
        key = None
    timeout = obj.get("timeout")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            problems.append(_json.at((*keys, "timeout"), _json.must_be("number", timeout)))
            timeout = None
        elif not 0 < timeout < float("inf"):
            problems.append(_json.at((*keys, "timeout"), "must be a positive number of seconds"))
            timeout = None
    return (
        tuple(item for item in items if item is not None),
        key,
        None if timeout is None else float(timeout),
    )


def _read_answer_item(
    data: object, keys: _Keys, problems: _Problems
) -> AskUserQuestionAnswerItem | None:
    obj = _object(data, keys, problems, ("id",), ("selected", "custom"))
    if obj is None:
        return None
    before = len(problems)
    id_ = _string(obj, "id", keys, problems, required=True)
    selected = _array(obj, "selected", keys, problems)
    for index, label in enumerate(selected):
        if not isinstance(label, str):
            problems.append(_json.at((*keys, "selected", index), _json.must_be("string", label)))
    custom = _string(obj, "custom", keys, problems)
    if len(problems) > before or id_ is None:
        return None
    return AskUserQuestionAnswerItem(id=id_, selected=selected, custom=custom)  # type: ignore[arg-type]


def _read_answer(data: object, keys: _Keys, problems: _Problems) -> AskUserQuestionAnswer | None:
    obj = _object(data, keys, problems, ("answers",), ())
    if obj is None:
        return None
    items = [
        _read_answer_item(item, (*keys, "answers", index), problems)
        for index, item in enumerate(_array(obj, "answers", keys, problems, required=True))
    ]
    return AskUserQuestionAnswer([item for item in items if item is not None])
