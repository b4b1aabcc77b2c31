"""dsh-user-questions-web: answer an agent's questions in a local web page.

A provider for the dsh-user-questions service: `WebProvider` serves a page from the harness's
own event loop; installing the distribution registers it through the ``dsh`` entry points.

The page and its HTTP/SSE protocol work over any `QuestionBoard` (module
`dsh_user_questions_web.board`): ``dsh_user_questions_web.app.create_app(board, token=...,
allowed_hosts=...)`` builds the ASGI app and `dsh_user_questions_web.server.start_server`
serves it with the connection bounds of `Limits`. Those two modules load Starlette and uvicorn,
so they are not imported here.
"""

from __future__ import annotations

from .answers import MAX_CUSTOM_CHARS, check_page_answer
from .board import BoardEvent, QuestionBoard, Receipt
from .limits import Limits
from .provider import (
    ENV_ALLOWED_HOSTS,
    ENV_HOST,
    ENV_PORT,
    ENV_TOKEN,
    WebProvider,
    WebProviderWarning,
)

__all__ = [
    "ENV_ALLOWED_HOSTS",
    "ENV_HOST",
    "ENV_PORT",
    "ENV_TOKEN",
    "MAX_CUSTOM_CHARS",
    "BoardEvent",
    "Limits",
    "QuestionBoard",
    "Receipt",
    "WebProvider",
    "WebProviderWarning",
    "__version__",
    "check_page_answer",
]

__version__ = "0.1.0.dev0"
"""This distribution's version (setup.cfg reads it from here: the one place it is written)."""
