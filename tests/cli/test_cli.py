"""``dsh-ask`` run as a real subprocess, with real scripted provider distributions installed."""

from __future__ import annotations

import json
import os
import pty
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tool_cli_env import (
    LOG_ENV,
    SCRIPT_ENV,
    build_site,
    cli_command,
    cli_env,
    install_provider,
    run_cli,
)

from dsh_user_questions._cli import _clone_root, install_hint

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PKG_ARGS = json.dumps(
    {
        "questions": [
            {
                "id": "pkg",
                "question": "Which package manager?",
                "options": [{"label": "pnpm"}, {"label": "npm"}],
            }
        ]
    }
)
PKG_ANSWER = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}


@pytest.fixture(scope="module")
def env_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the hermetic site and the installed provider folders."""
    return tmp_path_factory.mktemp("dsh-ask")


@pytest.fixture(scope="module")
def site(env_root: Path) -> Path:
    """Symlinks to this package and its dependencies, without any provider."""
    return build_site(env_root)


@pytest.fixture(scope="module")
def alpha(env_root: Path) -> Path:
    """The scripted provider distribution ``alpha``, pip-installed to its own folder."""
    return install_provider(env_root, "alpha")


@pytest.fixture(scope="module")
def beta(env_root: Path) -> Path:
    """A second scripted provider distribution, ``beta``."""
    return install_provider(env_root, "beta")


class Cli:
    """Runs the CLI with a provider script and reads what the providers were asked."""

    def __init__(self, site: Path, providers: list[Path], tmp_path: Path) -> None:
        self.site = site
        self.providers = providers
        self.tmp_path = tmp_path
        self.log = tmp_path / "asked.jsonl"

    def env(self, steps: list[dict[str, Any]], **extra: str) -> dict[str, str]:
        return {SCRIPT_ENV: json.dumps(steps), LOG_ENV: str(self.log), **extra}

    def __call__(
        self,
        *args: str,
        steps: list[dict[str, Any]] | None = None,
        stdin: str | None = None,
        **env: str,
    ) -> subprocess.CompletedProcess[str]:
        return run_cli(
            self.site,
            self.providers,
            args,
            cwd=self.tmp_path,
            stdin=stdin,
            env=self.env(steps or [], **env),
        )

    def asked(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        lines = self.log.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines]


@pytest.fixture
def cli(site: Path, alpha: Path, tmp_path: Path) -> Cli:
    """The CLI with the one provider ``alpha`` installed."""
    return Cli(site, [alpha], tmp_path)


@pytest.fixture
def cli_two(site: Path, alpha: Path, beta: Path, tmp_path: Path) -> Cli:
    """The CLI with two providers installed, ``alpha`` and ``beta``."""
    return Cli(site, [alpha, beta], tmp_path)


@pytest.fixture
def cli_none(site: Path, tmp_path: Path) -> Cli:
    """The CLI with no provider installed."""
    return Cli(site, [], tmp_path)


# Answered: exit 0 ------------------------------------------------------------------------------


# Invalid input: exit 2 -------------------------------------------------------------------------


class TestAnswers:
    """dsh-ask reads the request from stdin or a file and prints the answer as compact JSON."""

    def test_answer_from_stdin_is_compact_json_on_stdout(self, cli: Cli) -> None:
        """Arguments on stdin are asked through the provider and the answer printed as compact
        JSON."""
        result = cli(stdin=PKG_ARGS, steps=[{"answer": PKG_ANSWER}])
        assert (result.returncode, result.stdout, result.stderr) == (
            0,
            '{"answers":[{"id":"pkg","selected":["pnpm"]}]}\n',
            "",
        )
        [asked] = cli.asked()
        assert asked["provider"] == "alpha"
        assert asked["request"] == {
            "questions": [
                {
                    "id": "pkg",
                    "question": "Which package manager?",
                    "options": [{"label": "pnpm"}, {"label": "npm"}],
                    "multi_select": False,
                }
            ]
        }

    def test_plain_option_asks_providers_for_line_mode(self, cli: Cli) -> None:
        """--plain sets DSH_USER_QUESTIONS_PLAIN=1 for the provider; without it nothing is set."""
        assert cli("--plain", stdin=PKG_ARGS, steps=[{"answer": PKG_ANSWER}]).returncode == 0
        assert cli(stdin=PKG_ARGS, steps=[{"answer": PKG_ANSWER}]).returncode == 0
        assert [asked["plain"] for asked in cli.asked()] == ["1", None]

    def test_answer_from_file_keeps_non_ascii_and_custom(self, cli: Cli) -> None:
        """A FILE argument is read, and the answer keeps non-ASCII text and custom words."""
        answer = {
            "answers": [
                {"id": "checks", "selected": ["ruff", "pytest"], "custom": "and vérifier docs"},
                {"id": "name", "selected": [], "custom": "café"},
            ]
        }
        result = cli(str(EXAMPLES / "project-setup.json"), steps=[{"answer": answer}])
        assert result.returncode == 0, result.stderr
        assert result.stdout == (
            '{"answers":[{"id":"checks","selected":["ruff","pytest"],"custom":"and vérifier docs"},'
            '{"id":"name","selected":[],"custom":"café"}]}\n'
        )
        assert cli.asked()[0]["request"]["questions"][0]["multi_select"] is True

    @pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.json")))
    def test_every_example_is_valid_input(self, cli: Cli, example: str) -> None:
        """Each file under examples/ is accepted and asked (here the user skips everything)."""
        result = cli(str(EXAMPLES / example), steps=[{"answer": {"answers": []}}])
        assert (result.returncode, result.stdout, result.stderr) == (0, '{"answers":[]}\n', "")

    def test_dash_reads_stdin(self, cli: Cli) -> None:
        """``-`` as FILE reads standard input."""
        result = cli("-", stdin=PKG_ARGS, steps=[{"answer": PKG_ANSWER}])
        assert result.returncode == 0
        assert json.loads(result.stdout) == PKG_ANSWER

    def test_a_file_saved_from_to_dict_is_asked_as_it_was_written(self, cli: Cli) -> None:
        """make_request(make_question(multi_select=True)).to_dict() saved to a file works as is."""
        from dsh_user_questions.testing import make_question, make_request

        request = make_request(make_question(multi_select=True), key="t1.call-7", timeout=300)
        (cli.tmp_path / "q.json").write_text(json.dumps(request.to_dict()), encoding="utf-8")
        answer = {"answers": [{"id": "pkg", "selected": ["pnpm", "npm"]}]}
        result = cli("q.json", steps=[{"answer": answer}])
        assert (result.returncode, result.stderr) == (0, ""), result.stderr
        assert json.loads(result.stdout) == answer
        assert cli.asked()[0]["request"] == request.to_dict()

    def test_the_full_wire_form_is_read(self, cli: Cli) -> None:
        """detail, intent, recommended, secret, key, timeout and multiSelect all reach the
        provider."""
        wire = {
            "questions": [
                {
                    "id": "plan",
                    "question": "Leave plan mode?",
                    "detail": "# Plan",
                    "intent": {"kind": "plan-review", "approve": "Approve"},
                    "options": [
                        {"label": "Approve", "recommended": True},
                        {"label": "Keep planning"},
                    ],
                    "multiSelect": False,
                },
                {"id": "token", "question": "Token?", "secret": True},
            ],
            "key": "k-1",
            "timeout": 120,
        }
        (cli.tmp_path / "q.json").write_text(json.dumps(wire), encoding="utf-8")
        answer = {"answers": [{"id": "plan", "selected": ["Approve"]}]}
        result = cli("q.json", steps=[{"answer": answer}])
        assert result.returncode == 0, result.stderr
        asked = cli.asked()[0]["request"]
        assert asked["key"] == "k-1"
        assert asked["timeout"] == 120
        first, second = asked["questions"]
        assert first["detail"] == "# Plan"
        assert first["intent"] == {"kind": "plan-review", "approve": "Approve"}
        assert first["options"][0] == {"label": "Approve", "recommended": True}
        assert second["secret"] is True


class TestBadInput:
    """Input that is not a request the rules take: exit 2, saying what is wrong."""

    def test_a_request_the_rules_refuse_is_an_input_error(self, cli: Cli) -> None:
        """Labels that read the same (BAD_QUESTION) exit 2 with the rule's message; nobody is
        asked."""
        bad = {
            "questions": [
                {"id": "a", "question": "Q?", "options": [{"label": "x"}, {"label": "X"}]}
            ]
        }
        result = cli(stdin=json.dumps(bad))
        assert (result.returncode, result.stdout) == (2, "")
        assert result.stderr == (
            'Error: question "a" option 1 "X" reads the same as option 0 "x" (labels must differ'
            " ignoring case and spaces)\n"
        )
        assert cli.asked() == []

    def test_a_files_question_takes_its_root_from_workspace(self, cli: Cli) -> None:
        """--workspace DIR roots a files question and lists its files; without it, such a
        question is refused (exit 2) and nobody is asked."""
        (cli.tmp_path / "ws").mkdir()
        (cli.tmp_path / "ws" / "a.md").write_text("a", encoding="utf-8")
        files = {"questions": [{"id": "f", "question": "Which?", "input": {"type": "files"}}]}
        refused = cli(stdin=json.dumps(files))
        assert refused.returncode == 2
        assert "of type files without a root" in refused.stderr
        assert cli.asked() == []
        answer = {"answers": [{"id": "f", "value": ["a.md"]}]}
        result = cli("--workspace", "ws", stdin=json.dumps(files), steps=[{"answer": answer}])
        assert (result.returncode, result.stdout) == (
            0,
            '{"answers":[{"id":"f","selected":[],"value":["a.md"]}]}\n',
        )
        asked = cli.asked()[0]["request"]["questions"][0]["input"]
        assert asked["root"] == str((cli.tmp_path / "ws").resolve())
        assert asked["candidates"] == ["a.md"]

    def test_input_that_is_not_the_wire_form_exits_2_naming_the_path(self, cli: Cli) -> None:
        """An unknown property exits 2 and names where it is."""
        bad = {"questions": [{"id": "a", "question": "Q?", "options": [{"label": "x"}], "oops": 1}]}
        result = cli(stdin=json.dumps(bad))
        assert (result.returncode, result.stdout) == (2, "")
        assert result.stderr.startswith("Error: invalid input: questions[0].oops: unknown property")
        assert cli.asked() == []

    def test_not_json_exits_2(self, cli: Cli) -> None:
        """Input that is not JSON exits 2 and names the parse error."""
        result = cli(stdin="{questions")
        assert result.returncode == 2
        assert result.stderr == (
            "Error: invalid arguments: not valid JSON: Expecting property name enclosed in double"
            " quotes: line 1 column 2 (char 1)\n"
        )

    def test_missing_file_exits_2(self, cli: Cli) -> None:
        """A FILE that cannot be read exits 2 and says why."""
        result = cli("no-such-file.json")
        assert (result.returncode, result.stdout) == (2, "")
        assert result.stderr == "Error: cannot read no-such-file.json: No such file or directory\n"

    def test_bad_timeout_is_a_usage_error(self, cli: Cli) -> None:
        """A non-positive --timeout is rejected by the argument parser with exit 2."""
        result = cli("--timeout", "-1", stdin=PKG_ARGS)
        assert result.returncode == 2
        assert "argument --timeout: must be a positive number of seconds: '-1'" in result.stderr


# Other failures: exit 1 ------------------------------------------------------------------------


# Cancelled, aborted, interrupted: exit 130 ----------------------------------------------------


# --list-providers ------------------------------------------------------------------------------


# --demo ----------------------------------------------------------------------------------------

DEMO_ANSWER = {
    "answers": [
        {"id": "pkg", "selected": ["uv"]},
        {"id": "checks", "selected": ["ruff", "pytest"]},
    ]
}


class TestDemo:
    """dsh-ask demo: two questions, then a plan review."""

    def test_demo_asks_two_questions_then_a_plan_review(self, cli: Cli) -> None:
        """--demo plays one tool call of two questions and an approved plan review, exit 0."""
        approve = {"answers": [{"id": "plan-review", "selected": ["Approve"]}]}
        result = cli("--demo", steps=[{"answer": DEMO_ANSWER}, {"answer": approve}])
        assert (result.returncode, result.stderr) == (0, "")
        lines = result.stdout.splitlines()
        assert lines[0] == "agent: I will set up a new Python project. Two decisions are yours."
        assert lines[1].startswith('agent -> ask_user_question {"questions":[{"id":"pkg"')
        assert lines[2:] == [
            'tool  -> {"answers":[{"id":"pkg","selected":["uv"]},'
            '{"id":"checks","selected":["ruff","pytest"]}]}',
            "agent: Here is my plan; may I leave plan mode and carry it out?",
            "plan review -> approved",
            "agent: Leaving plan mode; starting with step 1.",
        ]
        first, second = (record["request"] for record in cli.asked())
        assert [q["id"] for q in first["questions"]] == ["pkg", "checks"]
        [review] = second["questions"]
        assert review["intent"] == {"kind": "plan-review", "approve": "Approve"}
        assert review["detail"].startswith("# Set up the project\n")
        assert "with uv." in review["detail"]
        assert "Run ruff, pytest on every commit" in review["detail"]

    def test_demo_keep_planning_shows_feedback(self, cli: Cli) -> None:
        """--demo reports "keep planning" with the human's feedback."""
        keep = {"answers": [{"id": "plan-review", "selected": [], "custom": "add docs"}]}
        result = cli("--demo", steps=[{"answer": DEMO_ANSWER}, {"answer": keep}])
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[-2:] == [
            "plan review -> keep planning: add docs",
            "agent: Staying in plan mode to revise the plan.",
        ]

    def test_demo_cancelled_plan_review_is_talk_instead(self, cli: Cli) -> None:
        """--demo turns a cancelled plan review into "talk instead", still exit 0."""
        result = cli("--demo", steps=[{"answer": DEMO_ANSWER}, {"cancel": True}])
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[-2:] == [
            "plan review -> talk instead",
            "agent: Stopping here; tell me what you have in mind.",
        ]

    def test_demo_cancelled_questions_exit_130(self, cli: Cli) -> None:
        """--demo exits 130 when the human cancels the first questions."""
        result = cli("--demo", steps=[{"cancel": True}])
        assert (result.returncode, result.stderr) == (
            130,
            "Error: the user cancelled ask_user_question\n",
        )
        assert (
            result.stdout.splitlines()[-1] == "tool  -> Error: the user cancelled ask_user_question"
        )

    def test_demo_without_provider_exits_1(self, cli_none: Cli) -> None:
        """--demo with no provider installed exits 1 with the install hint."""
        result = cli_none("--demo")
        assert result.returncode == 1
        assert result.stderr.endswith(f"{install_hint()}\n")


