"""One question of the interactive form and what the human has done with it so far."""

from __future__ import annotations

from typing import Literal

from dsh_user_questions import AskUserQuestionAnswerItem, AskUserQuestionItem
from dsh_user_questions.rules import inert_text, is_diff_review, is_plan_review

from ._diff import render_diff
from ._labels import visible_labels
from ._markdown import Line, render_markdown

__all__ = ["RECOMMENDED", "Page", "Row", "RowKind", "TextPurpose"]

RowKind = Literal["option", "other", "skip", "talk"]
TextPurpose = Literal["other", "feedback", "free"]

RECOMMENDED = "(recommended)"
"""The mark after a recommended option's label (both modes)."""


class Row:
    __slots__ = ("description", "index", "kind", "label", "recommended")

    def __init__(
        self,
        kind: RowKind,
        label: str,
        description: str | None = None,
        index: int = -1,
        *,
        recommended: bool = False,
    ) -> None:
        self.kind = kind
        self.index = index
        self.label = label
        self.description = description
        self.recommended = recommended


class Page:
    """One question and what the human has done with it so far.

    A review card (a plan review, or a diff review) shows its ``detail`` in a box, and its
    approve option counts only once every line of it was drawn: `read` says so, and stays true
    for the page (the text does not change), whatever the terminal's size later.
    """

    def __init__(self, item: AskUserQuestionItem) -> None:
        self.item = item
        diff = is_diff_review(item)
        self.plan = diff or is_plan_review(item)  # a review card: the approve gate applies
        self.diff = diff
        self.what = "diff" if diff else "plan"  # the word the card uses for its text
        self.secret = item.secret
        labels = visible_labels([option.label for option in item.options])
        self.shown_labels = {
            option.label: label for option, label in zip(item.options, labels, strict=True)
        }
        self.rows: list[Row] = [
            Row(
                "option",
                label,
                inert_text(o.description or "") or None,
                i,
                recommended=o.recommended,
            )
            for i, (o, label) in enumerate(zip(item.options, labels, strict=True))
        ]
        if self.plan:
            self.rows.append(
                Row(
                    "talk",
                    "Talk instead",
                    f"cancel this question and discuss the {self.what} first",
                )
            )
        else:
            if item.options:
                if item.allow_other:
                    self.rows.append(Row("other", "Other", "type your own answer"))
            else:
                self.rows.append(Row("other", "Type your answer"))
            self.rows.append(Row("skip", "Skip", "leave this question unanswered"))
        # The pointer starts on the recommended option (never checked or picked by itself).
        self.cursor = next((i for i, row in enumerate(self.rows) if row.recommended), 0)
        self.row_top = 0
        self.checked: set[int] = set()
        self.touched = False  # a checkbox was toggled: Enter then sends exactly what is checked
        self.other_checked = False
        self.custom = ""
        self.answer: AskUserQuestionAnswerItem | None = None
        detail = item.detail if item.detail is not None and item.detail.strip() else None
        self.detail: list[Line] = (
            [] if detail is None else render_diff(detail) if diff else render_markdown(detail)
        )
        self.detail_top = 0
        self.wrapped: list[Line] = []
        self.wrapped_key: tuple[int, ...] = ()
        # Each option's preview (markdown, rendered when first focused); not on a review card,
        # whose box is its plan or diff.
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
    def approve(self) -> str | None:
        return self.item.intent.approve if self.plan and self.item.intent else None

    def preview(self, row_index: int) -> list[Line]:
        """The rendered preview of the option on row ``row_index`` (none: ``[]``)."""
        row = self.rows[row_index] if 0 <= row_index < len(self.rows) else None
        if self.plan or row is None or row.kind != "option":
            return []
        text = self.item.options[row.index].preview
        if text is None or not text.strip():
            return []
        if row.index not in self._previews:
            self._previews[row.index] = render_markdown(text)
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
