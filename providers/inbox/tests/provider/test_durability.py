"""Durable runs: every answer reaches the run that asked, once; store faults are errors."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _postgres import PostgresServer
from _processes import DSH_INBOX, Harness, dsh_inbox_answer, pending
from _processes import until as wait_until
from _requests import LOGIN, PKG, pick
from _waits import pending_one, until
from dsh_user_questions import (
    AskUserQuestionItem,
    AskUserQuestionRequest,
    StoreError,
    UserQuestionError,
    UserQuestionService,
)

from dsh_user_questions_inbox import Inbox, State, open_inbox
from dsh_user_questions_inbox.provider import InboxProvider

SECRET = "s3cr3t-\u00e9-token"
SECRET_ANSWER = {"answers": [{"id": "token", "custom": SECRET}]}


def _sqlite(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'inbox.db'}"


def _sealable(inbox: Inbox, question_id: str) -> bool:
    """Whether the asker registered the key a secret for ``question_id`` is sealed to."""
    try:
        return bool(
            inbox._engine.read(
                "SELECT 1 FROM dsh_inbox_seals WHERE question_id = :id", {"id": question_id}
            )
        )
    except StoreError:  # no table yet
        return False


class TestSecretsSurviveARestart:
    """A secret answered while its harness was down reaches the restarted harness."""

    @pytest.mark.flaky(reruns=2)
    def test_kill_9_answer_restart_with_the_default_configuration(
        self, inbox: Inbox, inbox_url: str, harnesses: list[Harness], tmp_path: Path
    ) -> None:
        """A harness with the default (per-process) label asks a keyed secret and is killed
        with kill -9; the secret is answered; a new process asking that key gets the clear
        text, once; the store holds only the sealed form."""
        env = {"XDG_STATE_HOME": str(tmp_path / "state")}
        first = Harness(inbox_url, None, "secret", "run-1:call-1", env=env)
        harnesses.append(first)
        wait_until(lambda: inbox.records(state="pending"), "the secret question")
        (record,) = inbox.records(state="pending")
        wait_until(lambda: _sealable(inbox, record.id), "the key to seal to")
        first.kill()
        assert dsh_inbox_answer(inbox_url, record.id, SECRET_ANSWER).wait()[0] == 0
        stored = inbox.get(record.id)
        assert stored is not None
        assert stored.answer is not None
        assert stored.answer["answers"][0]["custom"].startswith("sealed:")
        second = Harness(inbox_url, None, "secret", "run-1:call-1", env=env)
        harnesses.append(second)
        event = second.next(("answer", "error"))
        assert event == {
            "event": "answer",
            "answer": {
                "answers": [{"id": "token", "selected": [], "custom": SECRET}],
                "answered_by": LOGIN,  # dsh-inbox answer records who ran it
            },
        }
        second.next("done")
        second.finish()
        assert [r.id for r in inbox.records()] == [record.id]
        assert inbox.get(record.id).delivered  # type: ignore[union-attr]
        assert SECRET not in json.dumps(inbox.get(record.id).to_dict())  # type: ignore[union-attr]
        key_files = list((tmp_path / "state" / "dsh-user-questions" / "seal-keys").iterdir())
        assert [oct(path.stat().st_mode & 0o777) for path in key_files] == ["0o600"]

    async def test_a_secret_that_could_never_arrive_is_refused_at_once(
        self, inbox: Inbox, inbox_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Where the key cannot be kept (the state directory cannot be made), a secret
        answered once its harness stopped is refused (BAD_ANSWER, saying why): the human
        knows at once, and nothing is stored."""
        blocker = tmp_path / "not-a-folder"
        blocker.write_text("")
        monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
        asker = InboxProvider(inbox_url, harness="ephemeral")
        request = AskUserQuestionRequest(
            questions=[AskUserQuestionItem(id="token", question="Token?", secret=True)]
        )
        asking = asyncio.ensure_future(asker.ask(request))
        record = await pending_one(inbox)
        await asyncio.to_thread(asker.close)
        with pytest.raises(UserQuestionError):
            await asking
        with pytest.raises(UserQuestionError) as caught:
            inbox.answer(record.id, SECRET_ANSWER, surface="cli")
        assert caught.value.code == "BAD_ANSWER"
        assert "no longer running" in caught.value.message
        assert inbox.get(record.id).late_answer is None  # type: ignore[union-attr]


