"""This project's one warning policy for its test suites: not a plugin any user's tests load.

The core's and each provider's test configuration load it by name (``addopts = -p
dsh_user_questions._warning_policy`` in their ``[pytest]`` sections), beside
`dsh_user_questions._reruns`; nothing else does, and the public pytest plugin
(`dsh_user_questions._pytest_plugin`) never touches a user's warning filters.

Every warning is an error, except the dependency warnings named in ``IGNORED`` below, which
this code cannot fix (they come from a dependency's own imports). They are declared once, here,
so that every distribution's suite passes on every supported Python, not only on the ones its
environments happen to run on. A ``[pytest]`` section that loads this plugin must not set
``filterwarnings`` itself: its lines would run before this policy and be overridden by
``error``, so the plugin stops the session with a usage error that says so. A single test may
still relax the policy with ``@pytest.mark.filterwarnings``, which pytest applies after it.
"""

from __future__ import annotations

import pytest

# (filter, why): each filter in pytest's ``filterwarnings`` syntax, applied after "error".
IGNORED: tuple[tuple[str, str], ...] = (
    (
        "ignore:'imghdr' is deprecated:DeprecationWarning",
        "Apprise imports the standard imghdr module (through PGPy), which warns on Python 3.11"
        " and 3.12 (the module is gone in 3.13)",
    ),
)

FILTERS: tuple[str, ...] = ("error", *(line for line, _why in IGNORED))


def pytest_configure(config: pytest.Config) -> None:
    """Install the policy: every warning an error, but for ``IGNORED``."""
    own = list(config.getini("filterwarnings"))
    if own:
        raise pytest.UsageError(
            f"{config.inipath}: filterwarnings = {own!r} is set, but this configuration loads"
            " dsh_user_questions._warning_policy, which holds the project's one warning policy:"
            " remove filterwarnings there and add a dependency's warning to IGNORED in"
            " dsh_user_questions/_warning_policy.py"
        )
    for line in FILTERS:
        config.addinivalue_line("filterwarnings", line)
