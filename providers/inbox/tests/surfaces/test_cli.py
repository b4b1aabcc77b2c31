"""``dsh-inbox`` as installed: list, answer (JSON on stdin), prune; exit statuses and messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _requests import LOGIN, PKG, PKG_OPTIONS_ONLY, pick

from dsh_user_questions_inbox import Inbox, QuestionRecord, State

DSH_INBOX = str(Path(sys.executable).parent / "dsh-inbox")


def run(url: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run the installed dsh-inbox against the store at ``url``."""
    return subprocess.run(
        [DSH_INBOX, "--inbox", url, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_list_json_prints_pending_and_late_records(inbox: Inbox, inbox_url: str) -> None:
    """list --json prints one JSON array: pending records and late ones, each with its id."""
    pending = inbox.add(PKG, harness="h", agent="a1")
    answered = inbox.add(PKG, harness="h")
    late = inbox.add(PKG, harness="h")
    inbox.answer(answered.id, pick("npm"), surface="web")
    inbox.settle(late.id, State.EXPIRED, surface="harness")
    inbox.answer(late.id, pick("npm"), surface="cli")
    done = run(inbox_url, "list", "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [r["id"] for r in listed] == [pending.id, late.id]
    assert listed[0]["state"] == "pending"
    assert listed[0]["agent"] == "a1"
    assert listed[1]["late"] is True
    assert listed[1]["late_answer"] == pick("npm")
    history = json.loads(run(inbox_url, "list", "--json", "--all").stdout)
    assert [r["id"] for r in history] == [pending.id, answered.id, late.id]
    assert history[1]["surface"] == "web"


def test_list_shows_model_text_inert(inbox: Inbox, inbox_url: str) -> None:
    """Question text with terminal escapes, bidi, zero-width and look-alike characters is
    listed exactly as the core's rules.inert_text shows it (the one inert form)."""
    evil = {"questions": [{"id": "q", "question": "Pick\x1b[2J one\u202e now n\u0440m npm\u200b"}]}
    record = inbox.add(evil, harness="h")
    done = run(inbox_url, "list")
    assert done.returncode == 0
    assert "\x1b" not in done.stdout
    assert "\u202e" not in done.stdout
    assert record.id in done.stdout
    assert "Pick<U+001B>[2J one<U+202E> now n<U+0440>m npm<U+200B>" in done.stdout


def test_answer_from_stdin_is_applied_once(inbox: Inbox, inbox_url: str) -> None:
    """The first answer exits 0; a second one exits 3 saying who answered first."""
    record = inbox.add(PKG, harness="h")
    first = run(inbox_url, "answer", record.id, stdin=json.dumps(pick("npm")))
    assert first.returncode == 0, first.stderr
    assert f"answered question {record.id}" in first.stdout
    second = run(
        inbox_url, "answer", record.id, "--surface", "cli:bob", stdin=json.dumps(pick("pnpm"))
    )
    assert second.returncode == 3
    assert "answered by cli" in second.stderr
    stored = inbox.get(record.id)
    assert stored.answer == pick("npm", by=LOGIN)
    assert stored.surface == "cli"


def test_answer_records_the_login_name(inbox: Inbox, inbox_url: str) -> None:
    """Whoever can run the CLI against the store names themselves: their login name."""
    record = inbox.add(PKG, harness="h")
    done = run(inbox_url, "answer", record.id, stdin=json.dumps(pick("npm", by="mallory")))
    assert done.returncode == 0, done.stderr
    assert inbox.get(record.id).answered_by == LOGIN  # type: ignore[union-attr]


def test_a_late_answer_exits_4_and_is_kept(inbox: Inbox, inbox_url: str) -> None:
    """An answer to a withdrawn question exits 4, says it was kept as late, not applied."""
    record = inbox.add(PKG, harness="h")
    inbox.settle(record.id, State.WITHDRAWN, surface="harness")
    done = run(inbox_url, "answer", record.id, stdin=json.dumps(pick("npm")))
    assert done.returncode == 4
    assert "late answer" in done.stderr
    assert inbox.get(record.id).late_answer == pick("npm", by=LOGIN)


def test_an_answer_to_a_closed_question_exits_3(inbox: Inbox, inbox_url: str) -> None:
    """The human closed the question: exit 3, nothing stored."""
    record = inbox.add(PKG, harness="h")
    inbox.settle(record.id, State.CANCELLED, surface="web")
    done = run(inbox_url, "answer", record.id, stdin=json.dumps(pick("npm")))
    assert done.returncode == 3
    assert "closed" in done.stderr
    assert inbox.get(record.id).late is False


@pytest.mark.parametrize(
    ("stdin", "says"),
    [
        ("{not json", "not JSON"),
        (json.dumps(pick("yarn")), '"yarn"'),
        (json.dumps({"answers": [{"id": "pkg", "selected": "npm"}]}), "answers[0].selected"),
    ],
)
def test_an_invalid_answer_exits_2_and_leaves_the_question_pending(
    inbox: Inbox, inbox_url: str, stdin: str, says: str
) -> None:
    """Not JSON, or refused by the rules: exit 2 with the reason; the question stays pending."""
    record = inbox.add(PKG, harness="h")
    done = run(inbox_url, "answer", record.id, stdin=stdin)
    assert done.returncode == 2
    assert says in done.stderr
    assert inbox.get(record.id).state is State.PENDING


def test_an_unknown_id_exits_1(inbox_url: str, inbox: Inbox) -> None:
    """An id the store does not know: exit 1 naming it."""
    done = run(inbox_url, "answer", "no-such", stdin=json.dumps(pick("npm")))
    assert done.returncode == 1
    assert "no-such" in done.stderr


def test_prune_deletes_final_records_past_the_retention(inbox: Inbox, inbox_url: str) -> None:
    """prune --older-than deletes old final records (delivered ones); a bad duration is
    exit 2."""
    keep = inbox.add(PKG, harness="h")
    gone = inbox.add(PKG, harness="h")
    inbox.answer(gone.id, pick("npm"), surface="cli")
    assert inbox.claim_delivery(gone.id)
    assert run(inbox_url, "prune").stdout.strip() == "pruned 0 final records"
    done = run(inbox_url, "prune", "--older-than", "0s")
    assert done.stdout.strip() == "pruned 1 final records"
    assert [r.id for r in inbox.records()] == [keep.id]
    bad = run(inbox_url, "prune", "--older-than", "soon")
    assert bad.returncode == 2
    assert "not a duration" in bad.stderr


def test_a_bad_inbox_url_is_a_clear_error(tmp_path: Path) -> None:
    """An unusable URL: exit 1 saying what is accepted."""
    done = run("mysql://x/y", "list")
    assert done.returncode == 1
    assert "expected sqlite:////absolute/path.db or postgresql://" in done.stderr


def test_show_marks_the_recommended_option_and_colours_a_diff_review(inbox: Inbox) -> None:
    """show: the recommended option is marked; a diff-review's diff is coloured line by line on
    a terminal (added green, removed red), plain otherwise, and the model's own escapes in it
    stay inert."""
    from dsh_user_questions_inbox.cli import render

    wire = {
        "questions": [
            {
                "id": "patch",
                "question": "Apply this patch?",
                "detail": "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old\x1b[2J\n+new",
                "intent": {"kind": "diff-review", "approve": "Apply"},
                "options": [{"label": "Apply", "recommended": True}, {"label": "Reject"}],
            }
        ]
    }
    record = inbox.add(wire, harness="h")
    plain = render(record)
    assert "  - Apply (recommended)" in plain
    assert "\x1b[" not in plain
    coloured = render(record, colour=True)
    assert "    \x1b[32m+new\x1b[0m" in coloured
    assert "    \x1b[31m-old<U+001B>[2J\x1b[0m" in coloured
    assert "\x1b[2J" not in coloured


class TestShowDiff:
    """``dsh-inbox show`` reads a diff-review's diff with the core's one diff parser."""

    def test_a_removed_line_reading_like_a_file_header_is_shown_removed(self, inbox: Inbox) -> None:
        """A removed line ``--- x`` and an added line ``+++ y`` inside a hunk are coloured as
        removed and added (as the web page and the terminal show them), not bold like the
        file headers, which stay bold."""
        from dsh_user_questions_inbox.cli import render

        wire = {
            "questions": [
                {
                    "id": "patch",
                    "question": "Apply this patch?",
                    "detail": "--- a/x.md\n+++ b/x.md\n@@ -1,2 +1,2 @@\n--- x\n+++ y\n ctx\n",
                    "intent": {"kind": "diff-review", "approve": "Apply"},
                    "options": [{"label": "Apply"}, {"label": "Reject"}],
                }
            ]
        }
        coloured = render(inbox.add(wire, harness="h"), colour=True)
        assert "    \x1b[1m--- a/x.md\x1b[0m" in coloured
        assert "    \x1b[1m+++ b/x.md\x1b[0m" in coloured
        assert "    \x1b[36m@@ -1,2 +1,2 @@\x1b[0m" in coloured
        assert "    \x1b[31m--- x\x1b[0m" in coloured
        assert "    \x1b[32m+++ y\x1b[0m" in coloured
        assert "\n     ctx\n" in coloured


def _record(request: dict[str, Any]) -> QuestionRecord:
    """A pending record of ``request`` as the store would hold it (no store needed)."""
    return QuestionRecord(
        id="r1", request=request, agent=None, harness="h", created=0.0, deadline=None,
        state=State.PENDING,
    )  # fmt: skip


class TestShowRendersTheView:
    """``dsh-inbox show`` renders the core's view of each question, never the wire dict."""

    def test_shown_labels_descriptions_previews_and_secret(self) -> None:
        """An option shows its inert label, its description and its preview's text (a list
        keeps its numbers); a question's several lines stay lines; a secret question says its
        answer is typed hidden."""
        from dsh_user_questions_inbox.cli import render

        wire = {
            "questions": [
                {
                    "id": "pkg",
                    "question": "Which one?\nPick \u202ecarefully",
                    "options": [
                        {
                            "label": "npm\x1b[2J",
                            "description": "The default",
                            "preview": "## Steps\n\n3. `npm ci`\n4. test",
                        },
                        {"label": "pnpm"},
                    ],
                },
                {"id": "token", "question": "The token?", "secret": True},
            ]
        }
        shown = render(_record(wire))
        assert "pkg: Which one?\n  Pick <U+202E>carefully\n" in shown
        assert "  - npm<U+001B>[2J: The default\n      preview:\n" in shown
        assert "        ## Steps\n        3. npm ci\n        4. test\n" in shown
        assert "token: The token? (secret: typed hidden)" in shown
        assert "(options only)" not in shown
        assert "\x1b" not in shown
        assert "\u202e" not in shown

    def test_a_request_no_longer_valid_is_shown_as_inert_json(self) -> None:
        """A stored request no version of the rules reads (a record from another version) is
        shown as its inert JSON, not a traceback."""
        from dsh_user_questions_inbox.cli import render

        shown = render(_record({"questions": [{"id": "x", "question": 3, "bad": "\x1b"}]}))
        assert "request (not readable as a question): " in shown
        assert '"bad": "\\u001b"' in shown
        assert "\x1b" not in shown


class TestOptionsOnly:
    """A question with ``allow_other`` false: ``show`` says so, and words are refused."""

    def test_show_says_options_only(self, inbox: Inbox) -> None:
        """show marks the question "(options only)"; a question allowing words is unmarked."""
        from dsh_user_questions_inbox.cli import render

        assert "pkg: Which package manager? (options only)" in render(
            inbox.add(PKG_OPTIONS_ONLY, harness="h")
        )
        assert "(options only)" not in render(inbox.add(PKG, harness="h"))

    def test_piped_words_exit_2_and_a_pick_is_applied(self, inbox: Inbox, inbox_url: str) -> None:
        """Custom text on stdin is refused by the rules (exit 2, the question stays pending);
        an option is then applied."""
        record = inbox.add(PKG_OPTIONS_ONLY, harness="h")
        words = {"answers": [{"id": "pkg", "selected": [], "custom": "bun"}]}
        done = run(inbox_url, "answer", record.id, stdin=json.dumps(words))
        assert done.returncode == 2
        assert "takes only its options (allow_other is false)" in done.stderr
        assert inbox.get(record.id).state is State.PENDING
        assert run(inbox_url, "answer", record.id, stdin=json.dumps(pick("npm"))).returncode == 0
        assert inbox.get(record.id).answer == pick("npm", by=LOGIN)
