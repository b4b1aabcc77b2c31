"""``dsh-ask``: ask the human from the shell, through whichever provider is installed.

``dsh-ask [FILE|-]`` reads a request in its wire form (``{"questions": [...]}``, what
``AskUserQuestionRequest.to_dict()`` writes: ``detail``, ``intent``, ``recommended``, ``secret``,
``key`` and ``timeout`` included, ``multiSelect`` accepted for ``multi_select``), checks it with
the rules every ``ask()`` applies, asks through the installed provider and prints the compact
answer JSON on stdout. A secret question's answer text goes only to a pipe or a file: to a
terminal ``(secret given)`` is printed in its place. The exit status is the error's row of the
outcome table (`dsh_user_questions.errors.OUTCOMES`): 0 answered; 2 invalid input (not JSON,
not the wire form, or a request the rules refuse: ``EMPTY_QUESTIONS``, ``BAD_INTENT``,
``BAD_QUESTION``); 3 nobody can be asked from here (``NOT_INTERACTIVE``); 1 any other failure
(``Error: <message>`` on stderr, with the fix when there is one); 124 no answer within
``--timeout`` (``ASK_TIMED_OUT``, the status of ``timeout(1)``); 130 cancelled, aborted or
interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import math
import os
import shlex
import sys
import urllib.parse
from collections.abc import Generator, Sequence
from importlib import metadata
from pathlib import Path
from typing import IO, Any, Final

import attrs

from . import plugin, rules, tool
from ._discovery import PROVIDER_ENV, describe, is_provider
from ._i18n import HELP_COLUMN, N_, _, help_width, speaking_argparse, wrap_cells
from ._markers import PROJECT, hookimpl
from ._payloads import AskUserQuestionAnswer, AskUserQuestionRequest, WireFormatError
from ._waiting import Deadline, Filing
from ._workspace import rooted
from .errors import (
    AskTimedOutError,
    HarnessError,
    ProviderSetupError,
    UserQuestionError,
    UserQuestionErrorCode,
)
from .harness import AbortSignal, HarnessContext
from .plan_review import PlanReviewDecision, review_plan
from .providing import receipt

__all__ = [
    "EXIT_CANCELLED",
    "EXIT_FAILURE",
    "EXIT_INVALID",
    "EXIT_NOT_INTERACTIVE",
    "EXIT_OK",
    "EXIT_TIMED_OUT",
    "main",
]

EXIT_OK: Final = 0
EXIT_FAILURE: Final = 1
EXIT_INVALID: Final = 2
EXIT_NOT_INTERACTIVE: Final = 3
EXIT_TIMED_OUT: Final = 124
EXIT_CANCELLED: Final = 130

PLAIN_ENV: Final = "DSH_USER_QUESTIONS_PLAIN"


def _clone_root() -> Path | None:
    # A core installed from a clone (pip install . / -e .) records its folder in
    # direct_url.json; the providers are then installed by path, not by name.
    try:
        raw = metadata.distribution("dsh-user-questions").read_text("direct_url.json")
        url = json.loads(raw or "{}").get("url", "")
    except (metadata.PackageNotFoundError, ValueError, AttributeError):
        return None
    if not isinstance(url, str) or not url.startswith("file://"):
        return None
    root = Path(urllib.parse.unquote(urllib.parse.urlsplit(url).path))
    return root if (root / "providers" / "terminal" / "setup.cfg").is_file() else None


def install_hint(name: str | None = None) -> str:
    """How to install a provider where this runs: by path from a clone, by name otherwise.

    ``name``: the provider asked for (``--provider NAME``), when it is one of this project's;
    the terminal provider otherwise.
    """
    if name not in _OUR_PROVIDERS:
        name = "terminal"
    root = _clone_root()
    if root is None:
        return f"install one, e.g. pip install dsh-user-questions-{name}"
    return f"install one, e.g. pip install {shlex.quote(str(root / 'providers' / name))}"


_OUR_PROVIDERS: Final = ("terminal", "web", "inbox")
"""The providers this project ships, each as ``dsh-user-questions-<name>``."""


_EPILOG: Final = (
    N_(
        "exit status: 0 answered; 2 invalid input (also EMPTY_QUESTIONS, BAD_INTENT,"
        " BAD_QUESTION); 3 nobody can be asked from here (NOT_INTERACTIVE); 1 any other failure"
        " (e.g. no provider installed); 124 no answer within --timeout SECONDS; 130 cancelled,"
        " aborted or interrupted."
    ),
    N_(
        "FILE is a request in its wire form, as AskUserQuestionRequest.to_dict() writes it"
        " (detail, intent, recommended, secret, key and timeout too; multiSelect is read as"
        " multi_select)."
    ),
    N_(
        "A secret question's answer is printed only to a pipe or a file (dsh-ask FILE >"
        ' answer.json, or $(dsh-ask FILE)); when standard output is a terminal, "{shown}"'
        " stands in its place."
    ),
    N_(
        "dsh-ask mcp [--provider NAME] serves the same questions to an MCP client over stdio"
        " (needs the mcp extra: pip install 'dsh-user-questions[mcp]'); see dsh-ask mcp --help."
    ),
    N_("With several providers installed, choose one with --provider NAME or {variable}=NAME."),
)
"""The paragraphs after ``dsh-ask --help``'s options, each one message (wrapped when shown)."""

