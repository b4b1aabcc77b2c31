"""Diff review: the question, checking the diff, reading the verdict, review_diff, the example."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionIntent,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    UserQuestionError,
    UserQuestionErrorCode,
    UserQuestionService,
    rules,
)
from dsh_user_questions.diff_review import (
    DiffReviewDecision,
    DiffReviewOutcome,
    check_diff,
    diff_review_question,
    read_diff_review,
    review_diff,
)
from dsh_user_questions.harness import AbortController
from dsh_user_questions.plan_review import PlanReviewOutcome, read_plan_review
from dsh_user_questions.testing import WAIT_FOR_ABORT, ScriptedProvider

DIFF = """\
--- a/app.py
+++ b/app.py
@@ -1,3 +1,3 @@
 import os
-print("hello")
+print("hello, world")
 os.exit(0)
"""


def items(*answer_items: AskUserQuestionAnswerItem) -> AskUserQuestionAnswer:
    """An answer of the given items."""
    return AskUserQuestionAnswer(answers=answer_items)


def review(selected: tuple[str, ...] = (), custom: str | None = None) -> AskUserQuestionAnswerItem:
    """An answer item for the diff-review question."""
    return AskUserQuestionAnswerItem(id="diff-review", selected=selected, custom=custom)


# The question ----------------------------------------------------------------------------------


def test_question_has_the_documented_shape() -> None:
    """id, header, question, the diff as detail, Apply / Don't apply, intent approving Apply."""
    question = diff_review_question(DIFF)
    assert question.id == "diff-review"
    assert question.header == "Diff review"
    assert question.question == "Apply this change?"
    assert question.detail == DIFF
    assert question.options == (
        AskUserQuestionOption("Apply", "Apply the change exactly as shown."),
        AskUserQuestionOption(
            "Don't apply", "Leave everything as it is; your feedback goes back to the model."
        ),
    )
    assert question.intent == AskUserQuestionIntent("diff-review", "Apply")
    assert question.multi_select is False


def test_a_title_names_what_changes() -> None:
    """With a title the question names it."""
    assert diff_review_question(DIFF, title="app.py").question == "Apply this change to app.py?"


def test_the_question_passes_the_request_rules_and_reads_as_a_diff_review() -> None:
    """check_request lets it through and is_diff_review (not is_plan_review) says yes."""
    question = diff_review_question(DIFF)
    rules.check_request(AskUserQuestionRequest(questions=[question]))
    assert rules.is_diff_review(question)
    assert not rules.is_plan_review(question)


def test_the_question_round_trips_through_the_wire_form() -> None:
    """The question survives to_dict and from_dict unchanged, intent and diff included."""
    question = diff_review_question(DIFF, title="app.py")
    wire = question.to_dict()
    assert wire["intent"] == {"kind": "diff-review", "approve": "Apply"}
    assert AskUserQuestionItem.from_dict(wire) == question


@pytest.mark.parametrize(
    "diff",
    [
        DIFF,
        "diff --git a/x b/x\nindex 1..2 100644\n" + DIFF,
        "--- x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n",
        "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n",
        DIFF.replace("\n", "\r\n"),
    ],
)
def test_unified_diffs_are_accepted(diff: str) -> None:
    """Any text with a ---/+++ pair and a hunk header is a diff, kept as given."""
    check_diff(diff)
    assert diff_review_question(diff).detail == diff


@pytest.mark.parametrize(
    ("diff", "reason"),
    [
        ("", "the diff is empty"),
        ("  \n\t\n", "the diff is empty"),
        ("just text", 'no "--- " line followed by a "+++ " line'),
        ("+++ b/x\n--- a/x\n@@ -1 +1 @@\n", 'no "--- " line followed by a "+++ " line'),
        ("--- a/x\n@@ -1 +1 @@\n+++ b/x\n", 'no "--- " line followed by a "+++ " line'),
        ("--- a/x\n+++ b/x\n-a\n+b\n", 'no hunk header after the "+++ " line'),
        ("--- a/x\n+++ b/x\n@@ one two @@\n", 'no hunk header after the "+++ " line'),
        ("@@ -1 +1 @@\n--- a/x\n+++ b/x\n", 'no hunk header after the "+++ " line'),
    ],
)
def test_anything_else_is_a_value_error_saying_what_is_missing(diff: str, reason: str) -> None:
    """Text that is not a unified diff is a ValueError naming the missing part."""
    with pytest.raises(ValueError, match="a diff must be a non-empty unified diff") as caught:
        diff_review_question(diff)
    assert str(caught.value).endswith(f"({reason})")


