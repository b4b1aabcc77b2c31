"""Shared test configuration: hypothesis profiles (HYPOTHESIS_PROFILE=default|ci|fuzz).

The fixtures ``dsh_context``, ``user_questions`` and ``scripted_provider`` come from the
package's own pytest plugin (``dsh_user_questions.pytest_plugin``), as they would for a user.
"""

from __future__ import annotations

import os

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
