"""The conformance suite passes a conforming provider and catches each breach of the contract.

The conforming provider is the README's example (examples/board_provider.py) with its driver;
each broken provider below breaks one rule, and the suite's test for that rule must fail
with a message naming the breach.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import logging
import os
import re
import subprocess
import sys
import textwrap
import unicodedata
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dsh_user_questions import AskUserQuestionRequest, UserQuestionError, hookimpl
from dsh_user_questions.conformance import ProviderConformance
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.providing import receipt
from dsh_user_questions.rules import INPUT_TYPES, inert_text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


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
    input_types = frozenset(INPUT_TYPES)

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


async def _keep_on_board(self: Any, request: AskUserQuestionRequest) -> Any:
    key, future = next(self._keys), asyncio.get_running_loop().create_future()
    self.pending[key] = (request, future)
    result = await future  # no finally: a withdrawn question stays on the board
    del self.pending[key]
    return result


def _own_inert(text: str, multiline: bool = False) -> str:
    """The example provider's own inert function of the second release: Cc and Cf only."""
    return "".join(
        f"<U+{ord(c):04X}>" if c != "\\n" and unicodedata.category(c) in ("Cc", "Cf") else c
        for c in text
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


class TestCloseChecks:
    """A provider that fails or hangs on close fails the aclose checks."""

    def test_a_provider_that_fails_to_close_fails_the_aclose_checks(self) -> None:
        """A closing hook that raises is logged by aclose(), and the suite reports the log."""

        async def explode() -> None:
            raise RuntimeError("the board's socket is gone")

        suite = type("Exploding", (_ClosingConformance,), {"closing": explode})
        _fails(suite, "test_aclose_after_an_answer", "errors were logged.*failed to close")

    def test_a_provider_that_hangs_on_close_fails_the_aclose_checks(self) -> None:
        """A closing hook that never returns makes the aclose check fail, not hang."""

        async def hang() -> None:
            await asyncio.Event().wait()

        suite = type("Hanging", (_ClosingConformance,), {"closing": hang})
        _fails(suite, "test_aclose_with_a_question_pending", "ctx.aclose\\(\\) did not return")


# The third release's checks ----------------------------------------------------------------------


def _cleaned(item: dict[str, Any]) -> dict[str, Any]:
    if item.get("custom"):
        text = "".join(c for c in item["custom"] if unicodedata.category(c) not in ("Cc", "Cf"))
        item = {**item, "custom": text[:100]}
    return item


class TestTextChecks:
    """A provider that shows the request's text wrongly fails the text, inert and markup checks."""

    def test_a_provider_that_drops_other_text_fails_the_text_checks(self) -> None:
        """Dropping the typed text fails the free-text and Other checks with what came back."""
        suite = _broken(answer=_each_item(lambda item: {**item, "custom": None}))
        expected = re.escape("but returned {'id': 'name', 'selected': []}")
        _fails(suite, "test_free_text_question_returns_the_typed_text", expected)
        _fails(suite, "test_other_on_single_select_replaces_the_pick", "ask\\(\\) should return")
        _fails(suite, "test_other_on_multi_select_adds_to_the_picks", "ask\\(\\) should return")

    def test_a_provider_that_mangles_non_ascii_text_fails(self) -> None:
        """Text that does not come back exactly as typed fails the free-text check."""

        def ascii_only(item: dict[str, Any]) -> dict[str, Any]:
            if item.get("custom"):
                item = {**item, "custom": item["custom"].encode("ascii", "replace").decode()}
            return item

        suite = _broken(answer=_each_item(ascii_only))
        _fails(suite, "test_free_text_question_returns_the_typed_text", "Bun, \\?ber")

    def test_a_provider_that_hides_descriptions_fails_the_display_check(self) -> None:
        """Option descriptions the human never sees fail the display check, naming the words."""

        def no_descriptions(self: Any) -> str:
            return re.sub(r"^(- [^:]*):.*$", r"\1", board.BoardProvider.board(self), flags=re.M)

        _fails(
            _broken(board=no_descriptions),
            "test_shows_header_question_detail_and_options",
            "words are missing: .*'disk-efficient'",
        )

    def test_a_provider_that_shows_raw_model_text_fails_the_inert_checks(self) -> None:
        """Escape and bidi characters passed through to the screen fail the inert checks."""
        raw = _load("board_provider")
        raw.inert_text = lambda text, multiline=False: text
        suite = type("RawConformance", (BoardConformance,), {"provider_class": raw.BoardProvider})
        _fails(suite, "test_escape_sequences_are_shown_inert", "U\\+001B")
        _fails(suite, "test_bidi_controls_are_shown_inert", "U\\+202E")
        _fails(suite, "test_lookalikes_and_zero_width_are_shown_with_stand_ins", "U\\+200B")

    def test_a_provider_with_its_own_stand_ins_fails_the_inert_checks(self) -> None:
        """Stand-ins other than rules.inert_text's (a look-alike kept, a tab as is) fail."""
        own = _load("board_provider")
        own.inert_text = _own_inert
        suite = type("OwnConformance", (BoardConformance,), {"provider_class": own.BoardProvider})
        _fails(
            suite,
            "test_lookalikes_and_zero_width_are_shown_with_stand_ins",
            "not shown as characters: .*'n<U\\+0440>m'",
        )
        pictures = _load("board_provider")
        pictures.inert_text = lambda text, multiline=False: inert_text(
            text, multiline=multiline
        ).replace("<U+001B>", "\u241b")  # the terminal's ESC of the second release
        suite = type("Pictures", (BoardConformance,), {"provider_class": pictures.BoardProvider})
        _fails(suite, "test_escape_sequences_are_shown_inert", "'Hdr<U\\+001B>\\[7mINV'")

    def test_a_provider_that_renders_markup_fails_the_markup_check(self) -> None:
        """Markup a UI acts on (here: tags stripped as a browser would) fails the markup check."""

        def strip_tags(self: Any) -> str:
            return re.sub(r"<[^>]*>", "", board.BoardProvider.board(self))

        _fails(_broken(board=strip_tags), "test_markup_is_shown_as_text", "<b>bold</b>")

    def test_a_provider_that_never_shows_the_question_fails_with_the_screen(self) -> None:
        """A provider that answers without showing anything fails with what ask() returned."""

        async def answer_blind(self: Any, request: AskUserQuestionRequest) -> Any:
            return {"answers": []}

        _fails(
            _broken(ask=answer_blind),
            "test_single_select_returns_the_chosen_option",
            "ask\\(\\) ended with the answer .* before 'Which package manager\\?' was shown",
        )

    def test_a_provider_that_repairs_refused_text_fails_the_answer_rule_checks(self) -> None:
        """Handing back refused custom text changed (controls stripped, cut short) fails."""
        suite = _broken(answer=_each_item(_cleaned))
        for test in (
            "test_custom_text_with_control_characters_is_never_an_answer",
            "test_custom_text_with_bidi_controls_is_never_an_answer",
            "test_over_long_custom_text_is_never_an_answer",
        ):
            _fails(
                suite,
                test,
                "which rules.check_answer refuses, but ask\\(\\) returned an answer with"
                " the text changed",
            )

    def test_a_provider_that_refuses_too_much_fails_the_allowed_text_check(self) -> None:
        """A surface stricter than rules.check_answer (no right-to-left mark) fails."""
        suite = _broken(answer=_each_item(_cleaned))
        _fails(
            suite,
            "test_custom_text_every_rule_allows_comes_back_unchanged",
            "ask\\(\\) should return",
        )


class ReceiptBoard(board.BoardProvider):  # type: ignore[misc]
    """The board, telling the human what became of each answer; ``honest`` uses the receipt."""

    honest = True

    def __init__(self) -> None:
        super().__init__()
        self.said: dict[tuple[object, ...], bool] = {}

    async def ask(self, request: AskUserQuestionRequest) -> Any:
        taken = receipt(request)
        answer = await board.BoardProvider.ask(self, request)
        key = request.questions
        if self.honest:
            taken.add_done_callback(lambda ok: self.said.__setitem__(key, ok))
        else:
            self.said[key] = True  # "Answer sent", whatever became of it
        return answer


class ReceiptDriver(example.BoardDriver):  # type: ignore[misc]
    async def receipt(self, request: AskUserQuestionRequest) -> bool | None:
        said: bool | None = self.provider.said.get(request.questions)
        return said


class ReceiptConformance(BoardConformance):
    provider_class: Any = ReceiptBoard

    @contextlib.asynccontextmanager
    async def connect(self, ctx: HarnessContext) -> AsyncIterator[Any]:
        provider = self.provider_class()
        dispose = ctx.user_questions.register_provider(provider)
        try:
            yield ReceiptDriver(provider)
        finally:
            dispose()


class TestAReceiptBoardConforms(ReceiptConformance):
    """A board that says "taken" only on the core's receipt passes every check."""


class TestReceiptChecks:
    """Receipts: a provider always saying taken, a driver without receipt."""

    def test_a_provider_that_always_says_taken_fails_the_receipt_check(self) -> None:
        """Saying "Answer sent" although the caller was cancelled as it landed fails."""
        liar = type("Liar", (ReceiptBoard,), {"honest": False})
        suite = type("LiarConformance", (ReceiptConformance,), {"provider_class": liar})
        _fails(
            suite,
            "test_an_answer_landing_as_the_caller_is_cancelled_is_not_reported_taken",
            "told the human their answer was taken",
        )

    def test_a_driver_without_receipt_fails_the_receipt_check_saying_what_to_add(self) -> None:
        """The receipt check cannot judge a surface it cannot read: it says what to write."""

        class NoReceipt(example.BoardDriver):  # type: ignore[misc]
            receipt = None

        class Suite(BoardConformance):
            @contextlib.asynccontextmanager
            async def connect(self, ctx: HarnessContext) -> AsyncIterator[Any]:
                provider = board.BoardProvider()
                dispose = ctx.user_questions.register_provider(provider)
                try:
                    yield NoReceipt(provider)
                finally:
                    dispose()

        _fails(
            Suite,
            "test_an_answer_landing_as_the_caller_is_cancelled_is_not_reported_taken",
            "give the driver an async receipt\\(request\\) method",
        )


class TestSecretChecks:
    """A provider that echoes, logs or stores a secret fails the secret check."""

    def test_a_provider_that_echoes_the_secret_fails_the_secret_check(self) -> None:
        """A board that keeps the answer on show after answering fails the secret check."""

        def echo(self: Any, key: int, answer: dict[str, Any]) -> None:
            self.echoed = [*getattr(self, "echoed", []), str(answer)]
            board.BoardProvider.answer(self, key, answer)

        def shown(self: Any) -> str:
            return board.BoardProvider.board(self) + "\n".join(getattr(self, "echoed", []))

        _fails(
            _broken(answer=echo, board=shown),
            "test_a_secret_is_not_shown_logged_or_stored_after_answering",
            "its text is in the screen after answering",
        )

    def test_a_provider_that_logs_the_secret_fails_the_secret_check(self) -> None:
        """An answer logged at DEBUG by the provider fails the secret check, naming the record."""

        def log(self: Any, key: int, answer: dict[str, Any]) -> None:
            logging.getLogger("board").debug("answer %s", answer)
            board.BoardProvider.answer(self, key, answer)

        _fails(
            _broken(answer=log),
            "test_a_secret_is_not_shown_logged_or_stored_after_answering",
            "its text is in log records: .*board: answer",
        )

    def test_a_provider_that_stores_the_secret_fails_the_secret_check(self) -> None:
        """With a driver's stored(), a secret kept at rest fails the secret check."""

        class Storing(ReceiptBoard):
            def answer(self, key: int, answer: object) -> None:
                self.disk = getattr(self, "disk", "") + json.dumps(answer)
                board.BoardProvider.answer(self, key, answer)

        class StoreDriver(ReceiptDriver):
            async def stored(self) -> str:
                return str(getattr(self.provider, "disk", ""))

        class StoringConformance(ReceiptConformance):
            provider_class = Storing

            @contextlib.asynccontextmanager
            async def connect(self, ctx: HarnessContext) -> AsyncIterator[Any]:
                provider = self.provider_class()
                dispose = ctx.user_questions.register_provider(provider)
                try:
                    yield StoreDriver(provider)
                finally:
                    dispose()

        _fails(
            StoringConformance,
            "test_a_secret_is_not_shown_logged_or_stored_after_answering",
            "what the provider keeps at rest",
        )


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


class TestReport:
    """What a provider author sees: opt-outs, missing methods, the docs' class, pytest's report."""

    def test_an_opt_out_is_reported_as_a_skip_with_its_reason(self, tmp_path: Path) -> None:
        """pytest reports the opted-out check as SKIPPED with the stated reason."""
        module = tmp_path / "test_opt_out.py"
        module.write_text(
            textwrap.dedent(
                f"""
            import sys
            sys.path.insert(0, {str(Path(__file__).parent)!r})
            from test_conformance import BoardConformance

            class TestBlank(BoardConformance):
                opt_out = {{"test_skip_returns_an_empty_selection": "  "}}

            class TestTypo(BoardConformance):
                opt_out = {{"test_skip_returns_an_empty": "no skip"}}

            class TestFine(BoardConformance):
                opt_out = {{"test_skip_returns_an_empty_selection": "no skip control here"}}
            """
            ),
            encoding="utf-8",
        )
        process = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                f"{module}",
                "-rA",
                "-p",
                "no:cacheprovider",
                "-q",
                "-k",
                "test_skip_returns_an_empty_selection",
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=300,
            check=False,
            env={**os.environ, "COLUMNS": "300"},
        )
        out = process.stdout
        assert re.search(r"SKIPPED .*opted out: no skip control here", out), out
        assert re.search(r"\b1 skipped, \d+ deselected, 2 errors\b", out), out
        assert "Failed: opt_out['test_skip_returns_an_empty_selection'] must say why" in out, out
        assert "names no test of the conformance suite: ['test_skip_returns_an_empty']" in out, out

    def test_a_suite_without_connect_says_what_to_implement(self) -> None:
        """Forgetting connect() fails every check with what to write."""
        with pytest.raises(NotImplementedError, match="must implement connect"):
            ProviderConformance().test_skip_returns_an_empty_selection()

    def test_the_provider_page_shows_the_example_test_class(self) -> None:
        """docs/writing-a-provider.md's suite class is the one in examples/test_board_provider.py,
        which runs."""
        page = (EXAMPLES.parent / "docs" / "writing-a-provider.md").read_text(encoding="utf-8")
        blocks = re.findall(r"```python\n(.*?)```", page, re.S)
        suite = [block for block in blocks if "ProviderConformance):" in block]
        assert len(suite) == 1
        assert suite[0] in (EXAMPLES / "test_board_provider.py").read_text(encoding="utf-8")

    def test_the_example_reports_a_pass_for_each_check(self) -> None:
        """pytest on the example's test file reports PASSED for every rule of the contract."""
        report, output = _report(EXAMPLES / "test_board_provider.py", EXAMPLES.parent)
        assert report == dict.fromkeys(CHECKS, "PASSED"), output

    def test_the_report_names_each_failed_check(self, tmp_path: Path) -> None:
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
            "test_aclose_with_a_question_pending",
            "test_cancelled_caller_task_withdraws_the_question",
            "test_plan_review_talk_instead_cancels",
            "test_timeout_withdraws_the_question",
            "test_user_cancel_raises_ask_cancelled",
        ], output


