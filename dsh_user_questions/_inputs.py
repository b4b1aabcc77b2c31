"""The rules of a typed input and of its value: what `rules` applies, written once.

`question_problems` and `input_problems` say what is wrong with a question's ``input``
(`rules.check_request`, and the tool's argument check for what a model writes);
`value_problems` what is wrong with an answer's ``value`` (`rules.check_answer`, on every
surface); `local_problems` what only the asker's machine can see: a picked path that is no file
under the root once symlinks are resolved, an upload whose bytes are not what its record says
(`check_files`, run by the service when the answer arrives).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import posixpath
import re
from collections.abc import Iterator, Sequence
from decimal import Decimal, InvalidOperation

from . import _json
from ._glob import glob_regex
from ._i18n import N_
from ._payloads import (
    INPUT_TYPES,
    MAX_FILE_CANDIDATES,
    MAX_UPLOAD_BYTES,
    MAX_UPLOAD_COUNT,
    AskUserQuestionAnswer,
    AskUserQuestionInput,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    AskUserQuestionUpload,
)
from ._problems import ITEM, Problem
from .errors import UserQuestionError

__all__ = [
    "FIELDS_OF",
    "check_files",
    "input_problems",
    "local_problems",
    "question_problems",
    "value_problems",
]

FIELDS_OF: dict[str, frozenset[str]] = {
    "number": frozenset({"min", "max", "step", "unit"}),
    "date": frozenset(),
    "time": frozenset(),
    "datetime": frozenset(),
    "files": frozenset({"root", "pattern", "max_count", "candidates"}),
    "upload": frozenset({"accept", "max_bytes", "max_count"}),
}
"""The fields each input type takes besides ``type``."""

_OPTIONAL = ("min", "max", "step", "unit", "pattern", "max_count", "accept", "max_bytes", "root")
_MEDIA_TYPE = re.compile(
    r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/(?:\*|[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126})\Z"
)
_EXTENSION = re.compile(r"\.[A-Za-z0-9][A-Za-z0-9_+-]{0,31}\Z")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
_TIME = re.compile(r"[0-9]{2}:[0-9]{2}(?::[0-9]{2})?\Z")
_DATETIME = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt]([0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?)"
    r"([Zz]|[+-][0-9]{2}:[0-9]{2})\Z"
)
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
_UNSAFE_NAME = re.compile("[\x00-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069/\\\\]")


def _q(text: object) -> str:
    return json.dumps(text, ensure_ascii=False)


def question_problems(question: AskUserQuestionItem) -> Iterator[str]:
    """What is wrong with a question's ``input`` and its combination with the other fields."""
    given = question.input
    if given is None:
        return
    if question.options:
        yield "has input and options; a question with input takes its value only"
    if question.multi_select:
        yield "has input and is multi_select; a question with input takes its value only"
    if question.secret:
        yield "has input and is secret; a secret question takes free text only"
    if question.intent is not None:
        yield "has input and an intent; a review picks among options"
    for keys, problem in input_problems(given):
        yield f"has {_json.path(keys)} {problem}" if len(keys) > 1 else f"has an input {problem}"


def input_problems(given: AskUserQuestionInput) -> Iterator[tuple[tuple[_json.Key, ...], str]]:
    """Each problem of ``given`` as (its path from the question, what is wrong), worded to
    follow ``has <path>`` (`rules.check_request`) or ``<path>: is`` (the tool)."""
    for path, problem in _input_problems(given):
        keys: tuple[_json.Key, ...] = ("input",)
        if path:
            name, _, index = path.partition("[")
            keys = ("input", name) if not index else ("input", name, int(index[:-1]))
        yield keys, problem


def _input_problems(given: AskUserQuestionInput) -> Iterator[tuple[str, str]]:
    kind = given.type
    if kind not in FIELDS_OF:
        yield "type", f"{_q(kind)}, which is none of {', '.join(INPUT_TYPES)}"
        return
    allowed = FIELDS_OF[kind]
    for name in _OPTIONAL:
        value = getattr(given, name)
        if name not in allowed and value not in (None, ()):
            yield name, f"given, but a {kind} input does not take it"
    if given.candidates is not None and "candidates" not in allowed:
        yield "candidates", f"given, but a {kind} input does not take it"
    if kind == "number":
        yield from _number_input(given)
    if given.max_count is not None and given.max_count < 1:
        yield "max_count", f"{given.max_count} (it must be at least 1)"
    if kind == "files":
        yield from _files_input(given)
    if kind == "upload":
        yield from _upload_input(given)


