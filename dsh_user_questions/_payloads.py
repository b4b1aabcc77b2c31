"""The payloads of a question and its answer: immutable attrs classes and their JSON wire form.

Types are checked when a payload is built (a ``TypeError`` names the field); the rules no type
can carry (an empty request, an intent that names no option) are checked by
`UserQuestionService.ask`. Foreign data comes in through ``from_dict``, which reports every bad
field with its path in one `WireFormatError`, worded as the tool words its arguments' problems:
``questions[0].id: must be a string, not a number``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from . import _fields, _json
from ._fields import Wire
from ._tool_limits import (
    ID_PATTERN,
    MAX_DESCRIPTION_LENGTH,
    MAX_HEADER_LENGTH,
    MAX_ID_LENGTH,
    MAX_LABEL_LENGTH,
    MAX_OPTIONS,
    MAX_PATTERN_LENGTH,
    MAX_PREVIEW_LENGTH,
    MAX_QUESTION_LENGTH,
    MAX_UNIT_LENGTH,
    text_schema,
)

if TYPE_CHECKING:
    from .harness import AbortSignal

__all__ = [
    "INPUT_TYPES",
    "KEY_PATTERN",
    "MAX_FILE_CANDIDATES",
    "MAX_UPLOAD_BYTES",
    "MAX_UPLOAD_COUNT",
    "AnswerValue",
    "AskUserQuestionAnswer",
    "AskUserQuestionAnswerItem",
    "AskUserQuestionInput",
    "AskUserQuestionIntent",
    "AskUserQuestionItem",
    "AskUserQuestionOption",
    "AskUserQuestionRequest",
    "AskUserQuestionUpload",
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
    if ")" not in label:
        return None  # the common case, without a search
    found = _RECOMMENDED_SUFFIX.search(label)
    return None if found is None or found.start() == 0 else label[: found.start()]


def _check_number(_instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise TypeError(f"{attribute.name} must be a number or None, got {type(value).__name__}")


def _check_int(_instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise TypeError(f"{attribute.name} must be an int or None, got {type(value).__name__}")


def _check_count(_instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name} must be an int, got {type(value).__name__}")


def _strings(value: Iterable[str]) -> tuple[str, ...]:
    return _as_tuple(value, "accept")


def _audience(value: Iterable[str]) -> tuple[str, ...]:
    return _as_tuple(value, "audience")


def _candidates(value: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if value is None else _as_tuple(value, "candidates")


_TEXT = _fields.TEXT_LINE
_NEVER: Callable[[Any], bool] = lambda _value: False  # noqa: E731
_IF_FALSE: Callable[[Any], bool] = lambda value: value is False  # noqa: E731


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

    label: str = _fields.field(
        Wire(
            "label",
            schema=text_schema("Unique in the question, ignoring case.", MAX_LABEL_LENGTH),
            text=_TEXT,
        ),
        validator=_str,
    )
    description: str | None = _fields.field(
        Wire(
            "description", schema=text_schema("What it means.", MAX_DESCRIPTION_LENGTH), text=_TEXT
        ),
        default=None,
        validator=_opt_str,
    )
    # Markdown, several lines: no text pattern (the size budget); its characters are checked
    # in code (``_tool_arguments``).
    preview: str | None = _fields.field(
        Wire(
            "preview",
            schema={
                "type": "string",
                "description": "Markdown shown on focus.",
                "maxLength": MAX_PREVIEW_LENGTH,
            },
            text=_fields.TEXT_MARKDOWN,
        ),
        default=None,
        kw_only=True,
        validator=_opt_str,
    )
    recommended: bool = _fields.field(
        Wire(
            "recommended",
            schema={"type": "boolean", "description": "At most one per single-select."},
            omit=_IF_FALSE,
            kind="bool",
        ),
        default=False,
        kw_only=True,
        validator=_bool,
    )

    def to_dict(self) -> dict[str, Any]:
        """The wire form; ``description`` and ``preview`` are omitted when absent,
        ``recommended`` when false."""
        data = _write(self)
        if not self.recommended and _without_recommended_suffix(self.label) is not None:
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
    ``approvals`` (a plan or diff review only) is how many distinct people of the request's
    ``audience`` must approve before it settles approved (`team.tally`); the first answer that
    does not approve settles it at once.
    """

    kind: str = _fields.field(Wire("kind", writer="harness"), validator=_str)
    approve: str = _fields.field(Wire("approve", writer="harness"), validator=_str)
    # How many distinct people must approve (a plan or diff review); written when not 1.
    approvals: int = _fields.field(
        Wire("approvals", writer="harness", kind="int", omit=lambda value: value == 1),
        default=1,
        kw_only=True,
        validator=_check_count,
    )

    def to_dict(self) -> dict[str, Any]:
        """The wire form."""
        return _write(self)

    @classmethod
    def from_dict(cls, data: object) -> AskUserQuestionIntent:
        """Build from the wire form; raises `WireFormatError` naming each bad field."""
        return _load(_reader(AskUserQuestionIntent), data)