# The installed console script ------------------------------------------------------------------


class TestExitStatuses:
    """Each outcome has its exit status, and the help names them."""

    def test_not_interactive_has_its_own_exit_status(self, cli: Cli) -> None:
        """NOT_INTERACTIVE exits 3 with its message, never reported as cancelled (130)."""
        result = cli(stdin=PKG_ARGS, steps=[{"not_interactive": True}])
        assert (result.returncode, result.stdout) == (3, "")
        assert result.stderr.startswith("Error: the user cannot be reached from here")

    def test_help_names_every_exit_status(self, cli: Cli) -> None:
        """dsh-ask --help lists 3 for NOT_INTERACTIVE and the wire form of FILE."""
        result = cli("--help")
        assert result.returncode == 0
        assert "3 nobody can be asked from here (NOT_INTERACTIVE)" in result.stdout
        assert "to_dict()" in result.stdout

    def test_provider_crash_exits_1(self, cli: Cli) -> None:
        """A provider's own exception exits 1 with its type and message, no traceback."""
        result = cli(stdin=PKG_ARGS, steps=[{"crash": "screen gone"}])
        assert (result.returncode, result.stdout, result.stderr) == (
            1,
            "",
            "Error: the provider failed: RuntimeError: screen gone\n",
        )

    def test_bad_answer_exits_1(self, cli: Cli) -> None:
        """An answer naming an option never offered is BAD_ANSWER, exit 1."""
        answer = {"answers": [{"id": "pkg", "selected": ["yarn"]}]}
        result = cli(stdin=PKG_ARGS, steps=[{"answer": answer}])
        assert (result.returncode, result.stdout) == (1, "")
        assert result.stderr.startswith("Error: the user-questions provider gave a bad answer: ")

    def test_cancelled_exits_130(self, cli: Cli) -> None:
        """The human closing the question exits 130 with the cancel message."""
        result = cli(stdin=PKG_ARGS, steps=[{"cancel": True}])
        assert (result.returncode, result.stdout, result.stderr) == (
            130,
            "",
            "Error: the user cancelled ask_user_question\n",
        )

    def test_timeout_exits_124(self, cli: Cli) -> None:
        """--timeout ends an ask nobody answers with ASK_TIMED_OUT: exit 124, like timeout(1)."""
        result = cli("--timeout", "0.3", stdin=PKG_ARGS, steps=[{"hang": True}])
        assert (result.returncode, result.stdout, result.stderr) == (
            124,
            "",
            "Error: the user did not answer ask_user_question in time (no answer within 0.3 s)\n",
        )

    def test_a_huge_timeout_still_lets_the_answer_through(self, cli: Cli) -> None:
        """--timeout 1e10 (beyond what a thread can wait at once) neither fails nor hangs."""
        result = cli("--timeout", "1e10", stdin=PKG_ARGS, steps=[{"answer": PKG_ANSWER}])
        assert result.returncode == 0, result.stderr

    def test_interrupt_exits_130(self, cli: Cli) -> None:
        """Ctrl-C (SIGINT) while the provider waits exits 130."""
        if sys.platform == "win32":
            pytest.skip("SIGINT to a child is POSIX-only")
        arguments = cli.tmp_path / "pkg.json"
        arguments.write_text(PKG_ARGS, encoding="utf-8")
        process = subprocess.Popen(
            cli_command([str(arguments)]),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cli.tmp_path,
            env=cli_env(cli.site, cli.providers, cli.env([{"hang": True}])),
            # A run started in the background by a non-interactive shell ignores SIGINT, and the
            # child would inherit that: give it the default disposition, as a terminal would.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        try:
            deadline = time.monotonic() + 30
            while not cli.asked():  # wait until the provider holds the question
                assert time.monotonic() < deadline, "the provider was never asked"
                time.sleep(0.05)
            process.send_signal(signal.SIGINT)
            stdout, stderr = process.communicate(timeout=30)
        finally:
            if process.poll() is None:  # never leave the CLI behind
                process.kill()
                process.communicate()
        assert (process.returncode, stdout, stderr) == (130, "", "Error: interrupted\n")

    @staticmethod
    def _help(lang: str, **extra: str) -> subprocess.CompletedProcess[str]:
        script = shutil.which("dsh-ask", path=str(Path(sys.executable).parent))
        if script is None:
            pytest.skip("dsh-ask is not installed in this environment (run through tox)")
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("DSH_USER_QUESTIONS_", "LC_")) and k not in ("LANG", "LANGUAGE")
        }
        env.update(LANG=lang, COLUMNS="80", **extra)
        return subprocess.run(
            [script, "--help"], capture_output=True, text=True, timeout=60, env=env, check=False
        )

    def test_console_script_help(self) -> None:
        """The installed ``dsh-ask`` console script prints its usage and the exit codes."""
        result = self._help("C.UTF-8")
        assert result.returncode == 0
        assert result.stdout.startswith("usage: dsh-ask [-h] [--timeout SECONDS] [--provider NAME]")
        flat = " ".join(result.stdout.split())  # as read across the wrapped lines
        assert "124 no answer within --timeout SECONDS; 130 cancelled, aborted or interrupted." in (
            flat
        )

    @pytest.mark.parametrize("lang", ["zh_CN.UTF-8", "en_US.UTF-8"])
    def test_console_script_help_in_chinese(self, lang: str) -> None:
        """LANG=zh_CN.UTF-8 (or DSH_USER_QUESTIONS_LANG=zh_CN over an English LANG): the usage,
        the section titles, the options' help and the exit statuses are Chinese."""
        extra = {} if lang.startswith("zh") else {"DSH_USER_QUESTIONS_LANG": "zh_CN"}
        result = self._help(lang, **extra)
        assert result.returncode == 0
        assert result.stdout.startswith("用法: dsh-ask [-h] [--timeout SECONDS]")
        assert "\n选项:\n  -h, --help         显示此帮助信息并退出\n" in result.stdout
        joined = "".join(result.stdout.split())
        assert "124在--timeoutSECONDS内没有回答；130已取消、中止或中断。" in joined  # noqa: RUF001


