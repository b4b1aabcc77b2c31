"""Files uploaded through the inbox: their bytes travel in the store, to the asking harness.

A page on another machine (``dsh-inbox serve``) or ``dsh-inbox answer --attach`` cannot write
on the asker's machine, so an uploaded file is kept in the store's table
``dsh_inbox_uploads`` (SQLite or PostgreSQL, the bytes in one row, at most the question's
``max_bytes``), and the answer's record names it by a placeholder path,
``/dsh-inbox-upload/<token>``. The asking harness, when it takes the answer (`write_out`), writes
each file into its own uploads folder (`dsh_user_questions._uploads`), checks its size and
SHA-256 against the record and puts the real path in the answer it returns. Retention
(`Inbox.prune`) deletes a file's row with its question's record (`prune_uploads`).

The table (`_engine.UPLOADS_TABLE`) is made with the store's schema, on every opening, beside
the questions' table: a store made before it gains it when it is next opened.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from collections.abc import Sequence
from typing import Any

import attrs
from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    AskUserQuestionUpload,
)
from dsh_user_questions._uploads import (
    UploadRefused,
    accepted,
    media_type_of,
    resolve_upload_refs,
    upload_name,
    write_upload,
)
from dsh_user_questions.view import question_view

from ._store import Inbox

__all__ = [
    "PLACEHOLDER",
    "InboxUploadSink",
    "attach_files",
    "open_upload",
    "prune_uploads",
    "resolve_uploads",
    "stash_local_uploads",
    "write_out",
]

PLACEHOLDER = "/dsh-inbox-upload/"
"""How an answer's upload record names a file still in the store (then its token): an absolute
path no file has, replaced by the asker's own file before the answer leaves the provider."""


def _table(inbox: Inbox) -> Any:
    # The store's engine: its schema (made or checked on every opening) has the uploads table.
    return inbox._engine


def _field(request: AskUserQuestionRequest, item_id: str) -> Any:
    for item in request.questions:
        if item.id == item_id:
            field = question_view(item).input
            if field is not None and field.type == "upload":
                return field
            raise LookupError(f"question {item_id!r} takes no file")
    raise LookupError(f"there is no question {item_id!r}")


@attrs.define
class InboxUploadSink:
    """One file on its way into the store: `write` chunks (at most the question's
    ``max_bytes``; `UploadRefused` 413 beyond, nothing kept), `finish` (its token), `abort`."""

    inbox: Inbox
    question_id: str
    item_id: str
    name: str
    media_type: str
    max_bytes: int | None
    size: int = 0
    _data: bytearray = attrs.field(factory=bytearray)
    _done: bool = False

    def write(self, chunk: bytes) -> None:
        """Append ``chunk``."""
        if self._done:
            raise RuntimeError("the upload is closed")
        self.size += len(chunk)
        if self.max_bytes is not None and self.size > self.max_bytes:
            self.abort()
            raise UploadRefused(
                f"{self.name!r} is larger than this question takes ({self.max_bytes} bytes)", 413
            )
        self._data += chunk

    def finish(self) -> str:
        """Keep the file in the store; the token the answer names it by."""
        if self._done:
            raise RuntimeError("the upload is closed")
        record = self.inbox.get(self.question_id)
        if record is None or record.state.final:
            self.abort()
            raise LookupError(f"question {self.question_id!r} is not pending")
        data = bytes(self._data)
        token = secrets.token_urlsafe(12)
        _table(self.inbox).write(
            "INSERT INTO dsh_inbox_uploads (token, question_id, item_id, name, media_type,"
            " size, sha256, data, created) VALUES (:token, :question, :item, :name, :media,"
            " :size, :sha, :data, :now)",
            {
                "token": token,
                "question": self.question_id,
                "item": self.item_id,
                "name": self.name,
                "media": self.media_type,
                "size": len(data),
                "sha": hashlib.sha256(data).hexdigest(),
                "data": data,
                "now": time.time(),
            },
        )
        self._done = True
        self._data = bytearray()
        return token

    def abort(self) -> None:
        """Drop what was sent."""
        self._done = True
        self._data = bytearray()


def open_upload(
    inbox: Inbox, question_id: str, item_id: str, name: str, media_type: str | None
) -> InboxUploadSink:
    """Start a file for question ``item_id`` of the pending record ``question_id``. Raises
    `UploadRefused` (a bad name, a refused type) or `LookupError` (no such pending question
    taking files)."""
    record = inbox.get(question_id)
    if record is None or record.state.final:
        raise LookupError(f"question {question_id!r} is not pending")
    field = _field(record.to_request(), item_id)
    plain = upload_name(name)
    kind = media_type_of(plain, media_type)
    if not accepted(field.accept, plain, kind):
        raise UploadRefused(
            f"{plain!r} ({kind}) is not a type this question takes: {', '.join(field.accept)}",
            415,
        )
    return InboxUploadSink(inbox, question_id, item_id, plain, kind, field.max_bytes)


