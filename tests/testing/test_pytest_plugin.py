"""The package's pytest plugin as a harness author meets it: async tests of the kit's fixtures
run with no async configuration, and nothing else of the user's tests changes (no marker of
ours, no reruns); this project's own rerun and warning policies are plugins only its
configurations load.

Each case runs pytest in a subprocess on a project of its own (its own rootdir and settings),
so this repository's pytest settings do not leak into it.
"""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # Not the outer run's DSH_RERUN_LOG: the retries made here are this test's, not the run's.
    env = {name: value for name, value in os.environ.items() if name != "DSH_RERUN_LOG"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def project(tmp_path: Path, tests: str, ini: str = "") -> Path:
    (tmp_path / "pytest.ini").write_text(f"[pytest]\n{ini}", encoding="utf-8")
    (tmp_path / "test_mine.py").write_text(textwrap.dedent(tests), encoding="utf-8")
    return tmp_path


ASYNC_TESTS = """
    from dsh_user_questions.testing import make_request


    async def test_my_tool_asks_the_user(user_questions, scripted_provider):
        scripted_provider.push({"answers": [{"id": "pkg", "selected": ["pnpm"]}]})
        answer = await user_questions.ask(make_request())
        assert answer.answers[0].selected == ("pnpm",)


    async def test_a_failing_async_test_fails(user_questions, scripted_provider):
        scripted_provider.push({"answers": [{"id": "pkg", "selected": ["npm"]}]})
        answer = await user_questions.ask(make_request())
        assert answer.answers[0].selected == ("pnpm",)
"""


@pytest.mark.parametrize("plugins", [["-p", "no:asyncio"], []], ids=["alone", "pytest-asyncio"])
def test_an_async_test_of_the_kit_runs_without_async_configuration(
    tmp_path: Path, plugins: list[str]
) -> None:
    """Without pytest-asyncio, and with it in its default (strict) mode, an unmarked async
    test using the fixtures really runs: one passes, the other fails on its assertion."""
    done = run_pytest(project(tmp_path, ASYNC_TESTS), *plugins)
    assert "1 failed, 1 passed" in done.stdout, done.stdout + done.stderr
    assert "assert ('npm',) == ('pnpm',)" in done.stdout


FAILING_TIMING_TEST = """
    import pytest

    @pytest.mark.timing
    def test_my_own_timing_test():
        assert False
"""


class TestLeavesUsersTestsAlone:
    """Installing the package changes nothing in a user's project beyond the kit's fixtures."""

    def test_a_user_s_timing_test_is_not_rerun(self, tmp_path: Path) -> None:
        """A failing test the user marked ``timing`` fails once: no rerun, even with
        pytest-rerunfailures installed."""
        pytest.importorskip("pytest_rerunfailures")
        ini = "markers =\n    timing: the user's own marker\n"
        done = run_pytest(project(tmp_path, FAILING_TIMING_TEST, ini), "-v")
        assert "1 failed in" in done.stdout, done.stdout + done.stderr
        assert "RERUN" not in done.stdout

    def test_no_marker_of_ours_is_declared(self, tmp_path: Path) -> None:
        """``timing`` is no marker the plugin declares: ``--strict-markers`` refuses it."""
        done = run_pytest(project(tmp_path, FAILING_TIMING_TEST), "--strict-markers")
        assert "'timing' not found in `markers` configuration option" in done.stdout, (
            done.stdout + done.stderr
        )
        markers = run_pytest(project(tmp_path, FAILING_TIMING_TEST), "--markers").stdout
        assert "timing" not in markers

    def test_no_option_of_ours_is_declared(self, tmp_path: Path) -> None:
        """The plugin adds no ini option: ``dsh_timing_tests`` is unknown to a user's pytest."""
        ini = "dsh_timing_tests = test_mine.py\n"
        done = run_pytest(project(tmp_path, "def test_ok():\n    pass\n", ini), "-p", "no:asyncio")
        assert "Unknown config option: dsh_timing_tests" in done.stdout + done.stderr


class TestTheTestingExtra:
    """What ``pip install 'dsh-user-questions[testing]'`` brings runs a fresh project cleanly."""

    def test_no_deprecation_warning_in_a_fresh_project(self, tmp_path: Path) -> None:
        """A fresh project (no pytest settings) with exactly the extra's pytest plugins runs
        the kit's async tests with deprecation warnings as errors: nothing warns."""
        extra = _testing_extra()
        plugins = [] if any(r.startswith("pytest-asyncio") for r in extra) else ["-p", "no:asyncio"]
        # An empty [pytest] section: no settings, and no configuration of a folder above.
        done = run_pytest(
            project(tmp_path, ASYNC_TESTS), "-W", "error::DeprecationWarning", *plugins
        )
        assert "1 failed, 1 passed" in done.stdout, done.stdout + done.stderr
        assert "Warning" not in done.stdout + done.stderr


def _testing_extra() -> list[str]:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    lines = config["options.extras_require"]["testing"].splitlines()
    return [line.strip() for line in lines if line.strip()]


TOX_CONFIGS = sorted([ROOT / "tox.ini", *ROOT.glob("providers/*/tox.ini")], key=str)
TOX_IDS = [p.parent.name if p.parent != ROOT else "core" for p in TOX_CONFIGS]


class TestTheProjectsOwnRerunPolicy:
    """dsh_user_questions._reruns, loaded by this project's configuration only."""

    @pytest.mark.parametrize("config", TOX_CONFIGS, ids=TOX_IDS)
    def test_no_environment_reruns_its_tests_blindly(self, config: Path) -> None:
        """No tox environment passes pytest-rerunfailures' own options (--reruns,
        --only-rerun): only the tests marked dsh_timing are ever retried."""
        parser = configparser.ConfigParser(interpolation=None)
        parser.read(config, encoding="utf-8")
        for section in parser.sections():
            commands = parser[section].get("commands", "")
            for option in ("--reruns", "--only-rerun"):
                assert option not in commands, f"{config} [{section}]: {option}"

    def test_only_chosen_tests_are_rerun(self, tmp_path: Path) -> None:
        """A test chosen by ``dsh_timing_tests`` is retried twice; any other one never."""
        pytest.importorskip("pytest_rerunfailures")
        tests = """
            def test_waits_on_a_subprocess():
                assert False

            def test_a_race_rule():
                assert False
        """
        ini = (
            "addopts = -p dsh_user_questions._reruns\n"
            "dsh_timing_tests = test_mine.py::test_waits_*\n"
        )
        done = run_pytest(project(tmp_path, tests, ini), "-v")
        assert "2 failed, 2 rerun" in done.stdout, done.stdout + done.stderr
        assert done.stdout.count("test_mine.py::test_waits_on_a_subprocess RERUN") == 2
        assert "test_mine.py::test_a_race_rule RERUN" not in done.stdout

    def test_the_rerun_count_goes_to_the_log(self, tmp_path: Path) -> None:
        """With DSH_RERUN_LOG set, a session appends its number of reruns (scripts/test adds
        them up)."""
        pytest.importorskip("pytest_rerunfailures")
        tests = """
            from pathlib import Path

            import pytest

            @pytest.mark.dsh_timing
            def test_flaky():
                marker = Path(__file__).parent / "seen"  # fails the first time only
                if not marker.exists():
                    marker.write_text("once")
                    assert False
        """
        log = tmp_path / "reruns.log"
        env = {**os.environ, "DSH_RERUN_LOG": str(log)}
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider"],
            cwd=project(tmp_path, tests, "addopts = -p dsh_user_questions._reruns\n"),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=env,
        )
        assert "1 passed, 1 rerun" in done.stdout, done.stdout + done.stderr
        lines = log.read_text(encoding="utf-8").splitlines()
        assert lines[0].split()[0] == "1"
        # Which test was retried, and why its try failed: scripts/test prints it at the end.
        assert lines[1:] == [f"retried\t{tmp_path}\ttest_mine.py::test_flaky: assert False"]


