"""``benchmarks/bench_team.py``'s parts work: a small team end to end, and its checks fail when
an answer is lost, doubled or another's. Its figures are the benchmark's (BENCHMARKS.md), never
checked here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from _postgres import PostgresServer

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
if not (BENCHMARKS / "bench_team.py").is_file():  # an unpacked sdist carries no benchmarks
    pytest.skip("the source tree's benchmarks/ is not here", allow_module_level=True)
sys.path.insert(0, str(BENCHMARKS))
from bench_team import Post, Round, check  # noqa: E402


def _round(posts: list[tuple[str, int, str]], got: dict[str, list[list[str]]]) -> Round:
    """A round of two questions ``a-0`` and ``a-1``: the POSTs (tag, code, status) and what
    the asker got for each tag."""
    answers = {
        tag: [{"tag": tag, "returned": 2.0, "got": labels} for labels in gots]
        for tag, gots in got.items()
    }
    made = [Post(0, f"id-{tag}", tag, 1.0, 1.5, code, status) for tag, code, status in posts]
    return Round(asked=2, answers=answers, errors=[], posts=made, failed=0)


TAGS = ["a-0", "a-1"]
RACED = [("a-0", 200, "accepted"), ("a-0", 409, "not-pending"), ("a-1", 200, "accepted")]


def test_every_question_applied_once_and_its_own_answer_back_passes() -> None:
    checked = check(_round(RACED, {"a-0": [["a-0"]], "a-1": [["a-1"]]}), TAGS)
    assert checked.ok
    assert "applied exactly once through the page: 2 (twice or more: 0)" in checked.lines[0]
    assert (
        "refused as no longer pending (a second person on the same question): 1"
        in (checked.lines[1])
    )
    assert checked.click == [1.0, 1.0]
    assert checked.response == [0.5, 0.5]


@pytest.mark.parametrize(
    ("posts", "got", "said"),
    [
        (RACED[:1], {"a-0": [["a-0"]]}, "own answer, once: 1 (none: 1;"),
        ([*RACED, ("a-1", 200, "accepted")], {"a-0": [["a-0"]], "a-1": [["a-1"]]}, "more: 1)"),
        (RACED, {"a-0": [["a-1"]], "a-1": [["a-1"]]}, "another's or more than one: 1;"),
        (RACED, {"a-0": [["a-0"], ["a-0"]], "a-1": [["a-1"]]}, "another's or more than one: 1;"),
        ([*RACED[:2], ("a-1", 500, "")], {"a-0": [["a-0"]], "a-1": [["a-1"]]}, "else: 1"),
    ],
    ids=["lost", "applied-twice", "another's", "returned-twice", "server-error"],
)
def test_a_lost_doubled_or_crossed_answer_fails_the_checks(
    posts: list[tuple[str, int, str]], got: dict[str, list[list[str]]], said: str
) -> None:
    checked = check(_round(posts, got), TAGS)
    assert not checked.ok
    assert said in " ".join(checked.lines)


def test_a_small_team_runs_end_to_end(postgres: PostgresServer) -> None:
    # `postgres` for its skip (or CI's failure) without the package; the benchmark starts a
    # server of its own, listening on TCP.
    done = subprocess.run(
        [
            sys.executable, str(BENCHMARKS / "bench_team.py"), "--processes", "2",
            "--questions", "3", "--baseline-questions", "2", "--people", "3", "--no-netns",
            "--no-page",
        ],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "nothing lost or doubled: every check passed" in done.stdout
    assert "store after both: 8 answered, 0 pending" in done.stdout
    assert "answer POST sent -> ask() returned, p99 |" in done.stdout
