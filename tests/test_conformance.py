"""The conformance suite passes a conforming provider and catches each breach of the contract.

The conforming provider is the README's example (examples/board_provider.py) with its driver;
each broken provider below breaks one rule, and the suite's test for that rule must fail
with a message naming the breach.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import re
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dsh_user_questions import AskUserQuestionRequest, UserQuestionError, hookimpl
from dsh_user_questions.conformance import ProviderConformance
from dsh_user_questions.harness import HarnessContext

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _load(name: str) -> Any:
    """A fresh copy of an example module (the examples are plain files, not a package)."""
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sys.path.insert(0, str(EXAMPLES))  # the example test imports board_provider as its author would
board = _load("board_provider")
example = _load("test_board_provider")


class BoardConformance(ProviderConformance):
    """The suite on a board provider of class ``provider_class``, through register_provider."""

    provider_class: Any = board.BoardProvider

    @contextlib.asynccontextmanager
    async def connect(self, ctx: HarnessContext) -> AsyncIterator[Any]:
        provider = self.provider_class()
        dispose = ctx.user_questions.register_provider(provider)
        try:
            yield example.BoardDriver(provider)
        finally:
            dispose()


class TestExampleProviderConforms(example.TestBoardProvider):  # type: ignore[misc]
    """The README's example provider, with its example driver, passes every check."""


class TestExampleProviderConformsAsPlugin(ProviderConformance):
    """The example passes as a plugin implementing the provider hook, too."""

    @contextlib.asynccontextmanager
    async def connect(self, ctx: HarnessContext) -> AsyncIterator[Any]:
        provider = board.BoardProvider()

        class Plugin:
            @hookimpl
            def dsh_user_questions_ask(self, request: AskUserQuestionRequest) -> Any:
                return provider.ask(request)

        ctx.register(Plugin(), name="board")
        yield example.BoardDriver(provider)


# Broken providers: each breaks one rule ----------------------------------------------------------


def _fails(suite: type[ProviderConformance], test: str, message: str) -> None:
    instance = suite()
    instance.timeout = 2.0  # type: ignore[misc]
    with pytest.raises(AssertionError, match=message):
        getattr(instance, test)()


def _broken(**methods: Any) -> type[BoardConformance]:
    provider = type("Broken", (board.BoardProvider,), methods)
    return type("BrokenConformance", (BoardConformance,), {"provider_class": provider})


def _answer_changed(change: Any) -> Any:
    def answer(self: Any, key: int, answer: dict[str, Any]) -> None:
        board.BoardProvider.answer(self, key, change(answer))

    return answer


def _each_item(change: Any) -> Any:
    return _answer_changed(lambda answer: {"answers": [change(i) for i in answer["answers"]]})


def test_a_provider_that_drops_other_text_fails_the_text_checks() -> None:
    """Dropping the typed text fails the free-text and Other checks with what came back."""
    suite = _broken(answer=_each_item(lambda item: {**item, "custom": None}))
    expected = re.escape("but returned {'id': 'name', 'selected': []}")
    _fails(suite, "test_free_text_question_returns_the_typed_text", expected)
    _fails(suite, "test_other_on_single_select_replaces_the_pick", "ask\\(\\) should return")
    _fails(suite, "test_other_on_multi_select_adds_to_the_picks", "ask\\(\\) should return")


def test_a_provider_that_mangles_non_ascii_text_fails() -> None:
    """Text that does not come back exactly as typed fails the free-text check."""

    def ascii_only(item: dict[str, Any]) -> dict[str, Any]:
        if item.get("custom"):
            item = {**item, "custom": item["custom"].encode("ascii", "replace").decode()}
        return item

    suite = _broken(answer=_each_item(ascii_only))
    _fails(suite, "test_free_text_question_returns_the_typed_text", "Bun, \\?ber")


def test_a_provider_that_omits_skipped_questions_fails_the_skip_check() -> None:
    """A skip must stay in the answer as {id, selected: []}; omitting it fails."""
    omit = _answer_changed(
        lambda answer: {"answers": [i for i in answer["answers"] if i["selected"] or "custom" in i]}
    )
    _fails(_broken(answer=omit), "test_skip_returns_an_empty_selection", "returned nothing")


