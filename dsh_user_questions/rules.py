"""The rules of a request and of its answer: the one place they are written.

The service applies them to every ask; providers import them instead of redefining them (a
provider checking what its human posted uses `check_answer`; one drawing a plan-review card
asks `is_plan_review`).

Where a new rule goes: a rule about what may be asked goes in `check_request` (with its
`UserQuestionError` constructor in ``errors.py`` and a row in the README's error table); a rule
about what may be answered goes in `check_answer` (a new ``BAD_ANSWER`` problem needs no new
code). Rules that need the harness (is the caller a live root agent?) stay in the service.
"""

from __future__ import annotations

import inspect
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from . import _inputs
from ._confusables import skeleton
from ._i18n import OTHER, SKIP, shipped_translations
from ._payloads import (
    INPUT_TYPES,
    MAX_UPLOAD_BYTES,
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionInput,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    WireFormatError,
)
from .errors import UserQuestionError
from .plan_review import PLAN_REVIEW_INTENT

if TYPE_CHECKING:
    from .team import People

DIFF_REVIEW_INTENT = "diff-review"
"""The intent kind of a question whose ``detail`` is a unified diff under review."""

__all__ = [
    "INPUT_TYPES",
    "MAX_CUSTOM_CHARS",
    "MAX_UPLOAD_BYTES",
    "SECRET_PLACEHOLDER",
    "check_answer",
    "check_request",
    "inert_text",
    "is_plan_review",
    "redact_secrets",
]

MAX_CUSTOM_CHARS = 10_000
"""The longest free text (``custom``) one answer item may carry, on every surface."""

_NOT_LETTERS = re.compile(r"[\W_]+")


def _fold(label: str) -> str:
    return _NOT_LETTERS.sub("", unicodedata.normalize("NFKC", label).casefold())


# Every shipped translation of the UI's own choices too: a UI shows "其他" for Other in Chinese,
# and the model's errors must not depend on the human's language.
RESERVED_LABELS: dict[str, str] = {
    _fold(shown): choice
    for choice in (OTHER, SKIP)
    for shown in sorted(shipped_translations(choice))
}
"""The labels every UI adds itself, as `reserved_label` folds them, and the choice each is."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# In custom text: C0 and C1 controls and DEL (tab and newline are typed text), and the bidi
# embeddings, overrides and isolates that reorder what a reader sees ("Trojan Source"); the
# bidi *marks* (U+200E, U+200F, U+061C) are ordinary right-to-left typing and pass.
_CUSTOM_FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def check_request(request: AskUserQuestionRequest, people: People | None = None) -> None:
    """Check what ``ask()`` checks of the request itself, in its order; raise the first breach.

    There is at least one question (``EMPTY_QUESTIONS``); its ``audience``, if any, names
    persons and groups of ``people`` (default: `team.People.from_env`, read only for an
    audience with a group) (``BAD_AUDIENCE``, `team.People.expand`); for each question in
    order with an ``intent``, the approve label is one of that question's options
    (``BAD_INTENT``, label message), it has a ``detail``, the empty string included
    (``BAD_INTENT``, detail message), and its ``approvals`` other than 1 is at least 1, on a
    plan or diff review, asked alone, with an audience of at least that many distinct
    persons (``BAD_INTENT``, approvals message). Then each question's own rules
    (``BAD_QUESTION`` naming it): labels that differ and are not the UI's own, at most one
    recommended option of a single-select, a secret question without options, a question
    with ``allow_other`` false with options, and a question with ``input``: no options, not
    multi-select, not secret, no intent, and an input whose fields fit its type (a number's
    ``min`` at most its ``max``, a positive ``step``; a ``files`` input's absolute ``root``
    and listed ``candidates``; an upload's ``accept`` entries, its ``max_bytes`` at most
    `MAX_UPLOAD_BYTES`).
    """
    questions = request.questions
    if not questions:
        raise UserQuestionError.empty_questions()
    persons = _audience_persons(request, people)
    for question in questions:
        intent = question.intent
        if intent is not None:
            if not any(option.label == intent.approve for option in question.options):
                raise UserQuestionError.bad_intent_label(question.id, intent.kind, intent.approve)
            if question.detail is None:
                raise UserQuestionError.bad_intent_detail(question.id, intent.kind)
            if intent.approvals != 1:
                problem = _approvals_problem(request, intent.kind, intent.approvals, persons)
                if problem is not None:
                    raise UserQuestionError.bad_intent_approvals(
                        question.id, intent.kind, intent.approvals, problem
                    )
    ids: set[str] = set()
    for question in questions:
        problems = list(_question_problems(question))
        if question.id in ids:
            problems.insert(0, "is asked twice (question ids must be unique)")
        ids.add(question.id)
        if problems:
            raise UserQuestionError.bad_question(question.id, *problems)


def _audience_persons(request: AskUserQuestionRequest, people: People | None) -> frozenset[str]:
    """The persons the request's audience names (``BAD_AUDIENCE`` when it cannot be read)."""
    if not request.audience:
        return frozenset()
    from .team import audience_persons

    return audience_persons(request, people)


