"""Ask the human a structured question from a Python agent harness.

The user-questions service as a pluggy plugin: register `dsh_user_questions.plugin` in a
`dsh_user_questions.harness.HarnessContext` (or load the ``"dsh"`` entry points), then
``await ctx.user_questions.ask(request)``; exactly one provider shows it to the human.

The names below are the package's top level: the payloads, the service, the error classes and
the hook markers, each importable from here only. The documented public modules
(`harness`, `tool`, `rules`, ... listed in the API reference) hold the rest; a module whose name
starts with ``_`` is private.
"""

from __future__ import annotations

from ._markers import hookimpl, hookspec
from ._payloads import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionInput,
    AskUserQuestionIntent,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    AskUserQuestionUpload,
    WireFormatError,
)
from ._service import UserQuestionProvider, UserQuestionService
from .errors import (
    AskAbortedError,
    AskCancelledError,
    AskTimedOutError,
    BadAnswerError,
    CallerRefusedError,
    HarnessError,
    InvalidRequestError,
    NotInteractiveError,
    ProviderSetupError,
    StoreError,
    UserQuestionError,
    UserQuestionErrorCode,
    is_timeout,
)

__all__ = [
    "AskAbortedError",
    "AskCancelledError",
    "AskTimedOutError",
    "AskUserQuestionAnswer",
    "AskUserQuestionAnswerItem",
    "AskUserQuestionInput",
    "AskUserQuestionIntent",
    "AskUserQuestionItem",
    "AskUserQuestionOption",
    "AskUserQuestionRequest",
    "AskUserQuestionUpload",
    "BadAnswerError",
    "CallerRefusedError",
    "HarnessError",
    "InvalidRequestError",
    "NotInteractiveError",
    "ProviderSetupError",
    "StoreError",
    "UserQuestionError",
    "UserQuestionErrorCode",
    "UserQuestionProvider",
    "UserQuestionService",
    "WireFormatError",
    "__version__",
    "hookimpl",
    "hookspec",
    "is_timeout",
]

__version__ = "0.1.0.dev0"
"""This distribution's version (setup.cfg reads it from here: the one place it is written)."""
