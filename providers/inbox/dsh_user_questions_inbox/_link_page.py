"""One-question answer links: ``/q/<token>`` shows one question and takes its answer.

The token (`dsh_user_questions.links`) is a capability for exactly one question, signed with the
server's link secret and expiring with the question. The page it opens is server-rendered
HTML with no script: the question's header, text, detail and options as inert, escaped text,
one form that posts back to the same address. It can show nothing else: no list, no other
question, no stream. Used again after the question is settled, it shows the outcome;
tampered or expired, a clear page says so (403 / 410).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from dsh_user_questions import AskUserQuestionItem, UserQuestionError
from dsh_user_questions.links import LinkError, make_link_token, verify_link_token
from dsh_user_questions.rules import inert_text, is_diff_review, is_plan_review

from ._record import AnswerOutcome, QuestionRecord, State

__all__ = ["LINK_TTL", "link_for", "link_routes"]

LINK_TTL = 7 * 24 * 3600.0
"""How long a link to a question without a deadline stays good (seconds)."""

_MAX_FORM_BYTES = 64 * 1024

_CSS = """
body{font:16px/1.45 system-ui,sans-serif;margin:0;background:#f6f6f4;color:#1d1d1b}
main{max-width:40rem;margin:0 auto;padding:1rem}
.card{background:#fff;border:1px solid #d8d8d2;border-radius:.6rem;padding:1rem;margin:0 0 1rem}
.header{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:#55554f;margin:0}
h1{font-size:1.15rem;margin:.2rem 0 .8rem;overflow-wrap:break-word}
pre{white-space:pre-wrap;overflow-wrap:break-word;background:#f1f1ec;padding:.6rem;
border-radius:.4rem;max-height:60vh;overflow:auto;font-size:.85rem}
label{display:flex;gap:.5rem;align-items:flex-start;padding:.45rem 0;overflow-wrap:anywhere}
.desc{display:block;color:#55554f;font-size:.9rem}
textarea,input[type=password]{width:100%;box-sizing:border-box;font:inherit;padding:.4rem}
button{font:inherit;padding:.55rem 1.1rem;margin:.8rem .5rem 0 0;border-radius:.4rem;
border:1px solid #1d1d1b;background:#1d1d1b;color:#fff}
button.secondary{background:#fff;color:#1d1d1b}
.outcome{font-weight:600}
"""


def link_for(
    public_url: str, secret: bytes, record: QuestionRecord, *, now: float | None = None
) -> str:
    """The link that opens ``record``'s question on the server at ``public_url``."""
    start = record.created if now is None else now
    expires = record.deadline if record.deadline is not None else start + LINK_TTL
    token = make_link_token(secret, record.id, expires_at=expires)
    return f"{public_url.rstrip('/')}/q/{token}"


def _text(value: str, *, multiline: bool = False) -> str:
    # Inert first (no control or bidi character survives), then escaped (no markup).
    return html.escape(inert_text(value, multiline=multiline), quote=True)


def _page(title: str, body: str, status: int = 200) -> Any:
    from starlette.responses import HTMLResponse

    document = (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        '<meta name=referrer content="no-referrer">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>"
        f"<body><main>{body}</main></body></html>"
    )
    return HTMLResponse(
        document,
        status_code=status,
        headers={
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline';"
            " form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
        },
    )


def _question_html(index: int, question: AskUserQuestionItem) -> str:
    name = f"q{index}"
    parts = ['<section class="card">']
    if question.header:
        parts.append(f'<p class="header">{_text(question.header)}</p>')
    parts.append(f"<h1>{_text(question.question)}</h1>")
    if question.detail is not None:
        parts.append(f"<pre>{_text(question.detail, multiline=True)}</pre>")
    kind = "checkbox" if question.multi_select else "radio"
    for position, option in enumerate(question.options):
        mark = " (recommended)" if option.recommended else ""
        description = (
            f'<span class="desc">{_text(option.description)}</span>' if option.description else ""
        )
        parts.append(
            f'<label><input type={kind} name="{name}" value="{position}">'
            f"<span>{_text(option.label)}{mark}{description}</span></label>"
        )
    if question.secret:
        parts.append(
            f'<label for="{name}-custom">Your answer (hidden as you type)</label>'
            f'<input type=password id="{name}-custom" name="{name}-custom" autocomplete=off>'
        )
    else:
        other = "Other (your own words)" if question.options else "Your answer"
        parts.append(
            f'<label for="{name}-custom">{other}</label>'
            f'<textarea id="{name}-custom" name="{name}-custom" rows=3></textarea>'
        )
    parts.append("</section>")
    return "".join(parts)


def _form_html(record: QuestionRecord) -> str:
    request = record.to_request()
    who = record.harness if record.agent is None else f"{record.harness} (agent {record.agent})"
    review = any(is_plan_review(q) or is_diff_review(q) for q in request.questions)
    lead = "review asked by" if review else "asked by"
    cards = "".join(_question_html(i, q) for i, q in enumerate(request.questions))
    return (
        f'<p class="header">A question {lead} {_text(who)}</p>'
        f"<form method=post>{cards}<button type=submit name=action value=answer>Send answer"
        "</button><button class=secondary type=submit name=action value=cancel>"
        "Close without answering</button></form>"
    )


_OUTCOMES = {
    State.ANSWERED: "This question has been answered.",
    State.WITHDRAWN: "The agent withdrew this question; nothing more is needed.",
    State.EXPIRED: "This question expired before it was answered.",
    State.CANCELLED: "This question was closed without an answer.",
}


def _outcome_html(record: QuestionRecord, note: str | None = None) -> str:
    said = f"<p>{html.escape(note)}</p>" if note else ""
    return f'<section class="card">{said}<p class="outcome">{_OUTCOMES[record.state]}</p></section>'


def _answer_from_form(record: QuestionRecord, form: dict[str, list[str]]) -> dict[str, Any]:
    request = record.to_request()
    items = []
    for index, question in enumerate(request.questions):
        picked = []
        for raw in form.get(f"q{index}", []):
            if raw.isdigit() and int(raw) < len(question.options):
                picked.append(question.options[int(raw)].label)
        custom = form.get(f"q{index}-custom", [""])[-1].replace("\r\n", "\n")
        item: dict[str, Any] = {"id": question.id, "selected": picked}
        if custom.strip():
            item["custom"] = custom
            if not question.multi_select:
                item["selected"] = []  # single-select: the typed words replace the pick
        items.append(item)
    return {"answers": items}


def link_routes(
    *,
    secret: Callable[[], bytes],
    get: Callable[[str], QuestionRecord | None],
    answer: Callable[[str, dict[str, Any]], Any],
    cancel: Callable[[str], bool],
    to_thread: Callable[..., Any],
) -> list[Any]:
    """The Starlette routes of ``/q/{token}`` over a store's ``get``/``answer``/``cancel``.

    ``answer(question_id, wire_answer)`` returns the store's `AnswerResult` (it raises
    ``BAD_ANSWER`` as `UserQuestionError`); blocking store calls run through ``to_thread``.
    """
    from urllib.parse import parse_qs

    from starlette.routing import Route

    async def open_link(request: Any) -> Any:
        try:
            question_id = verify_link_token(secret(), request.path_params["token"])
        except LinkError as err:
            status = 410 if err.reason == "expired" else 403
            return _page("Link not valid", f'<section class="card"><p>{err}.</p></section>', status)
        record = await to_thread(get, question_id)
        if record is None:
            return _page(
                "Gone", '<section class="card"><p>This question is gone.</p></section>', 410
            )
        note = None
        if request.method == "POST" and record.state is State.PENDING:
            body = await request.body()
            if len(body) > _MAX_FORM_BYTES:
                return _page(
                    "Too long",
                    '<section class="card"><p>That answer is too long.</p></section>',
                    413,
                )
            form = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
            if form.get("action", ["answer"])[-1] == "cancel":
                await to_thread(cancel, question_id)
                note = "You closed the question."
            else:
                try:
                    result = await to_thread(answer, question_id, _answer_from_form(record, form))
                except UserQuestionError as err:
                    problems = "".join(
                        f"<li>{_text(p)}</li>" for p in err.problems or (err.message,)
                    )
                    return _page(
                        "Not sent",
                        f'<section class="card"><p>Your answer was not sent:</p><ul>{problems}</ul>'
                        "</section>" + _form_html(record),
                        422,
                    )
                note = (
                    "Your answer was recorded."
                    if result.outcome is AnswerOutcome.APPLIED
                    else f"Your answer was not used ({result.outcome})."
                )
            record = await to_thread(get, question_id) or record
        if record.state is State.PENDING:
            return _page("A question is waiting", _form_html(record))
        return _page("Question settled", _outcome_html(record, note))

    return [Route("/q/{token}", open_link, methods=["GET", "POST"])]
