"""Event loops of the package's own: run a coroutine in a fresh loop (the conformance suite's
checks) and close a loop whose thread is done with it (`ask_sync`'s question loop).

`run` leaves the thread's current loop alone: `asyncio.run` would reset the thread's current
event loop to none when it ends, which can pull the loop from under an async pytest plugin
(pytest-asyncio, anyio) running the author's other tests in the same session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

__all__ = ["close_loop", "run"]


def run(main: Coroutine[Any, Any, None]) -> None:
    """Run ``main`` to completion in a fresh loop, then cancel what it left and close the loop."""
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(main)
    finally:
        close_loop(loop)


def close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel and settle what ``loop`` (stopped, not closed) still runs, then close it."""
    try:
        left = asyncio.all_tasks(loop)
        for task in left:
            task.cancel()
        if left:
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        loop.close()
