"""The page a one-question answer link opens: that question, one form, nothing else.

A provider that sends notifications (the inbox's ``dsh-inbox serve --public-url``, the web
provider's ``public_url``) serves ``/q/<token>`` with `link_routes`; the token
(`dsh_user_questions._links`) is a capability for exactly one question, signed with the server's
link secret and expiring with the question. The page is server-rendered HTML with no script
(but one, allowed by its hash, on a date-and-time question: it picks the browser's UTC offset): the
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

import base64
import contextvars
import hashlib
import html
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from typing import Any

import attrs

from ._i18n import ENGLISH, N_, for_language, html_lang, language_from_accept, review_text
from ._identity import CALLER_KEY, TOKEN_HOLDER, Caller, IdentityRefusal, ProxyIdentity, caller_of
from ._input_text import describe_input, value_from_text
from ._links import (
    LinkError,
    cross_origin_refusal,
    host_allowed,
    link_recipient,
    make_link_token,
    verify_link_token,
)
from ._payloads import AskUserQuestionRequest
from .errors import UserQuestionError
from .rules import inert_text
from .view import Node, OptionView, QuestionView, diff_lines, request_view

__all__ = ["LINK_TTL", "LinkedQuestion", "link_routes", "link_url", "with_links"]

# The reader's language, set per request from its Accept-Language (DSH_USER_QUESTIONS_LANG first).
_LANGUAGE: contextvars.ContextVar[str] = contextvars.ContextVar(
    "link_page_language", default=ENGLISH
)


def _(message: str) -> str:
    return for_language(_LANGUAGE.get())(message)


def _review(kind: str, text: str) -> str:
    return review_text(kind, text, _LANGUAGE.get())


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

.hint{color:#55554f;font-size:.9rem;margin:.2rem 0}
input[type=number],input[type=date],input[type=time],input[type=datetime-local],
input[type=search],input[type=file],select{font:inherit;padding:.35rem;max-width:100%}
.files{max-height:50vh;overflow:auto;border:1px solid #d8d8d2;border-radius:.4rem;padding:0 .5rem}
.files label{padding:.2rem 0;font-family:ui-monospace,monospace;font-size:.9rem}
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


def link_url(
    public_url: str,
    secret: bytes,
    question_id: str,
    *,
    expires_at: float,
    recipient: str | None = None,
) -> str:
    """The link that opens question ``question_id`` on the server at ``public_url``
    (``recipient``: the person it is sent to, see `dsh_user_questions._links.make_link_token`)."""
    token = make_link_token(secret, question_id, expires_at=expires_at, recipient=recipient)
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
        f"<!doctype html><html lang={html_lang(_LANGUAGE.get())}><head><meta charset=utf-8>"
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
            # The one script, only on a page that carries it (a date-and-time question).
            + (f" script-src 'sha256-{_OFFSET_HASH}';" if _OFFSET_SCRIPT in body else "")
            + " form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
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


def _option_html(
    position: int, option: OptionView, kind: str, name: str, checked: bool, kind_of: str
) -> str:
    mark = " " + _("(recommended)") if option.recommended else ""
    description = (
        f'<span class="desc">{html.escape(_review(kind_of, option.description))}</span>'
        if option.description
        else ""
    )
    preview = (
        ""
        if option.preview is None
        else '<details class="preview"><summary>'
        + html.escape(_("Preview of {label}").format(label=option.shown))
        + f'</summary><div class="detail">{_tree_html(option.preview)}</div></details>'
    )
    on = " checked" if checked else ""
    return (
        f'<label><input type={kind} name="{name}" value="{position}"{on}>'
        f"<span>{html.escape(_review(kind_of, option.shown))}{mark}{description}</span></label>"
        f"{preview}"
    )


def _words_html(name: str, question: QuestionView, form: _Form, picked: set[str]) -> str:
    """The box for one's own words: masked for a secret, "Other" beside a single-select's
    options."""
    out: list[str] = []
    if question.secret:
        hidden = _("Your answer (hidden as you type)")
        out.append(
            f'<label for="{name}-custom">{hidden}</label>'
            f'<input type=password id="{name}-custom" name="{name}-custom" autocomplete=off>'
        )
    else:
        typed = html.escape(form.get(f"{name}-custom", [""])[-1])
        if question.options and not question.multi_select:
            # A single-select takes one choice: the typed words are one more option, so a
            # pick and words can never both seem sent (one radio group, no script needed).
            checked = " checked" if _OTHER in picked else ""
            label = _("Other: my own words below")
            out.append(
                f'<label><input type=radio name="{name}" value="{_OTHER}"{checked}>'
                f"<span>{label}</span></label>"
            )
            other = _("Your own words (choose Other above)")
        else:
            other = _("Other (your own words)") if question.options else _("Your answer")
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
        parts.append(
            f'<p class="header">{html.escape(_review(question.kind, question.header))}</p>'
        )
    parts.append(f"<h2>{html.escape(_review(question.kind, question.question))}</h2>")
    parts.append(_detail_html(question))
    if question.input is not None:  # a typed answer: its field only
        parts.append(_input_html(name, question, form))
        parts.append("</section>")
        return "".join(parts)
    kind = "checkbox" if question.multi_select else "radio"
    for position, option in enumerate(question.options):
        parts.append(
            _option_html(position, option, kind, name, str(position) in picked, question.kind)
        )
    if question.other:  # else the options only: no words of one's own
        parts.append(_words_html(name, question, form, picked))
    parts.append("</section>")
    return "".join(parts)


def _form_html(linked: LinkedQuestion, form: _Form | None = None) -> str:
    request = linked.request
    assert request is not None, "a pending question's page needs its request"
    views = request_view(request)
    review = any(view.kind != "question" for view in views)
    lead = (
        _("A question for review asked by {asker}") if review else _("A question asked by {asker}")
    )
    cards = "".join(_question_html(i, view, form or {}) for i, view in enumerate(views))
    kinds = {view.input.type for view in views if view.input is not None}
    # Files go as multipart (the browser shows its own progress as they are sent).
    encoding = " enctype=multipart/form-data" if "upload" in kinds else ""
    filters = "".join(
        _filter_html(i, view, form or {})
        for i, view in enumerate(views)
        if view.input is not None and view.input.type == "files"
    )
    script = f"<script>{_OFFSET_SCRIPT}</script>" if "datetime" in kinds else ""
    send, close = _("Send answer"), _("Close without answering")
    return (
        f'<p class="header">{lead.format(asker=_text(linked.asker))}</p>{filters}'
        f"<form method=post{encoding}>{cards}"
        f"<button type=submit name=action value=answer>{send}</button>"
        "<button class=secondary type=submit name=action value=cancel>"
        f"{close}</button></form>{script}"
    )


_FILES_SHOWN = 200
"""The most files a file question lists at once; its filter (a search) narrows the rest."""

_INPUT_TYPES = {"number": "number", "date": "date", "time": "time", "datetime": "datetime-local"}

# The one script of the page (allowed by its hash): it picks the browser's UTC offset for the
# date and time chosen, so a local time is sent with its offset. Without it the human picks.
_OFFSET_SCRIPT = (
    'for(const s of document.querySelectorAll("select[data-offset-for]")){'
    "const f=document.getElementById(s.dataset.offsetFor);"
    "const set=()=>{const d=f.value?new Date(f.value):new Date();if(isNaN(d))return;"
    "const m=-d.getTimezoneOffset(),a=Math.abs(m);"
    'const v=(m<0?"-":"+")+String(Math.floor(a/60)).padStart(2,"0")+":"'
    '+String(a%60).padStart(2,"0");'
    "if([...s.options].some(o=>o.value===v))s.value=v;};"
    'set();f.addEventListener("change",set);}'
)
_OFFSET_HASH = base64.b64encode(hashlib.sha256(_OFFSET_SCRIPT.encode()).digest()).decode()
_OFFSETS = [
    f"{'-' if minutes < 0 else '+'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    for minutes in range(-12 * 60, 14 * 60 + 1, 15)
]


def _attr(value: object) -> str:
    return html.escape(str(value), quote=True)


def _input_html(name: str, question: QuestionView, form: _Form) -> str:
    """The field of a typed answer: a native number, date, time or date-and-time input, a
    file list with checkboxes (narrowed by the filter above the form), or a file picker."""
    field = question.input
    assert field is not None, "only a typed question has a field"
    words = html.escape(inert_text(describe_input(field, _LANGUAGE.get())))
    hint = f'<p class="hint" id="{name}-hint">{words[:1].upper()}{words[1:]}</p>'
    kind = field.type
    if kind in _INPUT_TYPES:
        extra = ""
        if kind == "number":
            for key in ("min", "max"):
                value = getattr(field, key, None)
                if value is not None:
                    extra += f' {key}="{_attr(value)}"'
            step = getattr(field, "step", None)
            extra += f' step="{_attr(step if step is not None else "any")}"'
        typed = _attr(form.get(f"{name}-value", [""])[-1])
        label = _("Your answer")
        out = (
            f'<label for="{name}-value">{label}</label>'
            f'<input type={_INPUT_TYPES[kind]} id="{name}-value" name="{name}-value"'
            f' value="{typed}" aria-describedby="{name}-hint"{extra}>{hint}'
        )
        if kind == "datetime":
            chosen = form.get(f"{name}-offset", ["+00:00"])[-1]
            options = "".join(
                f"<option{' selected' if offset == chosen else ''}>{offset}</option>"
                for offset in _OFFSETS
            )
            zone = _("Time zone (UTC offset)")
            out += (
                f'<label for="{name}-offset">{zone}</label>'
                f'<select id="{name}-offset" name="{name}-offset"'
                f' data-offset-for="{name}-value">{options}</select>'
            )
        return out
    if kind == "files":
        candidates = field.candidates
        needle = form.get(f"{name}-filter", [""])[-1].strip().lower()
        ticked = set(form.get(f"{name}-file", []))
        shown = [
            (path, text)
            for path, text in zip(candidates, field.shown, strict=True)
            if not needle or needle in path.lower()
        ]
        rows = "".join(
            f'<label><input type=checkbox name="{name}-file" value="{_attr(path)}"'
            f"{' checked' if path in ticked else ''}><span>{html.escape(text)}</span></label>"
            for path, text in shown[:_FILES_SHOWN]
        )
        more = (
            _("{count} files match; the first {shown} are listed: filter to narrow.")
            if len(shown) > _FILES_SHOWN
            else _("{count} of {total} files listed.")
        ).format(count=len(shown), shown=_FILES_SHOWN, total=len(candidates))
        legend = _("Files")
        return (
            f'{hint}<p class="hint">{more}</p>'
            f'<fieldset class="files"><legend class="hint">{legend}</legend>{rows}</fieldset>'
        )
    if kind == "upload":
        accept = getattr(field, "accept", None) or ()
        accepting = f' accept="{_attr(",".join(accept))}"' if accept else ""
        count = getattr(field, "max_count", None)
        several = "" if count == 1 else " multiple"
        choose = _("Choose a file") if count == 1 else _("Choose files")
        return (
            f'<label for="{name}-upload">'
            f"{choose}</label>"
            f'<input type=file id="{name}-upload" name="{name}-upload"{accepting}{several}'
            f' aria-describedby="{name}-hint">{hint}'
        )
    return f"<p>{words}</p>"


def _filter_html(index: int, question: QuestionView, form: _Form) -> str:
    """The search that narrows a file question's list (a GET of the same page)."""
    name = f"q{index}"
    typed = _attr(form.get(f"{name}-filter", [""])[-1])
    title = html.escape(question.header or question.question.split("\n", 1)[0])
    label = html.escape(_("Filter the files of \u201c{title}\u201d")).format(title=title)
    button = _("Filter")
    return (
        f'<form method=get class="card" role="search"><label for="{name}-filter">{label}</label>'
        f'<input type=search id="{name}-filter" name="{name}-filter" value="{typed}">'
        f"<button type=submit class=secondary>{button}</button></form>"
    )