INPUT_TYPES: tuple[str, ...] = ("number", "date", "time", "datetime", "files", "upload")
"""The types of `AskUserQuestionInput`, in the order the docs list them."""

MAX_FILE_CANDIDATES = 10_000
"""The most files a ``files`` question offers: the asker lists at most this many candidates."""

MAX_UPLOAD_BYTES = 25 * 1024 * 1024
"""The ceiling of an upload question's ``max_bytes`` (25 MiB per file), and its default."""

MAX_UPLOAD_COUNT = 10
"""The most files one upload answer may carry when the question sets no ``max_count``."""

_NUMBER: Mapping[str, Any] = {"type": "number"}


@attrs.frozen(kw_only=True)
class AskUserQuestionInput:
    """A typed answer instead of options: what a question with ``input`` takes as its ``value``.

    ``type`` is one of `INPUT_TYPES`:

    - ``number``: a JSON number between ``min`` and ``max`` (inclusive, when given), on the
      grid of ``step`` counted from ``min`` (else from 0); ``unit`` is shown beside the field;
    - ``date`` (``YYYY-MM-DD``), ``time`` (``HH:MM[:SS]``), ``datetime`` (RFC 3339 with an
      offset, ``2026-12-07T09:30:00+01:00``): an ISO string;
    - ``files``: relative POSIX paths of files under ``root`` (an absolute path the harness
      sets, never the model: `tool.run`'s ``workspace``), matching the glob ``pattern`` (``**``
      spans folders, ``*`` and ``?`` stay within one), at most ``max_count``, picked among
      ``candidates``: the files the asking process listed when it asked (`files`), so a page
      on another machine offers that list;
    - ``upload``: files the human sends, each at most ``max_bytes`` (at most, and by default,
      `MAX_UPLOAD_BYTES`) and of a type ``accept`` names (MIME patterns such as ``image/*``, or
      ``.ext``; none: any type), at most ``max_count`` (by default `MAX_UPLOAD_COUNT`); the
      answer's value is a tuple of `AskUserQuestionUpload`.

    Which fields go with which type, and their ranges, are rules of `rules.check_request`.
    """

    type: str = _fields.field(
        Wire("type", schema={"type": "string", "enum": list(INPUT_TYPES)}), validator=_str
    )
    min: float | None = _fields.field(
        Wire("min", schema=_NUMBER, kind="number"), default=None, validator=_check_number
    )
    max: float | None = _fields.field(
        Wire("max", schema=_NUMBER, kind="number"), default=None, validator=_check_number
    )
    step: float | None = _fields.field(
        Wire("step", schema=_NUMBER, kind="number"), default=None, validator=_check_number
    )
    unit: str | None = _fields.field(
        Wire(
            "unit",
            schema={"type": "string", "maxLength": MAX_UNIT_LENGTH},
            text=_fields.TEXT_PLAIN,
        ),
        default=None,
        validator=_opt_str,
    )
    pattern: str | None = _fields.field(
        Wire(
            "pattern",
            schema={
                "type": "string",
                "description": "files: glob, ** any depth",
                "maxLength": MAX_PATTERN_LENGTH,
            },
            text=_fields.TEXT_PLAIN,
        ),
        default=None,
        validator=_opt_str,
    )
    max_count: int | None = _fields.field(
        Wire("max_count", schema={"type": "integer", "minimum": 1}, kind="int"),
        default=None,
        validator=_check_int,
    )
    accept: tuple[str, ...] = _fields.field(
        # Harness-written: the model asks an upload of any type (the shapes' size budget).
        Wire("accept", writer="harness", omit=lambda value: not value, kind="strs"),
        default=(),
        converter=_strings,
        validator=_each(str),
    )
    max_bytes: int | None = _fields.field(
        Wire("max_bytes", writer="harness", kind="int"),
        default=None,
        validator=_check_int,
    )
    root: str | None = _fields.field(
        Wire("root", writer="harness"), default=None, validator=_opt_str
    )
    candidates: tuple[str, ...] | None = _fields.field(
        Wire("candidates", writer="harness", kind="strs"),
        default=None,
        converter=_candidates,
        validator=attrs.validators.optional(_each(str)),
    )

    @classmethod
    def files(
        cls,
        root: str | os.PathLike[str],
        *,
        pattern: str | None = None,
        max_count: int | None = None,
    ) -> AskUserQuestionInput:
        """A ``files`` input over ``root`` with its candidates listed now (by the asker).

        ``root`` is made absolute; the candidates are the regular files under it matching
        ``pattern``, as relative POSIX paths in sorted order: ``.git`` and what git ignores
        (when ``root`` is in a git work tree and ``git`` runs) are skipped, and at most
        `MAX_FILE_CANDIDATES` are listed.
        """
        from ._workspace import list_files

        absolute = os.path.abspath(os.fspath(root))
        return cls(
            type="files",
            root=absolute,
            pattern=pattern,
            max_count=max_count,
            candidates=list_files(absolute, pattern),
        )

    def to_dict(self) -> dict[str, Any]:
        """The wire form: ``type``, then each field that is set (``accept`` when not empty)."""
        return _write(self)

    @classmethod
    def from_dict(cls, data: object) -> AskUserQuestionInput:
        """Build from the wire form; raises `WireFormatError` naming each bad field."""
        return _load(_reader(AskUserQuestionInput), data)


