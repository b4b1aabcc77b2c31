"""Shared test configuration: hypothesis profiles (HYPOTHESIS_PROFILE=default|ci|fuzz).

The fixtures ``dsh_context``, ``user_questions`` and ``scripted_provider`` come from the
package's own pytest plugin (``dsh_user_questions._pytest_plugin``), as they would for a user.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=200, deadline=None)
settings.register_profile("ci", max_examples=300, deadline=None)
settings.register_profile(
    "fuzz",
    max_examples=100_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# The end-to-end files: each starts subprocesses, servers, node, pip or mypy, or runs the
# documents' examples. DSH_TEST_PART (set by tox.ini) chooses a part of the suite: "unit"
# leaves these files out (the py3X environments: every Python), "e2e" runs only them (the e2e
# environment: the newest Python found); unset, everything runs. Every test runs in some
# environment of a full run.
END_TO_END = frozenset(
    {
        "test_adapters_import.py",
        "test_cli.py",
        "test_conformance.py",
        "test_docs.py",
        "test_docs_truth.py",
        "test_entrypoints.py",
        "test_install_commands.py",
        "test_mcp_conformance.py",
        "test_mcp_http.py",
        "test_mcp_node_client.py",
        "test_mcp_server.py",
        "test_pytest_plugin.py",
        "test_readme.py",
        "test_readme_vocabulary.py",
        "test_scripts.py",
        "test_tool_patterns.py",
        "test_tool_shapes.py",
    }
)


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    part = os.environ.get("DSH_TEST_PART", "")
    if not part or collection_path.suffix != ".py" or collection_path.parent.name != "tests":
        return None
    if (collection_path.name in END_TO_END) != (part == "e2e"):
        return True
    return None