def _confirm_close_html() -> str:
    told = _("The agent will be told you declined to answer.")
    yes, back = _("Yes, close it"), _("No, back to the question")
    return (
        f'<section class="card"><p>{told}</p>'
        "<form method=post><button type=submit name=action value=close>"
        f'{yes}</button><a class="button" href="">'
        f"{back}</a></form></section>"
    )


_OUTCOMES = {
    "answered": N_("This question has been answered."),
    "withdrawn": N_("The agent withdrew this question; nothing more is needed."),
    "expired": N_("This question expired before it was answered."),
    "cancelled": N_("This question was closed without an answer."),
}


def _outcome_html(linked: LinkedQuestion, note: str | None = None) -> str:
    said = f"<p>{html.escape(note)}</p>" if note else ""
    outcome = _(_OUTCOMES.get(str(linked.outcome), N_("This question was settled.")))
    return f'<section class="card">{said}<p class="outcome">{outcome}</p></section>'


_Form = dict[str, list[str]]


def _answer_from_form(request: AskUserQuestionRequest, form: _Form) -> dict[str, Any]:
    """The wire answer of a posted form; `UserQuestionError` (``BAD_ANSWER``) listing what
    the page refuses before the rules see it: nothing given at all, a single-select pick
    beside typed words, "Other" chosen without words."""
    items: list[dict[str, Any]] = []
    problems: list[str] = []
    given = False
    for index, question in enumerate(request_view(request)):
        name = question.header or question.question
        if question.input is not None:
            typed_item = _value_item(index, question, form)
            given = given or "value" in typed_item
            items.append(typed_item)
            continue
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
                    _(
                        "{question}: you chose \u201c{label}\u201d and typed your own words;"
                        " choose Other to send your words, or clear them"
                    ).format(question=name, label=chosen[0].shown)
                )
            elif _OTHER in raw_picks and not typed:
                problems.append(
                    _("{question}: type your answer below Other, or choose an option").format(
                        question=name
                    )
                )
        item: dict[str, Any] = {"id": question.id, "selected": picked}
        if typed:
            item["custom"] = custom
        given = given or bool(picked) or typed
        items.append(item)
    if not given and not problems:
        problems.append(_("Nothing to send: choose an option or type an answer first."))
    if problems:
        raise UserQuestionError.bad_answer(*problems)
    return {"answers": items}


