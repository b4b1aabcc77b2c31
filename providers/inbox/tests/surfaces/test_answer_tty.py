"""``dsh-inbox answer ID`` on a terminal: the terminal provider's form, in a real pty."""

from __future__ import annotations

import os

import pexpect
from _processes import DSH_INBOX
from _requests import LOGIN, PKG, PKG_OPTIONS_ONLY, pick

from dsh_user_questions_inbox import Inbox, State


def spawn(url: str, question_id: str) -> pexpect.spawn:
    """dsh-inbox answer in a pseudo-terminal, the form in line mode (numbers and text)."""
    env = {**os.environ, "DSH_USER_QUESTIONS_PLAIN": "1", "TERM": "xterm"}
    return pexpect.spawn(
        DSH_INBOX,
        ["--inbox", url, "answer", question_id],
        env=env,
        encoding="utf-8",
        timeout=120,
    )


def test_the_terminal_form_answers_the_question(inbox: Inbox, inbox_url: str) -> None:
    """On a TTY the question is shown as the terminal form; the pick is applied, exit 0."""
    record = inbox.add(PKG, harness="h")
    child = spawn(inbox_url, record.id)
    child.expect("Which package manager")
    child.expect("> ")
    child.sendline("2")
    child.expect(f"answered question {record.id}")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    stored = inbox.get(record.id)
    assert stored.answer == pick("npm", by=LOGIN)
    assert stored.surface == "cli"


def test_the_form_is_withdrawn_when_another_surface_answers_first(
    inbox: Inbox, inbox_url: str
) -> None:
    """Answered on another surface while the form is open: the form goes away, exit 3 naming
    who answered; the other surface's answer stands."""
    record = inbox.add(PKG, harness="h")
    child = spawn(inbox_url, record.id)
    child.expect("> ")
    assert inbox.answer(record.id, pick("pnpm"), surface="web").applied
    child.expect(f"question {record.id} was answered by web while you answered")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 3
    assert inbox.get(record.id).answer == pick("pnpm")


def test_a_question_that_is_not_pending_gets_no_form(inbox: Inbox, inbox_url: str) -> None:
    """An already answered question: no form, exit 3 with the reason."""
    record = inbox.add(PKG, harness="h")
    inbox.settle(record.id, State.CANCELLED, surface="web")
    child = spawn(inbox_url, record.id)
    child.expect("is cancelled")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 3


class TestOptionsOnlyOnATerminal:
    """The terminal form on a question with ``allow_other`` false takes options only."""

    def test_typed_words_are_refused_then_a_pick_applies(
        self, inbox: Inbox, inbox_url: str
    ) -> None:
        """Typed words are refused with the way to answer; the next line's pick is applied."""
        record = inbox.add(PKG_OPTIONS_ONLY, harness="h")
        child = spawn(inbox_url, record.id)
        child.expect("Answer: a number 1-2; an empty line skips.")
        child.expect("> ")
        child.sendline("bun")
        child.expect("is not one of the options")
        child.expect("> ")
        child.sendline("2")
        child.expect(f"answered question {record.id}")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        assert inbox.get(record.id).answer == pick("npm", by=LOGIN)


class TestTypedAnswersOnATerminal:
    """Typed questions (issue 36) answered in the terminal form of ``dsh-inbox answer``."""

    def test_a_bad_number_is_refused_naming_the_rule_then_a_good_one_applies(
        self, inbox: Inbox, inbox_url: str
    ) -> None:
        field = {"type": "number", "min": 1, "max": 10}
        record = inbox.add(
            {"questions": [{"id": "n", "question": "How many?", "input": field}]}, harness="h"
        )
        child = spawn(inbox_url, record.id)
        child.expect("a number between 1 and 10")
        child.expect("> ")
        child.sendline("11")
        child.expect("10")
        child.expect("> ")
        child.sendline("4")
        child.expect(f"answered question {record.id}")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        assert inbox.get(record.id).answer == {
            "answers": [{"id": "n", "selected": [], "value": 4}],
            "answered_by": LOGIN,
        }

    def test_an_uploaded_file_goes_into_the_store_not_this_machine(
        self, inbox: Inbox, inbox_url: str, tmp_path
    ) -> None:
        """The form copies the file, then it moves into the store for the asker (wherever it
        is): the record names the store's copy and nothing stays in this uploads folder."""
        source = tmp_path / "notes.txt"
        source.write_text("notes")
        local = tmp_path / "cli-uploads"
        field = {"type": "upload", "max_count": 1}
        record = inbox.add(
            {"questions": [{"id": "f", "question": "Send notes", "input": field}]}, harness="h"
        )
        env = {
            **os.environ,
            "DSH_USER_QUESTIONS_PLAIN": "1",
            "TERM": "xterm",
            "DSH_USER_QUESTIONS_UPLOADS": str(local),
        }
        child = pexpect.spawn(
            DSH_INBOX, ["--inbox", inbox_url, "answer", record.id], env=env, encoding="utf-8"
        )
        child.expect("> ")
        child.sendline(str(source))
        child.expect(f"answered question {record.id}")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        (stored,) = inbox.get(record.id).answer["answers"][0]["value"]
        assert stored["path"].startswith("/dsh-inbox-upload/")
        assert stored["name"] == "notes.txt"
        assert [p for p in local.rglob("*") if p.is_file()] == []
