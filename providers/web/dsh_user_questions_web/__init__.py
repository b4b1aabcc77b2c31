"""dsh-user-questions-web: answer an agent's questions in a local web page.

A provider for the dsh-user-questions service: `WebProvider` serves a page from the harness's
own event loop; installing the distribution registers it through the ``dsh`` entry points.

The page and its HTTP/SSE protocol work over any `QuestionBoard`:
``dsh_user_questions_web.app.create_app(board, token=..., allowed_hosts=...)`` builds the ASGI
app and `dsh_user_questions_web.server.start_server` serves it with the connection bounds of
`Limits`. Those two modules load Starlette and uvicorn, so they are not imported here. Every
other public name is imported from this package, and from nowhere else (the modules defining
them are private).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._answers import check_page_answer, problems_of
    from ._board import BoardEvent, Outcome, QuestionBoard, Settlement, SettlementStatus
    from ._limits import Limits
    from ._provider import (
        ENV_ALLOWED_HOSTS,
        ENV_HOST,
        ENV_IDENTITY_HEADER,
        ENV_PORT,
        ENV_PUBLIC_URL,
        ENV_TOKEN,
        ENV_TRUSTED_PROXIES,
        WebProvider,
        WebProviderWarning,
    )

# Each public name and the module that defines it: loaded on first use, so that loading the
# plugin (which imports this package) costs no more than the core does.
_HOMES = {
    "check_page_answer": "_answers",
    "problems_of": "_answers",
    "BoardEvent": "_board",
    "Outcome": "_board",
    "QuestionBoard": "_board",
    "Settlement": "_board",
    "SettlementStatus": "_board",
    "Limits": "_limits",
    "ENV_ALLOWED_HOSTS": "_provider",
    "ENV_HOST": "_provider",
    "ENV_IDENTITY_HEADER": "_provider",
    "ENV_PORT": "_provider",
    "ENV_PUBLIC_URL": "_provider",
    "ENV_TOKEN": "_provider",
    "ENV_TRUSTED_PROXIES": "_provider",
    "WebProvider": "_provider",
    "WebProviderWarning": "_provider",
}

__all__ = [
    "ENV_ALLOWED_HOSTS",
    "ENV_HOST",
    "ENV_IDENTITY_HEADER",
    "ENV_PORT",
    "ENV_PUBLIC_URL",
    "ENV_TOKEN",
    "ENV_TRUSTED_PROXIES",
    "BoardEvent",
    "Limits",
    "Outcome",
    "QuestionBoard",
    "Settlement",
    "SettlementStatus",
    "WebProvider",
    "WebProviderWarning",
    "__version__",
    "check_page_answer",
    "problems_of",
]

__version__ = "0.1.0.dev0"
"""This distribution's version (setup.cfg reads it from here: the one place it is written)."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