def test_a_diff_must_be_text() -> None:
    """A diff that is not a str is a TypeError."""
    with pytest.raises(TypeError, match="diff must be a str, got bytes"):
        diff_review_question(DIFF.encode())  # type: ignore[arg-type]


# Reading the verdict ---------------------------------------------------------------------------


def test_apply_alone_is_applied() -> None:
    """Exactly one diff-review item selecting exactly Apply, without custom, applies."""
    outcome = read_diff_review(items(review(("Apply",))))
    assert outcome == DiffReviewOutcome(approved=True)
    assert outcome.decision is DiffReviewDecision.APPLY


@pytest.mark.parametrize(
    ("answer", "feedback"),
    [
        pytest.param(items(review(("Don't apply",))), None, id="dont-apply"),
        pytest.param(items(review((), "Keep the comma out")), "Keep the comma out", id="custom"),
        pytest.param(items(review(("Apply",), "but later")), "but later", id="apply-with-custom"),
        pytest.param(items(review()), None, id="skipped"),
        pytest.param(items(), None, id="no-items"),
        pytest.param(items(review(("Apply",)), review(("Apply",))), None, id="two-items"),
        pytest.param(
            items(AskUserQuestionAnswerItem(id="plan-review", selected=("Apply",))),
            None,
            id="other-id",
        ),
    ],
)
def test_anything_else_is_not_applied(answer: AskUserQuestionAnswer, feedback: str | None) -> None:
    """Any other answer is not applied, with the custom text as feedback."""
    outcome = read_diff_review(answer)
    assert outcome == DiffReviewOutcome(approved=False, feedback=feedback)
    assert outcome.decision is DiffReviewDecision.DONT_APPLY


def test_plan_and_diff_verdicts_are_read_alike() -> None:
    """The two reviews share one reading: the same answer shape gives the same verdict."""
    for selected, custom in [(("Apply",), None), ((), "why"), ((), None)]:
        diff = read_diff_review(items(review(selected, custom)))
        approve = tuple("Approve" if label == "Apply" else label for label in selected)
        plan = read_plan_review(
            items(AskUserQuestionAnswerItem(id="plan-review", selected=approve, custom=custom))
        )
        assert (diff.approved, diff.feedback) == (plan.approved, plan.feedback)
    assert not isinstance(DiffReviewOutcome(approved=True), PlanReviewOutcome)


def test_outcome_rejects_contradictions() -> None:
    """An outcome cannot be both applied and talk-instead, nor applied with feedback."""
    with pytest.raises(ValueError, match="talk-instead"):
        DiffReviewOutcome(approved=True, talk_instead=True)
    with pytest.raises(ValueError, match="approved outcome carries no feedback"):
        DiffReviewOutcome(approved=True, feedback="x")


def test_decision_values_are_plain_strings() -> None:
    """The decisions compare equal to their plain names."""
    assert [str(d) for d in DiffReviewDecision] == ["apply", "dont-apply", "talk-instead"]


# review_diff -----------------------------------------------------------------------------------


