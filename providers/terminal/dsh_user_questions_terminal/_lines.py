"""Line mode: prompts on stderr, one answer line per question on stdin.

Used when stdin or stdout is not a terminal, or when ``DSH_USER_QUESTIONS_PLAIN=1``. The answer
line: ``2`` picks option 2; ``1,3`` picks several on a multi-select; an empty line skips; any
other text is the human's own answer (on a single-select it replaces the pick); end of input
cancels with ``ASK_CANCELLED``.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import shutil
import sys
import termios
import textwrap
import threading
from collections import deque
from collections.abc import Iterator
from typing import ClassVar, TextIO

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    AskUserQuestionUpload,
    UserQuestionError,
)
from dsh_user_questions._i18n import review_text
from dsh_user_questions._input_text import describe_input, value_from_text
from dsh_user_questions._uploads import UploadRefused, copy_file, discard_upload
from dsh_user_questions.harness import AbortSignal
from dsh_user_questions.rules import inert_text
from dsh_user_questions.view import QuestionView, question_view

from ._i18n import _
from ._markdown import lines_to_plain, render_nodes
from ._page import RECOMMENDED, detail_lines
from ._questions import SECRET_GIVEN, answer_problem, one_line, unusable_stream

__all__ = ["ask_in_lines", "parse_answer_line"]

_PICKS = re.compile(r"\d+(?:\s*[,\s]\s*\d+)*")
# A line made only of digits and punctuation ("2.", "#2", "3)") looks like a pick but is none:
# it is refused rather than taken as the human's own words.
_NUMBERISH = re.compile(r"[\d\s.,;:#()\[\]+\-]*\d[\d\s.,;:#()\[\]+\-]*")
_APPROVE_WORDS = frozenset({"approve", "a", "yes", "y"})
_FILES_LISTED = 50  # the files line mode lists of a file question (the rest counted)
LABEL_PREFIX = "="
"""``=LABEL`` picks the option labelled LABEL, also when LABEL is a number (``=2``)."""


class _Refused(ValueError):
    """The line is ambiguous; the message says why, and the question is asked again."""


def _matching_label(view: QuestionView, text: str) -> str | None:
    """The option whose label is exactly ``text`` (else the only one equal ignoring case)."""
    labels = [option.label for option in view.options]
    if text in labels:
        return text
    folded = [label for label in labels if label.casefold() == text.casefold()]
    return folded[0] if len(folded) == 1 else None


def _row_of(view: QuestionView, label: str) -> int:
    return next(n for n, option in enumerate(view.options, start=1) if option.label == label)


def _shown(view: QuestionView, label: str) -> str:
    """How the option labelled ``label`` is shown."""
    return view.options[_row_of(view, label) - 1].shown


def _quoted(view: QuestionView, label: str) -> str:
    return json.dumps(_shown(view, label), ensure_ascii=False)


def _picks(view: QuestionView, text: str) -> list[str]:
    """The options a line of numbers picks: a number in range is always that row; one out of
    range picks the option labelled with it, if there is one."""
    count = len(view.options)
    labels: list[str] = []
    for part in (part for part in re.split(r"[\s,]+", text) if part):
        number = int(part)
        if 1 <= number <= count:
            labels.append(view.options[number - 1].label)
            continue
        label = _matching_label(view, part)
        if label is None:
            raise _Refused(
                _("there is no option {number}: the options are 1-{count}").format(
                    number=number, count=count
                )
            )
        labels.append(label)
    labels = list(dict.fromkeys(labels))
    if len(labels) > 1 and not view.multi_select:
        raise _Refused(_("pick one option: a single number"))
    return labels


def _readings(view: QuestionView, text: str, picks: list[str], label: str) -> str:
    """Why ``text`` is refused: it reads as rows and as a label (say both, and how to choose)."""
    rows = ", ".join(f"{_row_of(view, pick)} ({_quoted(view, pick)})" for pick in picks)
    return _(
        "{text} could mean options {rows} or the option labelled {label} (row {row}): type the"
        " numbers with commas for the rows, or {by_label} for the label"
    ).format(
        text=repr(text),
        rows=rows,
        label=_quoted(view, label),
        row=_row_of(view, label),
        by_label=f"{LABEL_PREFIX}{_shown(view, label)}",
    )


def parse_answer_line(item: AskUserQuestionItem, line: str) -> AskUserQuestionAnswerItem:
    """The answer a line gives to ``item``; `ValueError` (with the reason) if it is ambiguous.

    - empty: skip; on a question without options, the whole line is the text;
    - numbers (``2``; ``1,3`` or ``1 3`` on a multi-select): a number in range is always that
      row, as in the interactive form (labels "2", "1", "4": ``2`` is row 2, the label "1");
      a number no row has picks the option labelled with it, if there is one; else refused;
      several on a single-select are refused;
    - ``=LABEL``: the option labelled LABEL (exactly, or the only one equal ignoring case),
      also a label that is a number (``=2``); no such option is refused;
    - an option's exact label (or the only one equal ignoring case): that option;
    - a line that reads both as several rows and as a label (``1 3`` with a label "1 3"):
      refused, with both readings shown;
    - digits and punctuation only (``2.``, ``#2``): refused;
    - on a plan or diff review, ``approve``, ``a``, ``yes``, ``y`` approve; other text is
      feedback;
    - any other text: the human's own answer (``custom``), refused on a question that offers
      no free text (`QuestionView.other`).
    """
    view = question_view(item)
    text = line.strip()
    if not text:
        return AskUserQuestionAnswerItem(id=item.id)
    if view.input is not None:
        return _typed_value(item, view, text)
    if not view.options:
        return AskUserQuestionAnswerItem(id=item.id, custom=text)
    if text.startswith(LABEL_PREFIX):
        wanted = text[len(LABEL_PREFIX) :].strip()
        label = _matching_label(view, wanted)
        if label is None:
            said = json.dumps(inert_text(wanted), ensure_ascii=False)
            raise _Refused(
                _("no option is labelled {label} ({prefix}LABEL picks by label)").format(
                    label=said, prefix=LABEL_PREFIX
                )
            )
        return AskUserQuestionAnswerItem(id=item.id, selected=(label,))
    approve = _approve_label(view)
    if approve is not None and text.casefold() in _APPROVE_WORDS:
        return AskUserQuestionAnswerItem(id=item.id, selected=(approve,))
    label = _matching_label(view, text)
    if _PICKS.fullmatch(text):
        try:
            picks = _picks(view, text)
        except _Refused:
            if label is None:
                raise
            picks = [label]  # no reading as rows: the label it is
        if label is not None and picks != [label] and re.search(r"[\s,]", text):
            raise _Refused(_readings(view, text, picks, label)) from None
        return AskUserQuestionAnswerItem(id=item.id, selected=tuple(picks))
    if label is not None:
        return AskUserQuestionAnswerItem(id=item.id, selected=(label,))
    own = view.other or view.kind != "question"  # a review card's text is feedback
    if _NUMBERISH.fullmatch(text) or not own:
        count = len(view.options)
        if view.multi_select:
            how = _("numbers 1-{count} separated by commas").format(count=count)
        else:
            how = _("a number 1-{count}").format(count=count)
        if not own:  # only the options: no words of the human's own
            raise _Refused(
                _("{text} is not one of the options: type {how} or a label").format(
                    text=repr(text), how=how
                )
            )
        raise _Refused(
            _("{text} is not an answer: type {how}, a label, or your own words").format(
                text=repr(text), how=how
            )
        )
    return AskUserQuestionAnswerItem(id=item.id, custom=text)


def _typed_value(
    item: AskUserQuestionItem, view: QuestionView, text: str
) -> AskUserQuestionAnswerItem:
    """A typed question's line: the value (files: paths separated by commas); an upload's line
    is the path of a local file, copied into the uploads folder (several: commas)."""
    field = view.input
    assert field is not None
    if field.type != "upload":
        return AskUserQuestionAnswerItem(id=item.id, value=value_from_text(field, text))
    records = []
    try:
        for path in (part.strip() for part in text.split(",") if part.strip()):
            records.append(copy_file(path, max_bytes=field.max_bytes, accept=field.accept))
    except (UploadRefused, OSError) as error:
        for record in records:
            discard_upload(record)
        # An upload's refusal in the person's language; a system error as the system says it.
        why = error.shown if isinstance(error, UploadRefused) else error.strerror or str(error)
        raise _Refused(_("the file is not taken: {why}").format(why=inert_text(why))) from None
    value = tuple(AskUserQuestionUpload.from_dict(record) for record in records)
    return AskUserQuestionAnswerItem(id=item.id, value=value)


def _approve_label(view: QuestionView) -> str | None:
    """The wire label of a review card's approve option (``None``: not a review card)."""
    return next((option.label for option in view.options if option.approves), None)


class _LineReader:
    """Reads lines from a file descriptor in a daemon thread, one line per request.

    A thread, because a blocking read must not block the event loop, and a daemon one reading
    the raw descriptor, because an abort leaves it blocked and that must neither delay the
    interpreter's exit nor hold a lock of ``sys.stdin``. A line read after its reader stopped
    waiting is kept for the next question.
    """

    _readers: ClassVar[dict[int, _LineReader]] = {}
    _readers_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()
        self._lines: deque[str] = deque()
        self._waiters: deque[asyncio.Future[str | None]] = deque()
        self._demand = threading.Semaphore(0)
        self._thread: threading.Thread | None = None
        self._eof = False
        self.error: OSError | None = None

    @classmethod
    def for_fd(cls, fd: int) -> _LineReader:
        with cls._readers_lock:
            reader = cls._readers.get(fd)
            if reader is None:
                reader = cls._readers[fd] = cls(fd)
            return reader

    async def readline(self) -> str | None:
        """The next line without its line break, or ``None`` at end of input."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._lines:
                return self._lines.popleft()
            if self._eof:
                return None
            waiter: asyncio.Future[str | None] = loop.create_future()
            self._waiters.append(waiter)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="dsh-terminal-stdin", daemon=True
                )
                self._thread.start()
        self._demand.release()
        try:
            return await waiter
        finally:
            with self._lock:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    def _run(self) -> None:
        pending = bytearray()
        while True:
            self._demand.acquire()
            # Only the newly read chunk is searched for a line break, so a huge line costs
            # linear time (searching everything read so far on each chunk was quadratic).
            newline = pending.find(b"\n")
            while newline < 0:
                try:
                    chunk = os.read(self._fd, 65536)
                except OSError as error:
                    self.error = error
                    chunk = b""
                if not chunk:
                    break
                found = chunk.find(b"\n")
                if found >= 0:
                    newline = len(pending) + found
                pending += chunk
            if newline >= 0:
                raw = bytes(pending[:newline])
                del pending[: newline + 1]
                line: str | None = raw.decode("utf-8", "replace").rstrip("\r")
            elif pending:
                line = pending.decode("utf-8", "replace").rstrip("\r")
                pending.clear()
            else:
                line = None
            self._deliver(line)
            if line is None:
                return

    def _deliver(self, line: str | None) -> None:
        """Hand ``line`` to the oldest live waiter, else keep it; ``None`` ends the input."""
        with self._lock:
            if line is None:
                self._eof = True
            while self._waiters:
                waiter = self._waiters.popleft()
                if waiter.done():
                    continue
                try:
                    waiter.get_loop().call_soon_threadsafe(self._settle, waiter, line)
                except RuntimeError:  # its loop is closed
                    continue
                if line is not None:
                    return
            if line is not None:
                self._lines.append(line)

    def _settle(self, waiter: asyncio.Future[str | None], line: str | None) -> None:
        if not waiter.done():
            waiter.set_result(line)
        elif line is not None:  # its reader stopped waiting meanwhile: pass the line on
            self._deliver(line)


def _width() -> int:
    return max(40, min(shutil.get_terminal_size((100, 24)).columns, 100))


def _emit(out: TextIO, text: str = "", indent: str = "") -> None:
    width = _width()
    for line in text.split("\n"):
        lead = indent + line[: len(line) - len(line.lstrip(" "))]
        wrapped = textwrap.wrap(
            line.strip(" "),
            width=width,
            initial_indent=lead,
            subsequent_indent=lead + ("  " if line.lstrip(" ")[:2] in ("\u2022 ",) else ""),
            break_long_words=True,
            break_on_hyphens=False,
            drop_whitespace=True,
        )
        out.write("\n".join(wrapped or [indent.rstrip()]) + "\n")


def _show(out: TextIO, view: QuestionView, index: int, total: int) -> None:
    plan = view.kind != "question"
    heading = []
    if view.header:
        heading.append(f"[{review_text(view.kind, view.header)}]")
    if total > 1:
        heading.append(_("question {number} of {total}").format(number=index + 1, total=total))
    out.write("\n")
    if heading:
        _emit(out, " ".join(heading))
    _emit(out, one_line(review_text(view.kind, view.question)))
    detail = lines_to_plain(detail_lines(view))
    if detail:
        # A diff's gutter of line numbers is its bar.
        bar = "  " if view.diff is not None else "  \u2502 " if plan else "    "
        _emit(out, "\n".join(detail), indent=bar)
    for number, option in enumerate(view.options, start=1):
        text = f"{number}. {review_text(view.kind, option.shown)}"
        if option.recommended:
            text += f" {_(RECOMMENDED)}"
        if option.description:
            text += f" - {one_line(review_text(view.kind, option.description))}"
        _emit(out, text, indent="  ")
        if option.preview and not plan:
            # Nothing is focused here: each option's preview follows it, behind a bar.
            preview = lines_to_plain(render_nodes(option.preview))
            _emit(out, "\n".join(preview), indent="     \u2502 ")
    _emit(out, _how_to_answer(view))


def _how_to_answer(view: QuestionView) -> str:
    field = view.input
    if field is not None:
        what = describe_input(field)
        if field.type == "files":
            listed = "\n".join(f"    {path}" for path in field.shown[:_FILES_LISTED])
            more = len(field.shown) - _FILES_LISTED
            if more > 0:
                listed += "\n    " + _("... and {count} more").format(count=more)
            how = _("Answer: {what}: the paths, separated by commas; an empty line skips.")
            return listed + "\n" + how.format(what=what)
        if field.type == "upload":
            return _(
                "Answer: {what}: the path of each file, separated by commas; an empty line skips."
            ).format(what=what)
        return _("Answer: {what}; an empty line skips.").format(what=what)
    count = len(view.options)
    approve = _approve_label(view)
    if approve is not None:
        if view.kind == "diff-review":
            how = _(
                "Answer: {row} (or approve, a, yes) approves; another number, or your feedback"
                " as text, keeps editing; end of input (Ctrl-D) to talk instead."
            )
        else:
            how = _(
                "Answer: {row} (or approve, a, yes) approves; another number, or your feedback"
                " as text, keeps planning; end of input (Ctrl-D) to talk instead."
            )
        return how.format(row=_row_of(view, approve))
    if not count:
        if view.secret:
            return _("Answer: your text (secret: not shown as you type); an empty line skips.")
        return _("Answer: your text; an empty line skips.")
    by_label = (
        " "
        + _("(=LABEL for a label that is a number, e.g. {example})").format(
            example=f"{LABEL_PREFIX}{numeric}"
        )
        if (numeric := _numeric_label(view)) is not None
        else ""
    )
    own = _(", or your own text") if view.other else ""
    if view.multi_select:
        how = _(
            "Answer: numbers 1-{count} separated by commas (e.g. 1,3){more}; an empty line skips."
        )
    else:
        how = _("Answer: a number 1-{count}{more}; an empty line skips.")
    return how.format(count=count, more=by_label + own)


def _numeric_label(view: QuestionView) -> str | None:
    """How the first label that reads as a number is shown (typing it picks a row)."""
    return next((o.shown for o in view.options if _NUMBERISH.fullmatch(o.label.strip())), None)


def _input_fd(fd: int | None) -> int:
    if fd is not None:
        return fd
    stdin = sys.stdin
    if stdin is None:
        raise unusable_stream("stdin", "there is none")
    try:
        return stdin.fileno()
    except (ValueError, OSError) as error:  # closed, or a stand-in without a descriptor
        raise unusable_stream("stdin", "it is closed or has no file descriptor") from error


def _write(stream: TextIO | None, text: str) -> None:
    """Write and flush the prompt; a closed or missing stream is a coded error."""
    if stream is None:
        raise unusable_stream("stderr", "there is none")
    try:
        stream.write(text)
        stream.flush()
    except (ValueError, OSError) as error:
        raise unusable_stream("stderr", "it cannot be written") from error


async def ask_in_lines(
    request: AskUserQuestionRequest,
    signal: AbortSignal | None,
    *,
    fd: int | None = None,
    out: TextIO | None = None,
    bell: bool = False,
) -> AskUserQuestionAnswer:
    """Ask every question of ``request`` in line mode (stdin and stderr by default).

    End of input typed at a terminal (Ctrl-D) is the person cancelling: ``ASK_CANCELLED``. End
    of a pipe or a file is no person at all: ``NOT_INTERACTIVE`` (the answers it gave ran out,
    or there were none). ``bell`` rings the bell before the first question when the prompts go
    to a terminal.
    """
    stream = out if out is not None else sys.stderr
    fd = _input_fd(fd)
    reader = _LineReader.for_fd(fd)
    try:
        at_terminal = os.isatty(fd)
    except OSError as error:
        raise unusable_stream("stdin", "it is closed") from error
    if bell and _is_terminal(stream):
        _write(stream, "\a")
    answers: list[AskUserQuestionAnswerItem] = []
    total = len(request.questions)
    for index, item in enumerate(request.questions):
        view = question_view(item)
        shown = io.StringIO()
        _show(shown, view, index, total)
        _write(stream, shown.getvalue())
        while True:
            # Echo goes off before the prompt shows: keys typed once it is there are never
            # echoed, nor dropped by the flush that discards what was typed (and shown) before.
            with _no_echo(fd if view.secret and at_terminal else None):
                _write(stream, "> ")
                line = await _read_or_abort(reader, signal)
            if view.secret and at_terminal and line is not None:
                _write(stream, "\n")  # the person's Enter was not echoed either
            if line is None:
                _write(stream, "\n")
                if reader.error is not None:
                    raise unusable_stream(
                        "stdin", f"reading it failed: {reader.error.strerror}"
                    ) from reader.error
                if at_terminal:  # Ctrl-D typed by the person at the terminal
                    raise UserQuestionError.cancelled()
                raise unusable_stream(
                    "stdin",
                    "its input ended before this question was answered, and it is not a"
                    " terminal a person types into",
                )
            if not at_terminal:  # a terminal echoed the line already; a pipe did not
                shown_line = _(SECRET_GIVEN) if view.secret and line.strip() else inert_text(line)
                _write(stream, shown_line + "\n")
            try:
                answer = parse_answer_line(item, line)
                problem = answer_problem(item, answer)
                if problem is not None:
                    raise _Refused(_("your text is not taken: {problem}").format(problem=problem))
            except _Refused as refused:
                refusal = io.StringIO()
                _emit(refusal, _("{problem}; try again.").format(problem=refused))
                _write(stream, refusal.getvalue())
                continue
            answers.append(answer)
            break
    return AskUserQuestionAnswer(answers)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (ValueError, OSError):
        return False


@contextlib.contextmanager
def _no_echo(fd: int | None) -> Iterator[None]:
    """While inside, the terminal ``fd`` does not echo what is typed (a secret answer's line,
    as ``getpass`` reads one); its modes are put back however the read ends."""
    if fd is None:
        yield
        return
    try:
        before = termios.tcgetattr(fd)
    except (termios.error, OSError):
        yield
        return
    quiet = list(before)
    quiet[3] = quiet[3] & ~termios.ECHO
    try:
        termios.tcsetattr(fd, termios.TCSAFLUSH, quiet)
    except (termios.error, OSError):
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(termios.error, OSError):  # keys typed after it are kept
            termios.tcsetattr(fd, termios.TCSADRAIN, before)


async def _read_or_abort(reader: _LineReader, signal: AbortSignal | None) -> str | None:
    """The next line, unless the signal aborts first (then the core's abort error)."""
    read = asyncio.ensure_future(reader.readline())
    if signal is None:
        return await read
    aborted = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({read, aborted}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiting in (read, aborted):
            if not waiting.done():
                waiting.cancel()
    if signal.aborted:
        raise UserQuestionError.aborted_by(signal)
    return read.result()
