"""Secret answers sealed to the asking harness: never in clear in the store.

A question with ``secret=True`` takes free text the human gives to the asking code only. The
asking provider holds a key pair (PyNaCl); it writes the public key beside the question in
``dsh_inbox_seals`` in the transaction that records it (before it, for a question without a
key). Every surface that answers goes through `Inbox.answer`, which seals the custom text of
each secret question to that key (a NaCl sealed box) before the answer is written, so the
store, ``dsh-inbox serve``, the late-answer records and every other harness hold only
``sealed:<base64>``. Only the asking provider opens it, when it hands the answer to its caller.
An answer to a secret question whose asker left no key is refused (``BAD_ANSWER``), never
stored in clear.

The private key is the store's, per user: a file in the user's state directory,
``seal-keys/<digest of the store URL>.key`` (mode 0600, in a 0700 folder), created atomically
(written under a temporary name, then linked to its name: two harnesses starting at once end
up with the one key). Every harness of this user asking through this store (any label, any
pid) uses it, so a harness restarted with the default configuration opens what was answered
while it was down. Where that file cannot be written (a read-only home), the key lives in
memory and is registered as ``ephemeral:<key>``: an answer to a secret whose asker is no longer
running (its lease is not live) is then refused at once with ``BAD_ANSWER`` saying why, so the
human knows it cannot be delivered, and nothing is stored. A harness on another machine has
another key file: what was sealed on one machine is opened there (copy the file to share it).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import logging
import os
import secrets
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionRequest,
    UserQuestionError,
)

from ._url import InboxURL, default_sqlite_path

if TYPE_CHECKING:
    from ._store import Inbox

__all__ = ["SEALED_PREFIX", "Sealer", "register_seal", "seal_secrets", "seal_step"]

SEALED_PREFIX = "sealed:"
EPHEMERAL_PREFIX = "ephemeral:"
_log = logging.getLogger(__name__)

_TABLE = (
    "CREATE TABLE IF NOT EXISTS dsh_inbox_seals"
    " (question_id TEXT PRIMARY KEY, public_key TEXT NOT NULL)"
)


def _nacl() -> Any:
    try:
        import nacl.public
    except ImportError as err:  # pragma: no cover - a dependency of the distribution
        raise ImportError("secret questions need PyNaCl: pip install pynacl") from err
    return nacl.public


def _secret_ids(request: AskUserQuestionRequest) -> set[str]:
    return {question.id for question in request.questions if question.secret}


def _ensure_table(inbox: Inbox) -> None:
    if not getattr(inbox, "_seals_ready", False):
        inbox._engine.write(_TABLE, {})
        inbox._seals_ready = True  # type: ignore[attr-defined]


_REGISTER = (
    "INSERT INTO dsh_inbox_seals (question_id, public_key) VALUES (:id, :key)"
    " ON CONFLICT (question_id) DO UPDATE SET public_key = :key"
)


# The same, only when the question's row is there (its insert may have found the key taken).
_REGISTER_IF_ADDED = (
    "INSERT INTO dsh_inbox_seals (question_id, public_key) SELECT :id, :key"
    " WHERE EXISTS (SELECT 1 FROM dsh_inbox_questions WHERE id = :id)"
    " ON CONFLICT (question_id) DO UPDATE SET public_key = :key"
)


def register_seal(inbox: Inbox, question_id: str, public_key: str) -> None:
    """Record the key the question's secret answers are sealed to (the latest asker's)."""
    _ensure_table(inbox)
    inbox._engine.write(_REGISTER, {"id": question_id, "key": public_key})


def seal_step(inbox: Inbox, question_id: str, public_key: str) -> tuple[str, dict[str, Any]]:
    """`register_seal` as a step of a transaction (`Engine.write_steps`): written with the
    question's row, so no answer ever finds the question without its key."""
    _ensure_table(inbox)
    return _REGISTER_IF_ADDED, {"id": question_id, "key": public_key}


def seal_secrets(
    inbox: Inbox, question_id: str, request: AskUserQuestionRequest, answer: AskUserQuestionAnswer
) -> AskUserQuestionAnswer:
    """``answer`` with every secret question's custom text sealed to its asker's key."""
    secret = _secret_ids(request)
    if not secret or not any(i.id in secret and i.custom is not None for i in answer.answers):
        return answer
    _ensure_table(inbox)
    rows = inbox._engine.read(
        "SELECT public_key FROM dsh_inbox_seals WHERE question_id = :id", {"id": question_id}
    )
    if not rows:
        raise UserQuestionError.bad_answer(
            f"question {question_id} asks for a secret but its asker left no key to seal it"
            " to; nothing was stored"
        )
    registered = str(rows[0][0])
    if registered.startswith(EPHEMERAL_PREFIX):
        if not inbox.lease_live(question_id):
            raise UserQuestionError.bad_answer(
                f"question {question_id} asks for a secret, but its harness is no longer"
                " running and kept its key in memory only (its state directory could not be"
                " written): a secret given now could never reach it; nothing was stored"
            )
        registered = registered[len(EPHEMERAL_PREFIX) :]
    box = _nacl().SealedBox(_nacl().PublicKey(base64.b64decode(registered)))
    items = []
    for item in answer.answers:
        if item.id in secret and item.custom is not None:
            sealed = base64.b64encode(box.encrypt(item.custom.encode("utf-8"))).decode("ascii")
            item = AskUserQuestionAnswerItem(
                id=item.id, selected=item.selected, custom=SEALED_PREFIX + sealed
            )
        items.append(item)
    return AskUserQuestionAnswer(items, answered_by=answer.answered_by)


