"""The pluggy markers of project ``"dsh"``: the one place they are made."""

from __future__ import annotations

import pluggy

PROJECT = "dsh"

hookspec = pluggy.HookspecMarker(PROJECT)
"""Marks a hook specification of project ``"dsh"``."""

hookimpl = pluggy.HookimplMarker(PROJECT)
"""Marks a hook implementation of project ``"dsh"``; providers import it from the package."""
