"""``dsh-inbox``: see and answer the inbox's questions from a shell.

``dsh-inbox list [--json] [--all]``, ``dsh-inbox show ID``, ``dsh-inbox answer ID``,
``dsh-inbox cancel ID``, ``dsh-inbox serve``, ``dsh-inbox prune`` and ``dsh-inbox init``.
Only ``init`` makes a store whenever there is none; ``serve`` makes only a first one (as a
harness's first ask does), not one where a store made before vanished; ``list``, ``show``,
``answer``, ``cancel`` and ``prune`` open an existing one. So a configured store that vanished
is an error for them all but ``init``, never a new empty store. Exit
status of ``answer``: 0 this answer was applied (and received by its asker, or kept for one
that is not waiting now); 2 the answer is invalid (not JSON, or refused
by the question's rules); 3 the question was already answered or closed; 4 it was withdrawn or
expired (or its asker stopped waiting as the answer landed), so the answer was kept as late;
5 you may not answer it (not in its audience: your login name is who you are); 1 anything else
(unknown id, no store). An approval of a review that needs more approvals is counted: 0.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from dsh_user_questions import BadAnswerError, UserQuestionError, WireFormatError
from dsh_user_questions._i18n import N_
from dsh_user_questions._identity import login_name
from dsh_user_questions._input_text import describe_input, value_from_text
from dsh_user_questions.rules import inert_text as inert
from dsh_user_questions.view import Node, QuestionView, diff_lines, request_view

from ._i18n import _
from ._record import AnswerOutcome, QuestionRecord, State
from ._retention import parse_duration, retention_seconds
from ._store import AnswerResult, Inbox, approvals_needed, open_inbox
from ._uploads import attach_files, resolve_uploads, stash_local_uploads
from ._url import ENV_INBOX

__all__ = ["main"]

EXIT_APPLIED = 0
EXIT_ERROR = 1
EXIT_INVALID = 2
EXIT_TAKEN = 3
EXIT_LATE = 4
EXIT_REFUSED = 5
# How long `answer` waits for the asker's receipt before saying nobody waits for the answer.
RECEIPT_SECONDS = 1.5


def _fail(message: str, status: int = EXIT_ERROR) -> int:
    """Say what went wrong on stderr, as ``dsh-inbox: <message>``; the exit status ``status``."""
    print(f"dsh-inbox: {message}", file=sys.stderr)
    return status


def _no_question(question_id: str) -> int:
    return _fail(_("no question {id} in the inbox").format(id=repr(question_id)))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dsh-inbox",
        description="See and answer the questions your agents asked through the inbox.",
    )
    parser.add_argument(
        "--inbox",
        metavar="URL",
        help=f"the store (default: ${ENV_INBOX}, else the SQLite file in the state directory)",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    listing = commands.add_parser(
        "list", help="pending questions and late answers (--all: the whole history)"
    )
    listing.add_argument("--json", action="store_true", help="print one JSON array of records")
    listing.add_argument(
        "--all", action="store_true", help="every record kept, final ones included"
    )
    show = commands.add_parser("show", help="one question in full: header, detail, options")
    show.add_argument("id", help="the question's id (see dsh-inbox list)")
    show.add_argument("--json", action="store_true", help="print the record as JSON")
    cancel = commands.add_parser("cancel", help="close a pending question (ASK_CANCELLED)")
    cancel.add_argument("id", help="the question's id")
    cancel.add_argument(
        "--surface", default="cli", help="who closes it, as the record will say (default: cli)"
    )
    answer = commands.add_parser(
        "answer",
        help="answer a question: wire-form JSON on stdin, or the terminal form on a TTY",
    )
    answer.add_argument("id", help="the question's id (see dsh-inbox list)")
    answer.add_argument(
        "--surface", default="cli", help="who answers, as the record will say (default: cli)"
    )
    answer.add_argument(
        "--value",
        action="append",
        metavar="TEXT",
        help="the value of a question that asks for one (a number, a date, a time; repeat it"
        " for each file of a file question)",
    )
    answer.add_argument(
        "--attach",
        action="append",
        metavar="PATH",
        help="a file to upload to a question that asks for files (repeatable)",
    )
    answer.add_argument(
        "--question",
        metavar="QID",
        help="which question --value or --attach answers (default: the one that asks for it)",
    )
    serve = commands.add_parser(
        "serve", help="serve the web page for every harness's questions in this inbox"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    serve.add_argument(
        "--port", type=int, default=8765, help="port to listen on (8765; 0 picks a free one)"
    )
    serve.add_argument(
        "--token",
        help="the URL's secret (default: $DSH_USER_QUESTIONS_INBOX_TOKEN, else one kept in"
        " the state directory, so the URL survives restarts)",
    )
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another host name the page may be reached by (repeatable)",
    )
    serve.add_argument(
        "--surface", default="web", help="who answers, as the records will say (default: web)"
    )
    serve.add_argument(
        "--public-url",
        metavar="URL",
        help="the address people reach this server by; notifications then carry a link that"
        " opens one question only (no token needed)",
    )
    serve.add_argument(
        "--identity-header",
        metavar="NAME",
        help="the header a reverse proxy that logs people in names the person in (e.g."
        " X-Forwarded-User): answers are then recorded as that person, and refused without it",
    )
    serve.add_argument(
        "--trusted-proxy",
        action="append",
        default=[],
        metavar="CIDR",
        help="address or network of the proxy whose --identity-header is believed, as the TCP"
        " peer (repeatable; e.g. 127.0.0.1/32)",
    )
    commands.add_parser(
        "init", help="make the store if there is none (a harness's first ask also makes it)"
    )
    commands.add_parser(
        "notify-test",
        help="send a test notification to $DSH_USER_QUESTIONS_NOTIFY (Apprise URLs)",
    )
    log = commands.add_parser(
        "log", help="the log of every step: asked, answered by whom from where, delivered..."
    )
    log.add_argument("id", nargs="?", help="one question's log (default: every question's)")
    log.add_argument("--json", action="store_true", help="print one JSON array of events")
    log.add_argument(
        "--since", metavar="DURATION", help="only the events of the last DURATION (e.g. 12h, 7d)"
    )
    prune = commands.add_parser("prune", help="delete final records past the retention")
    prune.add_argument(
        "--older-than",
        metavar="DURATION",
        help="e.g. 30d, 12h, 3600 (default: $DSH_USER_QUESTIONS_INBOX_RETENTION, else 30d)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dsh-inbox``; the exit status.

    A store that cannot be used (``STORE_UNUSABLE``, a bad URL) is one line on stderr and exit
    1: no traceback, no password.
    """
    args = _parser().parse_args(argv)
    try:
        return _main(args)
    except BrokenPipeError:
        # The reader went away (`dsh-inbox list --json | head`): end quietly, and keep Python
        # from failing again as it flushes stdout on exit.
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 0