class TestACleanStopReattaches:
    """A run stopped with SIGINT and restarted keeps its question: same id, same link."""

    @pytest.mark.flaky(reruns=2)
    def test_sigint_restart_then_the_notified_id_is_answered_once(
        self, inbox: Inbox, inbox_url: str, harnesses: list[Harness]
    ) -> None:
        """SIGINT stops a harness asking with a key: its question stays pending; the
        restarted run re-attaches to that record; the human answers the id they were told
        of (exit 0, not "withdrawn"); the run gets it once and no second record is made."""
        first = Harness(inbox_url, "run-a", "key", "thread-3:call-1")
        harnesses.append(first)
        (record,) = pending(inbox, "run-a", 1)
        first.next("ready")
        first.interrupt()
        assert inbox.get(record.id).state is State.PENDING  # type: ignore[union-attr]
        second = Harness(inbox_url, "run-b", "key", "thread-3:call-1")
        harnesses.append(second)
        pending(inbox, "run-b", 1)
        assert dsh_inbox_answer(inbox_url, record.id, pick("npm")).wait()[0] == 0
        expected = {"event": "answer", "answer": pick("npm", by=LOGIN)}
        assert second.next(("answer", "error")) == expected
        second.next("done")
        second.finish()
        assert [r.id for r in inbox.records()] == [record.id]
        final = inbox.get(record.id)
        assert final is not None
        assert final.state is State.ANSWERED
        assert final.delivered

    async def test_an_abort_still_withdraws_a_keyed_question(
        self, inbox: Inbox, service: UserQuestionService
    ) -> None:
        """Only a stop keeps a keyed question: aborting its ask's signal withdraws it, and
        cancelling the asking task (the process stopping) leaves it pending."""
        from dsh_user_questions.harness import AbortController

        controller = AbortController()
        request = AskUserQuestionRequest.from_dict(PKG, key="k", signal=controller.signal)
        asking = asyncio.ensure_future(service.ask(request))
        record = await pending_one(inbox)
        controller.abort()
        with pytest.raises(UserQuestionError) as caught:
            await asking
        assert caught.value.code == "ASK_ABORTED"
        await until(lambda: inbox.get(record.id).state is State.WITHDRAWN, "the withdrawal")
        stopping = asyncio.ensure_future(
            service.ask(AskUserQuestionRequest.from_dict(PKG, key="k2"))
        )
        kept = await pending_one(inbox)
        stopping.cancel()
        with pytest.raises(asyncio.CancelledError):
            await stopping
        await until(lambda: inbox.lease_of(kept.id)[0] is None, "the release")
        assert inbox.get(kept.id).state is State.PENDING  # type: ignore[union-attr]


class TestStaleLeases:
    """A lease whose holder stopped beating does not block the key for ever."""

    def test_a_stale_heartbeat_frees_the_key(self, inbox: Inbox) -> None:
        """A key leased by a provider of another host is refused while its heartbeat is
        fresh, and taken once the heartbeat is older than the staleness bound."""
        from dsh_user_questions_inbox._lease import STALE_SECONDS

        request = AskUserQuestionRequest.from_dict(PKG, key="leased")
        inbox.beat("elsewhere:1:abc")
        record = inbox.add(request, harness="far", lease="elsewhere:1:abc")
        with pytest.raises(UserQuestionError) as caught:
            inbox.add(request, harness="near", lease="here:2:def")
        assert caught.value.code == "ASKED_ELSEWHERE"
        inbox._engine.write(
            "UPDATE dsh_inbox_leases SET beat = :old WHERE holder = :holder",
            {"old": time.time() - STALE_SECONDS - 1, "holder": "elsewhere:1:abc"},
        )
        taken = inbox.add(request, harness="near", lease="here:2:def")
        assert taken.id == record.id
        assert inbox.lease_of(record.id)[0] == "here:2:def"