def _approvals_problem(
    request: AskUserQuestionRequest, kind: str, approvals: int, persons: frozenset[str]
) -> str | None:
    """What is wrong with an intent's ``approvals`` (other than 1), or None."""
    if approvals < 1:
        return "approvals must be at least 1"
    if kind not in (PLAN_REVIEW_INTENT, DIFF_REVIEW_INTENT):
        return "only a plan-review or diff-review intent takes approvals"
    if not request.audience:
        return "the request has no audience to approve it"
    if approvals > len(persons):
        count = len(persons)
        return f"its audience is only {count} {'person' if count == 1 else 'people'}"
    if len(request.questions) > 1:
        return (
            f"the request asks {len(request.questions)} questions"
            " (a review that needs several approvals is asked alone)"
        )
    return None


def label_key(label: str) -> str:
    """The form in which two labels count as the same: NFKC, case folded, spaces collapsed.

    ``"PNPM "``, ``"pnpm"`` and the same word in fullwidth letters share one key, so an
    answer naming one of them could mean either; `check_request` refuses such pairs.
    """
    return " ".join(unicodedata.normalize("NFKC", label).casefold().split())


def reserved_label(label: str) -> str | None:
    """``"Other"`` or ``"Skip"`` when ``label`` *is* a choice the UI adds itself, else None.

    Compared after NFKC and case folding, without spaces and punctuation: ``"Other"``,
    ``" skip. "``, ``"OTHER:"`` and ``"Other"`` in fullwidth letters are reserved; a label that
    says more is an ordinary choice the model offers (``"Skip tests"``, ``"None of the
    above"``, ``"Something else"``, ``"Other (please specify)"``). The tool and
    `check_request` both use this one test.
    """
    return RESERVED_LABELS.get(_fold(label))


def label_skeleton(label: str) -> str:
    """The form in which two labels look the same to a reader: their UTS #39 skeleton.

    Unicode's confusables (``pop`` and ``pop`` in Cyrillic letters, ``npm`` and ``npm`` with a
    zero-width space) and ASCII's own (``l``, ``I`` and ``1``; ``0`` and ``O``) share one
    skeleton, taken after case folding and with spaces collapsed, as `label_key` reads them.
    `check_request` refuses two labels of one question with one skeleton; a provider may use
    it to tell whether two labels it draws would look alike.
    """
    return " ".join(skeleton(label).casefold().split())


def _question_problems(question: AskUserQuestionItem) -> Iterator[str]:
    # The request rules that protect what an answer means, for every caller of ask().
    seen: dict[str, int] = {}
    looks: dict[str, int] = {}
    recommended = 0
    for index, option in enumerate(question.options):
        label = option.label
        meaning = reserved_label(label)
        if meaning is not None:
            yield (
                f"option {index} {_q(label)} reads as the UI's own {_q(meaning)} choice,"
                " which every UI adds itself; leave it out"
            )
        key = label_key(label)
        if key in seen:
            yield (
                f"option {index} {_q(label)} reads the same as option {seen[key]}"
                f" {_q(question.options[seen[key]].label)} (labels must differ ignoring case"
                " and spaces)"
            )
        else:
            seen[key] = index
            look = label_skeleton(label)
            if look in looks:
                yield _looks_alike(index, label, looks[look], question.options[looks[look]].label)
            else:
                looks[look] = index
        recommended += option.recommended
    if recommended > 1 and not question.multi_select:
        yield f"recommends {recommended} options; a single-select question recommends at most one"
    if question.secret and question.options:
        yield "is secret and has options; a secret question takes free text only"
    if question.secret and question.multi_select:
        yield "is secret and multi_select; a secret question takes free text only"
    yield from _inputs.question_problems(question)
    if not question.allow_other and not question.options and question.input is None:
        yield (
            "has no options and allow_other is false; it could never be answered"
            " (give options, or allow free text)"
        )


