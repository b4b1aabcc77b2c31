"""Files the human uploads, written where the asker is: one writer for every provider.

A question with ``input`` of type ``upload`` is answered with records ``{"name", "media_type",
"size", "sha256", "path"}``. The bytes never pass through the model or a log: a provider (the
web page's upload route, the terminal's path entry, the inbox's harness receiving bytes kept in
its store) streams them through an `UploadWriter` into the uploads folder, which makes the
record. The folder is `uploads_folder`: ``DSH_USER_QUESTIONS_UPLOADS`` when the harness sets
it, else ``$XDG_STATE_HOME/dsh-user-questions/uploads`` (``~/.local/state`` when unset); it is
made private (``0700``), and each file is written ``0600`` in a fresh folder of its own inside
it, under the name the human gave, which `upload_name` checks first: a name that is empty, too
long, has a path separator, a control character, or is ``.``/``..`` is refused, never
rewritten, so no name can escape the folder.

A writer stops at the question's ``max_bytes``: the part written is deleted and
`UploadRefused` says so (a page answers it with 413); so is a file of a type the question does
not accept (`accepted`). Nothing is kept of a refused upload.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import stat
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from ._i18n import N_
from ._inputs import accepts
from ._problems import Problem, shown_problem

__all__ = [
    "UPLOADS_ENV",
    "UploadRefused",
    "UploadWriter",
    "accepted",
    "copy_file",
    "discard_upload",
    "media_type_of",
    "resolve_upload_refs",
    "upload_name",
    "uploads_folder",
    "write_upload",
]

UPLOADS_ENV = "DSH_USER_QUESTIONS_UPLOADS"
"""The folder uploaded files are written to (default: the state directory's ``uploads``)."""

_MAX_NAME = 255
_CHUNK = 64 * 1024


class UploadRefused(ValueError):
    """An upload not taken (nothing of it is kept); ``status`` is the HTTP status a page gets:
    413 over ``max_bytes``, 415 a type the question does not accept, 400 a bad name."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status

    @property
    def shown(self) -> str:
        """Why, as a person reads it in the environment's language (``str()``: English)."""
        return shown_problem(self.args[0])


def _too_large(name: str, limit: int | None) -> Problem:
    return Problem(
        N_("{name} is larger than this question takes ({limit} bytes)"),
        name=repr(name),
        limit=limit,
    )


def uploads_folder(folder: str | os.PathLike[str] | None = None) -> Path:
    """The uploads folder (``folder``, else `UPLOADS_ENV`, else the state directory's), made
    if missing and private (``0700``) when this process made it."""
    chosen = folder if folder is not None else os.environ.get(UPLOADS_ENV, "").strip()
    if chosen:
        path = Path(chosen).expanduser()
    else:
        state = os.environ.get("XDG_STATE_HOME", "").strip()
        base = Path(state) if state else Path.home() / ".local" / "state"
        path = base / "dsh-user-questions" / "uploads"
    if not path.is_dir():
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path, 0o700)
    return path


