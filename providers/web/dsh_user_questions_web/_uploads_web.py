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

from dsh_user_questions import AskUserQuestionItem
from dsh_user_questions._uploads import UploadWriter, resolve_upload_refs
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
    """``answer`` with each ``{"upload": token}`` swapped for the record of the file this ask
    received under that token for that question (`BAD_ANSWER` for any other token)."""

    def lookup(token: str, item_id: str) -> dict[str, Any] | None:
        known = uploads.get(token)
        return known[1] if known is not None and known[0] == item_id else None

    return resolve_upload_refs(answer, lookup)
