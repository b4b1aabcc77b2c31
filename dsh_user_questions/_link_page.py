"""The page a one-question answer link opens: that question, one form, nothing else.

A provider that sends notifications (the inbox's ``dsh-inbox serve --public-url``, the web
provider's ``public_url``) serves ``/q/<token>`` with `link_routes`; the token
(`dsh_user_questions._links`) is a capability for exactly one question, signed with the server's
link secret and expiring with the question. The page is server-rendered HTML with no script: the
question as the core's view shows it (`dsh_user_questions.view`): header, text and options
(shown label, description, preview) as escaped inert text; a detail's markdown as HTML of a
fixed list of elements (links only to ``http``, ``https`` and ``mailto``), every text escaped; a
diff-review's diff line by line as the one diff parser reads it. And one form that posts back to
the same address. It can show nothing else: no list, no other question, no stream. Used again
once the question is settled, it shows the outcome; tampered or expired, a clear page says so
(403 / 410). Every page has one ``<h1>``, its title.

The form sends only what it shows: a single-select's typed words are one more choice
("Other"), so a pick beside words is refused with the reason rather than half sent; an empty
Send is refused; "Close without answering" asks once more before it closes the question. A
refused form comes back with what was chosen and typed (never a secret's words).

Needs Starlette (which both page providers depend on); the core imports it only when a
provider builds the routes.
"""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from typing import Any

import attrs

from ._links import (
    LinkError,
    cross_origin_refusal,
    host_allowed,
    make_link_token,
    verify_link_token,
)
from ._payloads import AskUserQuestionRequest
from .errors import UserQuestionError
from .rules import inert_text
from .view import Node, OptionView, QuestionView, diff_lines, request_view

__all__ = ["LINK_TTL", "LinkedQuestion", "link_routes", "link_url", "with_links"]

LINK_TTL = 7 * 24 * 3600.0
"""How long a link to a question without a deadline stays good (seconds)."""

_MAX_FORM_BYTES = 64 * 1024

_CSS = """
body{font:16px/1.45 system-ui,sans-serif;margin:0;background:#f6f6f4;color:#1d1d1b;
overflow-wrap:anywhere}
main{max-width:40rem;margin:0 auto;padding:1rem}
.card{background:#fff;border:1px solid #d8d8d2;border-radius:.6rem;padding:1rem;margin:0 0 1rem}
.header{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:#55554f;margin:0}
h1{font-size:1.3rem;margin:.2rem 0 1rem}
h2{font-size:1.15rem;margin:.2rem 0 .8rem}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f1f1ec;padding:.6rem;
border-radius:.4rem;max-height:60vh;overflow:auto;font-size:.85rem}
label{display:flex;gap:.5rem;align-items:flex-start;padding:.45rem 0}
label>span{min-width:0}
.desc{display:block;color:#55554f;font-size:.9rem}
textarea,input[type=password]{width:100%;box-sizing:border-box;font:inherit;padding:.4rem}
button,a.button{display:inline-block;font:inherit;padding:.55rem 1.1rem;margin:.8rem .5rem 0 0;
border-radius:.4rem;border:1px solid #1d1d1b;background:#1d1d1b;color:#fff;text-decoration:none}
button.secondary,a.button{background:#fff;color:#1d1d1b}
.problems{border-color:#a3261c}
.outcome{font-weight:600}
.detail table{border-collapse:collapse}.detail th,.detail td{border:1px solid #d8d8d2;
padding:.2rem .4rem}[data-align=center]{text-align:center}[data-align=right]{text-align:right}
blockquote{margin:0;padding-left:.8rem;border-left:3px solid #d8d8d2}
.detail h3,.detail h4,.detail h5,.detail h6{font-size:1rem;margin:.8rem 0 .4rem}
.diff>span{display:block;min-height:1.45em}.diff .file{font-weight:600}
.diff .hunk{color:#0b6e85}.diff .add{background:#e3f3e6}.diff .del{background:#fbe6e3}
details.preview{margin:0 0 .4rem 1.6rem}
"""

_OTHER = "other"
"""The value of a single-select question's "Other" choice (its words are in the text box)."""


@attrs.frozen
class LinkedQuestion:
    """What a link's page shows of its question.

    ``request`` is the question as asked (``None`` for a settled one a provider no longer
    holds); ``asker`` names who asks (a harness label, with the agent when there is one);
    ``outcome`` is ``None`` while it is pending, else one of ``answered``, ``withdrawn``,
    ``expired``, ``cancelled`` (any other: "settled").
    """

    request: AskUserQuestionRequest | None
    asker: str
    outcome: str | None = None


