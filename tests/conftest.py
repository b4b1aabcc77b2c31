"""Shared test configuration: hypothesis profiles (HYPOTHESIS_PROFILE=default|ci|fuzz).

The fixtures ``dsh_context``, ``user_questions`` and ``scripted_provider`` come from the
package's own pytest plugin (``dsh_user_questions._pytest_plugin``), as they would for a user.

The tests are in one folder per concept of the package (``service/``, ``tool/``,
``mcp/``...), without ``__init__.py``: pytest puts this directory on ``sys.path`` for this
file, so the shared helpers beside it (``mcp_helpers``, ``_frameworks``, ``tool_cli_env``...)
import by name from any folder; a test file's name is unique across the folders.
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

# The end-to-end files (paths under tests/): each starts subprocesses, servers, node, pip or
# mypy, or runs the documents' examples. DSH_TEST_PART (set by tox.ini) chooses a part of the
# suite: "unit" leaves these files out (the py3X environments: every Python), "e2e" runs only
# them (the e2e environment: the newest Python found); unset, everything runs. Every test runs
# in some environment of a full run.
END_TO_END = frozenset(
    {
        "adapters/test_adapters_import.py",
        "cli/test_cli.py",
        "docs/test_docs.py",
        "docs/test_docs_truth.py",
        "docs/test_readme.py",
        "docs/test_readme_vocabulary.py",
        "harness/test_entrypoints.py",
        "i18n/test_model_bytes.py",
        "mcp/test_mcp_conformance.py",
        "mcp/test_mcp_http.py",
        "mcp/test_mcp_node_client.py",
        "mcp/test_mcp_server.py",
        "project/test_extras_groups.py",
        "project/test_install_commands.py",
        "project/test_scripts.py",
        "testing/test_conformance.py",
        "testing/test_pytest_plugin.py",
        "tool/test_tool_patterns.py",
        "tool/test_tool_shapes.py",
    }
)


TESTS = Path(__file__).resolve().parent


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    part = os.environ.get("DSH_TEST_PART", "")
    if not part or collection_path.suffix != ".py":
        return None
    try:
        name = collection_path.resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return None
    if (name in END_TO_END) != (part == "e2e"):
        return True
    return None
