"""Secret answers sealed to the asking harness: never in clear in the store.

A question with ``secret=True`` takes free text the human gives to the asking code only. The
asking provider holds a key pair (PyNaCl); it writes the public key beside the question in
``dsh_inbox_seals`` as it records it. Every surface that answers goes through `Inbox.answer`,
which seals the custom text of each secret question to that key (a NaCl sealed box) before the
answer is written, so the store, ``dsh-inbox serve``, the late-answer records and every other
harness hold only ``sealed:<base64>``. Only the asking provider opens it, when it hands the
answer to its caller. An answer to a secret question whose asker left no key is refused
(``BAD_ANSWER``), never stored in clear.

The private key lives in memory, or, for a harness with a stable label (``harness=`` or
``DSH_USER_QUESTIONS_INBOX_HARNESS``, the ones that resume after a restart), in a file of its
own in the state directory (mode 0600), so a restarted harness opens what was sealed to it.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionRequest,
    UserQuestionError,
)

if TYPE_CHECKING:
    from ._store import Inbox

__all__ = ["SEALED_PREFIX", "Sealer", "register_seal", "seal_secrets"]

SEALED_PREFIX = "sealed:"

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


def register_seal(inbox: Inbox, question_id: str, public_key: str) -> None:
    """Record the key the question's secret answers are sealed to (the latest asker's)."""
    _ensure_table(inbox)
    inbox._engine.write(
        "INSERT INTO dsh_inbox_seals (question_id, public_key) VALUES (:id, :key)"
        " ON CONFLICT (question_id) DO UPDATE SET public_key = :key",
        {"id": question_id, "key": public_key},
    )


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
    box = _nacl().SealedBox(_nacl().PublicKey(base64.b64decode(str(rows[0][0]))))
    items = []
    for item in answer.answers:
        if item.id in secret and item.custom is not None:
            sealed = base64.b64encode(box.encrypt(item.custom.encode("utf-8"))).decode("ascii")
            item = AskUserQuestionAnswerItem(
                id=item.id, selected=item.selected, custom=SEALED_PREFIX + sealed
            )
        items.append(item)
    return AskUserQuestionAnswer(items)


class Sealer:
    """The asking provider's key pair: seals are opened here and nowhere else."""

    def __init__(self, key_file: Path | None = None) -> None:
        public = _nacl()
        key: Any = None
        if key_file is not None:
            with contextlib.suppress(FileNotFoundError, ValueError):
                key = public.PrivateKey(base64.b64decode(key_file.read_text().strip()))
        if key is None:
            key = public.PrivateKey.generate()
            if key_file is not None:
                key_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w") as file:
                    file.write(base64.b64encode(bytes(key)).decode("ascii") + "\n")
        self._box = public.SealedBox(key)
        self.public_key = base64.b64encode(bytes(key.public_key)).decode("ascii")

    @classmethod
    def for_label(cls, label: str, state_dir: Path | None) -> Sealer:
        """A sealer kept in ``state_dir`` for a stable ``label``, or in memory without one."""
        if state_dir is None:
            return cls()
        digest = hashlib.sha256(label.encode("utf-8")).hexdigest()[:24]
        return cls(state_dir / "seal-keys" / f"{digest}.key")

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
                    opened = self._box.decrypt(base64.b64decode(custom[len(SEALED_PREFIX) :]))
                except Exception as err:
                    raise UserQuestionError.bad_answer(
                        f"question {item.id}'s secret was sealed to another harness's key"
                        " (asked again by a harness with another label?)"
                    ) from err
                item = AskUserQuestionAnswerItem(
                    id=item.id, selected=item.selected, custom=opened.decode("utf-8")
                )
            items.append(item)
        return AskUserQuestionAnswer(items)