def link_url(public_url: str, secret: bytes, question_id: str, *, expires_at: float) -> str:
    """The link that opens question ``question_id`` on the server at ``public_url``."""
    token = make_link_token(secret, question_id, expires_at=expires_at)
    return f"{public_url.rstrip('/')}/q/{token}"


def _text(value: str, *, multiline: bool = False) -> str:
    # Inert first (no control or bidi character survives), then escaped (no markup).
    return html.escape(inert_text(value, multiline=multiline), quote=True)


# The elements a markdown tree (`view.Node`) may become, and the attributes each may keep;
# anything else is left out (its text kept), whatever the tree says.
_TAGS = frozenset({
    "p", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "code", "em", "strong",
    "s", "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "a",
})  # fmt: skip
_EMPTY = frozenset({"hr", "br"})
_SAFE_SCHEMES = ("http://", "https://", "mailto:")
_ALIGNS = frozenset({"left", "center", "right"})


def _attributes(tag: str, given: Mapping[str, Any]) -> str:
    out = []
    href = given.get("href")
    if tag == "a" and isinstance(href, str) and href.lower().startswith(_SAFE_SCHEMES):
        out.append(f' href="{html.escape(href, quote=True)}" rel="noreferrer nofollow"')
    for name in ("start", "value"):
        number = given.get(name)
        if tag in ("ol", "li") and isinstance(number, int) and not isinstance(number, bool):
            out.append(f" {name}={number}")
    align = given.get("data-align")
    if tag in ("th", "td") and align in _ALIGNS:
        out.append(f" data-align={align}")
    return "".join(out)


def _tree_html(nodes: Iterable[Node]) -> str:
    """HTML of a markdown tree: tags from `_TAGS` only, every text escaped."""
    out = []
    for node in nodes:
        if isinstance(node, str):
            out.append(html.escape(node, quote=True))
            continue
        tag, given, *children = node
        inner = _tree_html(children)
        if tag not in _TAGS:
            out.append(inner)
        elif tag in _EMPTY:
            out.append(f"<{tag}>")
        else:
            attributes = _attributes(tag, given if isinstance(given, Mapping) else {})
            out.append(f"<{tag}{attributes}>{inner}</{tag}>")
    return "".join(out)


def _diff_html(diff: Mapping[str, Any]) -> str:
    """HTML of a diff as the view holds it (``QuestionView.diff``): one line each
    (`view.diff_lines`: marked), classed by what the parser says it is; every text escaped."""
    lines = [
        f'<span class="{kind}">{html.escape(text)}</span>'
        for kind, _o, _n, text in diff_lines(diff)
    ]
    # Each line is a block of its own (its colour spans the width): no newline between them.
    return '<pre class="diff">' + "".join(lines) + "</pre>"


def _page(title: str, body: str, status: int = 200) -> Any:
    from starlette.responses import HTMLResponse

    document = (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        '<meta name=referrer content="same-origin">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>"
        f"<body><main><h1>{html.escape(title)}</h1>{body}</main></body></html>"
    )
    return HTMLResponse(
        document,
        status_code=status,
        headers={
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline';"
            " form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
            # Not no-referrer: under it a browser sends "Origin: null" with the form's post,
            # which the Origin check refuses. same-origin sends the link (its token) to no
            # other site either.
            "Referrer-Policy": "same-origin",
        },
    )


def _card(text: str) -> str:
    return f'<section class="card"><p>{text}</p></section>'


def _detail_html(question: QuestionView) -> str:
    if question.diff is not None:
        return _diff_html(question.diff)
    if question.detail is not None:
        return f'<div class="detail">{_tree_html(question.detail)}</div>'
    if question.detail_text is not None:  # markdown too deep to parse: its inert text
        return f"<pre>{html.escape(question.detail_text)}</pre>"
    return ""


def _option_html(position: int, option: OptionView, kind: str, name: str, checked: bool) -> str:
    mark = " (recommended)" if option.recommended else ""
    description = (
        f'<span class="desc">{html.escape(option.description)}</span>' if option.description else ""
    )
    preview = (
        ""
        if option.preview is None
        else f'<details class="preview"><summary>Preview of {html.escape(option.shown)}'
        f'</summary><div class="detail">{_tree_html(option.preview)}</div></details>'
    )
    on = " checked" if checked else ""
    return (
        f'<label><input type={kind} name="{name}" value="{position}"{on}>'
        f"<span>{html.escape(option.shown)}{mark}{description}</span></label>{preview}"
    )