class TestTheProjectsSplitOfASuite:
    """dsh_split_by_timing: a provider's unit part on every Python, its end-to-end part once."""

    TESTS = """
        import pytest

        @pytest.mark.dsh_timing
        def test_drives_a_real_pty():
            pass

        def test_a_rule():
            pass
    """
    INI = "addopts = -p dsh_user_questions._reruns\ndsh_split_by_timing = true\n"

    @pytest.mark.parametrize(
        ("part", "ran", "left"),
        [
            ("unit", "test_a_rule", "test_drives_a_real_pty"),
            ("e2e", "test_drives_a_real_pty", "test_a_rule"),
        ],
    )
    def test_each_part_runs_its_tests_only(
        self, tmp_path: Path, part: str, ran: str, left: str
    ) -> None:
        """DSH_TEST_PART=unit runs the tests not marked dsh_timing, e2e only those."""
        env = {**os.environ, "DSH_TEST_PART": part}
        env.pop("DSH_RERUN_LOG", None)
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-v", "-p", "no:randomly", "-p", "no:cacheprovider"],
            cwd=project(tmp_path, self.TESTS, self.INI),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=env,
        )
        assert "1 passed, 1 deselected" in done.stdout, done.stdout + done.stderr
        assert f"test_mine.py::{ran} PASSED" in done.stdout
        assert left not in done.stdout

    def test_without_the_setting_everything_runs(self, tmp_path: Path) -> None:
        """A configuration without dsh_split_by_timing (the core's) ignores DSH_TEST_PART."""
        env = {**os.environ, "DSH_TEST_PART": "unit"}
        env.pop("DSH_RERUN_LOG", None)
        ini = "addopts = -p dsh_user_questions._reruns\n"
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider"],
            cwd=project(tmp_path, self.TESTS, ini),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=env,
        )
        assert "2 passed" in done.stdout, done.stdout + done.stderr