def _number_input(given: AskUserQuestionInput) -> Iterator[tuple[str, str]]:
    for name in ("min", "max", "step"):
        value = getattr(given, name)
        if value is not None and not math.isfinite(value):
            yield name, f"{value} (it must be a finite number)"
    low, high, step = given.min, given.max, given.step
    if low is not None and high is not None and low > high:
        yield "min", f"{low} above input.max {high}"
    if step is not None and not step > 0:
        yield "step", f"{step} (it must be positive)"


def _files_input(given: AskUserQuestionInput) -> Iterator[tuple[str, str]]:
    if given.root is None:
        yield (
            "",
            "of type files without a root (tool.run(..., workspace=...) or"
            " AskUserQuestionInput.files gives it one)",
        )
    elif not os.path.isabs(given.root):
        yield "root", f"{_q(given.root)}, which is not an absolute path"
    if given.candidates is None:
        yield (
            "",
            "of type files whose candidates were never listed (AskUserQuestionInput.files lists"
            " them where the files are)",
        )
    elif len(given.candidates) > MAX_FILE_CANDIDATES:
        yield (
            "candidates",
            f"of {len(given.candidates)} files (at most {MAX_FILE_CANDIDATES})",
        )
    pattern = given.pattern
    if pattern is not None and (
        not pattern or pattern.startswith("/") or ".." in pattern.split("/")
    ):
        yield "pattern", f"{_q(pattern)}, which is not a relative glob"


def _upload_input(given: AskUserQuestionInput) -> Iterator[tuple[str, str]]:
    if given.max_bytes is not None and not 1 <= given.max_bytes <= MAX_UPLOAD_BYTES:
        yield "max_bytes", f"{given.max_bytes} (from 1 to {MAX_UPLOAD_BYTES})"
    if given.max_count is not None and given.max_count > MAX_UPLOAD_COUNT:
        yield "max_count", f"{given.max_count} (an upload takes at most {MAX_UPLOAD_COUNT})"
    for index, accepted in enumerate(given.accept):
        if not (_MEDIA_TYPE.match(accepted) or _EXTENSION.match(accepted)):
            yield (
                f"accept[{index}]",
                f"{_q(accepted)}, which is neither a MIME type (image/png, image/*) nor an"
                " extension (.pdf)",
            )


def value_problems(given: AskUserQuestionInput, value: object) -> Iterator[str]:
    """What is wrong with ``value`` as the answer to an input ``given`` (worded after the item)."""
    kind = given.type
    if kind == "number":
        yield from _number_value(given, value)
    elif kind in ("date", "time", "datetime"):
        problem = _when_problem(kind, value)
        if problem is not None:
            yield problem
    elif kind == "files":
        yield from _files_value(given, value)
    elif kind == "upload":
        yield from _upload_value(given, value)


def _number_value(given: AskUserQuestionInput, value: object) -> Iterator[str]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        yield Problem(
            N_("has value {value}, which is not a number (the question asks a number)"),
            value=_short(value),
        )
        return
    if not math.isfinite(value):
        yield Problem(N_("has value {value}, which is not a finite number"), value=value)
        return
    if given.min is not None and value < given.min:
        yield Problem(N_("has value {value} below the minimum {low}"), value=value, low=given.min)
    if given.max is not None and value > given.max:
        yield Problem(N_("has value {value} above the maximum {high}"), value=value, high=given.max)
    if given.step is not None and given.step > 0 and math.isfinite(given.step):
        base = given.min if given.min is not None and math.isfinite(given.min) else 0
        try:
            off = (_decimal(value) - _decimal(base)) % _decimal(given.step)
        except InvalidOperation:  # a quotient too large for the context: off the grid
            off = Decimal(1)
        if off != 0:
            off_grid = (
                N_(
                    "has value {value}, which is off the step {step} counted from the minimum"
                    " {base}"
                )
                if given.min is not None
                else N_("has value {value}, which is off the step {step} counted from {base}")
            )
            yield Problem(off_grid, value=value, step=given.step, base=base)


def _decimal(number: float) -> Decimal:
    # str() of a float is its shortest repr: 0.1 is Decimal("0.1"), so 0.1 steps work.
    return Decimal(str(number))


