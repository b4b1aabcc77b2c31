"""One question of the interactive form and what the human has done with it so far."""

from __future__ import annotations

from typing import Literal

from dsh_user_questions import AskUserQuestionAnswerItem, AskUserQuestionItem
from dsh_user_questions.rules import is_plan_review

from ._inert import inert_text
from ._labels import visible_labels
from ._markdown import Line, render_markdown

__all__ = ["Page", "Row", "RowKind", "TextPurpose"]

RowKind = Literal["option", "other", "skip", "talk"]
TextPurpose = Literal["other", "feedback", "free"]


class Row:
    __slots__ = ("description", "index", "kind", "label")

    def __init__(
        self, kind: RowKind, label: str, description: str | None = None, index: int = -1
    ) -> None:
        self.kind = kind
        self.index = index
        self.label = label
        self.description = description


class Page:
    """One question and what the human has done with it so far."""

    def __init__(self, item: AskUserQuestionItem) -> None:
        self.item = item
        self.plan = is_plan_review(item)
        labels = visible_labels([option.label for option in item.options])
        self.rows: list[Row] = [
            Row("option", label, inert_text(o.description or "") or None, i)
            for i, (o, label) in enumerate(zip(item.options, labels, strict=True))
        ]
        if self.plan:
            self.rows.append(
                Row("talk", "Talk instead", "cancel this question and discuss the plan first")
            )
        else:
            if item.options:
                self.rows.append(Row("other", "Other", "type your own answer"))
            else:
                self.rows.append(Row("other", "Type your answer"))
            self.rows.append(Row("skip", "Skip", "leave this question unanswered"))
        self.cursor = 0
        self.row_top = 0
        self.checked: set[int] = set()
        self.touched = False  # a checkbox was toggled: Enter then sends exactly what is checked
        self.other_checked = False
        self.custom = ""
        self.answer: AskUserQuestionAnswerItem | None = None
        self.detail: list[Line] = (
            render_markdown(item.detail) if item.detail is not None and item.detail.strip() else []
        )
        self.detail_top = 0
        self.wrapped: list[Line] = []
        self.wrapped_key: tuple[int, int] = (-1, -1)
        self.seen = bytearray()  # per wrapped detail line: has it been drawn?
        self.unseen = 0

    @property
    def approve(self) -> str | None:
        return self.item.intent.approve if self.plan and self.item.intent else None

    def mark_seen(self, start: int, end: int) -> None:
        for index in range(start, end):
            if not self.seen[index]:
                self.seen[index] = 1
                self.unseen -= 1