def _pytest_settings(config: Path) -> configparser.SectionProxy | None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(config, encoding="utf-8")
    for section in ("pytest", "tool:pytest"):
        if parser.has_section(section):
            return parser[section]
    return None


class TestTheProjectsWarningPolicy:
    """dsh_user_questions._warning_policy: one warning policy for the core and every provider."""

    @pytest.mark.parametrize("config", TOX_CONFIGS, ids=TOX_IDS)
    def test_every_distribution_loads_the_one_policy(self, config: Path) -> None:
        """Each distribution's pytest settings are its tox.ini's [pytest] section, which loads
        the policy and sets no filterwarnings of its own (setup.cfg holds none)."""
        settings = _pytest_settings(config)
        assert settings is not None, f"{config} has no [pytest] section"
        assert "-p dsh_user_questions._warning_policy" in settings.get("addopts", ""), config
        assert "filterwarnings" not in settings, config
        assert _pytest_settings(config.parent / "setup.cfg") is None, config.parent / "setup.cfg"

    def test_a_warning_is_an_error_but_a_named_dependency_warning(self, tmp_path: Path) -> None:
        """Any warning fails its test; the dependency warnings the policy names do not, on any
        Python (the real imghdr import warns on 3.11 and 3.12, is silent on 3.10 and is gone
        on 3.13)."""
        tests = """
            import importlib
            import sys
            import warnings

            def test_warns():
                warnings.warn("something is deprecated", DeprecationWarning)

            def test_the_imghdr_warning_as_written():
                warnings.warn(
                    "'imghdr' is deprecated and slated for removal in Python 3.13",
                    DeprecationWarning,
                )

            def test_imports_imghdr_as_apprise_does():
                sys.modules.pop("imghdr", None)
                try:
                    importlib.import_module("imghdr")
                except ModuleNotFoundError:
                    pass
        """
        ini = "addopts = -p dsh_user_questions._warning_policy\n"
        done = run_pytest(project(tmp_path, tests, ini), "-p", "no:asyncio", "-v")
        assert "1 failed, 2 passed" in done.stdout, done.stdout + done.stderr
        assert "test_mine.py::test_warns FAILED" in done.stdout
        assert "DeprecationWarning: something is deprecated" in done.stdout

    def test_a_configuration_with_filterwarnings_of_its_own_is_refused(
        self, tmp_path: Path
    ) -> None:
        """A [pytest] section that loads the policy and sets filterwarnings too (which the
        policy's "error" would override) stops with a usage error naming both."""
        ini = "addopts = -p dsh_user_questions._warning_policy\nfilterwarnings = error\n"
        done = run_pytest(project(tmp_path, "def test_ok():\n    pass\n", ini), "-p", "no:asyncio")
        assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
        assert "filterwarnings = ['error'] is set" in done.stderr
        assert "dsh_user_questions/_warning_policy.py" in done.stderr