def _read_key(key_file: Path) -> Any:
    return _nacl().PrivateKey(base64.b64decode(key_file.read_text().strip(), validate=True))


def _kept_key(key_file: Path) -> Any:
    """The key in ``key_file``, made there atomically (mode 0600) when there is none."""
    with contextlib.suppress(FileNotFoundError):
        return _read_key(key_file)
    folder = key_file.parent
    if not folder.is_dir():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.chmod(0o700)  # the mode of mkdir() is masked by the umask
    key = _nacl().PrivateKey.generate()
    draft = folder / f".{key_file.name}.{secrets.token_hex(6)}"
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as file:
            file.write(base64.b64encode(bytes(key)).decode("ascii") + "\n")
            file.flush()
            os.fsync(file.fileno())
        try:
            os.link(draft, key_file)  # never replaces a key another process made first
        except FileExistsError:
            return _read_key(key_file)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(draft)
    return key


def key_file_for(url: InboxURL) -> Path:
    """Where the sealing key of the store at ``url`` is kept for this user."""
    where = str(Path(url.target).absolute()) if url.engine == "sqlite" else str(url)
    digest = hashlib.sha256(f"{url.engine}:{where}".encode()).hexdigest()[:24]
    return default_sqlite_path().parent / "seal-keys" / f"{digest}.key"


class Sealer:
    """The asking provider's key pair: seals are opened here and nowhere else.

    ``key_file``: the key is kept there (made when missing, see `_kept_key`), read on first
    use only (a provider that never meets a secret touches no file); ``None``: in memory only
    (``durable`` is then false).
    """

    def __init__(self, key_file: Path | None = None) -> None:
        self._key_file = key_file
        self._lock = threading.Lock()
        self._loaded: tuple[Any, str, bool] | None = None

    def _load(self) -> tuple[Any, str, bool]:
        with self._lock:
            if self._loaded is None:
                public = _nacl()
                key: Any = None
                if self._key_file is not None:
                    try:
                        key = _kept_key(self._key_file)
                    except (OSError, ValueError) as err:
                        _log.warning(
                            "cannot keep the inbox's sealing key in %s (%s): secret answers"
                            " can reach this process only while it runs",
                            self._key_file,
                            err,
                        )
                durable = key is not None
                if key is None:
                    key = public.PrivateKey.generate()
                shown = base64.b64encode(bytes(key.public_key)).decode("ascii")
                self._loaded = (public.SealedBox(key), shown, durable)
            return self._loaded

    @property
    def public_key(self) -> str:
        """The public key, base64."""
        return self._load()[1]

    @property
    def durable(self) -> bool:
        """Whether the private key is kept in a file (it outlives this process)."""
        return self._load()[2]

    @property
    def registered_key(self) -> str:
        """The key as written beside a question: ``ephemeral:`` marks one held in memory."""
        return self.public_key if self.durable else EPHEMERAL_PREFIX + self.public_key

    @classmethod
    def for_store(cls, url: InboxURL) -> Sealer:
        """The sealer of this user's harnesses on the store at ``url`` (see the module)."""
        return cls(key_file_for(url))

    def open(
        self, request: AskUserQuestionRequest, answer: AskUserQuestionAnswer
    ) -> AskUserQuestionAnswer:
        """``answer`` with the sealed custom texts of secret questions opened."""
        secret = _secret_ids(request)
        if not secret:
            return answer
        items = []
        for item in answer.answers:
            custom = item.custom
            if item.id in secret and custom is not None and custom.startswith(SEALED_PREFIX):
                try:
                    opened = self._load()[0].decrypt(base64.b64decode(custom[len(SEALED_PREFIX) :]))
                except Exception as err:
                    raise UserQuestionError.bad_answer(
                        f"question {item.id}'s secret was sealed to another harness's key"
                        " (answered for a harness on another machine, or for another user?);"
                        " it stays undelivered in the store"
                    ) from err
                item = AskUserQuestionAnswerItem(
                    id=item.id, selected=item.selected, custom=opened.decode("utf-8")
                )
            items.append(item)
        return AskUserQuestionAnswer(items, answered_by=answer.answered_by)