def _looks_alike(index: int, label: str, first: int, first_label: str) -> str:
    # The labels with ASCII escapes: quoted as written, the two would look the same here too.
    return (
        f"option {index} {json.dumps(label)} looks the same as option {first}"
        f" {json.dumps(first_label)} (labels must not look alike: Unicode confusables, l, I"
        " and 1, 0 and O)"
    )


def reviewed_kind(question: AskUserQuestionItem) -> str | None:
    """The intent kind of ``question`` when it passes the intent rules, else ``None``.

    The rules: the approve label is one of its options and it has a ``detail`` (what is
    reviewed), exactly what `check_request` demands of a question with an intent.
    """
    intent = question.intent
    if intent is None or question.detail is None:
        return None
    if not any(option.label == intent.approve for option in question.options):
        return None
    return intent.kind


def is_diff_review(question: AskUserQuestionItem) -> bool:
    """Whether a provider should show ``question`` as a diff-review card (its detail a diff).

    True when its intent is ``diff-review`` and it passes the same intent rules as a plan review.
    """
    return reviewed_kind(question) == DIFF_REVIEW_INTENT


def is_plan_review(question: AskUserQuestionItem) -> bool:
    """Whether a provider should show ``question`` as a plan-review card.

    True when its intent is ``plan-review``, the approve label is one of its options and it has
    a ``detail`` (the plan): exactly the questions `check_request` lets through with that intent.
    """
    return reviewed_kind(question) == PLAN_REVIEW_INTENT


def check_answer(
    request: AskUserQuestionRequest | Sequence[AskUserQuestionItem], answer: object
) -> AskUserQuestionAnswer:
    """Check an answer against the questions asked; return it as a payload.

    ``request`` is the request (or its questions); ``answer`` is an `AskUserQuestionAnswer` or
    a mapping in its wire form. Every item must name an asked question, at most once; selected
    labels must be options of that question, each at most once; a single-select has at most
    one selection and never both a selection and ``custom``; ``custom`` is given only where
    the question's ``allow_other`` is true, and is never blank, at
    most `MAX_CUSTOM_CHARS` characters, holds no control character but tab and newline (CR LF
    counts as a newline), no bidi embedding, override or isolate, and no unpaired surrogate (it
    is handed on to a model, and no model API takes one). A question with ``input`` is answered
    by ``value`` only (no selection, no ``custom``), and the value fits the input: a finite
    number (never a bool) within ``min`` and ``max`` and on the ``step`` grid counted from
    ``min`` (else 0, in decimal, so 0.1 steps work); a real date, time, or RFC 3339 date and
    time with an offset; distinct relative POSIX paths matching the pattern, among the offered
    candidates, at most ``max_count``; uploads within the count, ``max_bytes`` and ``accept``,
    each a plain file name with a sha256 and an absolute path. A question without ``input``
    takes no ``value``. What only the asker's machine can check, the service checks there
    when the answer arrives (`_inputs.check_files`). Omitted
    questions are allowed
    (unanswered). Breaches raise one ``BAD_ANSWER`` whose ``problems`` lists each, naming the
    item and the rule. Every surface (the service, the web and inbox pages, ``dsh-inbox
    answer``, MCP elicitation) refuses exactly these answers, with these problems.
    """
    questions = request.questions if isinstance(request, AskUserQuestionRequest) else request
    checked = _as_answer(answer)
    plan = _answer_plan(questions)
    answers = checked.answers
    if len(answers) == 1 and _plainly_valid(plan, answers[0]):
        return checked
    problems = list(_answer_problems(plan, answers))
    if problems:
        raise UserQuestionError.bad_answer(*problems)
    return checked


def _as_answer(answer: object) -> AskUserQuestionAnswer:
    """``answer`` as a payload: a payload as it is, a mapping read as the wire form."""
    if isinstance(answer, AskUserQuestionAnswer):
        return answer
    if isinstance(answer, Mapping):
        try:
            return AskUserQuestionAnswer.from_dict(answer)
        except WireFormatError as error:
            raise UserQuestionError.bad_answer(*error.problems, wire_form=True) from error
    if inspect.iscoroutine(answer):
        answer.close()  # refused, never awaited: close it so Python does not warn
    raise UserQuestionError.bad_answer(
        f"expected an AskUserQuestionAnswer or a mapping in wire form, got {type(answer).__name__}"
    )