class TestStoreFaults:
    """A store that vanished is an error at once, never a hang or a new empty store."""

    @pytest.mark.parametrize("how", ["deleted", "moved"])
    async def test_a_waiting_ask_fails_when_its_sqlite_file_goes(
        self, tmp_path: Path, how: str
    ) -> None:
        """Deleting or moving the store under a waiting ask fails it with STORE_UNUSABLE
        (StoreError), naming the file (the bound below only guards against a hang)."""
        url = _sqlite(tmp_path)
        path = tmp_path / "inbox.db"
        provider = InboxProvider(url, harness="h")
        try:
            asking = asyncio.ensure_future(provider.ask(AskUserQuestionRequest.from_dict(PKG)))
            with open_inbox(url) as view:
                await pending_one(view)
            for file in await asyncio.to_thread(lambda: list(tmp_path.glob("inbox.db*"))):
                if how == "deleted":
                    file.unlink()
                else:
                    file.rename(tmp_path / f"moved-{file.name}")
            with pytest.raises(StoreError) as caught:
                await asyncio.wait_for(asking, 30)
            assert caught.value.code == "STORE_UNUSABLE"
            assert str(path) in caught.value.message
            assert not path.exists()
        finally:
            await asyncio.to_thread(provider.close)

    async def test_a_waiting_ask_fails_when_its_postgresql_database_is_dropped(
        self, postgres: PostgresServer
    ) -> None:
        """Dropping the database under a waiting ask fails it with STORE_UNUSABLE (a
        permanent error on reconnecting), never a silent wait (the bound guards a hang)."""
        import psycopg

        url = postgres.new_database()
        dbname = url.split("/")[3].split("?")[0]
        provider = InboxProvider(url, harness="h")
        try:
            asking = asyncio.ensure_future(provider.ask(AskUserQuestionRequest.from_dict(PKG)))
            with open_inbox(url) as view:
                await pending_one(view)

            def drop() -> None:
                with psycopg.connect(postgres.url("postgres"), autocommit=True) as conn:
                    conn.execute(f'DROP DATABASE "{dbname}" WITH (FORCE)')

            await asyncio.to_thread(drop)
            with pytest.raises(StoreError) as caught:
                await asyncio.wait_for(asking, 30)
            assert caught.value.code == "STORE_UNUSABLE"
            assert dbname in caught.value.message
        finally:
            await asyncio.to_thread(provider.close)

    def test_dsh_inbox_makes_no_store_where_one_vanished(self, tmp_path: Path) -> None:
        """dsh-inbox list on a configured file that is gone: exit 1, one line saying how a
        store is made, and no new file; dsh-inbox init makes it."""
        url = _sqlite(tmp_path)
        gone = subprocess.run(
            [DSH_INBOX, "--inbox", url, "list"], capture_output=True, text=True, timeout=60
        )
        assert gone.returncode == 1
        assert "there is no store here" in gone.stderr
        assert "dsh-inbox init" in gone.stderr
        assert not (tmp_path / "inbox.db").exists()
        made = subprocess.run(
            [DSH_INBOX, "--inbox", url, "init"], capture_output=True, text=True, timeout=60
        )
        assert made.returncode == 0, made.stderr
        assert (tmp_path / "inbox.db").exists()

    def test_serve_makes_a_first_store_but_not_one_that_vanished(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """``create="first"`` (dsh-inbox serve) makes a store where none was made before; once
        made and then deleted, serve exits 1 saying how to make a new one, and makes no file;
        ``dsh-inbox init`` makes it again."""
        state = tmp_path / "state"
        monkeypatch.setenv("XDG_STATE_HOME", str(state))
        url = _sqlite(tmp_path)
        open_inbox(url, create="first").close()
        assert (tmp_path / "inbox.db").exists()
        (tmp_path / "inbox.db").unlink()
        with pytest.raises(StoreError) as caught:
            open_inbox(url, create="first")
        assert caught.value.code == "STORE_UNUSABLE"
        assert "dsh-inbox init" in caught.value.message
        env = {**os.environ, "XDG_STATE_HOME": str(state)}
        served = subprocess.run(
            [DSH_INBOX, "--inbox", url, "serve", "--port", "0"],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert served.returncode == 1
        assert "the store made here before is gone" in served.stderr
        assert not (tmp_path / "inbox.db").exists()
        made = subprocess.run(
            [DSH_INBOX, "--inbox", url, "init"], capture_output=True, text=True, timeout=60, env=env
        )
        assert made.returncode == 0, made.stderr
        assert (tmp_path / "inbox.db").exists()

    def test_a_malformed_setting_is_refused_when_the_provider_loads(self) -> None:
        """DSH_USER_QUESTIONS_INBOX=mysql://... fails load_entrypoints() with STORE_UNUSABLE
        naming the variable and the accepted forms (in a fresh process: the plugin module
        is loaded there)."""
        code = (
            "from dsh_user_questions import StoreError\n"
            "from dsh_user_questions.harness import HarnessContext\n"
            "try:\n"
            "    HarnessContext().load_entrypoints()\n"
            "except StoreError as err:\n"
            "    print(err.code, err.message)\n"
            "else:\n"
            "    print('loaded')\n"
        )
        env = {
            **os.environ,
            "DSH_USER_QUESTIONS_INBOX": "mysql://me@db/questions",
            "DSH_USER_QUESTIONS_PROVIDER": "inbox",
        }
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
        )
        assert done.stdout.startswith("STORE_UNUSABLE "), done.stdout + done.stderr
        assert "DSH_USER_QUESTIONS_INBOX='mysql://me@db/questions'" in done.stdout
        assert "sqlite:////" in done.stdout
        assert "postgresql://" in done.stdout


class TestClosedPipe:
    """``dsh-inbox list --json | head`` ends quietly."""

    def test_a_reader_that_goes_away_is_no_traceback(self, tmp_path: Path) -> None:
        """The reader closes the pipe after a few bytes of a large listing: exit 0, nothing
        on stderr."""
        url = _sqlite(tmp_path)
        wide = json.loads(json.dumps(PKG))
        wide["questions"][0]["question"] = "Which one? " + "x" * 4000
        with open_inbox(url) as inbox:
            for _ in range(100):
                inbox.add(wide, harness="h")
        process = subprocess.Popen(
            [DSH_INBOX, "--inbox", url, "list", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdout is not None
        assert process.stderr is not None
        assert process.stdout.read(10).startswith(b"[")
        process.stdout.close()
        with process.stderr:
            err = process.stderr.read().decode()
        assert process.wait(timeout=60) == 0, err
        assert err == ""
