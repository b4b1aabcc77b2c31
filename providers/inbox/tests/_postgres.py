"""A real PostgreSQL server for the tests, from the machine's ``postgresql`` package.

``initdb`` into a temporary folder, ``postgres`` listening on a unix socket in that folder only
(no TCP port to collide with). Run as the ``postgres`` user when the tests run as root, since
PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import psycopg

__all__ = ["PostgresServer", "find_bin"]


def find_bin() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` holding ``initdb``, or ``None``."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parent.parent.name.split(".")[0]),
    )
    return Path(found[-1]).parent if found else None


class PostgresServer:
    """One throwaway cluster: `start`, `stop`, `restart`, and connection URLs."""

    def __init__(self, bindir: Path, *, fsync: bool = False) -> None:
        self._bin = bindir
        self.root = Path(tempfile.mkdtemp(prefix="dsh-inbox-pg-"))
        self.data = self.root / "data"
        self._as_root = os.geteuid() == 0
        if self._as_root:
            shutil.chown(self.root, "postgres", "postgres")
        self._running = False
        self._fsync = "on" if fsync else "off"  # tests need no durability across power cuts
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")
        self._databases = 0

    def _command(self, name: str, *args: str) -> list[str]:
        command = [str(self._bin / name), *args]
        return ["runuser", "-u", "postgres", "--", *command] if self._as_root else command

    def _run(self, name: str, *args: str) -> None:
        subprocess.run(self._command(name, *args), check=True, capture_output=True)

    def start(self) -> None:
        """Start the server (``pg_ctl start -w``: it takes connections when this returns)."""
        options = (
            f"-k {self.root} -c listen_addresses= -c fsync={self._fsync} -c max_connections=200"
        )
        try:
            self._run(
                "pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"),
                "-o", options, "-w", "-t", "120", "start",
            )  # fmt: skip
        except subprocess.CalledProcessError as err:
            log = (self.root / "server.log").read_text(errors="replace")
            raise RuntimeError(f"PostgreSQL did not start: {err.stderr!r}\n{log}") from err
        self._running = True

    def stop(self) -> None:
        """Stop the server (fast shutdown: clients are disconnected) and wait for it."""
        if self._running:
            self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "120", "stop")
            self._running = False

    def restart(self) -> None:
        """Stop, then start again on the same data."""
        self.stop()
        self.start()

    def url(self, dbname: str) -> str:
        """A libpq URL to ``dbname`` through the server's socket."""
        return f"postgresql://postgres@/{dbname}?host={self.root}"

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        self._databases += 1
        name = f"inbox_{self._databases}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def destroy(self) -> None:
        """Stop the server and delete its folder."""
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)