def test_a_provider_that_approves_every_plan_fails_keep_planning() -> None:
    """Answering Approve whatever the human chose fails both keep-planning checks."""
    approve = _each_item(lambda item: {"id": item["id"], "selected": ["Approve"]})
    suite = _broken(answer=approve)
    _fails(suite, "test_plan_review_keep_planning_with_feedback", "'selected': \\['Approve'\\]")
    _fails(suite, "test_plan_review_keep_planning_without_feedback", "'selected': \\['Approve'\\]")


def test_a_provider_that_hides_the_plan_fails_the_plan_checks() -> None:
    """A plan review whose plan is not shown fails before the human decides."""

    def hide_detail(self: Any) -> str:
        return "\n".join(
            line for line in board.BoardProvider.board(self).splitlines() if "parser" not in line
        )

    _fails(_broken(board=hide_detail), "test_plan_review_approve", "the plan under review")


def test_a_provider_that_hides_descriptions_fails_the_display_check() -> None:
    """Option descriptions the human never sees fail the display check, naming the words."""

    def no_descriptions(self: Any) -> str:
        return re.sub(r"^(- [^:]*):.*$", r"\1", board.BoardProvider.board(self), flags=re.M)

    _fails(
        _broken(board=no_descriptions),
        "test_shows_header_question_detail_and_options",
        "words are missing: .*'disk-efficient'",
    )


def test_a_provider_that_reports_cancel_as_abort_fails_the_cancel_check() -> None:
    """The human's cancel must be ASK_CANCELLED, not ASK_ABORTED."""

    def close(self: Any, key: int) -> None:
        self.pending[key][1].set_exception(UserQuestionError.aborted())

    suite = _broken(close=close)
    _fails(suite, "test_user_cancel_raises_ask_cancelled", "should raise .*ASK_CANCELLED")
    _fails(suite, "test_plan_review_talk_instead_cancels", "should raise .*ASK_CANCELLED")


async def _keep_on_board(self: Any, request: AskUserQuestionRequest) -> Any:
    key, future = next(self._keys), asyncio.get_running_loop().create_future()
    self.pending[key] = (request, future)
    result = await future  # no finally: a withdrawn question stays on the board
    del self.pending[key]
    return result


def test_a_provider_that_leaves_withdrawn_questions_fails_the_withdrawal_checks() -> None:
    """A question left on screen after an abort or a cancelled caller fails those checks."""
    suite = _broken(ask=_keep_on_board)
    still = "'Which package manager\\?' was still shown"
    _fails(suite, "test_abort_withdraws_the_question", still + ".* after the signal aborted")
    _fails(suite, "test_abort_from_another_thread_withdraws_the_question", still)
    _fails(suite, "test_cancelled_caller_task_withdraws_the_question", still)
    _fails(suite, "test_timeout_withdraws_the_question", still + ".* after the ask's timeout")
    _fails(suite, "test_aborting_one_ask_leaves_the_other_answerable", "still shown")


def test_a_provider_that_gives_every_caller_the_same_answer_fails_concurrency() -> None:
    """Two pending asks must each get their own answer."""

    def answer_all(self: Any, key: int, answer: object) -> None:
        for _, future in self.pending.values():
            future.set_result(answer)

    _fails(
        _broken(answer=answer_all),
        "test_concurrent_asks_each_get_their_own_answer",
        "the caller who asked 'Which fruit for the mascot\\?' got UserQuestionError BAD_ANSWER",
    )


def test_a_provider_that_shows_raw_model_text_fails_the_inert_checks() -> None:
    """Escape and bidi characters passed through to the screen fail the inert checks."""
    raw = _load("board_provider")
    raw.inert = lambda text: text
    suite = type("RawConformance", (BoardConformance,), {"provider_class": raw.BoardProvider})
    _fails(suite, "test_escape_sequences_are_shown_inert", "U\\+001B")
    _fails(suite, "test_bidi_controls_are_shown_inert", "U\\+202E")


def test_a_provider_that_renders_markup_fails_the_markup_check() -> None:
    """Markup a UI acts on (here: tags stripped as a browser would) fails the markup check."""

    def strip_tags(self: Any) -> str:
        return re.sub(r"<[^>]*>", "", board.BoardProvider.board(self))

    _fails(_broken(board=strip_tags), "test_markup_is_shown_as_text", "<b>bold</b>")


