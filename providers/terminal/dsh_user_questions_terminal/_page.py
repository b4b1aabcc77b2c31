"""One question of the interactive form and what the human has done with it so far."""

from __future__ import annotations

from typing import Any, Literal

from dsh_user_questions import AskUserQuestionAnswerItem, AskUserQuestionItem
from dsh_user_questions._i18n import OTHER, SKIP, TALK_INSTEAD, review_text
from dsh_user_questions._i18n import _ as core_
from dsh_user_questions._input_text import describe_input
from dsh_user_questions.view import InputView, QuestionView, question_view

from ._diff import render_diff
from ._i18n import N_, _
from ._markdown import Line, render_nodes
from ._questions import one_line

__all__ = [
    "FILES_SHOWN",
    "RECOMMENDED",
    "Page",
    "Row",
    "RowKind",
    "TextPurpose",
    "detail_lines",
]

RowKind = Literal["option", "other", "skip", "talk"]
TextPurpose = Literal["other", "feedback", "free", "value", "filter", "path"]

FILES_SHOWN = 200
"""The most file rows a file question draws at once; the filter narrows the rest."""

RECOMMENDED = N_("(recommended)")
"""The mark after a recommended option's label (both modes)."""


class Row:
    """A row of the form: an option (``label`` its wire label, what an answer names; ``shown``
    what is drawn), or one of the form's own rows (Other, Skip, Talk instead)."""

    __slots__ = ("approves", "description", "index", "kind", "label", "recommended", "shown")

    def __init__(
        self,
        kind: RowKind,
        shown: str,
        description: str | None = None,
        index: int = -1,
        *,
        label: str = "",
        recommended: bool = False,
        approves: bool = False,
    ) -> None:
        self.kind = kind
        self.index = index
        self.label = label
        self.shown = shown
        self.description = description
        self.recommended = recommended
        self.approves = approves


