"""Choosing among installed entry-point plugins: at most one user-questions provider."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pluggy

from .errors import UserQuestionError

PROVIDER_ENV = "DSH_USER_QUESTIONS_PROVIDER"
PROVIDER_HOOK = "dsh_user_questions_ask"

if TYPE_CHECKING:
    # importlib.metadata costs more to import than the rest of the package: only the code
    # that reads entry points imports it.
    from importlib import metadata

    Candidate = tuple[str, metadata.Distribution, object]


def is_provider(pm: pluggy.PluginManager, plugin: object) -> bool:
    """Whether ``plugin`` implements the provider hook (a wrapper around it does not count)."""
    if not hasattr(plugin, PROVIDER_HOOK):
        return False
    opts = pm.parse_hookimpl_opts(plugin, PROVIDER_HOOK)
    return opts is not None and not (opts.get("wrapper") or opts.get("hookwrapper"))


def describe(name: str, dist: metadata.Distribution) -> str:
    """``name (from dist-name version)``: how an installed provider is named in messages."""
    return f"{name} (from {dist.metadata['Name']} {dist.version})"


def select_entrypoint_plugins(
    candidates: Sequence[Candidate], pm: pluggy.PluginManager
) -> tuple[list[Candidate], UserQuestionError | None]:
    """The candidates to register, and the error to raise once they are registered.

    With ``DSH_USER_QUESTIONS_PROVIDER`` set, every other provider is blocked in ``pm``. Without
    it, two or more providers are all left out and reported as ``DUPLICATE_PROVIDER``.
    """
    providers = [c for c in candidates if is_provider(pm, c[2])]
    others = [c for c in candidates if not is_provider(pm, c[2])]
    wanted = os.environ.get(PROVIDER_ENV, "").strip()
    if wanted:
        picked = [c for c in providers if c[0] == wanted]
        for name, _, _ in providers:
            if name != wanted:
                pm.set_blocked(name)
        if not picked and not any(is_provider(pm, p) for p in pm.get_plugins()):
            installed = ", ".join(describe(n, d) for n, d, _ in providers) or "none"
            error = UserQuestionError.no_provider(
                f"{PROVIDER_ENV}={wanted} names no installed provider (installed: {installed})"
            )
            return others, error
        return others + picked, None
    if len(providers) > 1:
        choices = " or ".join(f"{PROVIDER_ENV}={n}" for n, _, _ in providers)
        return others, UserQuestionError.duplicate_provider(
            *(describe(n, d) for n, d, _ in providers),
            installed=True,
            fix=f"choose one with {choices}, or uninstall the others",
        )
    return list(candidates), None