def upload_name(name: object) -> str:
    """``name`` as the file's name, or `UploadRefused` (400) saying why it cannot be one."""
    if not isinstance(name, str) or not name.strip():
        raise UploadRefused(Problem(N_("the file has no name")), 400)
    text = unicodedata.normalize("NFC", name)
    if len(text) > _MAX_NAME or len(text.encode("utf-8", "surrogatepass")) > _MAX_NAME:
        raise UploadRefused(
            Problem(N_("the file's name is longer than {limit} characters"), limit=_MAX_NAME), 400
        )
    if "/" in text or "\\" in text:
        raise UploadRefused(Problem(N_("the file's name holds a path separator (/ or \\)")), 400)
    if text in (".", "..") or text != text.strip():
        raise UploadRefused(Problem(N_("the file's name is not a plain file name")), 400)
    if any(unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp") for char in text):
        raise UploadRefused(
            Problem(N_("the file's name holds a control or invisible character")), 400
        )
    return text


_TYPES = {
    ".txt": "text/plain", ".md": "text/markdown", ".csv": "text/csv", ".json": "application/json",
    ".pdf": "application/pdf", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
    ".gif": "image/gif", ".webp": "image/webp", ".svg": "image/svg+xml", ".zip": "application/zip",
    ".html": "text/html", ".xml": "application/xml", ".yaml": "application/yaml",
    ".yml": "application/yaml", ".log": "text/plain", ".py": "text/x-python",
    ".gz": "application/gzip", ".tar": "application/x-tar",
}  # fmt: skip


def media_type_of(name: str, given: str | None = None) -> str:
    """The media type of a file called ``name``: ``given`` (a browser's, without parameters)
    when it is a plain ``type/subtype``, else guessed from the name's extension."""
    if given:
        bare = given.split(";", 1)[0].strip().lower()
        if bare.count("/") == 1 and all(part.strip() for part in bare.split("/")):
            return bare
    import mimetypes

    suffix = Path(name).suffix.lower()
    return _TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"


def accepted(accept: Sequence[str] | None, name: str, media_type: str) -> bool:
    """Whether a file ``name`` of ``media_type`` is among ``accept``'s types (the core's rule,
    `dsh_user_questions._inputs.accepts`); none: any file."""
    return not accept or accepts(tuple(accept), media_type, name)


class UploadWriter:
    """One file being written into the uploads folder; `write` chunks, then `finish` (the
    record) or `abort` (nothing kept). A context manager: leaving it unfinished aborts."""

    def __init__(
        self,
        name: object,
        *,
        media_type: str | None = None,
        max_bytes: int | None = None,
        accept: Sequence[str] | None = None,
        folder: str | os.PathLike[str] | None = None,
    ) -> None:
        self.name = upload_name(name)
        self.media_type = media_type_of(self.name, media_type)
        if not accepted(accept, self.name, self.media_type):
            wanted = ", ".join(accept or ())
            raise UploadRefused(
                Problem(
                    N_("{name} ({type}) is not a type this question takes: {wanted}"),
                    name=repr(self.name),
                    type=self.media_type,
                    wanted=wanted,
                ),
                415,
            )
        self.max_bytes = max_bytes
        self.size = 0
        self._hash = hashlib.sha256()
        root = uploads_folder(folder)
        # A fresh private folder per file: two uploads of one name never meet, and the name
        # is the human's own.
        self.folder = root / secrets.token_hex(8)
        self.folder.mkdir(mode=0o700)
        self.path = self.folder / self.name
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        self._file: BinaryIO | None = os.fdopen(fd, "wb")
        self._done = False

    def write(self, chunk: bytes) -> None:
        """Append ``chunk``; over ``max_bytes`` everything is deleted and `UploadRefused`
        (413) raised."""
        if self._file is None:
            raise RuntimeError("the upload is closed")
        self.size += len(chunk)
        if self.max_bytes is not None and self.size > self.max_bytes:
            self.abort()
            raise UploadRefused(_too_large(self.name, self.max_bytes), 413)
        self._hash.update(chunk)
        self._file.write(chunk)

    def finish(self) -> dict[str, Any]:
        """Close the file; its answer record ``{name, media_type, size, sha256, path}``."""
        if self._file is None:
            raise RuntimeError("the upload is closed")
        self._file.close()
        self._file = None
        self._done = True
        return {
            "name": self.name,
            "media_type": self.media_type,
            "size": self.size,
            "sha256": self._hash.hexdigest(),
            "path": str(self.path),
        }

    def abort(self) -> None:
        """Delete what was written (and its folder)."""
        if self._file is not None:
            self._file.close()
            self._file = None
        if not self._done:
            shutil.rmtree(self.folder, ignore_errors=True)
        self._done = True

    def __enter__(self) -> UploadWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self.abort()


def write_upload(
    chunks: Iterable[bytes],
    name: object,
    *,
    media_type: str | None = None,
    max_bytes: int | None = None,
    accept: Sequence[str] | None = None,
    folder: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Write ``chunks`` as one upload; its record (`UploadRefused`: nothing kept)."""
    with UploadWriter(
        name, media_type=media_type, max_bytes=max_bytes, accept=accept, folder=folder
    ) as writer:
        for chunk in chunks:
            writer.write(chunk)
        return writer.finish()


def copy_file(source: str | os.PathLike[str], **limits: Any) -> dict[str, Any]:
    """Upload the local file ``source`` (the terminal's path entry): its name, streamed."""
    path = Path(source).expanduser()
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        raise UploadRefused(
            Problem(N_("{name} is not a regular file"), name=repr(path.name or str(path))), 400
        )
    max_bytes = limits.get("max_bytes")
    if max_bytes is not None and info.st_size > max_bytes:
        raise UploadRefused(_too_large(path.name, max_bytes), 413)
    with path.open("rb") as file:
        return write_upload(iter(lambda: file.read(_CHUNK), b""), path.name, **limits)


def discard_upload(record: Any) -> None:
    """Delete the file of an upload record written by `UploadWriter` (and its folder), when
    the answer that carried it was not taken."""
    path = record.get("path") if isinstance(record, dict) else None
    if isinstance(path, str):
        target = Path(path)
        with contextlib.suppress(OSError):
            target.unlink()
        with contextlib.suppress(OSError):
            target.parent.rmdir()


def resolve_upload_refs(
    answer: object, lookup: Callable[[str, str], Mapping[str, Any] | None]
) -> object:
    """``answer`` (wire form) with each ``{"upload": token}`` in an item's ``value`` swapped
    for ``lookup(token, item_id)`` (the record of a file uploaded for that question; ``None``:
    not one). A page sends those references, never a path on the asker's machine; a token not
    uploaded for that question is ``BAD_ANSWER`` naming where. Anything else is left for the
    core's rules."""
    from .errors import UserQuestionError

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
            found = lookup(entry["upload"], str(item.get("id")))
            if found is None:
                problems.append(
                    f"answers[{index}].value[{position}]: names no file uploaded for this question"
                )
                continue
            records.append(dict(found))
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