# The commands that make the store when there is none (serve: a first one only, never one
# where a store made before vanished); the others need one to exist.
_CREATING: dict[str, bool | Literal["first"]] = {"init": True, "serve": "first"}


def _main(args: argparse.Namespace) -> int:
    if args.command == "notify-test":
        return _notify_test()  # no store needed
    try:
        inbox = open_inbox(args.inbox, create=_CREATING.get(args.command, False))
    except (ValueError, OSError) as err:
        return _fail(str(err))
    except UserQuestionError as err:
        return _fail(err.message)
    try:
        return _run(inbox, args)
    except UserQuestionError as err:  # the store failed mid-way (e.g. gone for good)
        return _fail(err.message)
    finally:
        inbox.close()


def _run(inbox: Inbox, args: argparse.Namespace) -> int:
    if args.command == "list":
        return _list(inbox, as_json=args.json, everything=args.all)
    if args.command == "answer":
        if args.value or args.attach:
            return _answer_value(inbox, args)
        return _answer(inbox, args.id, surface=args.surface)
    if args.command == "show":
        return _show(inbox, args.id, as_json=args.json)
    if args.command == "cancel":
        return _cancel(inbox, args.id, surface=args.surface)
    if args.command == "prune":
        return _prune(inbox, args.older_than)
    if args.command == "log":
        return _log(inbox, args.id, as_json=args.json, since=args.since)
    if args.command == "init":
        print(_("the inbox store is ready: {url}").format(url=inbox.url.shown))
        return 0
    from ._serve import serve

    return serve(
        inbox,
        host=args.host,
        port=args.port,
        token=args.token,
        allowed_hosts=args.allowed_host,
        surface=args.surface,
        public_url=args.public_url,
        identity_header=args.identity_header,
        trusted_proxies=args.trusted_proxy,
    )