def attach_files(
    inbox: Inbox, question_id: str, item_id: str, paths: Sequence[str]
) -> list[dict[str, Any]]:
    """``dsh-inbox answer --attach``: put each local file in the store for that question;
    the answer's value (upload references)."""
    refs = []
    for path in paths:
        with open(os.path.expanduser(path), "rb") as file:
            sink = open_upload(inbox, question_id, item_id, os.path.basename(path), None)
            while chunk := file.read(64 * 1024):
                sink.write(chunk)
            refs.append({"upload": sink.finish()})
    return refs


def stash_local_uploads(
    inbox: Inbox, question_id: str, answer: AskUserQuestionAnswer
) -> dict[str, Any]:
    """The wire form of an answer given in this process's terminal form (``dsh-inbox answer``
    on a TTY), its uploaded files moved into the store: the form copied them into this
    machine's uploads folder, but the asker may be elsewhere. Each becomes an upload
    reference (`resolve_uploads` makes it a record again); the local copy is deleted."""
    from dsh_user_questions._uploads import discard_upload

    wire = answer.to_dict()
    for item, given in zip(wire["answers"], answer.answers, strict=True):
        if given.value is None or not isinstance(given.value, tuple):
            continue
        refs: list[Any] = []
        for entry in given.value:
            if not isinstance(entry, AskUserQuestionUpload):
                refs.append(entry)
                continue
            sink = open_upload(inbox, question_id, given.id, entry.name, entry.media_type)
            with open(entry.path, "rb") as file:
                while chunk := file.read(64 * 1024):
                    sink.write(chunk)
            refs.append({"upload": sink.finish()})
            discard_upload({"path": entry.path})
        item["value"] = refs
    return wire


def resolve_uploads(inbox: Inbox, question_id: str, answer: object) -> object:
    """``answer`` with each ``{"upload": token}`` swapped for the record of that file (its
    path the `PLACEHOLDER`); a token not uploaded for that question is ``BAD_ANSWER``."""

    def lookup(token: str, item_id: str) -> dict[str, Any] | None:
        rows = _table(inbox).read(
            "SELECT name, media_type, size, sha256 FROM dsh_inbox_uploads"
            " WHERE token = :token AND question_id = :question AND item_id = :item",
            {"token": token, "question": question_id, "item": item_id},
        )
        if not rows:
            return None
        name, media_type, size, sha256 = rows[0]
        return {
            "name": name,
            "media_type": media_type,
            "size": int(size),
            "sha256": sha256,
            "path": PLACEHOLDER + token,
        }

    return resolve_upload_refs(answer, lookup)


def write_out(inbox: Inbox, answer: AskUserQuestionAnswer) -> AskUserQuestionAnswer:
    """The asking harness takes an answer: each file still in the store is written into its
    uploads folder (its size and SHA-256 checked against the record) and the record's path
    becomes that file's."""
    items = []
    changed = False
    for item in answer.answers:
        value = item.value
        uploads = (
            [entry for entry in value if isinstance(entry, AskUserQuestionUpload)]
            if isinstance(value, tuple)
            else []
        )
        if not uploads or not any(entry.path.startswith(PLACEHOLDER) for entry in uploads):
            items.append(item)
            continue
        records: list[AskUserQuestionUpload] = []
        for entry in uploads:
            if entry.path.startswith(PLACEHOLDER):
                written = _write_one(inbox, entry.path[len(PLACEHOLDER) :], entry)
                entry = attrs.evolve(entry, path=written)
            records.append(entry)
        items.append(attrs.evolve(item, value=tuple(records)))
        changed = True
    return attrs.evolve(answer, answers=items) if changed else answer


def _write_one(inbox: Inbox, token: str, expected: Any) -> str:
    rows = _table(inbox).read(
        "SELECT name, media_type, data FROM dsh_inbox_uploads WHERE token = :token",
        {"token": token},
    )
    if not rows:
        raise LookupError(f"the uploaded file {expected.name!r} is no longer in the inbox")
    name, media_type, data = rows[0]
    data = bytes(data)
    record = write_upload([data], name, media_type=media_type)
    if record["size"] != expected.size or record["sha256"] != expected.sha256:
        from dsh_user_questions._uploads import discard_upload

        discard_upload(record)
        raise ValueError(f"the uploaded file {name!r} does not match its record")
    return str(record["path"])


def prune_uploads(inbox: Inbox) -> int:
    """Delete the files whose question's record is gone (retention deletes them with it)."""
    return int(
        _table(inbox).write(
            "DELETE FROM dsh_inbox_uploads"
            " WHERE question_id NOT IN (SELECT id FROM dsh_inbox_questions)",
            {},
        )
    )
