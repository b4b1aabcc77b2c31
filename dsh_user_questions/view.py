"""One view of a question: what every surface shows of it, made once in the core.

A surface (the terminal, the web page, the link page, the inbox, MCP forms, notifications)
renders a `QuestionView` (`question_view`, `request_view`); none re-reads the wire dicts,
decides a review card or parses a detail of its own. Every text in a view is model-written and
already inert (`dsh_user_questions.rules.inert_text`); an answer still names an option by its
wire label, `OptionView.label`, never by what is shown.

- Markdown (a detail, a plan, an option's preview) comes as a safe element tree, a `Node`: a
  string (a text node) or ``[tag, {attribute: value}, *children]``, from a fixed list of tags
  (the core's one markdown reader, `dsh_user_questions._markdown`).
- A diff-review question's detail comes read into files, hunks and lines
  (``QuestionView.diff``, by the core's one diff parser); `diff_lines` lists them, marked and
  in order, for a surface that draws a diff line by line.

A view is cached for as long as its item lives, so a surface may ask for it on every redraw
and a settled question's view goes with its item; its trees are shared between callers and
must not be changed (`QuestionView.to_dict` returns fresh copies).

Example: the view of a plan review, as a plain-text surface would read it:

```python
from dsh_user_questions.plan_review import plan_review_question
from dsh_user_questions.view import question_view

view = question_view(plan_review_question("# Plan\\n\\n1. Add the index"))
assert view.kind == "plan-review"
assert [option.shown for option in view.options if option.approves] == ["Approve"]
```
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

import attrs

from ._diff import diff_lines, parse_diff
from ._labels import visible_labels
from ._markdown import Node
from ._markdown import render as markdown
from ._payloads import (
    MAX_UPLOAD_BYTES,
    MAX_UPLOAD_COUNT,
    AskUserQuestionInput,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
)
from .plan_review import PLAN_REVIEW_INTENT
from .rules import DIFF_REVIEW_INTENT, inert_text, reviewed_kind

__all__ = [
    "InputView",
    "Node",
    "OptionView",
    "QuestionView",
    "diff_lines",
    "question_view",
    "request_view",
]

_REVIEW_KINDS = frozenset({PLAN_REVIEW_INTENT, DIFF_REVIEW_INTENT})
"""The intents a view shows as a review card of their own; any other is the generic form."""


@attrs.frozen(kw_only=True)
class OptionView:
    """One option as a surface shows it.

    ``label`` is the wire label as written: what an answer names (``selected``), never what is
    shown; ``shown`` is that label inert on one line, its invisible characters (and letters that
    look like another label's, or mix with Latin ones) as ``<U+XXXX>`` stand-ins, so two labels
    never look the same. ``description`` is inert text (several lines); ``preview`` the element
    tree of the option's preview markdown, or one ``pre``/``code`` block of its
    inert text when the markdown is nested too deep to parse; ``None`` without a preview.
    ``recommended`` marks the option the asker suggests (marked and focused first, never
    selected for the human). ``approves`` is true for the one option that approves a plan-review
    or diff-review question (its intent's approve label).
    """

    label: str
    shown: str
    description: str | None
    preview: tuple[Node, ...] | None
    recommended: bool
    approves: bool

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: every field under its own name, the preview tree as lists."""
        return {
            "label": self.label,
            "shown": self.shown,
            "description": self.description,
            "preview": None if self.preview is None else _copy(list(self.preview)),
            "recommended": self.recommended,
            "approves": self.approves,
        }


@attrs.frozen(kw_only=True)
class InputView:
    """A question's typed input as a surface shows it (`AskUserQuestionInput`, made ready).

    ``type`` is one of ``number``, ``date``, ``time``, ``datetime``, ``files``, ``upload``.
    ``min``, ``max`` and ``step`` bound a number (``None``: unbounded, any step); ``unit`` is
    inert text for beside the field. ``pattern`` is the files' glob as inert text (what the
    list was filtered by). ``max_count`` is the most items the answer may hold (``None``: no
    limit for files; for an upload, the question's count or `payloads.MAX_UPLOAD_COUNT`).
    ``candidates`` are the files offered, as the answer names them (relative POSIX paths, in
    order); ``shown`` the same paths as inert text, one per candidate, for display only.
    ``accept`` lists the upload's accepted types (MIME patterns or ``.ext``; empty: any);
    ``max_bytes`` is each upload's limit (the question's, or `payloads.MAX_UPLOAD_BYTES`).
    """

    type: str
    min: float | None
    max: float | None
    step: float | None
    unit: str | None
    pattern: str | None
    max_count: int | None
    candidates: tuple[str, ...]
    shown: tuple[str, ...]
    accept: tuple[str, ...]
    max_bytes: int | None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: every field under its own name, tuples as lists."""
        return {
            "type": self.type,
            "min": self.min,
            "max": self.max,
            "step": self.step,
            "unit": self.unit,
            "pattern": self.pattern,
            "max_count": self.max_count,
            "candidates": list(self.candidates),
            "shown": list(self.shown),
            "accept": list(self.accept),
            "max_bytes": self.max_bytes,
        }


@attrs.frozen(kw_only=True)
class QuestionView:
    """One question as every surface shows it: inert texts, rendered trees, its kind of form.

    ``kind`` is ``"plan-review"`` or ``"diff-review"`` for a question that passes that intent's
    rules (`rules.is_plan_review` and its diff-review twin), else ``"question"``: the generic
    form, which a surface also shows for a kind it does not know. ``header`` (one line) and
    ``question`` (several lines) are inert text. ``detail`` is the element tree of the detail's
    markdown, ``None`` without a detail or when the markdown is nested too deep to
    parse; ``detail_text`` is the detail as inert text (several lines), for plain-text surfaces
    and as that fallback. ``diff`` is the parsed detail of a diff-review question,
    else ``None``. ``other`` says free text ("Other") is offered: always for a question without
    options, else when its ``allow_other`` is true. ``secret`` says the answer is typed masked
    and never shown or echoed in clear. ``input`` is the typed input of a question that takes
    a ``value`` (an `InputView`; such a question has no options and no "Other"), else ``None``.
    """

    id: str
    kind: str
    header: str | None
    question: str
    detail: tuple[Node, ...] | None
    detail_text: str | None
    diff: Mapping[str, Any] | None
    options: tuple[OptionView, ...]
    multi_select: bool
    other: bool
    secret: bool
    input: InputView | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form the pages read: every field under its own (snake_case) name, options
        as their `OptionView.to_dict`, trees as lists; a fresh copy on every call."""
        return {
            "id": self.id,
            "kind": self.kind,
            "header": self.header,
            "question": self.question,
            "detail": None if self.detail is None else _copy(list(self.detail)),
            "detail_text": self.detail_text,
            "diff": None if self.diff is None else _copy(dict(self.diff)),
            "options": [option.to_dict() for option in self.options],
            "multi_select": self.multi_select,
            "other": self.other,
            "secret": self.secret,
            "input": None if self.input is None else self.input.to_dict(),
        }


# Each live item's view. Weak keys: a view (a large diff's whole tree) is kept no longer than
# its item, where a bounded LRU cache would keep the last settled questions' views for nothing.
_views: weakref.WeakKeyDictionary[AskUserQuestionItem, QuestionView] = weakref.WeakKeyDictionary()


def question_view(item: AskUserQuestionItem) -> QuestionView:
    """The view of ``item``: the same object again, for ``item`` or an equal item, while
    ``item`` lives."""
    view = _views.get(item)
    if view is None:
        view = _views[item] = _make_view(item)
    return view


def request_view(request: AskUserQuestionRequest) -> tuple[QuestionView, ...]:
    """The view of each question of ``request``, in order."""
    return tuple(question_view(item) for item in request.questions)


def _make_view(item: AskUserQuestionItem) -> QuestionView:
    reviewed = reviewed_kind(item)  # the intent rules, read once
    kind = reviewed if reviewed is not None and reviewed in _REVIEW_KINDS else "question"
    approve = item.intent.approve if kind != "question" and item.intent is not None else None
    detail = item.detail
    return QuestionView(
        id=item.id,
        kind=kind,
        header=None if item.header is None else inert_text(item.header),
        question=inert_text(item.question, multiline=True),
        detail=None if detail is None else _tree(detail),
        detail_text=None if detail is None else inert_text(detail, multiline=True),
        diff=parse_diff(detail) if kind == "diff-review" and detail is not None else None,
        options=tuple(
            _option_view(option, shown, approve)
            for option, shown in zip(item.options, _shown_labels(item), strict=True)
        ),
        multi_select=item.multi_select,
        other=item.input is None and (item.allow_other or not item.options),
        secret=item.secret,
        input=None if item.input is None else _input_view(item.input),
    )


def _input_view(given: AskUserQuestionInput) -> InputView:
    upload = given.type == "upload"
    candidates = given.candidates or ()
    return InputView(
        type=given.type,
        min=given.min,
        max=given.max,
        step=given.step,
        unit=None if given.unit is None else inert_text(given.unit),
        pattern=None if given.pattern is None else inert_text(given.pattern),
        max_count=MAX_UPLOAD_COUNT if upload and given.max_count is None else given.max_count,
        candidates=candidates,
        shown=tuple(inert_text(path) for path in candidates),
        accept=given.accept,
        max_bytes=(MAX_UPLOAD_BYTES if given.max_bytes is None else given.max_bytes)
        if upload
        else None,
    )


def _shown_labels(item: AskUserQuestionItem) -> list[str]:
    # Invisible characters and look-alike letters as stand-ins (a label is judged beside the
    # question's other labels): two labels never look the same on any surface.
    return visible_labels([option.label for option in item.options])


def _option_view(option: AskUserQuestionOption, shown: str, approve: str | None) -> OptionView:
    preview = option.preview
    if preview is None:
        tree = None
    else:
        tree = _tree(preview)
        if tree is None:
            tree = (["pre", {}, ["code", {}, inert_text(preview, multiline=True)]],)
    return OptionView(
        label=option.label,
        shown=shown,
        description=None
        if option.description is None
        else inert_text(option.description, multiline=True),
        preview=tree,
        recommended=option.recommended,
        approves=approve is not None and option.label == approve,
    )


def _tree(source: str) -> tuple[Node, ...] | None:
    # Emphasis nested thousands deep overflows the parser's own recursion: no tree then, and
    # the caller falls back to the inert text.
    try:
        return tuple(markdown(source))
    except RecursionError:
        return None


def _copy(value: Any) -> Any:
    if isinstance(value, list):
        return [_copy(item) for item in value]
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    return value
