"""dsh-user-questions-inbox: questions that outlive the process.

Every ask becomes a record in a durable store (a SQLite file on one machine, or PostgreSQL for
many); the ``inbox`` provider waits for its final state, and surfaces in other processes
(``dsh-inbox list | answer | serve``) answer it. The first answer wins; a late one is kept.
"""

from __future__ import annotations

from ._events import InboxEvent
from ._record import AnswerOutcome, QuestionRecord, State
from ._store import AnswerResult, Inbox, open_inbox
from ._url import ENV_INBOX, default_sqlite_path, parse_url
from .provider import AlreadyDelivered

__all__ = [
    "ENV_INBOX",
    "AlreadyDelivered",
    "AnswerOutcome",
    "AnswerResult",
    "Inbox",
    "InboxEvent",
    "QuestionRecord",
    "State",
    "__version__",
    "default_sqlite_path",
    "open_inbox",
    "parse_url",
]

__version__ = "0.1.0.dev0"