_EXAMPLE: Final = """\
echo '{"questions":[{"id":"pkg","question":"Which package manager?",
"options":[{"label":"pnpm","recommended":true},{"label":"npm"}]}]}' | dsh-ask"""


def _epilog() -> str:
    """``dsh-ask --help``'s closing paragraphs in the person's language, then the example."""
    paragraphs = [
        wrap_cells(_(text).format(shown=SECRET_SHOWN, variable=PROVIDER_ENV), help_width())
        for text in _EPILOG
    ]
    return "\n\n".join([*paragraphs, _("Example:") + "\n" + _EXAMPLE]) + "\n"


def _positive_seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("not a number of seconds: {text}").format(text=repr(text))
        ) from None
    if not (seconds > 0 and math.isfinite(seconds)):
        raise argparse.ArgumentTypeError(
            _("must be a positive number of seconds: {text}").format(text=repr(text))
        )
    return seconds


def _help(text: str) -> str:
    """An option's help (translated), wrapped in cells for the help column."""
    return wrap_cells(text, help_width(HELP_COLUMN))


def _description(text: str) -> str:
    """A command's description (translated), wrapped in cells."""
    return wrap_cells(text, help_width())


def _parser() -> argparse.ArgumentParser:
    # Build it inside `speaking_argparse`: argparse translates its "options" title here.
    parser = argparse.ArgumentParser(
        prog="dsh-ask",
        description=_description(
            _(
                "Ask the human structured questions through the installed user-questions"
                " provider and print the answer as compact JSON."
            )
        ),
        epilog=_epilog(),
        formatter_class=argparse.RawTextHelpFormatter,
    )
    parser.add_argument(
        "file",
        nargs="?",
        metavar="FILE",
        help=_help(
            _(
                "a JSON file of {form} in the wire form to_dict() writes; '-' or nothing reads"
                " standard input"
            ).format(form='{"questions": [...]}')
        ),
    )
    parser.add_argument(
        "--timeout",
        type=_positive_seconds,
        metavar="SECONDS",
        help=_help(
            _(
                "give up (exit 124) when the human has not answered after SECONDS (wins over"
                " the file's timeout)"
            )
        ),
    )
    parser.add_argument(
        "--provider",
        metavar="NAME",
        help=_help(
            _("use the installed provider NAME (sets {variable})").format(variable=PROVIDER_ENV)
        ),
    )
    parser.add_argument(
        "--plain",
        action="store_true",
        help=_help(
            _(
                "ask line by line (prompts on stderr, answers on stdin) even in a terminal;"
                " sets {variable}=1 for providers that offer it"
            ).format(variable=PLAIN_ENV)
        ),
    )
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        help=_help(
            _(
                "the folder a files question picks from (its root; its files are listed when"
                " it asks); without it, a files question without a root is refused"
            )
        ),
    )
    parser.add_argument(
        "--list-providers",
        action="store_true",
        help=_help(_("list the installed providers and exit")),
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help=_help(
            _("play a short agent session (two questions and a plan review) with the provider")
        ),
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dsh-ask`` with ``argv`` (default: the process's arguments); returns the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["mcp"]:  # a FILE named mcp is still readable as ./mcp
        return _mcp(arguments[1:])
    with speaking_argparse():  # usage, --help and argparse's errors in the person's language
        args = _parser().parse_args(arguments)
    if args.provider is not None:
        os.environ[PROVIDER_ENV] = args.provider
    if args.plain:
        os.environ[PLAIN_ENV] = "1"
    try:
        if args.list_providers:
            return _list_providers()
        if args.demo:
            if args.file is not None:
                return _fail(_("--demo takes no FILE"), EXIT_INVALID)
            return asyncio.run(_demo(args.timeout))
        return _ask(args.file, args.timeout, args.workspace)
    except KeyboardInterrupt:
        return _fail(_("interrupted"), EXIT_CANCELLED)


def _mcp_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dsh-ask mcp",
        description=_description(
            _(
                "Serve ask_user_question and review_plan over MCP (stdio, or Streamable HTTP"
                " with --http) through the installed provider; the terminal provider draws on"
                " /dev/tty, the web provider prints its page address on stderr."
            )
        ),
        formatter_class=argparse.RawTextHelpFormatter,
    )
    parser.add_argument(
        "--provider",
        metavar="NAME",
        help=_help(
            _("use the installed provider NAME (sets {variable})").format(variable=PROVIDER_ENV)
        ),
    )
    parser.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        type=_http_address,
        help=_help(
            _(
                "serve MCP Streamable HTTP at http://HOST:PORT/mcp instead of stdio"
                " (HOST defaults to 127.0.0.1; PORT 0 picks a free one, printed on stderr)"
            )
        ),
    )
    return parser


