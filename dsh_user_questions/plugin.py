"""The plugin: registering it (or loading the ``"dsh"`` entry points) adds ``ctx.user_questions``.

Declared under the ``"dsh"`` entry-point group as ``user_questions``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ._markers import hookimpl
from ._observe import watch
from ._service import UserQuestionService

if TYPE_CHECKING:
    from .harness import HarnessContext

# Nothing to import: register the module itself (``ctx.register(dsh_user_questions.plugin)``).
__all__: list[str] = []

SERVICE_NAME = "user_questions"


@hookimpl
def dsh_context_services(ctx: HarnessContext) -> Mapping[str, object]:
    """Give the context its ``user_questions`` service (and its log and trace observers)."""
    service = UserQuestionService(ctx)
    watch(ctx.plugin_manager, service)
    return {SERVICE_NAME: service}


@hookimpl
def dsh_plugin_registered(ctx: HarnessContext, plugin: object, name: str) -> None:
    """Refuse a provider plugin while another provider is active (``DUPLICATE_PROVIDER``)."""
    service = ctx.get(SERVICE_NAME)
    if isinstance(service, UserQuestionService):
        service.admit_plugin(plugin, name)
