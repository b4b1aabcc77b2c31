"""A real PostgreSQL server for the tests, from the machine's ``postgresql`` package.

``initdb`` into a temporary folder, ``postgres`` listening on a unix socket in that folder only
(no TCP port to collide with) unless given addresses to listen on (the benchmarks' networks).
Run as the ``postgres`` user when the tests run as root, since PostgreSQL refuses to run as root.

No server outlives its test run: ``pg_ctl`` detaches the server from the run's process group, so
a SIGTERM (what tox sends after an interrupt) stops every server this process started before
the process ends, and so does its exit; a SIGINT is pytest's, which tears the fixtures down. Each
server's folder names the process that owns it (``owner``), and the first server of a run
stops and removes every server whose owner is gone (a run killed outright).
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType

import psycopg

__all__ = ["PostgresServer", "find_bin"]

_PREFIX = "dsh-inbox-pg-"
_LIVE: set[PostgresServer] = set()
_guarded = False


def _identity(pid: int) -> str | None:
    """``pid`` and its start time, which a reused pid does not share; None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return f"{pid} {stat.rsplit(')', 1)[1].split()[19]}"


def _stop_everything() -> None:
    for server in list(_LIVE):
        server.destroy(immediate=True)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    _stop_everything()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _guard() -> None:
    """Once per process: stop stale servers, and stop ours on SIGTERM and at exit."""
    global _guarded
    if _guarded:
        return
    _guarded = True
    atexit.register(_stop_everything)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)
    for root in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*"):
        try:
            owner = (root / "owner").read_text().strip()
        except OSError:
            continue  # not one of ours, or still being made
        if _identity(int(owner.split()[0])) == owner:
            continue  # its run is still going
        try:
            postmaster = int((root / "data" / "postmaster.pid").read_text().split()[0])
            os.kill(postmaster, signal.SIGQUIT)  # immediate shutdown
        except (OSError, ValueError, IndexError):
            pass
        shutil.rmtree(root, ignore_errors=True)


def find_bin() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` holding ``initdb``, or ``None``."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parent.parent.name.split(".")[0]),
    )
    return Path(found[-1]).parent if found else None


# util-linux's runuser lives in /usr/sbin, which a root shell's PATH may lack (`env PATH=...`).
_RUNUSER = shutil.which("runuser") or "/usr/sbin/runuser"


class PostgresServer:
    """One throwaway cluster: `start`, `stop`, `restart`, and connection URLs."""

    def __init__(
        self,
        bindir: Path,
        *,
        fsync: bool = False,
        settings: Mapping[str, str] | None = None,
        trusted: Sequence[str] = (),
    ) -> None:
        """``settings``: more server settings (``-c name=value``), e.g. ``listen_addresses``
        and ``port`` for TCP clients (the benchmarks'); ``trusted``: the networks (CIDR) whose
        TCP clients are let in without a password, as the socket's are."""
        _guard()
        self._bin = bindir
        self.root = Path(tempfile.mkdtemp(prefix=_PREFIX))
        self.data = self.root / "data"
        (self.root / "owner").write_text(f"{_identity(os.getpid())}\n")
        self._as_root = os.geteuid() == 0
        if self._as_root:
            shutil.chown(self.root, "postgres", "postgres")
        self._running = False
        self._fsync = "on" if fsync else "off"  # tests need no durability across power cuts
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")
        self._settings = {"listen_addresses": "", "max_connections": "200", **(settings or {})}
        self.port = int(self._settings.get("port", "5432"))
        with (self.data / "pg_hba.conf").open("a") as hba:
            hba.writelines(f"host all all {network} trust\n" for network in trusted)
        self._databases = 0

    def _command(self, name: str, *args: str) -> list[str]:
        command = [str(self._bin / name), *args]
        return [_RUNUSER, "-u", "postgres", "--", *command] if self._as_root else command

    def _run(self, name: str, *args: str) -> None:
        subprocess.run(self._command(name, *args), check=True, capture_output=True)

    def start(self) -> None:
        """Start the server (``pg_ctl start -w``: it takes connections when this returns)."""
        settings = {"fsync": self._fsync, **self._settings}
        options = f"-k {self.root} " + " ".join(f"-c {k}={v}" for k, v in settings.items())
        try:
            self._run(
                "pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"),
                "-o", options, "-w", "-t", "120", "start",
            )  # fmt: skip
        except subprocess.CalledProcessError as err:
            log = (self.root / "server.log").read_text(errors="replace")
            raise RuntimeError(f"PostgreSQL did not start: {err.stderr!r}\n{log}") from err
        self._running = True
        _LIVE.add(self)

    def stop(self, *, immediate: bool = False) -> None:
        """Stop the server (fast shutdown: clients are disconnected) and wait for it."""
        if self._running:
            mode = "immediate" if immediate else "fast"
            self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "120", "stop")
            self._running = False
            _LIVE.discard(self)

    def restart(self) -> None:
        """Stop, then start again on the same data."""
        self.stop()
        self.start()

    def url(self, dbname: str, host: str | None = None) -> str:
        """A libpq URL to ``dbname`` through the server's socket, or over TCP to ``host``."""
        if host is not None:
            return f"postgresql://postgres@{host}:{self.port}/{dbname}"
        port = "" if self.port == 5432 else f"&port={self.port}"
        return f"postgresql://postgres@/{dbname}?host={self.root}{port}"

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        self._databases += 1
        name = f"inbox_{self._databases}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def destroy(self, *, immediate: bool = False) -> None:
        """Stop the server and delete its folder."""
        try:
            self.stop(immediate=immediate)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