class TestProviderChoice:
    """Which provider answers: none, two, --provider, the environment, --list-providers."""

    def test_no_provider_says_what_to_install(self, cli_none: Cli) -> None:
        """With no provider installed, exit 1 and the error names the package to install."""
        result = cli_none(stdin=PKG_ARGS)
        assert (result.returncode, result.stdout) == (1, "")
        assert result.stderr == (
            f"Error: no user-questions provider is registered; {install_hint()}\n"
        )

    def test_two_providers_exit_1_naming_both_and_how_to_choose(self, cli_two: Cli) -> None:
        """Two installed providers are a DUPLICATE_PROVIDER error naming both, the variable and
        --provider, saying "choose one" once."""
        result = cli_two(stdin=PKG_ARGS, steps=[{"answer": PKG_ANSWER}])
        assert (result.returncode, result.stdout) == (1, "")
        assert result.stderr.startswith("Error: a user-questions provider is already registered: ")
        assert "alpha (from dsh-tool-test-provider-alpha 1.0)" in result.stderr
        assert "beta (from dsh-tool-test-provider-beta 1.0)" in result.stderr
        assert result.stderr.endswith(
            "; choose one with DSH_USER_QUESTIONS_PROVIDER=alpha or"
            " DSH_USER_QUESTIONS_PROVIDER=beta, or uninstall the others (or dsh-ask --provider"
            " NAME; dsh-ask --list-providers lists them)\n"
        )
        assert result.stderr.count("choose one") == 1
        assert cli_two.asked() == []

    def test_provider_option_chooses_among_installed(self, cli_two: Cli) -> None:
        """--provider NAME picks that provider when several are installed."""
        result = cli_two("--provider", "beta", stdin=PKG_ARGS, steps=[{"answer": PKG_ANSWER}])
        assert result.returncode == 0, result.stderr
        assert [record["provider"] for record in cli_two.asked()] == ["beta"]

    def test_environment_variable_chooses_among_installed(self, cli_two: Cli) -> None:
        """DSH_USER_QUESTIONS_PROVIDER picks the provider too, as --provider sets it."""
        result = cli_two(
            stdin=PKG_ARGS, steps=[{"answer": PKG_ANSWER}], DSH_USER_QUESTIONS_PROVIDER="alpha"
        )
        assert result.returncode == 0, result.stderr
        assert [record["provider"] for record in cli_two.asked()] == ["alpha"]

    def test_unknown_provider_name_lists_installed(self, cli_two: Cli) -> None:
        """--provider naming nothing installed exits 1, listing the installed ones."""
        result = cli_two("--provider", "gamma", stdin=PKG_ARGS)
        assert (result.returncode, result.stdout) == (1, "")
        assert result.stderr.startswith(
            "Error: no user-questions provider is registered: DSH_USER_QUESTIONS_PROVIDER=gamma"
            " names no installed provider (installed: "
        )
        assert result.stderr.endswith(
            "; choose one with --provider NAME (dsh-ask --list-providers)\n"
        )

    def test_list_providers_names_each_installed(self, cli_two: Cli) -> None:
        """--list-providers prints each installed provider with its distribution, exit 0."""
        result = cli_two("--list-providers")
        assert (result.returncode, result.stderr) == (0, "")
        assert sorted(result.stdout.splitlines()) == [
            "alpha (from dsh-tool-test-provider-alpha 1.0)",
            "beta (from dsh-tool-test-provider-beta 1.0)",
        ]

    def test_list_providers_with_none_says_what_to_install(self, cli_none: Cli) -> None:
        """--list-providers with none installed prints nothing and the install hint on stderr."""
        result = cli_none("--list-providers")
        assert (result.returncode, result.stdout, result.stderr) == (
            0,
            "",
            f"no user-questions provider is installed; {install_hint()}\n",
        )

    def test_the_install_hint_names_the_form_that_works_here(self, tmp_path: Path) -> None:
        """From a clone the hint installs the terminal provider by path; else by name."""
        hint = install_hint()
        root = _clone_root()
        if root is None:
            assert hint == "install one, e.g. pip install dsh-user-questions-terminal"
        else:
            assert hint == f"install one, e.g. pip install {root / 'providers' / 'terminal'}"
            assert (root / "providers" / "terminal" / "setup.cfg").is_file()

    def test_the_install_hint_names_the_provider_asked_for(self) -> None:
        """--provider web with nothing installed hints at the web provider, not the terminal one;
        a name that is none of this project's providers falls back to the terminal one."""
        assert install_hint("web").endswith(("dsh-user-questions-web", "providers/web"))
        assert install_hint("inbox").endswith(("dsh-user-questions-inbox", "providers/inbox"))
        assert install_hint("gamma") == install_hint()