class TestAnswerChecks:
    """A provider that answers wrongly fails the skip, plan, cancel, withdrawal and concurrency
    checks."""

    def test_a_provider_that_omits_skipped_questions_fails_the_skip_check(self) -> None:
        """A skip must stay in the answer as {id, selected: []}; omitting it fails."""
        omit = _answer_changed(
            lambda answer: {
                "answers": [i for i in answer["answers"] if i["selected"] or "custom" in i]
            }
        )
        _fails(_broken(answer=omit), "test_skip_returns_an_empty_selection", "returned nothing")

    def test_a_provider_that_rounds_numbers_fails_the_number_check(self) -> None:
        """A typed value handed back changed (a number made a string) fails its check."""

        def as_text(self: Any, key: int, answer: dict[str, Any]) -> None:
            # Past the board's own check: the service's rules must still refuse it.
            items = [{**i, "value": str(i["value"])} for i in answer["answers"]]
            self.pending[key][1].set_result({"answers": items})

        _fails(_broken(answer=as_text), "test_number_input_returns_the_number", "not a number")

    def test_a_provider_that_hides_the_unit_fails_the_number_check(self) -> None:
        """A number question shown without its unit fails before the human answers."""

        def without_unit(self: Any) -> str:
            return board.BoardProvider.board(self).replace("(number GB", "(number")

        _fails(_broken(board=without_unit), "test_number_input_returns_the_number", "'GB'")

    def test_a_provider_that_approves_every_plan_fails_keep_planning(self) -> None:
        """Answering Approve whatever the human chose fails both keep-planning checks."""
        approve = _each_item(lambda item: {"id": item["id"], "selected": ["Approve"]})
        suite = _broken(answer=approve)
        _fails(suite, "test_plan_review_keep_planning_with_feedback", "'selected': \\['Approve'\\]")
        _fails(
            suite, "test_plan_review_keep_planning_without_feedback", "'selected': \\['Approve'\\]"
        )

    def test_a_provider_that_hides_the_plan_fails_the_plan_checks(self) -> None:
        """A plan review whose plan is not shown fails before the human decides."""

        def hide_detail(self: Any) -> str:
            return "\n".join(
                line
                for line in board.BoardProvider.board(self).splitlines()
                if "parser" not in line
            )

        _fails(_broken(board=hide_detail), "test_plan_review_approve", "the plan under review")

    def test_a_provider_that_reports_cancel_as_abort_fails_the_cancel_check(self) -> None:
        """The human's cancel must be ASK_CANCELLED, not ASK_ABORTED."""

        def close(self: Any, key: int) -> None:
            self.pending[key][1].set_exception(UserQuestionError.aborted())

        suite = _broken(close=close)
        _fails(suite, "test_user_cancel_raises_ask_cancelled", "should raise .*ASK_CANCELLED")
        _fails(suite, "test_plan_review_talk_instead_cancels", "should raise .*ASK_CANCELLED")

    def test_a_provider_that_leaves_withdrawn_questions_fails_the_withdrawal_checks(self) -> None:
        """A question left on screen after an abort or a cancelled caller fails those checks."""
        suite = _broken(ask=_keep_on_board)
        still = "'Which package manager\\?' was still shown"
        _fails(suite, "test_abort_withdraws_the_question", still + ".* after the signal aborted")
        _fails(suite, "test_abort_from_another_thread_withdraws_the_question", still)
        _fails(suite, "test_cancelled_caller_task_withdraws_the_question", still)
        _fails(suite, "test_timeout_withdraws_the_question", still + ".* after the ask's timeout")
        _fails(suite, "test_aborting_one_ask_leaves_the_other_answerable", "still shown")

    def test_a_provider_that_gives_every_caller_the_same_answer_fails_concurrency(self) -> None:
        """Two pending asks must each get their own answer."""

        def answer_all(self: Any, key: int, answer: object) -> None:
            for _, future in self.pending.values():
                future.set_result(answer)

        _fails(
            _broken(answer=answer_all),
            "test_concurrent_asks_each_get_their_own_answer",
            "the caller who asked 'Which fruit for the mascot\\?' got UserQuestionError BAD_ANSWER",
        )

    def test_a_provider_that_picks_the_recommended_option_on_skip_fails(self) -> None:
        """Turning a skip into the recommended option fails the recommended check."""

        def recommend(self: Any, key: int, answer: dict[str, Any]) -> None:
            request = self.pending[key][0]
            items = []
            for item in answer["answers"]:
                question = next(q for q in request.questions if q.id == item["id"])
                picks = [o.label for o in question.options if o.recommended]
                if not item["selected"] and "custom" not in item and picks:
                    item = {**item, "selected": picks}
                items.append(item)
            board.BoardProvider.answer(self, key, {"answers": items})

        _fails(
            _broken(answer=recommend),
            "test_a_recommended_option_is_never_picked_for_the_human",
            "'selected': \\['node'\\]",
        )

    def test_a_provider_that_takes_words_on_an_options_only_question_fails(self) -> None:
        """A board handing back the human's words where allow_other is false fails that check."""
        suite = _broken(answer=lambda self, key, answer: self.pending[key][1].set_result(answer))
        _fails(
            suite,
            "test_no_free_text_when_allow_other_is_false",
            "handed the words back as custom text",
        )
