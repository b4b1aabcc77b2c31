"""MCP, both ways: a server that asks through the installed provider, and elicitation.

Needs the ``mcp`` extra (``pip install 'dsh-user-questions[mcp]'``), the official MCP SDK.

- `build_server` / `serve_stdio` / `serve_http`: the MCP server behind ``dsh-ask mcp`` (stdio)
  and ``dsh-ask mcp --http HOST:PORT`` (Streamable HTTP), serving the tools
  ``ask_user_question`` and ``review_plan`` through ``ctx.user_questions``; their results
  are also ``structuredContent`` (`ANSWER_SCHEMA`, `VERDICT_SCHEMA`).
- `elicitation_callback`: for a harness that is an MCP *client*; pass
  ``elicitation_callback(ctx)`` as the SDK client's ``elicitation_callback`` and a server's
  form-mode ``elicitation/create`` is asked through ``ctx.user_questions``.
- `ElicitationProvider`: for a harness that is an MCP *server*; register
  ``ElicitationProvider(mcp_context)`` and questions go to the connected client's user through
  MCP elicitation.
"""

from __future__ import annotations

try:
    import mcp as _mcp  # noqa: F401  (the SDK must be importable for anything below)
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise ImportError(
        "dsh_user_questions.mcp needs the MCP SDK: pip install 'dsh-user-questions[mcp]'"
    ) from err
try:
    import email_validator as _email_validator  # noqa: F401  (elicitation answers' checks)
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise ImportError(
        "dsh_user_questions.mcp needs email-validator to check elicitation answers:"
        " pip install 'dsh-user-questions[mcp]'"
    ) from err

from ._callback import elicitation_callback
from ._provider import ElicitationProvider
from ._server import build_server, serve_http

__all__ = [
    "ElicitationProvider",
    "build_server",
    "elicitation_callback",
    "serve_http",
]