def _notify_test() -> int:
    from dsh_user_questions._notify import NOTIFY_ENV, Notification, Notifier

    try:
        notifier = Notifier.from_env()
    except (ValueError, ImportError) as err:
        return _fail(str(err))
    if notifier is None:
        return _fail(f"{NOTIFY_ENV} is not set: nothing to notify")
    note = Notification(
        title=_("dsh-inbox test notification"),
        body=_("Questions your agents ask through the inbox will be announced here."),
    )
    if notifier.send_blocking(note):
        print(
            _("sent a test notification to {count} target(s)").format(count=len(notifier.targets))
        )
        return 0
    return _fail("the notification was not delivered (see the warning above)")


# list --------------------------------------------------------------------------------------------


def _list(inbox: Inbox, *, as_json: bool, everything: bool) -> int:
    records = inbox.records()
    if not everything:
        records = [r for r in records if r.state is State.PENDING or r.late]
    if as_json:
        # ASCII-escaped: JSON readers get the same text, a terminal shows nothing active.
        print(json.dumps([r.to_dict() for r in records]))
        return 0
    if not records:
        print(_("no questions") if everything else _("no pending questions and no late answers"))
        return 0
    now = time.time()
    for record in records:
        print(_line(record, now))
    return 0


# A state as the person reads it (``--json`` keeps the state's own value).
_STATES = {
    State.PENDING: N_("pending"),
    State.ANSWERED: N_("answered"),
    State.WITHDRAWN: N_("withdrawn"),
    State.EXPIRED: N_("expired"),
    State.CANCELLED: N_("cancelled"),
}


def _state(record: QuestionRecord) -> str:
    state = _(_STATES.get(record.state, str(record.state)))
    if record.late:
        return _("{state}, late answer from {surface}").format(
            state=state, surface=inert(record.late_surface or "?")
        )
    if record.state is State.ANSWERED:
        return _("answered by {surface}").format(surface=inert(record.surface or "?"))
    return state


def _line(record: QuestionRecord, now: float) -> str:
    views = _views(record) or ()
    first = views[0].question.split("\n", 1)[0] if views else _("(unreadable request)")
    more = " " + _("(+{count} more)").format(count=len(views) - 1) if len(views) > 1 else ""
    who = inert(record.harness) + (f"/{inert(record.agent)}" if record.agent else "")
    ago = _("{age} ago").format(age=f"{_age(now - record.created):>4}")
    return f"{record.id}  {_state(record):<24}  {ago}  {who}  {first}{more}"