def _words_html(name: str, question: QuestionView, form: _Form, picked: set[str]) -> str:
    """The box for one's own words: masked for a secret, "Other" beside a single-select's
    options."""
    out: list[str] = []
    if question.secret:
        out.append(
            f'<label for="{name}-custom">Your answer (hidden as you type)</label>'
            f'<input type=password id="{name}-custom" name="{name}-custom" autocomplete=off>'
        )
    else:
        typed = html.escape(form.get(f"{name}-custom", [""])[-1])
        if question.options and not question.multi_select:
            # A single-select takes one choice: the typed words are one more option, so a
            # pick and words can never both seem sent (one radio group, no script needed).
            checked = " checked" if _OTHER in picked else ""
            out.append(
                f'<label><input type=radio name="{name}" value="{_OTHER}"{checked}>'
                "<span>Other: my own words below</span></label>"
            )
            other = "Your own words (choose Other above)"
        else:
            other = "Other (your own words)" if question.options else "Your answer"
        out.append(
            f'<label for="{name}-custom">{other}</label>'
            f'<textarea id="{name}-custom" name="{name}-custom" rows=3>{typed}</textarea>'
        )
    return "".join(out)


def _question_html(index: int, question: QuestionView, form: _Form) -> str:
    name = f"q{index}"
    picked = set(form.get(name, []))
    parts = ['<section class="card">']
    if question.header:
        parts.append(f'<p class="header">{html.escape(question.header)}</p>')
    parts.append(f"<h2>{html.escape(question.question)}</h2>")
    parts.append(_detail_html(question))
    kind = "checkbox" if question.multi_select else "radio"
    for position, option in enumerate(question.options):
        parts.append(_option_html(position, option, kind, name, str(position) in picked))
    if question.other:  # else the options only: no words of one's own
        parts.append(_words_html(name, question, form, picked))
    parts.append("</section>")
    return "".join(parts)


def _form_html(linked: LinkedQuestion, form: _Form | None = None) -> str:
    request = linked.request
    assert request is not None, "a pending question's page needs its request"
    views = request_view(request)
    review = any(view.kind != "question" for view in views)
    lead = "review asked by" if review else "asked by"
    cards = "".join(_question_html(i, view, form or {}) for i, view in enumerate(views))
    return (
        f'<p class="header">A question {lead} {_text(linked.asker)}</p>'
        f"<form method=post>{cards}<button type=submit name=action value=answer>Send answer"
        "</button><button class=secondary type=submit name=action value=cancel>"
        "Close without answering</button></form>"
    )


def _confirm_close_html() -> str:
    return (
        '<section class="card"><p>The agent will be told you declined to answer.</p>'
        "<form method=post><button type=submit name=action value=close>"
        'Yes, close it</button><a class="button" href="">No, back to the question</a>'
        "</form></section>"
    )


_OUTCOMES = {
    "answered": "This question has been answered.",
    "withdrawn": "The agent withdrew this question; nothing more is needed.",
    "expired": "This question expired before it was answered.",
    "cancelled": "This question was closed without an answer.",
}


def _outcome_html(linked: LinkedQuestion, note: str | None = None) -> str:
    said = f"<p>{html.escape(note)}</p>" if note else ""
    outcome = _OUTCOMES.get(str(linked.outcome), "This question was settled.")
    return f'<section class="card">{said}<p class="outcome">{outcome}</p></section>'


_Form = dict[str, list[str]]


def _answer_from_form(request: AskUserQuestionRequest, form: _Form) -> dict[str, Any]:
    """The wire answer of a posted form; `UserQuestionError` (``BAD_ANSWER``) listing what
    the page refuses before the rules see it: nothing given at all, a single-select pick
    beside typed words, "Other" chosen without words."""
    items = []
    problems = []
    given = False
    for index, question in enumerate(request_view(request)):
        name = question.header or question.question
        raw_picks = form.get(f"q{index}", [])
        chosen = [
            question.options[int(raw)]
            for raw in raw_picks
            if raw.isdigit() and int(raw) < len(question.options)
        ]
        picked = [option.label for option in chosen]  # the wire labels: what an answer names
        custom = form.get(f"q{index}-custom", [""])[-1].replace("\r\n", "\n")
        typed = bool(custom.strip())
        if not question.multi_select and question.options:
            if picked and typed:
                problems.append(
                    f"{name}: you chose \u201c{chosen[0].shown}\u201d and typed your own"
                    " words; choose Other to send your words, or clear them"
                )
            elif _OTHER in raw_picks and not typed:
                problems.append(f"{name}: type your answer below Other, or choose an option")
        item: dict[str, Any] = {"id": question.id, "selected": picked}
        if typed:
            item["custom"] = custom
        given = given or bool(picked) or typed
        items.append(item)
    if not given and not problems:
        problems.append("Nothing to send: choose an option or type an answer first.")
    if problems:
        raise UserQuestionError.bad_answer(*problems)
    return {"answers": items}