def _when_problem(kind: str, value: object) -> str | None:
    shapes = {
        "date": N_("a date YYYY-MM-DD"),
        "time": N_("a time HH:MM or HH:MM:SS"),
        "datetime": N_("an RFC 3339 date and time with an offset (2026-12-07T09:30:00+01:00)"),
    }
    wanted = Problem(shapes[kind])
    not_it = N_("has value {value}, which is not {wanted}")
    if not isinstance(value, str):
        return Problem(not_it, value=_short(value), wanted=wanted)
    try:
        if kind == "date":
            if not _DATE.match(value):
                raise ValueError
            dt.date.fromisoformat(value)
        elif kind == "time":
            if not _TIME.match(value):
                raise ValueError
            dt.time.fromisoformat(value)
        else:
            found = _DATETIME.match(value)
            if found is None:
                raise ValueError
            day, clock, offset = found.groups()
            dt.date.fromisoformat(day)
            dt.time.fromisoformat(clock[:8])
            if offset not in "Zz":
                hours, minutes = int(offset[1:3]), int(offset[4:6])
                if hours > 23 or minutes > 59:
                    raise ValueError
    except ValueError:
        return Problem(not_it, value=_short(value), wanted=wanted)
    return None


def _files_value(given: AskUserQuestionInput, value: object) -> Iterator[str]:
    if not isinstance(value, tuple) or not all(isinstance(path, str) for path in value):
        yield Problem(
            N_("has value {value}, which is not a list of paths (the question asks files)"),
            value=_short(value),
        )
        return
    if not value:
        yield Problem(N_("has an empty list of files (a skip carries no value)"))
    if given.max_count is not None and len(value) > given.max_count:
        yield Problem(
            N_("picks {count} files (at most {limit})"), count=len(value), limit=given.max_count
        )
    if len(set(value)) != len(value):
        yield Problem(N_("picks a file more than once"))
    match = None if given.pattern is None else glob_regex(given.pattern).fullmatch
    offered = None if given.candidates is None else frozenset(given.candidates)
    for path in value:
        problem = _relative_problem(path)
        if problem is not None:
            yield Problem(N_("picks {path}, {problem}"), path=_short(path), problem=problem)
        elif match is not None and match(path) is None:
            yield Problem(
                N_("picks {path}, which does not match the pattern {pattern}"),
                path=_short(path),
                pattern=_q(given.pattern),
            )
        elif offered is not None and path not in offered:
            yield Problem(
                N_("picks {path}, which is not one of the files offered"), path=_short(path)
            )


def _relative_problem(path: str) -> str | None:
    if not path or path.startswith("/") or "\\" in path or "\x00" in path:
        return Problem(N_("which is not a relative POSIX path"))
    if any(part in ("", ".", "..") for part in path.split("/")):
        return Problem(N_("which is not a plain relative path (no '.', '..' or empty parts)"))
    return None


def _upload_value(given: AskUserQuestionInput, value: object) -> Iterator[str]:
    if not isinstance(value, tuple) or not all(
        isinstance(item, AskUserQuestionUpload) for item in value
    ):
        yield Problem(
            N_("has value {value}, which is not a list of uploads (the question asks files)"),
            value=_short(value),
        )
        return
    if not value:
        yield Problem(N_("has an empty list of uploads (a skip carries no value)"))
    limit = MAX_UPLOAD_COUNT if given.max_count is None else given.max_count
    if len(value) > limit:
        yield Problem(N_("uploads {count} files (at most {limit})"), count=len(value), limit=limit)
    max_bytes = MAX_UPLOAD_BYTES if given.max_bytes is None else given.max_bytes
    for index, upload in enumerate(value):
        name = upload.name
        if not name or name in (".", "..") or len(name) > 255 or _UNSAFE_NAME.search(name):
            yield Problem(
                N_("has upload {index} named {name}, which is not a plain file name"),
                index=index,
                name=_short(name),
            )
        if upload.size < 0 or upload.size > max_bytes:
            yield Problem(
                N_("has upload {index} of {size} bytes (at most {limit})"),
                index=index,
                size=upload.size,
                limit=max_bytes,
            )
        if not _SHA256.match(upload.sha256):
            yield Problem(
                N_("has upload {index} whose sha256 is not 64 lowercase hex digits"), index=index
            )
        if not os.path.isabs(upload.path):
            yield Problem(N_("has upload {index} whose path is not absolute"), index=index)
        if given.accept and not accepts(given.accept, upload.media_type, name):
            yield Problem(
                N_(
                    "has upload {index} of type {type}, which the question does not accept"
                    " ({accept})"
                ),
                index=index,
                type=_short(upload.media_type),
                accept=", ".join(given.accept),
            )


