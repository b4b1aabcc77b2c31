"""Leases: which live provider is asking a question, so one key is asked by one run at a time.

Every `InboxProvider` has a holder id, ``<host>:<pid>:<random>``, and a row in
``dsh_inbox_leases`` whose heartbeat (``beat``) its watcher renews every `BEAT_SECONDS`; the
row is deleted when the provider closes. A record's ``lease`` names the provider asking it. A
lease is live while its holder's row exists, its heartbeat is younger than `STALE_SECONDS` and,
for a holder on this host, its process still runs. So a harness killed with ``kill -9`` blocks
nobody: its restart on the same host finds the pid gone and takes the lease at once (on
another host, once the heartbeat is `STALE_SECONDS` old); one that closed cleanly deleted its
row.
"""

from __future__ import annotations

import os
import secrets
import socket
import time

__all__ = ["BEAT_SECONDS", "STALE_SECONDS", "live", "new_holder", "process_alive"]

BEAT_SECONDS = 5.0
STALE_SECONDS = 30.0


def new_holder() -> str:
    """A holder id unique to this provider: ``<host>:<pid>:<random>``."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(6)}"


def process_alive(holder: str) -> bool:
    """``False`` when ``holder`` names a process of this host that no longer runs."""
    parts = holder.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return True  # another host's: only its heartbeat tells
    pid = int(parts[1])
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process runs under that pid
    return True


def live(holder: str | None, beat: float | None, now: float | None = None) -> bool:
    """Whether a lease of ``holder`` with heartbeat ``beat`` still holds."""
    if holder is None or beat is None:
        return False
    when = time.time() if now is None else now
    return when - beat < STALE_SECONDS and process_alive(holder)
