"""What every benchmark shares: the workload, timing, and the table of figures."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    hookimpl,
)

QUESTION = AskUserQuestionItem(
    id="pkg",
    header="Tooling",
    question="Which package manager should the project use?",
    options=[
        AskUserQuestionOption("pnpm", "Fast, strict, disk-efficient (Recommended)"),
        AskUserQuestionOption("npm", "Ships with Node.js"),
        AskUserQuestionOption("yarn", "Plug'n'Play installs"),
    ],
)
REQUEST = AskUserQuestionRequest(questions=[QUESTION])
ANSWER = AskUserQuestionAnswer([AskUserQuestionAnswerItem(id="pkg", selected=["pnpm"])])
WIRE_ANSWER = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}


class InstantProvider:
    """A provider that answers at once: ``async def`` returning a ready answer."""

    def __init__(self, answer: AskUserQuestionAnswer = ANSWER) -> None:
        self.answer = answer

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        return self.answer

    @hookimpl
    async def dsh_user_questions_ask(
        self, request: AskUserQuestionRequest
    ) -> AskUserQuestionAnswer:
        return self.answer


@dataclass
class Figure:
    """One measured figure, with the baseline measured in the same run."""

    name: str
    value: float
    unit: str
    baseline_name: str
    baseline: float | None
    target: str = "-"
    met: bool | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.baseline is None or self.baseline == 0:
            return None
        return self.value / self.baseline


def fmt(value: float | None, unit: str) -> str:
    """A value in its unit, with sensible precision."""
    if value is None:
        return "-"
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "B":
        return f"{value:.2f} B" if abs(value) < 10 else f"{value:,.0f} B"
    if unit in ("us", "ms"):
        unit_text = "µs" if unit == "us" else "ms"
        return f"{value:.2f} {unit_text}" if value < 100 else f"{value:,.0f} {unit_text}"
    return f"{value:.3g} {unit}"


def fmt_ratio(figure: Figure) -> str:
    ratio = figure.ratio
    if ratio is None:
        return "-"
    return f"{ratio:.2f}x" if ratio >= 0.1 else f"{ratio:.4f}x"


def verdict(met: bool | None) -> str:
    return {True: "met", False: "MISSED", None: "-"}[met]


HEADER = ("figure", "value", "baseline (same run)", "ratio", "target", "")


def rows(figures: list[Figure]) -> list[tuple[str, ...]]:
    return [
        (
            f.name,
            fmt(f.value, f.unit),
            f"{f.baseline_name}: {fmt(f.baseline, f.unit)}" if f.baseline_name else "-",
            fmt_ratio(f),
            f.target,
            verdict(f.met),
        )
        for f in figures
    ]


def text_table(figures: list[Figure]) -> str:
    table = [HEADER, *rows(figures)]
    widths = [max(len(row[i]) for row in table) for i in range(len(HEADER))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in table
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(line.rstrip() for line in lines)


def markdown_table(figures: list[Figure]) -> str:
    header = ("figure", "value", "baseline (same run)", "ratio", "target", "met")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows(figures)]
    return "\n".join(lines)


async def best_per_call(
    variants: dict[str, Callable[[int], Awaitable[None]]],
    number: int,
    repeat: int,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """Seconds per call of each variant: the best of ``repeat`` runs of ``number`` calls.

    The variants take turns, so a slow patch of the machine hits all of them alike. The best
    run is the one least disturbed by the rest of the machine (as `timeit` advises).
    ``clock``: `time.process_time` counts only this process's CPU time, so the other work of
    a shared machine counts less.
    """
    rounds = await per_call_rounds(variants, number, repeat, clock)
    return {name: min(seconds) for name, seconds in rounds.items()}


async def per_call_rounds(
    variants: dict[str, Callable[[int], Awaitable[None]]],
    number: int,
    repeat: int,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, list[float]]:
    """Seconds per call of each variant in each of ``repeat`` runs of ``number`` calls.

    Like `best_per_call` (the variants take turns), with every run kept: its best is the
    figure, its median says how noisy the machine was.
    """
    rounds: dict[str, list[float]] = {name: [] for name in variants}
    for run in variants.values():
        await run(max(1, number // 10))  # warm up
    gc.collect()
    for _ in range(repeat):
        for name, run in variants.items():
            started = clock()
            await run(number)
            rounds[name].append((clock() - started) / number)
    return rounds


def median(values: list[float]) -> float:
    return statistics.median(values)