def link_routes(
    *,
    secret: Callable[[], bytes],
    get: Callable[[str], Awaitable[LinkedQuestion | None]],
    answer: Callable[[str, dict[str, Any]], Awaitable[str | None]],
    cancel: Callable[[str], Awaitable[object]],
) -> list[Any]:
    """The Starlette routes of ``/q/{token}`` over a provider's questions.

    ``get(question_id)`` gives the `LinkedQuestion` (``None``: gone); ``answer(question_id,
    wire_answer)`` hands an answer over and returns ``None`` when it was taken, else why not
    (shown as "Your answer was not used (why)."), raising ``BAD_ANSWER`` as a
    `UserQuestionError` for an answer the rules refuse; ``cancel(question_id)`` closes it.
    """
    from urllib.parse import parse_qs

    from starlette.routing import Route

    async def open_link(request: Any) -> Any:
        try:
            question_id = verify_link_token(secret(), request.path_params["token"])
        except LinkError as err:
            status = 410 if err.reason == "expired" else 403
            return _page("Link not valid", _card(f"{err}."), status)
        linked = await get(question_id)
        if linked is None:
            return _page("Question gone", _card("This question is gone."), 410)
        note = None
        if request.method == "POST" and linked.outcome is None and linked.request is not None:
            body = await request.body()
            if len(body) > _MAX_FORM_BYTES:
                return _page("Answer too long", _card("That answer is too long."), 413)
            form = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
            action = form.get("action", ["answer"])[-1]
            if action == "cancel":  # asked once more: one tap must not decline for good
                return _page("Close without answering?", _confirm_close_html())
            if action == "close":
                await cancel(question_id)
                note = "You closed the question."
            else:
                try:
                    why = await answer(question_id, _answer_from_form(linked.request, form))
                except UserQuestionError as err:
                    problems = "".join(
                        f"<li>{_text(p)}</li>" for p in err.problems or (err.message,)
                    )
                    return _page(
                        "Your answer was not sent",
                        f'<section class="card problems" role="alert"><ul>{problems}</ul>'
                        "</section>" + _form_html(linked, form),
                        422,
                    )
                note = (
                    "Your answer was recorded."
                    if why is None
                    else (f"Your answer was not used ({why}).")
                )
            linked = await get(question_id) or linked
        if linked.outcome is None and linked.request is not None:
            return _page("A question is waiting", _form_html(linked))
        return _page("Question settled", _outcome_html(linked, note))

    return [Route("/q/{token}", open_link, methods=["GET", "POST"])]


def with_links(app: Any, routes: list[Any], hosts: Callable[[], Collection[str]]) -> Any:
    """``app`` with ``routes`` (from `link_routes`) answering ``/q/...`` beside it.

    A link request passes no page token (the link is its own capability) but the same Host
    and Origin checks as the page: a Host header that `dsh_user_questions._links.host_allowed`
    refuses for ``hosts()`` gets 421, a request `dsh_user_questions._links.cross_origin_refusal`
    refuses (another origin, another site, an https public URL's name over http) 403.
    """
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse

    links = Starlette(routes=routes)
    refused = PlainTextResponse("unknown host", status_code=421)

    async def dispatch(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/q/"):
            headers = {key.lower(): value.decode("latin-1") for key, value in scope["headers"]}
            allowed = hosts()
            if not host_allowed(headers.get(b"host", "").lower(), allowed):
                await refused(scope, receive, send)
                return
            refusal = cross_origin_refusal(
                scope["method"], headers.get(b"origin"), headers.get(b"sec-fetch-site", ""), allowed
            )
            if refusal is not None:
                await PlainTextResponse(refusal, status_code=403)(scope, receive, send)
                return
            await links(scope, receive, send)
            return
        await app(scope, receive, send)

    return dispatch