def _mcp(argv: list[str]) -> int:
    """``dsh-ask mcp``: serve the user-questions tools to an MCP client (stdio or HTTP)."""
    with speaking_argparse():
        args = _mcp_parser().parse_args(argv)
    if args.provider is not None:
        os.environ[PROVIDER_ENV] = args.provider
    wanted = os.environ.get(PROVIDER_ENV, "").strip()
    if wanted and not _entry_point_named(wanted):
        fix = (
            install_hint(wanted)
            if wanted in _OUR_PROVIDERS
            else "see the installed ones with dsh-ask --list-providers"
        )
        return _fail(
            f"no user-questions provider named {wanted!r} is installed; {fix}", EXIT_FAILURE
        )
    try:
        from .mcp import serve_http
        from .mcp._server import serve_stdio
    except ImportError as err:
        return _fail(_("{error} (dsh-ask mcp needs the mcp extra)").format(error=err), EXIT_FAILURE)
    ctx = _context()
    if ctx is None:
        return EXIT_FAILURE
    if not any(is_provider(ctx.plugin_manager, p) for p in ctx.plugin_manager.get_plugins()):
        return _report(UserQuestionError.no_provider(), None)  # refused, never served silently
    serve: Any = serve_stdio
    if args.http is not None:
        host, port = args.http

        async def serve(ctx: HarnessContext) -> None:
            await serve_http(ctx, host, port, task_status=_Announce())

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C on the terminal ends the server
        try:
            asyncio.run(_serve_then_close(ctx, serve))
        except OSError as err:
            if args.http is None:
                raise
            where = f"{args.http[0]}:{args.http[1]}"
            said = _("cannot serve MCP on {address}: {error}").format(address=where, error=err)
            return _fail(said, EXIT_FAILURE)
    return EXIT_OK


class _Announce:
    """The start value of `serve_http` (its URL), said on stderr once the socket listens."""

    def started(self, value: str | None = None) -> None:
        serving = _("serving MCP (Streamable HTTP) at {url}").format(url=value)
        _write(sys.stderr, f"dsh-ask mcp: {serving}")