def _value_item(index: int, question: QuestionView, form: _Form) -> dict[str, Any]:
    """The answer item of a typed question from the posted form (no value: a skip)."""
    field = question.input
    assert field is not None, "only a typed question has a value"
    key = f"q{index}"
    item: dict[str, Any] = {"id": question.id, "selected": []}
    if field.type == "files":
        paths = form.get(f"{key}-file", [])
        if paths:
            item["value"] = paths
    elif field.type == "upload":
        tokens = form.get(f"{key}-upload", [])
        if tokens:
            item["value"] = [{"upload": token} for token in tokens]
    else:
        raw = form.get(f"{key}-value", [""])[-1].strip()
        if raw and field.type == "datetime":
            if len(raw) == 16:  # the browser's YYYY-MM-DDTHH:MM
                raw += ":00"
            raw += form.get(f"{key}-offset", ["+00:00"])[-1]
        if raw:
            item["value"] = value_from_text(field, raw)
    return item


def link_routes(
    *,
    secret: Callable[[], bytes],
    get: Callable[[str], Awaitable[LinkedQuestion | None]],
    answer: Callable[[str, dict[str, Any], Caller], Awaitable[str | None]],
    cancel: Callable[[str], Awaitable[object]],
    upload: Callable[[str, str, str, str | None], Any] | None = None,
    opened: Callable[[str, Caller], Awaitable[object]] | None = None,
) -> list[Any]:
    """The Starlette routes of ``/q/{token}`` over a provider's questions.

    ``get(question_id)`` gives the `LinkedQuestion` (``None``: gone); ``answer(question_id,
    wire_answer, caller)`` hands an answer over from ``caller`` (`dsh_user_questions._identity.
    Caller`: the person a trusted proxy named (see `with_links`), else the link's recipient,
    else ``token``; and the peer's address) and returns ``None`` when it was taken, else why not
    (shown as "Your answer was not used (why)."), raising ``BAD_ANSWER`` as a
    `UserQuestionError` for an answer the rules refuse; ``cancel(question_id)`` closes it.
    ``upload(question_id, item_id, name, media_type)`` opens a sink for a file the form
    carries (``write``/``finish`` giving the token the answer names it by/``abort``; raising
    `dsh_user_questions._uploads.UploadRefused` or `LookupError`); without it a form with files
    is refused. ``opened(question_id, caller)`` is told each time a pending question's page is
    shown (a log's ``opened`` event).
    """
    from urllib.parse import parse_qs

    from starlette.routing import Route

    async def open_link(request: Any) -> Any:
        _LANGUAGE.set(language_from_accept(request.headers.get("accept-language")))
        try:
            question_id = verify_link_token(secret(), request.path_params["token"])
        except LinkError as err:
            status = 410 if err.reason == "expired" else 403
            return _page(_("Link not valid"), _card(f"{err}."), status)
        linked = await get(question_id)
        if linked is None:
            return _page(_("Question gone"), _card(_("This question is gone.")), 410)
        caller = request.scope.get(CALLER_KEY)
        if not isinstance(caller, Caller):  # no logging-in proxy: the link's recipient
            client = request.scope.get("client")
            person = link_recipient(request.path_params["token"]) or TOKEN_HOLDER
            caller = Caller(person, str(client[0]) if client else None)
        note = None
        if request.method == "POST" and linked.outcome is None and linked.request is not None:
            kind = request.headers.get("content-type", "")
            if kind.lower().startswith("multipart/form-data"):
                try:
                    form = await _multipart(request, kind, linked.request, question_id, upload)
                except _Refused as refused:
                    return _page(
                        _("Your file was not taken"),
                        f'<section class="card problems" role="alert"><p>{_text(str(refused))}'
                        " " + _("Nothing of it was kept.") + "</p></section>" + _form_html(linked),
                        refused.status,
                    )
            else:
                body = await request.body()
                if len(body) > _MAX_FORM_BYTES:
                    return _page(_("Answer too long"), _card(_("That answer is too long.")), 413)
                form = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
            action = form.get("action", ["answer"])[-1]
            if action == "cancel":  # asked once more: one tap must not decline for good
                return _page(_("Close without answering?"), _confirm_close_html())
            if action == "close":
                await cancel(question_id)
                note = _("You closed the question.")
            else:
                try:
                    wire = _answer_from_form(linked.request, form)
                    why = await answer(question_id, wire, caller)
                except UserQuestionError as err:
                    problems = "".join(
                        f"<li>{_text(p)}</li>" for p in err.problems or (err.message,)
                    )
                    return _page(
                        _("Your answer was not sent"),
                        f'<section class="card problems" role="alert"><ul>{problems}</ul>'
                        "</section>" + _form_html(linked, form),
                        422,
                    )
                note = (
                    _("Your answer was recorded.")
                    if why is None
                    else _("Your answer was not used ({why}).").format(why=why)
                )
            linked = await get(question_id) or linked
        if linked.outcome is None and linked.request is not None:
            shown = parse_qs(request.url.query) if request.method == "GET" else {}
            if opened is not None and request.method == "GET":
                await opened(question_id, caller)
            return _page(_("A question is waiting"), _form_html(linked, shown))
        return _page(_("Question settled"), _outcome_html(linked, note))

    return [Route("/q/{token}", open_link, methods=["GET", "POST"])]