def _plainly_valid(plan: _Plan, item: AskUserQuestionAnswerItem) -> bool:
    """The common answer: one asked question, one offered label, no free text."""
    entry = plan.get(item.id)
    selected = item.selected
    return (
        entry is not None
        and item.custom is None
        and item.value is None
        and len(selected) == 1
        and selected[0] in entry[0]
    )


def _answer_problems(plan: _Plan, answers: Sequence[AskUserQuestionAnswerItem]) -> Iterator[str]:
    """Each breach of the answer rules, naming the item (its index and question id)."""
    seen: set[str] = set()
    for index, item in enumerate(answers):
        entry = plan.get(item.id)
        problems: Iterable[str]
        if entry is None:
            problems = ("names no question that was asked",)
        elif item.id in seen:
            problems = ("answers that question a second time",)
        else:
            seen.add(item.id)
            problems = _item_problems(item, *entry)
        for problem in problems:
            # Quoted only on failure: quoting the id costs more than the whole check.
            yield f"answers[{index}] (question {_q(item.id)}) {problem}"


def _item_problems(
    item: AskUserQuestionAnswerItem,
    labels: frozenset[str],
    multi_select: bool,
    allow_other: bool,
    given: AskUserQuestionInput | None,
) -> Iterator[str]:
    """What breaks the rules in one answer item to its asked (and first answered) question."""
    selected, custom = item.selected, item.custom
    if given is not None:
        if selected:
            yield "selects options, but the question takes a value (it has input)"
        if custom is not None:
            yield "has custom text, but the question takes a value (it has input)"
        if item.value is not None:
            yield from _inputs.value_problems(given, item.value)
        return
    if item.value is not None:
        yield "has a value, but the question has no input (it takes options or text)"
    for label in selected:
        if label not in labels:
            yield f"selects {_q(label)}, which is not one of its options"
    if len(set(selected)) != len(selected):
        yield "selects an option more than once"
    if not multi_select and len(selected) > 1:
        yield f"selects {len(selected)} options of a single-select question"
    if not multi_select and selected and custom is not None:
        yield "has both a selection and custom text on a single-select question"
    if custom is not None and not allow_other:
        yield "has custom text, but the question takes only its options (allow_other is false)"
    elif custom is not None:
        problem = _custom_problem(custom)
        if problem is not None:
            yield problem


_Plan = dict[str, tuple[frozenset[str], bool, bool, AskUserQuestionInput | None]]
_PLANS: dict[int, tuple[object, _Plan]] = {}
_PLANS_MAX = 256


def _answer_plan(questions: Sequence[AskUserQuestionItem]) -> _Plan:
    """What `check_answer` needs of each question (labels, multi_select, allow_other), by id.

    Kept for the last few question tuples (held, so their ids stay theirs): a request's
    questions are frozen items in a tuple, and the same request is often answered again.
    """
    key = id(questions)
    found = _PLANS.get(key)
    if found is not None and found[0] is questions:
        return found[1]
    plan = {
        question.id: (
            frozenset(option.label for option in question.options),
            question.multi_select,
            question.allow_other,
            question.input,
        )
        for question in questions
    }
    if isinstance(questions, tuple):
        if len(_PLANS) >= _PLANS_MAX:
            _PLANS.clear()
        _PLANS[key] = (questions, plan)
    return plan


SECRET_PLACEHOLDER = "[secret given to the harness]"
"""What stands in for a secret answer's text wherever it may not appear in clear."""


def redact_secrets(
    request: AskUserQuestionRequest | Sequence[AskUserQuestionItem], answer: AskUserQuestionAnswer
) -> AskUserQuestionAnswer:
    """``answer`` with the custom text of every secret question replaced by `SECRET_PLACEHOLDER`.

    What observers, logs, records and (unless the harness opts in) the model see of a secret.
    Returns ``answer`` itself when the request has no secret question.
    """
    questions = request.questions if isinstance(request, AskUserQuestionRequest) else request
    secret = {question.id for question in questions if question.secret}
    if not secret or not any(i.id in secret and i.custom is not None for i in answer.answers):
        return answer
    return AskUserQuestionAnswer(
        [
            AskUserQuestionAnswerItem(id=item.id, selected=item.selected, custom=SECRET_PLACEHOLDER)
            if item.id in secret and item.custom is not None
            else item
            for item in answer.answers
        ],
        answered_by=answer.answered_by,
    )