SECRET_ARGS = json.dumps({"questions": [{"id": "token", "question": "Token?", "secret": True}]})
SECRET_ANSWER = {"answers": [{"id": "token", "custom": "hunter2"}]}


class TestSecretAnswers:
    """A secret answer's text goes to a pipe or a file, never to a terminal."""

    def test_to_a_pipe_the_secret_is_printed(self, cli: Cli) -> None:
        """With stdout a pipe, the script that asked gets the secret's text."""
        result = cli(stdin=SECRET_ARGS, steps=[{"answer": SECRET_ANSWER}])
        assert (result.returncode, result.stdout) == (
            0,
            '{"answers":[{"id":"token","selected":[],"custom":"hunter2"}]}\n',
        )

    def test_to_a_terminal_the_secret_is_hidden(self, cli: Cli) -> None:
        """With stdout a terminal, ``(secret given)`` stands in for the secret's text."""
        request = cli.tmp_path / "secret.json"
        request.write_text(SECRET_ARGS, encoding="utf-8")
        primary, secondary = pty.openpty()
        try:
            done = subprocess.run(
                cli_command([str(request)]),
                stdin=subprocess.DEVNULL,
                stdout=secondary,
                stderr=subprocess.PIPE,
                cwd=cli.tmp_path,
                env=cli_env(cli.site, cli.providers, cli.env([{"answer": SECRET_ANSWER}])),
                timeout=60,
                check=False,
            )
            os.close(secondary)
            shown = _read_all(primary)
        finally:
            os.close(primary)
        assert done.returncode == 0, done.stderr
        assert "hunter2" not in shown
        assert '"custom":"(secret given)"' in shown


def _read_all(fd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the other side closed (EIO on Linux)
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")