@attrs.frozen(kw_only=True)
class AskUserQuestionItem:
    """One question: its stable id, the text, and how it may be answered.

    ``detail`` is supporting text shown with the question (for a plan review, the plan as
    markdown); it is never an option. A question without options collects free text only.
    ``secret`` marks a free-text question whose answer is never shown or stored in clear outside
    the asking code (typed masked, kept out of records, logs and observers); it has no options.
    ``allow_other`` false means the human may only pick among the options: no UI offers its
    "Other" free-text answer, and an answer with ``custom`` text is refused; such a question
    needs options. ``input`` asks for a typed value instead (`AskUserQuestionInput`: a number,
    a date, files...): such a question has no options, is neither multi-select nor secret, and
    is answered with the answer item's ``value`` only.
    """

    id: str = _fields.field(
        Wire(
            "id",
            schema={
                "type": "string",
                "description": "Echoed; unique in the call.",
                "maxLength": MAX_ID_LENGTH,
                "pattern": ID_PATTERN,
            },
        ),
        validator=_str,
    )
    question: str = _fields.field(
        Wire("question", schema=text_schema("1-2 sentences.", MAX_QUESTION_LENGTH), text=_TEXT),
        validator=_str,
    )
    detail: str | None = _fields.field(
        Wire("detail", writer="harness"), default=None, validator=_opt_str
    )
    header: str | None = _fields.field(
        Wire("header", schema=text_schema("Short tag.", MAX_HEADER_LENGTH), text=_TEXT),
        default=None,
        validator=_opt_str,
    )
    options: tuple[AskUserQuestionOption, ...] = _fields.field(
        Wire(
            "options",
            schema={
                "type": "array",
                "description": 'None for free text, else 2 or more. Never "Other".',
                "maxItems": MAX_OPTIONS,
            },
            omit=_NEVER,
            kind="payloads",
            nested=lambda: AskUserQuestionOption,
        ),
        default=(),
        converter=_options,
        validator=_each(AskUserQuestionOption),
    )
    multi_select: bool = _fields.field(
        Wire(
            "multi_select",
            schema={"type": "boolean", "description": "Pick several."},
            omit=_NEVER,
            kind="bool",
            # The seed's spelling: read for compatibility, never written.
            aliases=("multiSelect",),
        ),
        default=False,
        validator=_bool,
    )
    intent: AskUserQuestionIntent | None = _fields.field(  # noqa: RUF009 (an attrs field)
        Wire("intent", writer="harness", kind="payload", nested=lambda: AskUserQuestionIntent),
        default=None,
        validator=attrs.validators.optional(attrs.validators.instance_of(AskUserQuestionIntent)),
    )
    # What it means is in the tool's description (the shapes' size budget).
    secret: bool = _fields.field(
        Wire("secret", schema={"type": "boolean"}, omit=_IF_FALSE, kind="bool"),
        default=False,
        validator=_bool,
    )
    # false: the options only, no "Other" (the tool's description names "Other").
    allow_other: bool = _fields.field(
        Wire(
            "allow_other",
            schema={"type": "boolean"},
            omit=lambda value: value is True,
            kind="bool",
        ),
        default=True,
        validator=_bool,
    )
    input: AskUserQuestionInput | None = _fields.field(  # noqa: RUF009 (an attrs field)
        Wire(
            "input",
            schema={"type": "object"},
            kind="payload",
            nested=lambda: AskUserQuestionInput,
        ),
        default=None,
        validator=attrs.validators.optional(attrs.validators.instance_of(AskUserQuestionInput)),
    )

    def to_dict(self) -> dict[str, Any]:
        """The wire form, snake_case (``multi_select``, as the model writes it); keys whose value
        is ``None`` are omitted, ``secret`` when false and ``allow_other`` when true."""
        return _write(self)

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
    carries ``questions``, ``key``, ``timeout`` and ``audience``; ``agent`` and ``signal``
    never travel.

    ``audience`` says who may answer: person ids (a login name, a proxy's identity) and
    ``group:NAME`` entries naming groups of the people file (`team.People`). The harness sets
    it (`tool.run`'s ``audience``), never the model; empty means anyone who can reach the
    question. Every surface asks `team.may_answer` before it takes an answer.
    """

    questions: tuple[AskUserQuestionItem, ...] = attrs.field(
        converter=_questions, validator=_each(AskUserQuestionItem)
    )
    agent: object | None = None
    signal: AbortSignal | None = None
    timeout: float | None = attrs.field(default=None, validator=_timeout)
    key: str | None = attrs.field(default=None, validator=_key)
    # Who may answer: person ids and ``group:NAME`` entries, set by the harness (never the
    # model); its rules are checked by ``ask()`` (`rules.check_request`, ``BAD_AUDIENCE``).
    # attrs.field with the Wire in its metadata (what `_fields.field` writes), so the type
    # checker sees the converter: any iterable of strings is a valid argument.
    audience: tuple[str, ...] = attrs.field(
        default=(),
        converter=_audience,
        validator=_each(str),
        metadata={
            "wire": Wire("audience", writer="harness", kind="strs", omit=lambda value: not value)
        },
    )

    def to_dict(self) -> dict[str, Any]:
        """The wire form: the questions, then ``key`` and ``timeout`` when set, then the fields
        declared with a `Wire` (``audience`` when not empty)."""
        data: dict[str, Any] = {"questions": [question.to_dict() for question in self.questions]}
        if self.key is not None:
            data["key"] = self.key
        if self.timeout is not None:
            data["timeout"] = self.timeout
        data.update(_write(self))
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
        audience: Iterable[str] | None = None,
    ) -> AskUserQuestionRequest:
        """Build from the wire form; ``agent`` and ``signal`` come from the caller, and a
        ``timeout``, ``key`` or ``audience`` given here wins over the one in ``data``."""
        questions, wire_key, wire_timeout, declared = _load(_read_request, data)
        if audience is not None:
            declared["audience"] = audience
        return cls(
            questions=questions,
            agent=agent,
            signal=signal,
            timeout=wire_timeout if timeout is None else timeout,
            key=wire_key if key is None else key,
            **declared,
        )


@attrs.frozen(kw_only=True)
class AskUserQuestionUpload:
    """One file the human uploaded to an ``upload`` question: an item of the answer's ``value``.

    ``name`` is the file's name as the human's system gave it (a plain name, no folder);
    ``media_type`` its MIME type; ``size`` its length in bytes; ``sha256`` the hex digest of its
    bytes; ``path`` the absolute path of the file the provider wrote on the asker's machine.
    The model sees the name, type, size and path, never the bytes (nor their digest).
    """

    name: str = _fields.field(Wire("name", writer="harness"), validator=_str)
    media_type: str = _fields.field(Wire("media_type", writer="harness"), validator=_str)
    size: int = _fields.field(Wire("size", writer="harness", kind="int"), validator=_check_int)
    sha256: str = _fields.field(Wire("sha256", writer="harness", model_text=False), validator=_str)
    path: str = _fields.field(Wire("path", writer="harness"), validator=_str)

    def to_dict(self) -> dict[str, Any]:
        """The wire form: every field."""
        return _write(self)

    @classmethod
    def from_dict(cls, data: object) -> AskUserQuestionUpload:
        """Build from the wire form; raises `WireFormatError` naming each bad field."""
        return _load(_reader(AskUserQuestionUpload), data)


AnswerValue = int | float | str | tuple[str, ...] | tuple[AskUserQuestionUpload, ...] | None
"""What an answer item's ``value`` may hold: a number, an ISO string, paths, or uploads."""


def _value(value: object) -> object:
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return value


def _check_value(_instance: object, _attribute: object, value: object) -> None:
    if value is None or isinstance(value, str):
        return
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return
    if isinstance(value, tuple) and (
        all(isinstance(item, str) for item in value)
        or all(isinstance(item, AskUserQuestionUpload) for item in value)
    ):
        return
    raise TypeError(
        "value must be a number, a string, a tuple of paths or a tuple of"
        f" AskUserQuestionUpload, or None; got {type(value).__name__}"
    )


@attrs.frozen(kw_only=True)
class AskUserQuestionAnswerItem:
    """The answer to one question, by its id: the picked labels and any free text.

    Single-select: ``custom`` overrides the pick and ``selected`` is then empty. Multi-select:
    ``custom`` may supplement ``selected``. A skipped question may be kept as
    ``{id, selected: []}``. ``value`` answers a question with ``input`` (and only such a
    question, with ``selected`` empty and no ``custom``): a number for ``number``, an ISO
    string for ``date``, ``time`` and ``datetime``, a tuple of relative POSIX paths for
    ``files``, a tuple of `AskUserQuestionUpload` for ``upload``.
    """

    id: str = _fields.field(Wire("id"), validator=_str)
    selected: tuple[str, ...] = _fields.field(
        Wire("selected", omit=_NEVER, kind="strs"),
        default=(),
        converter=_selected,
        validator=_each(str),
    )
    custom: str | None = _fields.field(Wire("custom"), default=None, validator=_opt_str)
    value: AnswerValue = _fields.field(  # noqa: RUF009 (an attrs field)
        Wire("value", kind="value"), default=None, converter=_value, validator=_check_value
    )

    def to_dict(self) -> dict[str, Any]:
        """The wire form; ``selected`` is always written, ``custom`` and ``value`` only when
        present."""
        return _write(self)

    @classmethod
    def from_dict(cls, data: object) -> AskUserQuestionAnswerItem:
        """Build from the wire form; raises `WireFormatError` naming each bad field."""
        return _load(_read_answer_item, data)


@attrs.frozen
class AskUserQuestionAnswer:
    """The human's answer to a request: one item per answered question, in any order.

    ``answered_by`` names who answered (a person's id: a login name, a proxy's identity, or
    ``token`` for the page's token holder) when the surface knows it; it travels on the wire
    and reaches the observers and spans, never the model's text.
    """

    # attrs.field with the Wire in its metadata (what `_fields.field` writes), so the type
    # checker still sees the converter: a list of items is a valid argument.
    answers: tuple[AskUserQuestionAnswerItem, ...] = attrs.field(
        converter=_answers,
        validator=_each(AskUserQuestionAnswerItem),
        metadata={
            "wire": Wire(
                "answers", kind="payloads", omit=_NEVER, nested=lambda: AskUserQuestionAnswerItem
            )
        },
    )
    answered_by: str | None = _fields.field(
        Wire("answered_by", writer="harness", model_text=False),
        default=None,
        validator=_opt_str,
        kw_only=True,
    )

    def to_dict(self) -> dict[str, Any]:
        """The wire form: ``answers``, then ``answered_by`` when set."""
        return _write(self)

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


# The plan of one field, worked out once per class from its `Wire` (see `_plan`).
_PLAIN, _PAYLOADS, _VALUE, _PAYLOAD, _STRS = range(5)
_WRITE_KINDS = {"payloads": _PAYLOADS, "value": _VALUE, "payload": _PAYLOAD, "strs": _STRS}

_FieldReader = Callable[[object, _Keys, _Problems], object]


@attrs.frozen
class _Plan:
    """What reading and writing a payload class needs of its declarations, worked out once.

    Built on a class's first read or write (its nested classes exist by then) and kept, so a
    call walks tuples, never the declarations.
    """

    known: tuple[str, ...]  # the wire keys, required first, as an unknown key's message lists
    known_set: frozenset[str]
    required: tuple[str, ...]
    # Reading, in field order: (attribute name, wire key, aliases, required?, the type read as
    # is when the value has exactly it (str, bool) or None, the reader of any other value).
    reads: tuple[tuple[str, str, tuple[str, ...], bool, type | None, _FieldReader], ...]
    # The same by wire key (old names left out): (attribute name, required?, as is, reader).
    by_key: Mapping[str, tuple[str, bool, type | None, _FieldReader]]
    # Writing, in field order: (attribute name, wire key, omit (None: when None), how the value
    # is written (_PLAIN, _PAYLOADS, ...), model_text).
    writes: tuple[tuple[str, str, Callable[[Any], bool] | None, int, bool], ...]


_PLANS: dict[type, _Plan] = {}


def _plan(cls: type) -> _Plan:
    found = _PLANS.get(cls)
    if found is None:
        declared = _fields.wire_fields(cls)
        required = tuple(wire.name for attribute, wire in declared if _fields.required(attribute))
        optional = tuple(
            name
            for attribute, wire in declared
            if not _fields.required(attribute)
            for name in (wire.name, *wire.aliases)
        )
        reads = tuple(
            (
                attribute.name,
                wire.name,
                wire.aliases,
                _fields.required(attribute),
                _AS_IS.get(wire.kind),
                _field_reader(wire),
            )
            for attribute, wire in declared
        )
        found = _PLANS[cls] = _Plan(
            known=required + optional,
            known_set=frozenset(required + optional),
            required=required,
            reads=reads,
            by_key={
                key: (name, is_required, as_is, read)
                for name, key, _aliases, is_required, as_is, read in reads
            },
            writes=tuple(
                (
                    attribute.name,
                    wire.name,
                    None if wire.omit is _fields.is_none else wire.omit,
                    _WRITE_KINDS.get(wire.kind, _PLAIN),
                    wire.model_text,
                )
                for attribute, wire in declared
            ),
        )
    return found


def _write(payload: Any, *, for_model: bool = False) -> dict[str, Any]:
    """The wire form of ``payload``, walked from its field declarations (its `_plan`)."""
    plan = _PLANS.get(type(payload)) or _plan(type(payload))
    data: dict[str, Any] = {}
    for name, key, omit, kind, model_text in plan.writes:
        value = getattr(payload, name)
        if (value is None if omit is None else omit(value)) or (for_model and not model_text):
            continue
        if kind == _PLAIN:
            data[key] = value
        elif kind == _PAYLOADS:
            data[key] = [_write(item, for_model=for_model) for item in value]
        elif kind == _VALUE and type(value) is tuple:
            data[key] = [
                item if type(item) is str else _write(item, for_model=for_model) for item in value
            ]
        elif kind == _PAYLOAD:
            data[key] = _write(value, for_model=for_model)
        elif kind == _STRS:
            data[key] = list(value)
        else:
            data[key] = value
    return data


def _reader(cls: type[T]) -> Callable[[object, _Keys, _Problems], T | None]:
    def read(data: object, keys: _Keys, problems: _Problems) -> T | None:
        values = _read_fields(cls, data, keys, problems)
        return None if values is None else _build(cls, values, keys, problems)

    return read


def _build(cls: type[T], values: dict[str, Any], keys: _Keys, problems: _Problems) -> T | None:
    try:
        return cls(**values)
    except (TypeError, ValueError) as err:
        problems.append(_json.at(keys, str(err)))
        return None


def _read_fields(
    cls: type, data: object, keys: _Keys, problems: _Problems
) -> dict[str, Any] | None:
    """The constructor arguments ``data`` gives for ``cls`` (None when a field is bad)."""
    plan = _PLANS.get(cls) or _plan(cls)
    if type(data) is not dict and not isinstance(data, Mapping):  # a dict: no ABC check
        problems.append(_json.at(keys, _json.must_be("object", data)))
        return None
    before = len(problems)
    known = plan.known_set
    if not known.issuperset(data):
        for key in data:
            if key not in known:
                problems.append(_json.at((*keys, key), _json.unknown_property(key, plan.known)))
    for key in plan.required:
        if key not in data:
            problems.append(_json.at((*keys, key), _json.REQUIRED))
    if len(problems) == before:
        values = _read_given(plan, data, keys)
        if values is not None:
            return values
    # Field by field, in declaration order, reporting every bad one.
    values = {}
    get = data.get
    for name, key, aliases, required, as_is, read in plan.reads:
        if aliases:
            for alias in aliases:
                if alias in data:
                    if key in data:
                        problems.append(
                            _json.at((*keys, alias), f"give {key} only ({alias} is its old name)")
                        )
                    else:
                        key = alias
        raw = get(key, _BAD)
        if raw is _BAD or (raw is None and not required):
            continue  # absent (a required key is reported above), or null for none
        # The common cases inline: a string, a flag.
        if type(raw) is as_is:
            values[name] = raw
        else:
            value = read(raw, (*keys, key), problems)
            if value is not _BAD:
                values[name] = value
    return None if len(problems) > before else values


def _read_given(plan: _Plan, data: Mapping[str, object], keys: _Keys) -> dict[str, Any] | None:
    """The common case of `_read_fields`: the keys ``data`` has, each read well.

    It walks the few keys given, not every declared field; None when a key is an old name or
    a value is bad, for `_read_fields` to read field by field and report in declaration order.
    """
    values: dict[str, Any] = {}
    by_key = plan.by_key
    for key, raw in data.items():
        entry = by_key.get(key)
        if entry is None:
            return None  # an old name
        name, required, as_is, read = entry
        if type(raw) is as_is:
            values[name] = raw
        elif raw is None and not required:
            continue
        else:
            problems: _Problems = []
            value = read(raw, (*keys, key), problems)
            if problems or value is _BAD:
                return None
            values[name] = value
    return values


_BAD: Any = object()


def _read_str(raw: object, keys: _Keys, problems: _Problems) -> object:
    if isinstance(raw, str):
        return raw
    problems.append(_json.at(keys, _json.must_be("string", raw)))
    return _BAD


def _read_bool(raw: object, keys: _Keys, problems: _Problems) -> object:
    if isinstance(raw, bool):
        return raw
    problems.append(_json.at(keys, _json.must_be("boolean", raw)))
    return _BAD


def _read_number(raw: object, keys: _Keys, problems: _Problems) -> object:
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return raw
    problems.append(_json.at(keys, _json.must_be("number", raw)))
    return _BAD


def _read_int(raw: object, keys: _Keys, problems: _Problems) -> object:
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    problems.append(_json.at(keys, _json.must_be("integer", raw)))
    return _BAD


def _read_strs(raw: object, keys: _Keys, problems: _Problems) -> object:
    if not isinstance(raw, (list, tuple)):
        problems.append(_json.at(keys, _json.must_be("array", raw)))
        return _BAD
    before = len(problems)
    for index, item in enumerate(raw):
        if not isinstance(item, str):
            problems.append(_json.at((*keys, index), _json.must_be("string", item)))
    return _BAD if len(problems) > before else tuple(raw)


def _nested_reader(wire: Wire) -> Callable[[object, _Keys, _Problems], Any]:
    assert wire.nested is not None
    nested = wire.nested()
    return _NESTED_READERS.get(nested) or _reader(nested)


def _payload_reader(wire: Wire) -> _FieldReader:
    read_one = _nested_reader(wire)

    def read(raw: object, keys: _Keys, problems: _Problems) -> object:
        value = read_one(raw, keys, problems)
        return _BAD if value is None else value

    return read


def _payloads_reader(wire: Wire) -> _FieldReader:
    read_one = _nested_reader(wire)

    def read(raw: object, keys: _Keys, problems: _Problems) -> object:
        if not isinstance(raw, (list, tuple)):
            problems.append(_json.at(keys, _json.must_be("array", raw)))
            return _BAD
        items = [read_one(item, (*keys, index), problems) for index, item in enumerate(raw)]
        return _BAD if any(item is None for item in items) else tuple(items)

    return read


def _read_value(raw: object, keys: _Keys, problems: _Problems) -> object:
    """A number, a string, an array of strings (paths) or of objects (uploads)."""
    if isinstance(raw, str) or (isinstance(raw, (int, float)) and not isinstance(raw, bool)):
        return raw
    if not isinstance(raw, (list, tuple)):
        problems.append(
            _json.at(
                keys,
                f"must be a number, a string or an array, not {_json.kind(_json.json_type(raw))}",
            )
        )
        return _BAD
    if all(isinstance(item, str) for item in raw):
        return tuple(raw)
    if not any(isinstance(item, str) for item in raw):
        uploads = [_read_upload(item, (*keys, index), problems) for index, item in enumerate(raw)]
        return _BAD if any(item is None for item in uploads) else tuple(uploads)
    problems.append(_json.at(keys, "must hold only paths (strings) or only uploads (objects)"))
    return _BAD


_READERS: dict[str, _FieldReader] = {
    "str": _read_str,
    "bool": _read_bool,
    "number": _read_number,
    "int": _read_int,
    "strs": _read_strs,
    "value": _read_value,
}
_READER_MAKERS: dict[str, Callable[[Wire], _FieldReader]] = {
    "payload": _payload_reader,
    "payloads": _payloads_reader,
}
# The kinds whose value, of exactly this type, is read as it is (without a call).
_AS_IS: dict[str, type] = {"str": str, "bool": bool}


def _field_reader(wire: Wire) -> _FieldReader:
    make = _READER_MAKERS.get(wire.kind)
    return _READERS[wire.kind] if make is None else make(wire)


def _read_option(data: object, keys: _Keys, problems: _Problems) -> AskUserQuestionOption | None:
    values = _read_fields(AskUserQuestionOption, data, keys, problems)
    if values is None:
        return None
    assert isinstance(data, Mapping)
    if "recommended" not in data:
        plain = _without_recommended_suffix(values["label"])
        if plain is not None:
            values["label"], values["recommended"] = plain, True
    return _build(AskUserQuestionOption, values, keys, problems)


_read_item = _reader(AskUserQuestionItem)
_read_upload = _reader(AskUserQuestionUpload)

_NESTED_READERS: dict[type, Callable[[object, _Keys, _Problems], Any]] = {
    AskUserQuestionOption: _read_option
}


def _read_request(
    data: object, keys: _Keys, problems: _Problems
) -> tuple[tuple[AskUserQuestionItem, ...], str | None, float | None, dict[str, Any]] | None:
    declared = _fields.wire_fields(AskUserQuestionRequest)
    obj = _object(
        data,
        keys,
        problems,
        ("questions",),
        ("key", "timeout", *(wire.name for _attribute, wire in declared)),
    )
    if obj is None:
        return None
    # The fields declared with a `Wire` (``audience``), read as their declarations say.
    values: dict[str, Any] = {}
    for attribute, wire in declared:
        raw = obj.get(wire.name)
        if raw is not None:
            value = _field_reader(wire)(raw, (*keys, wire.name), problems)
            if value is not _BAD:
                values[attribute.name] = value
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
        values,
    )


_read_answer_item = _reader(AskUserQuestionAnswerItem)


_read_answer = _reader(AskUserQuestionAnswer)