def _custom_problem(custom: str) -> str | None:
    if not custom.strip():
        return "has blank custom text"
    if len(custom) > MAX_CUSTOM_CHARS:
        return f"has custom text of {len(custom)} characters (at most {MAX_CUSTOM_CHARS})"
    if custom.isascii() and custom.isprintable():
        return None
    if _LONE_SURROGATE.search(custom):
        # Refused, not repaired: no model API takes a lone surrogate, and replacing it
        # would hand the model words the human never wrote.
        return "has custom text with an unpaired surrogate (not Unicode)"
    bad = _CUSTOM_FORBIDDEN.search(custom.replace("\r\n", "\n"))
    if bad is not None:
        return (
            f"has custom text with control character U+{ord(bad.group()):04X}"
            f" at index {bad.start()} (only tab and newline may be typed)"
        )
    return None


# --- inert text -----------------------------------------------------------------------------

_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_BREAKS = frozenset("\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_ZWJ = "\u200d"
_WORD = re.compile(r"[^\W_]+")


def inert_text(text: str, *, multiline: bool = False) -> str:
    """``text`` as inert characters, for any surface that shows model-written text.

    The one function every surface uses (terminal form and scrollback, inbox CLI, pages, the
    example provider, the conformance suite), so a character looks the same everywhere:

    - line breaks (CR LF, CR, LF, VT, FF, U+0085, U+2028, U+2029) become ``\\n`` when
      ``multiline`` is true, else one space; a tab becomes four spaces;
    - every other control character (ESC, BEL, DEL, C1), every format character (bidi
      controls and marks, zero-width space and joiners, soft hyphen, BOM, tags) and every lone
      surrogate becomes a visible stand-in ``<U+XXXX>``; a zero-width joiner between two
      symbols (an emoji sequence) is kept;
    - in a word that mixes ASCII letters with letters of another script, the foreign letters
      become stand-ins too (``n<U+0440>m`` for a Cyrillic er, U+0440, in "npm"), so a look-alike
      never reads as the word it imitates; whole words of any script are untouched.

    Everything else passes unchanged, and ``inert_text(inert_text(s)) == inert_text(s)``.
    Markup is not touched: a page still escapes HTML itself (this text is then safe to
    escape).
    """
    if text.isascii() and text.isprintable():
        return text
    newline = "\n" if multiline else " "
    if "\r" in text:  # CR LF is one line break, and so is a lone CR
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    suspicious = _lookalikes(text)
    out: list[str] = []
    index = 0
    length = len(text)
    while index < length:
        char = text[index]
        index += 1
        if char in _BREAKS:
            out.append(newline)
        elif char == "\t":
            out.append("    ")
        elif char.isprintable() and not ("\ud800" <= char <= "\udfff"):
            if suspicious and index - 1 in suspicious:
                out.append(stand_in(char))
            else:
                out.append(char)
        elif char == _ZWJ and _joins_symbols(text, index - 1):
            out.append(char)
        elif unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp") or char in _BIDI:
            out.append(stand_in(char))
        else:
            out.append(char)  # e.g. a space separator other than U+0020: harmless
    return "".join(out)


def stand_in(char: str) -> str:
    """How every surface shows a character that must not be drawn as itself: ``<U+XXXX>``."""
    return f"<U+{ord(char):04X}>"


def foreign_letter(char: str) -> bool:
    """Whether ``char`` is a letter of another script than Latin (a Cyrillic er, U+0440)."""
    return (
        not char.isascii() and char.isalpha() and not unicodedata.name(char, "").startswith("LATIN")
    )


def _lookalikes(text: str) -> set[int]:
    found: set[int] = set()
    for word in _WORD.finditer(text):
        chunk = word.group()
        if chunk.isascii() or not any("a" <= c <= "z" or "A" <= c <= "Z" for c in chunk):
            continue
        start = word.start()
        for offset, char in enumerate(chunk):
            if foreign_letter(char):
                found.add(start + offset)
    return found


def _joins_symbols(text: str, at: int) -> bool:
    before = text[at - 1] if at > 0 else ""
    after = text[at + 1] if at + 1 < len(text) else ""
    return bool(before and after) and all(
        (not c.isascii() and unicodedata.category(c) in ("So", "Sk"))
        or "\U0001f3fb" <= c <= "\U0001f3ff"
        for c in (before, after)
    )


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)
