"""``ask_user_question`` as a tool of simonw's ``llm``: a plugin, ``llm -T ask_user_question``.

Installed with ``pip install 'dsh-user-questions[llm]'``, this module is an llm plugin (entry
point ``dsh_user_questions`` in llm's ``llm`` group): ``llm -T ask_user_question`` offers the
tool on the command line, and ``llm.get_tools()["ask_user_question"]`` (or `llm_tool`) in
llm's Python API, in sync and async chains alike.

Every ask goes through one harness context for the process: by default one made on first use,
with the installed ``dsh`` plugins loaded (``HarnessContext().load_entrypoints()``: the
installed provider asks, e.g. the terminal one) and closed when the process exits; or the one
given to `use_context`. The asks run on that context's question loop (see
`UserQuestionService.ask_sync`), so the provider sees one event loop even though llm's sync
chain runs an ``async def`` tool with ``asyncio.run()`` each time. The tool's result is the
tool's own text: the answer JSON, or ``Error: <message>`` for the model to read.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterable
from typing import Any

from .. import tool
from .._sync import arun_tool, close_sync
from ._common import missing_framework

try:
    import llm
except ImportError as err:  # pragma: no cover - depends on what is installed
    raise missing_framework("llm", "llm", err) from err

__all__ = ["llm_tool", "use_context"]

_lock = threading.Lock()
_context: Any | None = None
_workspace: Any = None
_audience: tuple[str, ...] = ()


def use_context(ctx: Any | None, *, workspace: Any = None, audience: Iterable[str] = ()) -> None:
    """Ask through ``ctx`` from now on (``None``: make the process's own on the next ask).

    ``workspace`` (a folder) is the root a model's files question picks from (`tool.run`'s).
    ``audience`` (person ids and ``group:NAME``) is who may answer (`tool.run`'s), set
    by the harness, never the model.
    """
    global _context, _workspace, _audience
    with _lock:
        _context, _workspace, _audience = ctx, workspace, tuple(audience)


def context() -> Any:
    """The harness context every ask of this process goes through (made on first use)."""
    global _context
    with _lock:
        if _context is None:
            from ..harness import HarnessContext

            made = HarnessContext()
            made.load_entrypoints()
            atexit.register(close_sync, made)
            _context = made
        return _context


async def ask_user_question(**arguments: Any) -> str:
    """Run the one tool with the model's arguments, through the process's harness context."""
    ask = arun_tool(context(), arguments, workspace=_workspace, audience=_audience)
    return (await ask).content


def llm_tool() -> llm.Tool:
    """The ``ask_user_question`` tool for llm's Python API (``tools=[llm_tool()]``)."""
    return llm.Tool(
        name=tool.NAME,
        description=tool.DESCRIPTION,
        input_schema=tool.input_schema(),
        implementation=ask_user_question,
    )


@llm.hookimpl
def register_tools(register: Any) -> None:
    """llm's hook: offer ``ask_user_question``."""
    register(llm_tool())