def test_a_provider_that_never_shows_the_question_fails_with_the_screen() -> None:
    """A provider that answers without showing anything fails with what ask() returned."""

    async def answer_blind(self: Any, request: AskUserQuestionRequest) -> Any:
        return {"answers": []}

    _fails(
        _broken(ask=answer_blind),
        "test_single_select_returns_the_chosen_option",
        "ask\\(\\) ended with the answer .* before 'Which package manager\\?' was shown",
    )


class _ClosingConformance(BoardConformance):
    closing: Any = None

    @contextlib.asynccontextmanager
    async def connect(self, ctx: HarnessContext) -> AsyncIterator[Any]:
        closing = type(self).closing

        class Plugin:
            @hookimpl
            def dsh_context_closing(self, ctx: HarnessContext) -> Any:
                return closing()

        ctx.register(Plugin(), name="board-closing")
        async with super().connect(ctx) as driver:
            yield driver


def test_a_provider_that_fails_to_close_fails_the_aclose_checks() -> None:
    """A closing hook that raises is logged by aclose(), and the suite reports the log."""

    async def explode() -> None:
        raise RuntimeError("the board's socket is gone")

    suite = type("Exploding", (_ClosingConformance,), {"closing": explode})
    _fails(suite, "test_aclose_after_an_answer", "errors were logged.*failed to close")


def test_a_provider_that_hangs_on_close_fails_the_aclose_checks() -> None:
    """A closing hook that never returns makes the aclose check fail, not hang."""

    async def hang() -> None:
        await asyncio.Event().wait()

    suite = type("Hanging", (_ClosingConformance,), {"closing": hang})
    _fails(suite, "test_aclose_with_a_question_pending", "ctx.aclose\\(\\) did not return")


def test_a_suite_without_connect_says_what_to_implement() -> None:
    """Forgetting connect() fails every check with what to write."""
    with pytest.raises(NotImplementedError, match="must implement connect"):
        ProviderConformance().test_skip_returns_an_empty_selection()


def test_readme_shows_the_example_test_class() -> None:
    """The README's suite class is the one in examples/test_board_provider.py, which runs."""
    readme = (EXAMPLES.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Write a provider", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    suite = [block for block in blocks if "ProviderConformance):" in block]
    assert len(suite) == 1
    assert suite[0] in (EXAMPLES / "test_board_provider.py").read_text(encoding="utf-8")


CHECKS = sorted(name for name in dir(ProviderConformance) if name.startswith("test_"))


def _report(module: Path, cwd: Path) -> tuple[dict[str, str], str]:
    """Run pytest on ``module`` as an author would; each check's outcome, and the output."""
    process = subprocess.run(
        [sys.executable, "-m", "pytest", str(module), "-rA", "-p", "no:cacheprovider", "-q"],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
        check=False,
    )
    found = re.findall(r"^(PASSED|FAILED) \S+::Test\w+::(test_\w+)", process.stdout, re.M)
    return {name: outcome for outcome, name in found}, process.stdout


def test_the_example_reports_a_pass_for_each_check() -> None:
    """pytest on the example's test file reports PASSED for every rule of the contract."""
    report, output = _report(EXAMPLES / "test_board_provider.py", EXAMPLES.parent)
    assert report == dict.fromkeys(CHECKS, "PASSED"), output


def test_the_report_names_each_failed_check(tmp_path: Path) -> None:
    """A provider that leaves withdrawn questions gets a FAILED line for each rule it breaks."""
    module = tmp_path / "test_author.py"
    module.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(Path(__file__).parent)!r})
            from test_conformance import _broken, _keep_on_board

            class TestAuthorsProvider(_broken(ask=_keep_on_board)):
                timeout = 2.0
            """
        ),
        encoding="utf-8",
    )
    report, output = _report(module, tmp_path)
    assert sorted(report) == CHECKS, output
    failed = sorted(name for name, outcome in report.items() if outcome == "FAILED")
    assert failed == [
        "test_abort_from_another_thread_withdraws_the_question",
        "test_abort_withdraws_the_question",
        "test_aborting_one_ask_leaves_the_other_answerable",
        "test_cancelled_caller_task_withdraws_the_question",
        "test_plan_review_talk_instead_cancels",
        "test_timeout_withdraws_the_question",
        "test_user_cancel_raises_ask_cancelled",
    ], output