async def test_review_diff_applied(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """review_diff asks the diff-review question (with the title) and returns Apply."""
    scripted_provider.push(items(review(("Apply",))))
    outcome = await review_diff(user_questions, DIFF, title="app.py")
    assert outcome.decision is DiffReviewDecision.APPLY
    [request] = scripted_provider.requests
    assert request.questions == (diff_review_question(DIFF, title="app.py"),)


async def test_review_diff_dont_apply_with_feedback(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """review_diff returns don't apply with the user's words."""
    scripted_provider.push(items(review((), "Use logging, not print")))
    outcome = await review_diff(user_questions, DIFF)
    assert outcome == DiffReviewOutcome(approved=False, feedback="Use logging, not print")


async def test_review_diff_cancelled_is_talk_instead(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """The provider's ASK_CANCELLED becomes the talk-instead outcome, not an error."""
    scripted_provider.push(UserQuestionError.cancelled())
    outcome = await review_diff(user_questions, DIFF)
    assert outcome == DiffReviewOutcome(approved=False, talk_instead=True)
    assert outcome.decision is DiffReviewDecision.TALK_INSTEAD


async def test_review_diff_abort_propagates(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """An abort during the review propagates as ASK_ABORTED."""
    scripted_provider.push(WAIT_FOR_ABORT)
    controller = AbortController()
    controller.abort()
    with pytest.raises(UserQuestionError) as caught:
        await review_diff(user_questions, DIFF, signal=controller.signal)
    assert caught.value.code == UserQuestionErrorCode.ASK_ABORTED


async def test_review_diff_without_a_provider(user_questions: UserQuestionService) -> None:
    """Without a provider, NO_PROVIDER propagates."""
    with pytest.raises(UserQuestionError) as caught:
        await review_diff(user_questions, DIFF)
    assert caught.value.code == UserQuestionErrorCode.NO_PROVIDER


async def test_review_diff_rejects_a_bad_diff_before_asking(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """A text that is no diff is a ValueError and the provider is never asked."""
    with pytest.raises(ValueError, match="unified diff"):
        await review_diff(user_questions, "please apply my change")
    assert scripted_provider.requests == []


# The example permission plugin -----------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _example() -> Any:
    path = EXAMPLES / "edit_permission.py"
    spec = importlib.util.spec_from_file_location("edit_permission", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


edit_permission = _example()


async def test_example_applies_an_edit_the_human_applies(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider, tmp_path: Path
) -> None:
    """The edit is shown as a difflib diff of the file, and written once applied."""
    (tmp_path / "app.py").write_text('import os\nprint("hello")\n', encoding="utf-8")
    scripted_provider.push(items(review(("Apply",))))
    permission = edit_permission.EditPermission(user_questions, tmp_path)
    said = await permission.apply("app.py", 'import os\nprint("hello, world")\n')
    assert said == "Applied the edit to app.py."
    assert (tmp_path / "app.py").read_text(encoding="utf-8") == 'import os\nprint("hello, world")\n'
    [request] = scripted_provider.requests
    [question] = request.questions
    assert question.question == "Apply this change to app.py?"
    assert question.detail == (
        "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n import os\n"
        '-print("hello")\n+print("hello, world")\n'
    )


async def test_example_leaves_the_file_when_not_applied(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider, tmp_path: Path
) -> None:
    """Don't apply (with feedback) and talk instead leave the file untouched and say why."""
    path = tmp_path / "app.py"
    path.write_text("a\n", encoding="utf-8")
    permission = edit_permission.EditPermission(user_questions, tmp_path)
    scripted_provider.push(items(review((), "keep it")), UserQuestionError.cancelled())
    said = await permission.apply("app.py", "b\n")
    assert said == "The user did not apply the edit to app.py. Their feedback: keep it"
    said = await permission.apply("app.py", "b\n")
    assert said == "The user closed the review of app.py to talk first; nothing was applied."
    assert path.read_text(encoding="utf-8") == "a\n"


async def test_example_new_file_and_missing_final_newline(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider, tmp_path: Path
) -> None:
    """A new file without a final newline still makes a unified diff the review accepts."""
    scripted_provider.push(items(review(("Apply",))))
    permission = edit_permission.EditPermission(user_questions, tmp_path)
    assert await permission.apply("docs/new.txt", "one\ntwo") == "Applied the edit to docs/new.txt."
    assert (tmp_path / "docs" / "new.txt").read_text(encoding="utf-8") == "one\ntwo"
    detail = scripted_provider.requests[0].questions[0].detail
    assert detail is not None
    assert detail.endswith("+two\n\\ No newline at end of file\n")
    assert re.search(r"^@@ -0,0 \+1,2 @@$", detail, re.M)


async def test_example_asks_nothing_for_no_change(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider, tmp_path: Path
) -> None:
    """An edit that changes nothing is not a question."""
    (tmp_path / "same.txt").write_text("x\n", encoding="utf-8")
    permission = edit_permission.EditPermission(user_questions, tmp_path)
    assert "nothing to apply" in await permission.apply("same.txt", "x\n")
    assert scripted_provider.requests == []
