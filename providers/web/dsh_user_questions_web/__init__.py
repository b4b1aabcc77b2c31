"""dsh-user-questions-web: answer an agent's questions in a local web page.

A provider for the dsh-user-questions service: `WebProvider` serves a page from the harness's
own event loop; installing the distribution registers it through the ``dsh`` entry points.
"""

from __future__ import annotations

from .answers import check_page_answer
from .provider import ENV_ALLOWED_HOSTS, ENV_HOST, ENV_PORT, WebProvider, WebProviderWarning

__all__ = [
    "ENV_ALLOWED_HOSTS",
    "ENV_HOST",
    "ENV_PORT",
    "WebProvider",
    "WebProviderWarning",
    "__version__",
    "check_page_answer",
]

__version__ = "0.1.0.dev0"