class Page:
    """One question and what the human has done with it so far.

    Everything drawn comes from the question's view (`dsh_user_questions.view.question_view`);
    ``item`` is kept for the answer rules only. A review card (a plan review, or a diff review)
    shows its detail in a box, and its approve option counts only once every line of it was
    drawn: `read` says so, and stays true for the page (the text does not change), whatever the
    terminal's size later.
    """

    def __init__(self, item: AskUserQuestionItem) -> None:
        self.item = item
        view: QuestionView = question_view(item)
        self.view = view
        self.plan = view.kind != "question"  # a review card: the approve gate applies
        # The word the card uses for its text.
        self.what = "diff" if view.kind == "diff-review" else "plan"
        self.secret = view.secret
        self.shown_labels = {
            option.label: review_text(view.kind, option.shown) for option in view.options
        }
        # A typed answer (the view's input): a number, a date or time, files, uploads.
        self.input: InputView | None = view.input
        self.input_words = "" if view.input is None else describe_input(view.input)
        files = view.input is not None and view.input.type == "files"
        self.files: tuple[str, ...] = view.input.candidates if files and view.input else ()
        self.files_shown: tuple[str, ...] = view.input.shown if files and view.input else ()
        self.chosen: list[str] = []  # the files ticked, in the order ticked
        self.matches = 0  # how many files the filter matches (at most FILES_SHOWN drawn)
        self.filter_text = ""
        self.uploads: list[Any] = []  # files copied for an upload question (their records)
        self.rows: list[Row] = [
            Row(
                "option",
                review_text(view.kind, option.shown),
                one_line(review_text(view.kind, option.description or "")) or None,
                i,
                label=option.label,
                recommended=option.recommended,
                approves=option.approves,
            )
            for i, option in enumerate(view.options)
        ]
        if self.plan:
            self.rows.append(
                Row(
                    "talk",
                    core_(TALK_INSTEAD),
                    _("cancel this question and discuss the diff first")
                    if self.what == "diff"
                    else _("cancel this question and discuss the plan first"),
                )
            )
        elif self.input is not None:
            # A typed answer: the field (a file question's filter) is typed into; Skip below.
            self.rows.append(Row("other", self.input_words[:1].upper() + self.input_words[1:]))
            self.rows.append(Row("skip", core_(SKIP), _("leave this question unanswered")))
        else:
            if view.options and view.other:
                self.rows.append(Row("other", core_(OTHER), _("type your own answer")))
            elif not view.options:
                self.rows.append(Row("other", _("Type your answer")))
            self.rows.append(Row("skip", core_(SKIP), _("leave this question unanswered")))
        if files:
            self.refilter("")
        # The pointer starts on the recommended option (never checked or picked by itself).
        self.cursor = next((i for i, row in enumerate(self.rows) if row.recommended), 0)
        self.row_top = 0
        self.checked: set[int] = set()
        self.touched = False  # a checkbox was toggled: Enter then sends exactly what is checked
        self.other_checked = False
        self.custom = ""
        self.answer: AskUserQuestionAnswerItem | None = None
        self.detail: list[Line] = detail_lines(view)
        self.detail_top = 0
        self.wrapped: list[Line] = []
        self.wrapped_key: tuple[int, ...] = ()
        # Each option's preview (rendered when first focused); not on a review card, whose box
        # is its plan or diff.
        self._previews: dict[int, list[Line]] = {}
        # Per wrapped line: the source line it comes from (the question's overflow lines and
        # the blank after them have negative numbers), and whether it has been drawn.
        self.sources: list[int] = []
        self.seen = bytearray()
        self.unseen = 0
        self.spans: dict[int, tuple[int, int]] = {}  # source line -> its wrapped lines
        self.seen_sources: set[int] = set()  # source lines every piece of which was drawn
        self.read = False  # every line of a review card's text has been drawn (at any size)

    @property
    def input_type(self) -> str | None:
        """The kind of typed answer (``number``, ``date``, ``files``...), or ``None``."""
        return None if self.input is None else str(self.input.type)

    def refilter(self, text: str) -> None:
        """A file question's rows: the files whose path holds ``text`` (ignoring case), the
        first `FILES_SHOWN` of them, then Skip."""
        self.filter_text = text
        needle = text.strip().lower()
        rows: list[Row] = []
        matches = 0
        for path, shown in zip(self.files, self.files_shown, strict=True):
            if needle and needle not in path.lower():
                continue
            matches += 1
            if len(rows) < FILES_SHOWN:
                rows.append(Row("option", shown, index=len(rows), label=path))
        self.matches = matches
        rows.append(Row("skip", core_(SKIP), _("leave this question unanswered")))
        self.rows = rows
        self.cursor = 0
        self.row_top = 0

    def preview(self, row_index: int) -> list[Line]:
        """The rendered preview of the option on row ``row_index`` (none: ``[]``)."""
        row = self.rows[row_index] if 0 <= row_index < len(self.rows) else None
        if self.plan or row is None or row.kind != "option" or self.input is not None:
            return []
        tree = self.view.options[row.index].preview
        if not tree:
            return []
        if row.index not in self._previews:
            self._previews[row.index] = render_nodes(tree)
        return self._previews[row.index]

    def set_wrapped(self, wrapped: list[Line], sources: list[int]) -> None:
        """New wrapped lines (another width): lines of sources already read count as seen."""
        self.wrapped = wrapped
        self.sources = sources
        self.spans = {}
        for index, source in enumerate(sources):
            start, _ = self.spans.get(source, (index, index))
            self.spans[source] = (start, index + 1)
        self.seen = bytearray(1 if source in self.seen_sources else 0 for source in sources)
        self.unseen = self.seen.count(0)
        if not self.unseen and wrapped:
            self.read = True

    def mark_seen(self, start: int, end: int) -> None:
        for index in range(start, end):
            if not self.seen[index]:
                self.seen[index] = 1
                self.unseen -= 1
        # A source line counts as read once each of its pieces was drawn at this width.
        for source in {self.sources[index] for index in range(start, end)}:
            first, last = self.spans[source]
            if source not in self.seen_sources and all(self.seen[first:last]):
                self.seen_sources.add(source)
        if not self.unseen:
            self.read = True


def detail_lines(view: QuestionView) -> list[Line]:
    """The detail as drawn lines: the diff of a diff review, else the markdown tree (its inert
    text, line by line, when the markdown could not be parsed); none without a detail."""
    if view.diff is not None:
        return render_diff(view.diff)
    if view.detail is not None:
        return render_nodes(view.detail)
    if view.detail_text is not None and view.detail_text.strip():
        return [[("", text)] if text else [] for text in view.detail_text.split("\n")]
    return []