def accepts(accept: tuple[str, ...], media_type: str, name: str) -> bool:
    """Whether a file of ``media_type`` named ``name`` is among ``accept``'s types."""
    folded = media_type.split(";", 1)[0].strip().lower()
    extension = posixpath.splitext(name)[1].lower()
    for pattern in accept:
        wanted = pattern.lower()
        if wanted.startswith("."):
            if extension == wanted:
                return True
        elif wanted.endswith("/*"):
            if folded.startswith(wanted[:-1]):
                return True
        elif folded == wanted:
            return True
    return False


def local_problems(given: AskUserQuestionInput, value: object) -> Iterator[str]:
    """What only the asker's machine can check of a files or upload value (after the rules)."""
    if given.type == "files" and given.root is not None and isinstance(value, tuple):
        root = os.path.realpath(given.root)
        for path in value:
            if not isinstance(path, str) or _relative_problem(path) is not None:
                continue  # the answer rules refused it already
            real = os.path.realpath(os.path.join(root, *path.split("/")))
            if os.path.commonpath([root, real]) != root:
                yield Problem(
                    N_("picks {path}, which leads outside the root (a symbolic link)"),
                    path=_short(path),
                )
            elif not os.path.isfile(real):
                yield Problem(
                    N_("picks {path}, which is no regular file under the root"), path=_short(path)
                )
    elif given.type == "upload" and isinstance(value, tuple):
        for index, upload in enumerate(value):
            if isinstance(upload, AskUserQuestionUpload):
                problem = _upload_file_problem(upload)
                if problem is not None:
                    yield Problem(N_("has upload {index} {problem}"), index=index, problem=problem)


def _upload_file_problem(upload: AskUserQuestionUpload) -> str | None:
    try:
        if os.path.islink(upload.path) or not os.path.isfile(upload.path):
            return Problem(N_("whose path is no regular file"))
        digest = hashlib.sha256()
        size = 0
        with open(upload.path, "rb") as file:
            while chunk := file.read(1 << 20):
                size += len(chunk)
                digest.update(chunk)
    except OSError as err:
        return Problem(
            N_("whose file cannot be read ({why})"), why=err.strerror or type(err).__name__
        )
    if size != upload.size:
        return Problem(
            N_("whose file has {size} bytes, not the {expected} its record says"),
            size=size,
            expected=upload.size,
        )
    if digest.hexdigest() != upload.sha256:
        return Problem(N_("whose file's sha256 differs from its record"))
    return None


def check_files(
    request: AskUserQuestionRequest | Sequence[AskUserQuestionItem], answer: AskUserQuestionAnswer
) -> None:
    """Check, on the asker's machine, the files an answer names (after `check_answer`).

    A ``files`` value's paths must lead to regular files under the question's ``root`` once
    symbolic links are resolved (a link out of the root is refused); an upload's ``path`` must
    be a regular file (no link) whose size and sha256 are those of its record. Raises one
    ``BAD_ANSWER`` naming each breach; does nothing for questions without such input. The
    service runs it when an answer arrives, where the files are; a surface on another machine
    checks membership among the candidates instead (`check_answer`).
    """
    questions = request.questions if isinstance(request, AskUserQuestionRequest) else request
    for question in questions:
        if question.input is not None:
            break
    else:
        return  # the common ask: nothing to look at
    inputs = {
        question.id: question.input
        for question in questions
        if question.input is not None and question.input.type in ("files", "upload")
    }
    if not inputs:
        return
    problems: list[str] = []
    for index, item in enumerate(answer.answers):
        given = inputs.get(item.id)
        if given is not None and item.value is not None:
            problems.extend(
                Problem(ITEM, index=index, id=_q(item.id), problem=problem)
                for problem in local_problems(given, item.value)
            )
    if problems:
        raise UserQuestionError.bad_answer(*problems)


def _short(value: object) -> str:
    text = _q(value) if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
