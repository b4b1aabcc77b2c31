"""The official MCP conformance suite (``@modelcontextprotocol/conformance``) against our MCP code.

- Its elicitation client scenario (SEP-1034 defaults) drives ``mcp_node/elicitation_client.py``:
  the Python SDK's client with our `elicitation_callback`, asking a human who presses Enter on
  every field.
- Its server scenarios that apply to a server of tools only (``server-initialize``, ``ping``,
  ``tools-list``, ``dns-rebinding-protection``) run against ``dsh-ask mcp --http``.

The suite needs Node 22 (it imports ``fs.globSync``). ``mcp_node/conformance/package.json``
pins the suite and npm's ``node`` package (a Node 22 binary from the npm registry), installed
with the system's npm once per manifest into ``.cache/mcp-node/<hash>`` at the repository's
root (or ``$DSH_MCP_NODE_CACHE``), under a file lock shared by concurrent test sessions.
Without npm, or when npm cannot install, the tests are skipped saying so; under ``CI=true``
they fail.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP tests need the mcp extra")

from mcp_helpers import serving_http

NODE_SOURCES = Path(__file__).resolve().parent / "mcp_node"
MANIFEST = NODE_SOURCES / "conformance" / "package.json"
CLIENT = NODE_SOURCES / "elicitation_client.py"
CACHE_ENV = "DSH_MCP_NODE_CACHE"
SUITE_TIMEOUT = 180
SEP_1034_CHECKS = {
    f"client-elicitation-sep1034-{kind}-default"
    for kind in ("string", "integer", "number", "enum", "boolean")
}


def _unavailable(reason: str) -> None:
    """Skip saying why, locally; fail under CI, where the conformance suite must run."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: the MCP conformance suite must run)")
    pytest.skip(f"NOT RUN: {reason}")


class Suite:
    """The installed conformance suite, run with its own Node 22."""

    def __init__(self, folder: Path) -> None:
        self.node = folder / "node_modules" / ".bin" / "node"
        self.cli = folder / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist"
        self.cli = self.cli / "index.js"

    def run(self, output: Path, *args: str) -> list[dict[str, Any]]:
        """Run ``conformance ARGS -o OUTPUT``; the checks it wrote (every scenario's)."""
        done = subprocess.run(
            [str(self.node), str(self.cli), *args, "-o", str(output)],
            capture_output=True,
            text=True,
            timeout=SUITE_TIMEOUT,
            check=False,
        )
        files = sorted(output.rglob("checks.json"))
        assert files, (
            f"the suite wrote no checks (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
        checks: list[dict[str, Any]] = []
        for file in files:
            checks.extend(json.loads(file.read_text(encoding="utf-8")))
        return checks


@pytest.fixture(scope="session")
def suite() -> Suite:
    """The pinned suite and Node 22, installed once per manifest (see the module's text)."""
    npm = shutil.which("npm")
    if npm is None:
        _unavailable("npm is needed to install the MCP conformance suite")
    assert npm is not None
    manifest = MANIFEST.read_bytes()
    base = os.environ.get(CACHE_ENV) or str(NODE_SOURCES.parents[2] / ".cache" / "mcp-node")
    target = Path(base) / f"conformance-{hashlib.sha256(manifest).hexdigest()[:16]}"
    target.mkdir(parents=True, exist_ok=True)
    # Sessions of several tox environments at once share the folder: one installs, the others
    # wait for it (the lock is released when the file closes).
    with (target.parent / f"{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        installed = target / "node_modules" / ".installed"
        if not installed.exists():
            (target / "package.json").write_bytes(manifest)
            done = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=target,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            if done.returncode != 0:
                _unavailable(f"npm install failed in {target}: {done.stderr.strip()[-800:]}")
            installed.write_text("", encoding="utf-8")
    found = Suite(target)
    version = subprocess.run(
        [str(found.node), "--version"], capture_output=True, text=True, timeout=60, check=False
    ).stdout.strip()
    major = re.match(r"v(\d+)", version)
    if major is None or int(major.group(1)) < 22:
        _unavailable(f"the conformance suite needs node 22 or later, npm's node is {version!r}")
    return found


def _failed(checks: list[dict[str, Any]]) -> list[str]:
    return [
        f"{check['id']}: {check.get('errorMessage') or check.get('details')}"
        for check in checks
        if check.get("status") == "FAILURE"
    ]


class TestElicitationClientScenarios:
    """Our elicitation client, as the suite's scenario servers see it."""

    def test_sep_1034_enter_on_each_field_sends_its_default(
        self, suite: Suite, tmp_path: Path
    ) -> None:
        """elicitation-sep1034-client-defaults: string, integer, number, enum, boolean defaults."""
        command = f"{sys.executable} {CLIENT}"
        if len(command.split(" ")) != 2:  # the suite splits its --command at spaces
            pytest.skip(
                f"NOT RUN: the suite cannot run a command whose path has a space: {command}"
            )
        checks = suite.run(
            tmp_path,
            "client",
            "--command",
            command,
            "--scenario",
            "elicitation-sep1034-client-defaults",
            "--timeout",
            str(SUITE_TIMEOUT * 1000 // 2),
        )
        assert _failed(checks) == []
        passed = {check["id"] for check in checks if check.get("status") == "SUCCESS"}
        assert passed >= SEP_1034_CHECKS


@pytest.fixture(scope="module")
def http_url(provider_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One ``dsh-ask mcp --http 127.0.0.1:0`` for the server scenarios."""
    with serving_http(provider_dir, tmp_path_factory.mktemp("mcp-http"), []) as url:
        yield url


class TestServerScenarios:
    """``dsh-ask mcp --http`` as the suite's client sees it."""

    @pytest.mark.parametrize(
        ("scenario", "checks"),
        [
            ("server-initialize", {"server-initialize"}),
            ("ping", {"ping"}),
            ("tools-list", {"tools-list"}),
            (
                "dns-rebinding-protection",
                {"localhost-host-rebinding-rejected", "localhost-host-valid-accepted"},
            ),
        ],
    )
    def test_the_scenario_passes(
        self, suite: Suite, http_url: str, tmp_path: Path, scenario: str, checks: set[str]
    ) -> None:
        """Each scenario that applies to a server of tools passes every one of its checks."""
        found = suite.run(tmp_path, "server", "--url", http_url, "--scenario", scenario)
        assert _failed(found) == []
        assert {check["id"] for check in found if check.get("status") == "SUCCESS"} >= checks
