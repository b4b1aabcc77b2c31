"""The MCP tests' shared fixture: one install of the scripted provider for the whole session."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def provider_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scripted provider distribution (``mcp_helpers``), pip-installed once to a folder that
    the tests only put on a server's ``PYTHONPATH`` (each test scripts its answers in a folder of
    its own); four modules installed the same files each before."""
    from mcp_helpers import install_provider

    return install_provider(tmp_path_factory.mktemp("mcp-provider"))