def _http_address(text: str) -> tuple[str, int]:
    """``[HOST:]PORT`` (HOST may be ``[::1]``) as a host and a port number."""
    host, colon, port_text = text.rpartition(":")
    host = host.strip("[]") if colon else ""
    try:
        port = int(port_text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(
            _("not [HOST:]PORT with PORT 0 to 65535: {text}").format(text=repr(text))
        )
    return host or "127.0.0.1", port


def _entry_point_named(name: str) -> bool:
    """Whether an installed distribution declares a ``dsh`` entry point called ``name``."""
    return any(ep.name == name for ep in metadata.entry_points(group=PROJECT))


async def _serve_then_close(ctx: HarnessContext, serve: Any) -> None:
    try:
        await serve(ctx)
    finally:
        await ctx.aclose()


def _ask(path: str | None, timeout: float | None, workspace: str | None = None) -> int:
    text = _read_input(path)
    if text is None:
        return EXIT_INVALID
    try:
        data = json.loads(text)
    except ValueError:
        try:  # the tool's reader names the JSON error as the tool reports it
            tool.read_arguments(text)
        except UserQuestionError as err:
            return _fail(err.message, EXIT_INVALID)
        raise
    try:
        request = AskUserQuestionRequest.from_dict(data, timeout=timeout)
        if workspace is not None:
            request = attrs.evolve(request, questions=rooted(request.questions, workspace))
        rules.check_request(request)  # refused before any provider is loaded
    except WireFormatError as err:
        return _fail(_("invalid input: {problems}").format(problems=err), EXIT_INVALID)
    except UserQuestionError as err:
        return _report(err, timeout)
    timeout = request.timeout
    ctx = _context()
    if ctx is None:
        return EXIT_FAILURE
    ctx.register(_TellWhereFiled(), name="dsh-ask:filed")
    try:
        answer = asyncio.run(_ask_then_close(ctx, request))
    except HarnessError as err:
        return _report(err, timeout)
    except Exception as err:  # a provider's own failure: say which, without a traceback
        return _provider_failed(err)
    _write(sys.stdout, tool.format_answer(_shown(request, answer, sys.stdout)))
    return EXIT_OK


class _TellWhereFiled:
    """Says on stderr, at once, where a provider that keeps questions (the inbox) filed the
    question: what was asked, its id, the link when one is served and the command that
    answers it. A wrapper of the provider hook, so it sees the very request the provider gets
    and waits on that ask's `dsh_user_questions.providing.Receipt`; stdout stays the answer."""

    @hookimpl(wrapper=True)
    def dsh_user_questions_ask(self, request: AskUserQuestionRequest) -> Generator[None, Any, Any]:
        receipt(request).when_filed(functools.partial(_say_filed, request))
        return (yield)


def _say_filed(request: AskUserQuestionRequest, filing: Filing) -> None:
    asked = _("Asked: {question}")
    lines = [asked.format(question=rules.inert_text(item.question)) for item in request.questions]
    lines.append(_("Question id: {id}").format(id=rules.inert_text(filing.question_id)))
    if filing.link is not None:
        lines.append(_("Answer it at: {link}").format(link=rules.inert_text(filing.link)))
    if filing.answer_command is not None:
        lines.append(
            _("Answer it with: {command}").format(command=rules.inert_text(filing.answer_command))
        )
    lines.append(_("Waiting for the answer..."))
    _write(sys.stderr, "\n".join(lines))


SECRET_SHOWN: Final = "(secret given)"
"""What ``dsh-ask`` prints in place of a secret answer's text when standard output is a
terminal (to a pipe or a file it prints the text itself, for the script that asked)."""


def _shown(
    request: AskUserQuestionRequest, answer: AskUserQuestionAnswer, stream: IO[str] | None
) -> AskUserQuestionAnswer:
    """``answer`` as printed on ``stream``: a secret's text never reaches a terminal."""
    isatty = getattr(stream, "isatty", None)
    if isatty is None or not isatty():
        return answer
    redacted = rules.redact_secrets(request, answer)
    return AskUserQuestionAnswer(
        [
            item if hidden.custom == item.custom else attrs.evolve(item, custom=SECRET_SHOWN)
            for item, hidden in zip(answer.answers, redacted.answers, strict=True)
        ],
        answered_by=answer.answered_by,
    )


async def _ask_then_close(ctx: HarnessContext, request: AskUserQuestionRequest) -> Any:
    try:
        return await ctx.user_questions.ask(request)
    finally:
        await ctx.aclose()


def _reattach_terminal() -> None:
    """The questions came on standard input: read the answers from the terminal, if any.

    Without this, a provider reading answers from standard input would find it at its end.
    """
    try:
        fd = os.open("/dev/tty", os.O_RDWR)
    except OSError:  # no controlling terminal: standard input stays as it is
        return
    try:
        os.dup2(fd, 0)
    finally:
        os.close(fd)
    sys.stdin = open(0, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115


def _read_input(path: str | None) -> bytes | None:
    """The input's bytes, or ``None`` after reporting why there are none."""
    if path is None or path == "-":
        stdin = sys.stdin
        if stdin is None or (path is None and stdin.isatty()):
            said = _(
                "no input: give a FILE of {form} or pipe it on standard input (dsh-ask --help;"
                " dsh-ask --demo for a tour)"
            )
            _fail(said.format(form='{"questions": [...]}'), EXIT_INVALID)
            return None
        data = stdin.buffer.read()
        _reattach_terminal()
        return data
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError as err:
        _fail(
            _("cannot read {path}: {why}").format(path=path, why=err.strerror or err), EXIT_INVALID
        )
        return None


def _context() -> HarnessContext | None:
    """A harness context with the installed plugins, or ``None`` after reporting the failure."""
    ctx = HarnessContext()
    try:
        ctx.load_entrypoints()
    except HarnessError as err:
        _report(err, None)
        return None
    except Exception as err:  # an installed plugin that fails to import or register
        _fail(
            _("cannot load the installed plugins: {kind}: {error}").format(
                kind=type(err).__name__, error=err
            ),
            EXIT_FAILURE,
        )
        return None
    if ctx.get(plugin.SERVICE_NAME) is None:
        # Run from a source tree, where this package's own entry point is not installed.
        ctx.register(plugin, name=plugin.SERVICE_NAME)
    return ctx


def _report(err: HarnessError, timeout: float | None) -> int:
    """Print ``Error: <message>`` (with the fix, where one helps) and return the exit status:
    the error's row of the outcome table (`dsh_user_questions.errors.OUTCOMES`)."""
    message = err.message
    if isinstance(err, ProviderSetupError):
        message += _provider_fix(err)
    elif isinstance(err, AskTimedOutError) and timeout is not None:
        message += f" (no answer within {timeout:g} s)"
    status = err.outcome.exit_status if isinstance(err, UserQuestionError) else EXIT_FAILURE
    return _fail(message, status)


def _provider_fix(err: HarnessError) -> str:
    """What to do about no provider or too many: choose among the installed, or install one.

    A ``DUPLICATE_PROVIDER`` already says how to choose (the environment variable): only
    dsh-ask's own way is added, so "choose one" is said once."""
    if err.code == UserQuestionErrorCode.DUPLICATE_PROVIDER:
        return " (or dsh-ask --provider NAME; dsh-ask --list-providers lists them)"
    if _installed_providers():
        return "; choose one with --provider NAME (dsh-ask --list-providers)"
    return f"; {install_hint(os.environ.get(PROVIDER_ENV))}"


def _installed_providers() -> list[str]:
    """``name (from dist version)`` of each installed provider entry point."""
    pm = HarnessContext().plugin_manager
    found: list[str] = []
    seen: set[str] = set()
    for dist in metadata.distributions():
        for ep in dist.entry_points:
            if ep.group != PROJECT or ep.name in seen:
                continue
            seen.add(ep.name)
            try:
                loaded = ep.load()
            except Exception as err:
                _write(
                    sys.stderr,
                    _("warning: cannot load {name} ({value}): {error}").format(
                        name=ep.name, value=ep.value, error=err
                    ),
                )
                continue
            if is_provider(pm, loaded):
                found.append(describe(ep.name, dist))
    return found


def _list_providers() -> int:
    providers = _installed_providers()
    for line in providers:
        _write(sys.stdout, line)
    if not providers:
        _write(
            sys.stderr,
            _("no user-questions provider is installed; {hint}").format(hint=install_hint()),
        )
    return EXIT_OK


_DEMO_QUESTIONS: Final[dict[str, Any]] = {
    "questions": [
        {
            "id": "pkg",
            "header": "Package manager",
            "question": "Which package manager should the new project use?",
            "options": [
                {"label": "uv", "description": "Fast; locks dependencies", "recommended": True},
                {"label": "pip", "description": "Everywhere already; no lock file"},
                {"label": "poetry", "description": "Its own pyproject sections"},
            ],
        },
        {
            "id": "checks",
            "header": "Checks",
            "question": "Which checks should run on every commit?",
            "multi_select": True,
            "options": [
                {"label": "ruff", "description": "Lint and format"},
                {"label": "mypy", "description": "Static types"},
                {"label": "pytest", "description": "The tests"},
            ],
        },
    ]
}


async def _demo(timeout: float | None) -> int:
    """A scripted agent session: one tool call of two questions, then a plan review."""
    ctx = _context()
    if ctx is None:
        return EXIT_FAILURE
    try:
        return await _demo_session(ctx, timeout)
    finally:
        await ctx.aclose()


async def _demo_session(ctx: HarnessContext, timeout: float | None) -> int:
    # One deadline for the whole session; it ends the pending ask with ASK_TIMED_OUT.
    with Deadline(math.inf if timeout is None else timeout) as deadline:
        return await _demo_steps(ctx, timeout, None if timeout is None else deadline.signal)


async def _demo_steps(
    ctx: HarnessContext, timeout: float | None, signal: AbortSignal | None
) -> int:
    out = sys.stdout

    def say(line: str) -> None:
        _write(out, line)

    say("agent: I will set up a new Python project. Two decisions are yours.")
    call = json.dumps(_DEMO_QUESTIONS, ensure_ascii=False, separators=(",", ":"))
    say(f"agent -> {tool.NAME} {call}")
    try:
        result = await tool.run(ctx, _DEMO_QUESTIONS, signal=signal)
    except Exception as err:
        return _provider_failed(err)
    say(f"tool  -> {result.content}")
    if result.is_error:
        code = (result.error or {}).get("code", "")
        message = result.content.removeprefix("Error: ")
        return _report(UserQuestionError.from_wire(message, code), timeout)
    picked = {item["id"]: item for item in json.loads(result.content)["answers"]}
    pkg = _chosen(picked.get("pkg"), "uv")
    checks = _chosen(picked.get("checks"), "no checks")
    plan = (
        "# Set up the project\n\n"
        f"1. Create `pyproject.toml` and manage dependencies with {pkg}.\n"
        f"2. Run {checks} on every commit (a pre-commit hook and CI).\n"
        "3. Add a first test and a README.\n"
    )
    say("agent: Here is my plan; may I leave plan mode and carry it out?")
    try:
        outcome = await review_plan(ctx.user_questions, plan, signal=signal)
    except HarnessError as err:
        return _report(err, timeout)
    except Exception as err:
        return _provider_failed(err)
    if outcome.decision is PlanReviewDecision.APPROVED:
        say("plan review -> approved")
        say("agent: Leaving plan mode; starting with step 1.")
    elif outcome.decision is PlanReviewDecision.KEEP_PLANNING:
        feedback = "" if outcome.feedback is None else f": {outcome.feedback}"
        say(f"plan review -> keep planning{feedback}")
        say("agent: Staying in plan mode to revise the plan.")
    else:
        say("plan review -> talk instead")
        say("agent: Stopping here; tell me what you have in mind.")
    return EXIT_OK


def _chosen(item: dict[str, Any] | None, default: str) -> str:
    """The labels picked (and any words written) for one answer item, for the demo's plan."""
    if item is None:
        return default
    words = [label.removesuffix(" (Recommended)") for label in item.get("selected", [])]
    if "custom" in item:
        words.append(item["custom"])
    return ", ".join(words) or default


def _provider_failed(err: Exception) -> int:
    """A provider's own exception: its type and message, without a traceback (exit 1)."""
    said = _("the provider failed: {kind}: {error}").format(kind=type(err).__name__, error=err)
    return _fail(said, EXIT_FAILURE)


def _fail(message: str, status: int) -> int:
    _write(sys.stderr, f"Error: {message}")
    return status


def _write(stream: IO[str] | None, line: str) -> None:
    """Write a line as UTF-8 (JSON's encoding), whatever the locale says."""
    if stream is None:
        return
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(line + "\n")
    else:
        stream.flush()
        buffer.write(line.encode("utf-8", "backslashreplace") + b"\n")
        buffer.flush()


if __name__ == "__main__":
    sys.exit(main())