def _age(seconds: float) -> str:
    for size, unit in ((86_400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


# show and cancel ---------------------------------------------------------------------------------


def _log(inbox: Inbox, question_id: str | None, *, as_json: bool, since: str | None) -> int:
    """The events, oldest first: JSON, or one line each (names and surfaces inert)."""
    after = None
    if since is not None:
        try:
            span = parse_duration(since, where="--since")
        except ValueError as err:
            return _fail(str(err), EXIT_INVALID)
        after = None if span is None else time.time() - span
    if question_id is not None and inbox.get(question_id) is None:
        return _no_question(question_id)
    events = inbox.events(question_id, since=after)
    if as_json:
        print(json.dumps([event.to_dict() for event in events]))
        return 0
    for event in events:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(event.at))
        line = f"{when}  {event.question_id}  {event.event}"
        if event.by is not None and event.event == "notified":  # the tag or target notified
            line += f" {inert(event.by)}"
        elif event.by is not None and event.event == "escalated":  # the audience added
            line += f" to {inert(event.by)}"
        elif event.by is not None:
            line += f" by {inert(event.by)}"
        if event.surface is not None:
            line += f" on {inert(event.surface)}"
        if event.address is not None:
            line += f" from {inert(event.address)}"
        print(line)
    return 0


def _show(inbox: Inbox, question_id: str, *, as_json: bool) -> int:
    record = inbox.get(question_id)
    if record is None:
        return _no_question(question_id)
    if as_json:
        print(json.dumps(record.to_dict()))
        return 0
    colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    approvers = [e.by for e in inbox.events(question_id) if e.event == "approved" and e.by]
    print(render(record, colour=colour, approvers=approvers))
    return 0


# Terminal colours of a diff's parts (SGR codes): file headers bold, hunk headers cyan, added
# lines green, removed red; context, notes and other lines plain.
_DIFF_COLOURS = {"file": "1", "hunk": "36", "add": "32", "del": "31"}


def _diff_lines(diff: Mapping[str, Any], colour: bool) -> list[str]:
    """A diff as the view holds it (`QuestionView.diff`) as unified-diff lines (its texts
    already inert), each coloured by what the parser says it is, never by how it starts: a
    removed line reading ``--- x`` is a removed line."""

    def paint(kind: str, text: str) -> str:
        code = _DIFF_COLOURS.get(kind) if colour else None
        return f"\x1b[{code}m{text}\x1b[0m" if code else text

    return [paint(kind, text) for kind, _old, _new, text in diff_lines(diff)]


# The elements of a markdown tree shown on lines of their own.
_TEXT_BLOCKS = frozenset({
    "p", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "table", "thead",
    "tbody", "tr", "hr",
})  # fmt: skip


def _tree_text(nodes: Iterable[Node]) -> str:
    """The plain text of a markdown tree (a `dsh_user_questions.view.Node` list): blocks on lines
    of their own, headings and list items marked, table cells between bars; its texts are
    already inert."""
    out: list[str] = []
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
            continue
        tag, given, *children = node
        inner = _tree_text(children)
        if tag == "li":
            value = given.get("value")
            inner = (f"{value}. " if isinstance(value, int) else "- ") + inner
        elif tag in ("th", "td"):
            inner = f"| {inner} "
        elif tag == "tr":
            inner += "|"
        elif tag in ("h3", "h4", "h5", "h6"):  # the markdown's own level, as written
            inner = "#" * (int(tag[1]) - 2) + " " + inner
        elif tag == "hr":
            inner = "---"
        elif tag == "br":
            inner = "\n"
        out.append(f"\n{inner}\n" if tag in _TEXT_BLOCKS else inner)
    return "\n".join(line for line in "".join(out).split("\n") if line.strip())


def _indented(text: str, indent: str) -> list[str]:
    return [f"{indent}{line}" for line in text.split("\n")]


def _question_lines(view: QuestionView, colour: bool) -> list[str]:
    lines = [""]
    if view.header:
        lines.append(f"[{view.header}]")
    kind = " " + _("(pick any)") if view.multi_select else ""
    kind += " " + _("(secret: typed hidden)") if view.secret else ""
    kind += "" if view.other or view.input is not None else " " + _("(options only)")
    first, *more = view.question.split("\n")
    lines.append(f"{inert(view.id)}: {first}{kind}")
    lines.extend(f"  {line}" for line in more)
    if view.input is not None:
        lines.extend(_input_lines(view))
    if view.diff is not None:
        lines.append("    " + _("(diff to review)"))
        lines.extend(f"    {line}" for line in _diff_lines(view.diff, colour))
    elif view.detail_text is not None:
        lines.extend(_indented(view.detail_text, "    "))
    for option in view.options:
        text = f"  - {option.shown}"
        if option.recommended:
            text += " " + _("(recommended)")
        if option.description:
            first, *more = option.description.split("\n")
            lines.append(f"{text}: {first}")
            lines.extend(f"      {line}" for line in more)
        else:
            lines.append(text)
        if option.preview is not None:
            lines.append("      " + _("preview:"))
            lines.extend(_indented(_tree_text(option.preview), "        "))
    return lines


_FILES_LISTED = 50  # the files `show` lists of a file question (the rest counted)


def _input_lines(view: QuestionView) -> list[str]:
    """What a typed question asks for, and how to answer it from the shell."""
    field = view.input
    assert field is not None
    lines = ["  " + _("asks for {what}").format(what=describe_input(field))]
    qid = inert(view.id)
    if field.type == "files":
        lines.append("  " + _("{count} files to pick from:").format(count=len(field.shown)))
        lines.extend(f"    {path}" for path in field.shown[:_FILES_LISTED])
        if len(field.shown) > _FILES_LISTED:
            more = len(field.shown) - _FILES_LISTED
            lines.append("    " + _("... and {count} more").format(count=more))
        command = f"dsh-inbox answer ID --question {qid} --value PATH [--value PATH]"
        lines.append("  " + _("answer: {command}").format(command=command))
    elif field.type == "upload":
        command = f"dsh-inbox answer ID --question {qid} --attach FILE"
        lines.append("  " + _("answer: {command}").format(command=command))
    else:
        command = f"dsh-inbox answer ID --question {qid} --value VALUE"
        lines.append("  " + _("answer: {command}").format(command=command))
    return lines


def _views(record: QuestionRecord) -> tuple[QuestionView, ...] | None:
    """The core's view of each question of ``record``; ``None`` for a stored request that is
    no longer a valid one (a record written by another version)."""
    try:
        return request_view(record.to_request())
    except WireFormatError:
        return None


def render(record: QuestionRecord, *, colour: bool = False, approvers: Sequence[str] = ()) -> str:
    """A record as ``dsh-inbox show`` prints it: every question in full, as the core's view
    shows it (`dsh_user_questions.view`), model text inert.

    A diff-review question's diff is shown as the one diff parser reads it, coloured when
    ``colour`` (file headers bold, hunk headers cyan, added lines green, removed red; the
    escapes are ours, the model's text stays inert). A stored request that is no longer valid
    is shown as its inert JSON. A question with an audience says whom it is for; a review that
    needs several approvals says who approved it so far (``approvers``, from its log).
    """
    who = inert(record.harness) + (f"/{inert(record.agent)}" if record.agent else "")
    lines = [
        _("question {id}: {state}, asked by {who}").format(
            id=record.id, state=_state(record), who=who
        )
    ]
    audience = record.request.get("audience")
    if isinstance(audience, list) and audience:
        lines.append(_("for: {audience}").format(audience=inert(", ".join(map(str, audience)))))
    with contextlib.suppress(WireFormatError):  # unreadable: shown as JSON below
        needed = approvals_needed(record.to_request())
        if needed > 1 and approvers:
            lines.append(
                _("approved by {names} ({have} of {needed})").format(
                    names=inert(", ".join(approvers)), have=len(approvers), needed=needed
                )
            )
        elif needed > 1:
            lines.append(_("no approval yet (0 of {needed})").format(needed=needed))
    views = _views(record)
    if views is None:
        shown = inert(json.dumps(record.request, ensure_ascii=False))
        lines += ["", _("request (not readable as a question): {json}").format(json=shown)]
    else:
        for view in views:
            lines.extend(_question_lines(view, colour))
    if record.answer is not None:
        answer = inert(json.dumps(record.answer, ensure_ascii=False))
        lines += ["", _("answer: {json}").format(json=answer)]
    if record.late_answer is not None:
        late = inert(json.dumps(record.late_answer, ensure_ascii=False))
        lines += ["", _("late answer: {json}").format(json=late)]
    return "\n".join(lines)


def _cancel(inbox: Inbox, question_id: str, *, surface: str) -> int:
    if inbox.settle(question_id, State.CANCELLED, surface=surface):
        print(_("closed question {id}").format(id=question_id))
        return EXIT_APPLIED
    record = inbox.get(question_id)
    if record is None:
        return _no_question(question_id)
    return _fail(
        _("question {id} was not changed: it is {state}").format(
            id=question_id, state=_state(record)
        ),
        EXIT_TAKEN,
    )


# answer ------------------------------------------------------------------------------------------


def _refused(message: str) -> int:
    """An answer from someone outside the question's audience: the core's refusal, inert."""
    return _fail(inert(message), EXIT_REFUSED)


def _admit(inbox: Inbox, record: QuestionRecord, surface: str) -> int | None:
    """``None`` when the login may answer ``record``; else the exit status, its refusal said
    (or that the people file cannot be read)."""
    try:
        refusal = inbox.admit(record, login_name(), surface=surface)
    except ValueError as err:  # the people file (DSH_USER_QUESTIONS_PEOPLE) is not one
        return _fail(inert(str(err)))
    return None if refusal is None else _refused(refusal)


def _answer(inbox: Inbox, question_id: str, *, surface: str) -> int:
    record = inbox.get(question_id)
    if record is None:
        return _no_question(question_id)
    # Someone outside the audience is refused before being asked anything.
    refused = _admit(inbox, record, surface)
    if refused is not None:
        return refused
    if sys.stdin is not None and sys.stdin.isatty():
        from ._ask_here import ask_in_terminal

        answer: Any = ask_in_terminal(inbox, record)
        if isinstance(answer, int):
            return answer
        # Files taken by the form go through the store (the asker may be on another machine).
        answer = resolve_uploads(
            inbox, question_id, stash_local_uploads(inbox, question_id, answer)
        )
    else:
        text = sys.stdin.read() if sys.stdin is not None else ""
        try:
            answer = json.loads(text)
        except ValueError as err:
            return _fail(_("the answer on stdin is not JSON: {why}").format(why=err), EXIT_INVALID)
        except RecursionError:
            return _fail(_("the answer on stdin is not JSON: it is nested too deep"), EXIT_INVALID)
    try:
        result = inbox.answer(question_id, answer, surface=surface, by=login_name())
    except UserQuestionError as err:
        if not isinstance(err, BadAnswerError):
            raise
        # The person's own answer breaks the question's rules: say which, as the rules do.
        why = "; ".join(inert(problem) for problem in err.problems) or inert(err.message)
        return _fail(_("your answer was refused: {why}").format(why=why), EXIT_INVALID)
    return _result(inbox, question_id, result)


def _answer_value(inbox: Inbox, args: argparse.Namespace) -> int:
    """``answer ID --value TEXT`` / ``--attach PATH``: the value of one typed question (the
    one ``--question`` names, else the only one of its kind); the others stay unanswered.
    The rules judge the value; a refusal names the question and the rule."""
    question_id = args.id
    record = inbox.get(question_id)
    if record is None:
        return _no_question(question_id)
    refused = _admit(inbox, record, args.surface)
    if refused is not None:
        return refused
    views = _views(record)
    if views is None:
        return _fail(f"question {question_id} is not readable as a question", EXIT_INVALID)
    wanted = "upload" if args.attach else None
    typed = [
        view
        for view in views
        if view.input is not None
        and (args.question is None or view.id == args.question)
        and ((view.input.type == "upload") == (wanted == "upload"))
    ]
    if args.value and args.attach:
        return _fail(_("give --value or --attach, not both"), EXIT_INVALID)
    if len(typed) != 1:
        what = "files to upload (--attach)" if wanted else "a value (--value)"
        if not typed:
            return _fail(f"question {question_id} has no question that asks for {what}", 2)
        ids = ", ".join(inert(view.id) for view in typed)
        return _fail(f"several questions ask for {what} ({ids}): name one with --question", 2)
    view = typed[0]
    field = view.input
    assert field is not None
    if args.attach:
        try:
            value: Any = attach_files(inbox, question_id, view.id, args.attach)
        except (OSError, ValueError, LookupError) as err:
            return _fail(f"{inert(view.id)}: the file was not taken: {inert(str(err))}", 2)
    elif field.type == "files":
        value = [path for text in args.value for path in value_from_text(field, text)]
    elif len(args.value) > 1:
        return _fail(f"{inert(view.id)} takes one --value", EXIT_INVALID)
    else:
        value = value_from_text(field, args.value[0])
    items = [{"id": view.id, "selected": [], "value": value}]
    try:
        wire = resolve_uploads(inbox, question_id, {"answers": items})
        result = inbox.answer(question_id, wire, surface=args.surface, by=login_name())
    except UserQuestionError as err:
        if not isinstance(err, BadAnswerError):
            raise
        why = "; ".join(inert(problem) for problem in err.problems) or inert(err.message)
        return _fail(_("your answer was refused: {why}").format(why=why), EXIT_INVALID)
    return _result(inbox, question_id, result)


def _result(inbox: Inbox, question_id: str, result: AnswerResult) -> int:
    """Say what became of an answer given here; the exit status."""
    if result.outcome is AnswerOutcome.REFUSED:
        return _refused(result.message or "")
    if result.outcome is AnswerOutcome.COUNTED and result.approvals is not None:
        have, needed = result.approvals
        print(
            _(
                "your approval of question {id} was counted: {have} of {needed} approvals;"
                " it stays open until the others approve"
            ).format(id=question_id, have=have, needed=needed)
        )
        return EXIT_APPLIED
    if result.applied:
        return _applied(question_id, inbox.wait_received(question_id, RECEIPT_SECONDS))
    return report(result.outcome, question_id, result.record)


def _applied(question_id: str, reception: str) -> int:
    """Say what became of an applied answer: received by its asker, kept for one that is not
    waiting now, or not taken by an asker that stopped waiting as it landed."""
    if reception == "received":
        print(_("answered question {id}: its asker received the answer").format(id=question_id))
        return EXIT_APPLIED
    if reception == "no-asker":
        print(
            _(
                "answered question {id}: no asker is waiting for it now; the answer is kept for"
                " its harness, which gets it when it resumes"
            ).format(id=question_id)
        )
        return EXIT_APPLIED
    return _fail(
        f"question {question_id} was answered, but its asker stopped waiting as the answer"
        " landed: it was not received, and was handed on as a late answer",
        EXIT_LATE,
    )


def report(outcome: AnswerOutcome, question_id: str, record: QuestionRecord | None) -> int:
    """Say what became of an answer; the exit status for it."""
    if outcome is AnswerOutcome.APPLIED:
        print(_("answered question {id}").format(id=question_id))
        return EXIT_APPLIED
    if outcome is AnswerOutcome.UNKNOWN or record is None:
        return _no_question(question_id)
    if outcome is AnswerOutcome.LATE:
        return _fail(
            _(
                "question {id} was already {state}: your answer was kept as a late answer and"
                " handed to its harness, not applied"
            ).format(id=question_id, state=_(_STATES.get(record.state, str(record.state)))),
            EXIT_LATE,
        )
    if outcome is AnswerOutcome.CLOSED:
        why = _("closed by the user")
    elif record.state is State.ANSWERED:
        why = _("answered by {surface}").format(surface=inert(record.surface or "?"))
    else:
        why = _("{state}, and already has a late answer").format(
            state=_(_STATES.get(record.state, str(record.state)))
        )
    return _fail(
        _("question {id} was not changed: it was {why}").format(id=question_id, why=why),
        EXIT_TAKEN,
    )


# prune -------------------------------------------------------------------------------------------


def _prune(inbox: Inbox, older_than: str | None) -> int:
    try:
        seconds = (
            retention_seconds()
            if older_than is None
            else parse_duration(older_than, where="--older-than")
        )
    except ValueError as err:
        return _fail(str(err), EXIT_INVALID)
    if seconds is None:
        print(_("retention is never: nothing pruned"))
        return 0
    print(_("pruned {count} final records").format(count=inbox.prune(seconds)))
    return 0