class _Refused(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


async def _multipart(
    request: Any,
    content_type: str,
    asked: AskUserQuestionRequest,
    question_id: str,
    upload: Callable[[str, str, str, str | None], Any] | None,
) -> _Form:
    """A multipart form, its files streamed into ``upload`` sinks as they arrive (each file
    part of a field ``q<N>-upload`` becomes its token in the form); `_Refused` (nothing of the
    refused file kept) for a file over its question's limit, of a refused type or with a bad
    name, or for fields over the form's size limit."""
    from python_multipart.multipart import MultipartParser, parse_options_header

    from ._uploads import UploadRefused

    _, options = parse_options_header(content_type)
    boundary = options.get(b"boundary")
    if not boundary:
        raise _Refused("The form was sent without its boundary.", 400)
    ids = [item.id for item in asked.questions]
    form: _Form = {}
    state: dict[str, Any] = {"headers": {}, "field": b"", "value": b"", "sink": None, "text": 0}
    failure: list[_Refused] = []

    def header_field(data: bytes, start: int, end: int) -> None:
        state["field"] += data[start:end]

    def header_value(data: bytes, start: int, end: int) -> None:
        state["value"] += data[start:end]

    def header_end() -> None:
        state["headers"][state["field"].decode("latin-1").lower()] = state["value"]
        state["field"] = state["value"] = b""

    def part_begin() -> None:
        state.update(headers={}, sink=None, name=None, data=bytearray())

    def headers_done() -> None:
        _, disposition = parse_options_header(state["headers"].get("content-disposition", b""))
        name = disposition.get(b"name", b"").decode("utf-8", "replace")
        state["name"] = name
        filename = disposition.get(b"filename")
        if filename is None or failure:
            return
        state["name"] = None  # a file part is no text field
        label = filename.decode("utf-8", "replace")
        index = name[1:].split("-", 1)[0] if name.startswith("q") else ""
        if not label or not name.endswith("-upload") or not index.isdigit():
            return  # no file chosen (an empty part), or not an upload field: ignored
        if upload is None or int(index) >= len(ids):
            failure.append(_Refused("This page cannot take files for that question.", 400))
            return
        media = state["headers"].get("content-type", b"").decode("latin-1") or None
        try:
            state["sink"] = upload(question_id, ids[int(index)], label, media)
        except UploadRefused as refused:
            failure.append(_Refused(f"{refused}.", refused.status))
        except LookupError as missing:
            failure.append(_Refused(f"{missing}.", 409))
        else:
            state["sink_field"] = name

    def part_data(data: bytes, start: int, end: int) -> None:
        sink = state["sink"]
        if sink is not None:
            try:
                sink.write(data[start:end])
            except UploadRefused as refused:
                state["sink"] = None
                failure.append(_Refused(f"{refused}.", refused.status))
        elif state["name"] is not None:
            state["text"] += end - start
            if state["text"] > _MAX_FORM_BYTES:
                state["name"] = None
                failure.append(_Refused("That answer is too long.", 413))
            else:
                state["data"] += data[start:end]

    def part_end() -> None:
        sink = state["sink"]
        if sink is not None:
            state["sink"] = None
            try:
                form.setdefault(state["sink_field"], []).append(sink.finish())
            except LookupError as missing:
                failure.append(_Refused(f"{missing}.", 409))
        elif state["name"] is not None:
            text = bytes(state["data"]).decode("utf-8", "replace").replace("\r\n", "\n")
            form.setdefault(state["name"], []).append(text)

    parser = MultipartParser(
        boundary,
        {
            "on_part_begin": part_begin,
            "on_header_field": header_field,
            "on_header_value": header_value,
            "on_header_end": header_end,
            "on_headers_finished": headers_done,
            "on_part_data": part_data,
            "on_part_end": part_end,
        },
    )
    try:
        async for chunk in request.stream():
            parser.write(chunk)
            if failure:
                break
        parser.finalize()
    except ValueError as error:  # the parser's own complaint: a malformed body
        failure.append(_Refused(f"The form could not be read ({type(error).__name__}).", 400))
    finally:
        if state.get("sink") is not None:
            state["sink"].abort()
    if failure:
        raise failure[0]
    return form


def with_links(
    app: Any,
    routes: list[Any],
    hosts: Callable[[], Collection[str]],
    identity: ProxyIdentity | None = None,
) -> Any:
    """``app`` with ``routes`` (from `link_routes`) answering ``/q/...`` beside it.

    A link request passes no page token (the link is its own capability) but the same Host
    and Origin checks as the page: a Host header that `dsh_user_questions._links.host_allowed`
    refuses for ``hosts()`` gets 421, a request `dsh_user_questions._links.cross_origin_refusal`
    refuses (another origin, another site, an https public URL's name over http) 403. With an
    ``identity`` (a logging-in proxy, `dsh_user_questions._identity.ProxyIdentity`), the link
    also needs the proxy's word on who opens it, as the page does (401 / 403), and that person
    is who answers.
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
            if identity is not None:
                caller = caller_of(scope, identity)
                if isinstance(caller, IdentityRefusal):
                    _LANGUAGE.set(language_from_accept(headers.get(b"accept-language")))
                    status = caller.status
                    await _page(_("Not signed in"), _card(_(caller.message)), status)(
                        scope, receive, send
                    )
                    return
                scope = {**scope, CALLER_KEY: caller}
            await links(scope, receive, send)
            return
        await app(scope, receive, send)

    return dispatch
