"""Uploads on the page's side: which question takes a file, and the answer's references to it.

The page sends a file's bytes on their own (``POST upload``, streamed into the uploads folder by
`dsh_user_questions._uploads`) and gets a token; its answer then names the file as
``{"upload": token}`` in the question's ``value``, and the board swaps each token for the
file's record (`resolve_uploads`) before the core's rules check the answer. The page never sees
or sends a path on the asker's machine, and cannot name a file it did not upload for that
question.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dsh_user_questions import AskUserQuestionItem, UserQuestionError
from dsh_user_questions._uploads import UploadWriter
from dsh_user_questions.view import question_view

__all__ = ["UploadSink", "resolve_uploads", "upload_input"]


def upload_input(questions: Sequence[AskUserQuestionItem], question_id: str) -> Any:
    """The view's ``input`` of the upload question ``question_id``; `LookupError` if there is
    no such question or it takes no upload."""
    for item in questions:
        if item.id == question_id:
            field = question_view(item).input
            if field is None or field.type != "upload":
                raise LookupError(f"question {question_id!r} takes no file")
            return field
    raise LookupError(f"there is no question {question_id!r}")


class UploadSink:
    """One file on its way in: `write` its chunks, then `finish` (the token the answer names
    it by) or `abort` (nothing kept). A board's ``open_upload`` returns one; the page's upload
    route and the link page feed it."""

    def __init__(self, writer: UploadWriter, keep: Callable[[dict[str, Any]], str]) -> None:
        self._writer = writer
        self._keep = keep
        self.name = writer.name
        self.media_type = writer.media_type

    @property
    def size(self) -> int:
        """Bytes written so far."""
        return self._writer.size

    def write(self, chunk: bytes) -> None:
        """Append ``chunk`` (`dsh_user_questions._uploads.UploadRefused` over the limit)."""
        self._writer.write(chunk)

    def finish(self) -> str:
        """The file is whole: keep it; the token an answer names it by."""
        return self._keep(self._writer.finish())

    def abort(self) -> None:
        """Drop what was written."""
        self._writer.abort()


def resolve_uploads(answer: object, uploads: Mapping[str, tuple[str, dict[str, Any]]]) -> object:
    """``answer`` (wire form) with each ``{"upload": token}`` in a ``value`` swapped for the
    record of that upload; `UserQuestionError` ``BAD_ANSWER`` for a token this ask did not
    receive for that question. Anything else is left for the core's rules."""
    if not isinstance(answer, Mapping) or not isinstance(answer.get("answers"), list):
        return answer
    items: list[object] = []
    problems: list[str] = []
    for index, item in enumerate(answer["answers"]):
        value = item.get("value") if isinstance(item, Mapping) else None
        if not isinstance(value, list) or not any(_is_ref(entry) for entry in value):
            items.append(item)
            continue
        records: list[object] = []
        for position, entry in enumerate(value):
            if not _is_ref(entry):
                records.append(entry)
                continue
            known = uploads.get(entry["upload"])
            if known is None or known[0] != item.get("id"):
                problems.append(
                    f"answers[{index}].value[{position}]: names no file uploaded for this question"
                )
                continue
            records.append(dict(known[1]))
        items.append({**item, "value": records})
    if problems:
        raise UserQuestionError.bad_answer(*problems)
    return {**answer, "answers": items}


def _is_ref(entry: object) -> bool:
    return (
        isinstance(entry, Mapping)
        and set(entry) == {"upload"}
        and isinstance(entry.get("upload"), str)
    )
