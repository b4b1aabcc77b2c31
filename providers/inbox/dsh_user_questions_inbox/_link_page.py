"""One-question answer links of the inbox: ``/q/<token>`` over the store's records.

The page itself (one question, one form, nothing else) is the core's
`dsh_user_questions._link_page`, which the web provider serves too; this module adapts a
store's records to it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dsh_user_questions._identity import Caller
from dsh_user_questions._link_page import LINK_TTL, LinkedQuestion, link_url
from dsh_user_questions._link_page import link_routes as page_routes

from ._record import AnswerOutcome, QuestionRecord, State

__all__ = ["LINK_TTL", "link_for", "link_routes"]


def link_for(
    public_url: str,
    secret: bytes,
    record: QuestionRecord,
    *,
    now: float | None = None,
    recipient: str | None = None,
) -> str:
    """The link that opens ``record``'s question on the server at ``public_url``; with a
    ``recipient`` (the person it is sent to), an answer through it records that person, unless
    a logging-in proxy names whoever opens it."""
    start = record.created if now is None else now
    expires = record.deadline if record.deadline is not None else start + LINK_TTL
    return link_url(public_url, secret, record.id, expires_at=expires, recipient=recipient)


def asker(record: QuestionRecord) -> str:
    """Who asks, as notifications and the link page name them: the harness, and the agent."""
    return record.harness if record.agent is None else f"{record.harness} (agent {record.agent})"


def linked(record: QuestionRecord) -> LinkedQuestion:
    """What the link page shows of ``record``."""
    outcome = None if record.state is State.PENDING else record.state.value
    return LinkedQuestion(request=record.to_request(), asker=asker(record), outcome=outcome)


def link_routes(
    *,
    secret: Callable[[], bytes],
    get: Callable[[str], QuestionRecord | None],
    answer: Callable[[str, dict[str, Any], Caller], Any],
    cancel: Callable[[str], bool],
    to_thread: Callable[..., Any],
    upload: Callable[[str, str, str, str | None], Any] | None = None,
    opened: Callable[[str, Caller], Any] | None = None,
) -> list[Any]:
    """The Starlette routes of ``/q/{token}`` over a store's ``get``/``answer``/``cancel``.

    ``answer(question_id, wire_answer, caller)`` (who answers: `Caller`) returns the store's
    `AnswerResult` (it raises
    ``BAD_ANSWER`` as `UserQuestionError`); blocking store calls run through ``to_thread``.
    ``upload(question_id, item_id, name, media_type)`` opens a sink for a file the form
    carries (`_uploads.open_upload`). ``opened(question_id, caller)`` logs that the link
    showed a pending question (`Inbox.record_event` ``opened``). A refused answer shows the
    refusal; an approval counted towards a review that needs more is recorded (the question
    stays open).
    """

    async def get_linked(question_id: str) -> LinkedQuestion | None:
        record = await to_thread(get, question_id)
        return None if record is None else linked(record)

    async def answer_linked(question_id: str, wire: dict[str, Any], caller: Caller) -> str | None:
        result = await to_thread(answer, question_id, wire, caller)
        if result.outcome in (AnswerOutcome.APPLIED, AnswerOutcome.COUNTED):
            return None
        if result.outcome is AnswerOutcome.REFUSED and result.message:
            return str(result.message)
        return str(result.outcome)

    async def cancel_linked(question_id: str) -> object:
        return await to_thread(cancel, question_id)

    async def opened_linked(question_id: str, caller: Caller) -> object:
        return None if opened is None else await to_thread(opened, question_id, caller)

    return page_routes(
        secret=secret,
        get=get_linked,
        answer=answer_linked,
        cancel=cancel_linked,
        upload=upload,
        opened=opened_linked,
    )
