"""Hook specifications of the ``"dsh"`` plugin manager, as far as user questions need them.

Every hook name carries a prefix (``dsh_`` for the host seam, ``dsh_user_questions_`` for this
service) so it cannot collide with the hooks of other harness plugins. Implement a hook with
`dsh_user_questions.hookimpl`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING

from ._markers import hookspec

if TYPE_CHECKING:
    from ._payloads import AskUserQuestionAnswer, AskUserQuestionRequest
    from .harness import AbortSignal, HarnessContext

# The hooks are implemented by name (marked with `dsh_user_questions.hookimpl`), never
# imported; a harness adds this module with ``add_hookspecs`` to a manager of the project
# ``"dsh"``.
__all__: list[str] = []


# Host seam -------------------------------------------------------------------------------------


@hookspec(historic=True)
def dsh_context_services(ctx: HarnessContext) -> Mapping[str, object] | None:
    """Give the harness context the services this plugin provides.

    Called once for every plugin implementing it, as soon as both the context and the plugin
    exist (historic: a plugin registered later is called at registration). Synchronous. To
    hear that a context opened, implement ``dsh_context_opened`` instead (this hook is for
    giving services only).

    :param ctx: The harness context.
    :return: A mapping of service name to service object, or ``None`` for none. The services
        belong to the plugin: unregistering it removes them. Two plugins giving the same name is
        a `ValueError` at registration.

    Example::

        @hookimpl
        def dsh_context_services(ctx):
            return {"user_questions": UserQuestionService(ctx)}
    """


@hookspec(historic=True)
def dsh_context_opened(ctx: HarnessContext) -> None:
    """The harness context is open: the first of the pair ``dsh_context_opened`` / ``_closed``.

    Called once per context for every implementation, right after the context has its services
    (historic: a plugin registered later is called at its registration). Synchronous; the
    result is ignored; an exception propagates to whoever made the context or registered the
    plugin. A plugin shared by many contexts tracks them with it (weakly: see
    `dsh_user_questions.providing.SharedProvider`, which implements this pair).

    :param ctx: The harness context.

    Example::

        @hookimpl
        def dsh_context_opened(ctx):
            open_contexts.add(ctx)  # a weakref.WeakSet
    """


@hookspec
def dsh_context_closed(ctx: HarnessContext) -> Awaitable[None] | None:
    """The harness context has closed: the last thing ``await ctx.aclose()`` does.

    ``aclose()`` first settles every ask of the context still in flight (each is withdrawn and
    its provider's clean-up awaited, within a grace period), then calls
    ``dsh_context_closing``, then this hook. Called once per context, in one pluggy call
    (implementations newest first, ``wrapper=True`` ones once around the call); the
    awaitables returned (``async def`` implementations) are then awaited in that order; an
    exception is logged and the others still run. ``None`` means nothing to await.

    :param ctx: The harness context.

    Example::

        @hookimpl
        async def dsh_context_closed(ctx):
            open_contexts.discard(ctx)
            if not open_contexts:
                await shared_server.stop()
    """


@hookspec
def dsh_plugin_registered(ctx: HarnessContext, plugin: object, name: str) -> None:
    """A plugin was just registered; raise to refuse it.

    Called for every registration, by every implementation, synchronously. If an implementation
    raises, the new plugin is unregistered again (with any service it added) and the exception
    propagates to whoever registered it. Nothing is expected back.

    :param ctx: The harness context.
    :param plugin: The plugin object just registered.
    :param name: Its name in the plugin manager.

    Example::

        @hookimpl
        def dsh_plugin_registered(ctx, plugin, name):
            if name.startswith("forbidden-"):
                raise ValueError(f"plugin {name} is not allowed here")
    """


@hookspec
def dsh_context_closing(ctx: HarnessContext) -> Awaitable[None] | None:
    """The harness context is closing: release what the plugin holds (servers, screens, files).

    Called once by ``await ctx.aclose()``, after every ask of the context still in flight was
    settled (withdrawn, its provider's clean-up awaited) and before ``dsh_context_closed``, in
    one pluggy call: every implementation, newest first (arguments matched by name, so
    ``def dsh_context_closing(self)`` is fine), ``wrapper=True`` implementations once around
    the call. An implementation may be ``async def``: the context then awaits each awaitable
    returned, in the same order. An exception is logged and the others still run. ``None``
    means nothing to await.

    :param ctx: The harness context.

    Example::

        @hookimpl
        async def dsh_context_closing(ctx):
            await my_server.stop("the harness is shutting down")
    """


# User questions --------------------------------------------------------------------------------


@hookspec(firstresult=True)
def dsh_user_questions_ask(
    request: AskUserQuestionRequest,
) -> AskUserQuestionAnswer | Mapping[str, object] | Awaitable[object] | None:
    """Show the request's questions to the human and return the answer: the provider hook.

    Exactly one implementation may be active in a context, counting providers given to
    ``register_provider``; a second one is refused with ``DUPLICATE_PROVIDER`` and never chosen
    silently. The service calls it; nothing else should.

    The implementation may be ``async def`` (preferred) or a plain function returning the
    answer or an awaitable of it. When the request's ``signal`` aborts, the service cancels the
    pending work and raises ``ASK_ABORTED`` itself; the provider should still take the question
    off the screen. When the human closes the question, raise
    ``UserQuestionError.cancelled()`` (``ASK_CANCELLED``). When the context closes
    (``aclose()``) while the ask is pending, the provider's work is cancelled
    (`asyncio.CancelledError` at its ``await``) and the context waits for it to finish: a
    durable provider records the question as withdrawn there, before re-raising.

    **A receipt means taken.** A surface that tells its human "accepted" does so only after
    ``await dsh_user_questions.providing.receipt(request)`` is ``True``: the asker received
    the answer (``False``: cancelled as it landed, refused as ``BAD_ANSWER``, aborted). Take
    the receipt while the ask is in flight, best as the first thing the implementation does.

    :param request: The request, the same object the caller gave to ``ask`` (a copy with a
        signal that also fires on the timeout, when the ask has one).
    :return: An `AskUserQuestionAnswer`, or a mapping in its wire form, or an awaitable of
        either. ``None`` is a bad answer (``BAD_ANSWER``), never "no opinion".

    Example::

        @hookimpl
        async def dsh_user_questions_ask(request):
            first = request.questions[0]
            return AskUserQuestionAnswer([AskUserQuestionAnswerItem(id=first.id, custom="yes")])
    """


@hookspec
def dsh_user_questions_asked(request: AskUserQuestionRequest) -> None:
    """Observe an ``ask`` as it starts, before any check.

    Any number of implementations, all in one pluggy call (arguments matched by name;
    ``wrapper=True`` implementations run once around the call, as pluggy runs them); the
    awaitables of ``async def`` ones are awaited, in call order, before the ask goes on; the
    result is ignored. An exception in an observer is logged, the other observers still run,
    and it never breaks the ask.

    :param request: The request as the caller gave it.

    Example::

        @hookimpl
        def dsh_user_questions_asked(request):
            audit.info("asking %s", [q.id for q in request.questions])
    """


@hookspec
def dsh_user_questions_answered(
    request: AskUserQuestionRequest, answer: AskUserQuestionAnswer, wait_seconds: float
) -> None:
    """Observe an ``ask`` that returned an answer (after the answer check passed).

    Any number of implementations, called as for ``dsh_user_questions_asked`` (``async def``
    ones awaited, wrappers once around the call); the result is ignored; exceptions are
    logged.

    :param request: The request.
    :param answer: The checked answer the caller receives; its ``answered_by`` names who
        answered when the surface knew (a login name, a proxy's identity, ``token``).
    :param wait_seconds: Seconds from the start of ``ask`` to the answer.

    Example::

        @hookimpl
        def dsh_user_questions_answered(request, answer, wait_seconds):
            metrics.observe("user_questions.wait", wait_seconds)
    """


@hookspec
def dsh_user_questions_failed(
    request: AskUserQuestionRequest, error: BaseException, wait_seconds: float
) -> None:
    """Observe an ``ask`` that ended without an answer.

    Any number of implementations, called as for ``dsh_user_questions_asked`` (``async def``
    ones awaited, wrappers once around the call); the result is ignored; exceptions are
    logged.
    ``error`` is what the caller receives: usually a `UserQuestionError` (check ``error.code``),
    an exception of the provider's, or `asyncio.CancelledError` when the caller was cancelled.

    :param request: The request.
    :param error: The exception ``ask`` raises.
    :param wait_seconds: Seconds from the start of ``ask`` to the failure.

    Example::

        @hookimpl
        def dsh_user_questions_failed(request, error, wait_seconds):
            audit.warning("question failed: %s", getattr(error, "code", error))
    """


@hookspec(firstresult=True)
def dsh_user_questions_resume(
    question_id: str, signal: AbortSignal | None
) -> AskUserQuestionAnswer | Awaitable[object] | None:
    """Wait again for a question asked before, by id: the provider side of ``resume``.

    Only providers that keep questions beyond one process implement it (the inbox provider
    does); the service calls it from ``await ctx.user_questions.resume(question_id)`` on the
    one active provider plugin. It may be ``async def`` or return an awaitable. The answer,
    or the error ``ask()`` would raise (``ASK_ABORTED`` for a withdrawn question,
    ``ASK_TIMED_OUT`` for an expired one, ``ASK_CANCELLED``); an id the provider does not know
    is a `LookupError`.

    :param question_id: The id the provider gave the question when it was asked.
    :param signal: Aborts the renewed wait (the provider withdraws the question), or ``None``.
    :return: An `AskUserQuestionAnswer` or an awaitable of one. ``None`` means this plugin
        cannot resume questions.

    Example::

        @hookimpl
        async def dsh_user_questions_resume(question_id, signal):
            record = await store.wait_final(question_id)
            return AskUserQuestionAnswer.from_dict(record.answer)
    """


@hookspec
def dsh_user_questions_late_answer(record: object) -> None:
    """An answer arrived after its question was withdrawn (abort) or expired (timeout).

    Such an answer is never applied to the ask that gave up; a provider that keeps questions
    (the inbox provider) keeps it as *late* and calls this hook once, in one process of the
    harness that asked, so the harness can give it to the model as a new user message. Any
    number of implementations; synchronous, on the harness's event loop thread when one
    runs; the result is ignored; exceptions are logged.

    :param record: The provider's record of the question: for the inbox, a
        ``dsh_user_questions_inbox.QuestionRecord`` with ``id``, ``request`` (wire form),
        ``state`` (``withdrawn`` or ``expired``) and ``late_answer`` (wire form).

    Example::

        @hookimpl
        def dsh_user_questions_late_answer(record):
            inbox_messages.put_nowait(
                f"(late answer to question {record.id}) {json.dumps(record.late_answer)}"
            )
    """
