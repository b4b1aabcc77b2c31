"""scripts/_tools.sh: how scripts/test finds interpreters and makes its tool environment.

Each test runs the shell functions with a made-up PATH (and a made-up pyenv), where every
"python" is a two-line script that only reports its version, so nothing is installed. They run
from a checkout of the repository (the sdist carries no scripts/).
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / "scripts" / "_tools.sh"

pytestmark = [
    pytest.mark.skipif(not TOOLS.exists(), reason="not a checkout of the repository"),
    pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash"),
]


def fake_python(path: Path, version: str, *, venv_works: bool = True) -> Path:
    """An executable at ``path`` that answers the version probe with ``version``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    venv = "" if venv_works else 'if [ "$2" = venv ]; then echo "no ensurepip" >&2; exit 1; fi\n'
    path.write_text(f'#!/bin/sh\n{venv}echo "{version}"\n', encoding="utf-8")
    path.chmod(0o755)
    return path


def run_tools(
    tmp_path: Path, path_dirs: list[Path], script: str
) -> subprocess.CompletedProcess[str]:
    """Source scripts/_tools.sh with only ``path_dirs`` (plus the basic tools) on PATH, then run
    ``script``; pyenv is looked for under a PYENV_ROOT inside ``tmp_path`` only."""
    basic = tmp_path / "basic-bin"
    basic.mkdir(exist_ok=True)
    for tool in ("cat", "ln", "mkdir", "rm", "sort", "ls", "dirname", "basename"):
        found = shutil.which(tool)
        if found and not (basic / tool).exists():
            (basic / tool).symlink_to(found)
    env = {
        "PATH": os.pathsep.join([*map(str, path_dirs), str(basic)]),
        "HOME": str(tmp_path / "home"),
        "PYENV_ROOT": str(tmp_path / "pyenv-root"),
        "LC_ALL": "C",
    }
    bash = shutil.which("bash")
    assert bash is not None
    return subprocess.run(
        [bash, "-c", f'DSH_TOOLS_DIR="{tmp_path}/tools"\nsource "{TOOLS}"\n{script}'],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


class TestFindingPythons:
    """How scripts/_tools.sh finds the interpreters and makes its tool environment."""

    def test_without_pyenv_the_pythons_come_from_path_and_the_missing_are_named(
        self,
        tmp_path: Path,
    ) -> None:
        """Only python3.11 and python3.12 on PATH: both are reported found through PATH, and 3.10
        and 3.13 are reported missing."""
        bin_dir = tmp_path / "bin"
        fake_python(bin_dir / "python3.11", "3.11")
        fake_python(bin_dir / "python3.12", "3.12")
        done = run_tools(
            tmp_path,
            [bin_dir],
            'tools_find_pythons; echo "found=${PYTHONS_FOUND[*]} missing=${PYTHONS_MISSING[*]}"',
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "found=3.11 3.12 missing=3.10 3.13"
        assert f"3.11  found: {bin_dir}/python3.11 (through PATH)" in done.stderr
        assert "3.10  MISSING" in done.stderr
        assert "3.13  MISSING" in done.stderr

    def test_a_python_that_does_not_run_as_its_version_is_not_found(self, tmp_path: Path) -> None:
        """A shim named python3.12 that fails (pyenv's, for a version not activated) or reports
        another version does not count as CPython 3.12."""
        bin_dir = tmp_path / "bin"
        shim = bin_dir / "python3.12"
        bin_dir.mkdir()
        shim.write_text("#!/bin/sh\necho 'pyenv: python3.12: command not found' >&2\nexit 127\n")
        shim.chmod(0o755)
        fake_python(bin_dir / "python3.13", "3.11")
        done = run_tools(tmp_path, [bin_dir], 'tools_find_pythons; echo "${PYTHONS_FOUND[*]}"')
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == ""
        assert "3.12  MISSING" in done.stderr
        assert "3.13  MISSING" in done.stderr

    def test_with_pyenv_each_version_is_its_newest_release_build(self, tmp_path: Path) -> None:
        """With pyenv installed, 3.12 is the newest 3.12.N build (not a -dev build, not PATH's);
        a version pyenv lacks still comes from PATH."""
        root = tmp_path / "pyenv-root"
        for build in ("3.12.1", "3.12.10", "3.12.2", "3.12.11-dev"):
            fake_python(root / "versions" / build / "bin" / "python3.12", "3.12")
        pyenv = root / "bin" / "pyenv"
        pyenv.parent.mkdir(parents=True)
        pyenv.write_text(f'#!/bin/sh\n[ "$1" = root ] && echo "{root}"\n')
        pyenv.chmod(0o755)
        bin_dir = tmp_path / "bin"
        fake_python(bin_dir / "python3.12", "3.12")
        fake_python(bin_dir / "python3.10", "3.10")
        done = run_tools(tmp_path, [bin_dir], 'tools_find_pythons; echo "${PYTHON_PATHS[*]}"')
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == [
            f"{bin_dir}/python3.10",
            f"{root}/versions/3.12.10/bin/python3.12",
        ]
        assert "(through pyenv)" in done.stderr

    def test_a_python_without_venv_stops_with_what_to_install(self, tmp_path: Path) -> None:
        """When the Python found cannot make a venv (Debian without python3-venv), the tool
        environment is not made, nothing is installed, and the message says what to install."""
        bin_dir = tmp_path / "bin"
        fake_python(bin_dir / "python3.12", "3.12", venv_works=False)
        done = run_tools(tmp_path, [bin_dir], "tools_setup")
        assert done.returncode != 0
        assert "apt-get install python3-venv" in done.stderr
        assert not (tmp_path / "tools" / "tox" / "bin").exists()


# scripts/test itself, with a fake tox ---------------------------------------------------------

FAKE_TOX = r"""
import os, signal, subprocess, sys, time
from pathlib import Path

log = Path(os.environ["FAKE_TOX_LOG"])
args = sys.argv[1:]
config = args[args.index("-c") + 1]
envlist = Path(config).parent / "envlist"
if args[:1] == ["list"]:
    print(envlist.read_text() if envlist.exists() else "py313")
    if "-d" not in args:  # the environments outside the envlist too
        print("fuzz")
    sys.exit(0)
envs = args[args.index("-e") + 1] if "-e" in args else "(envlist)"
if "--notest" in args:
    with log.open("a") as file:
        file.write(f"build {config} {envs}\n")
    if f"{config} {envs}" == os.environ.get("FAKE_TOX_SLOW_BUILD"):
        time.sleep(3)
        with log.open("a") as file:
            file.write(f"built {config} {envs}\n")
    sys.exit(0)
kind = "test" if "--skip-env-install" in args else "serial"
with log.open("a") as file:
    file.write(f"{kind} {config} {envs} {os.getpid()}\n")
print(f"output of {config} {envs}")
with open(os.environ["DSH_RERUN_LOG"], "a") as file:
    file.write(f"{os.environ.get('FAKE_TOX_RERUNS', '0')} {config}\n")
    for n in range(int(os.environ.get('FAKE_TOX_RERUNS', '0'))):
        where = (Path(config).parent).resolve()
        file.write(f"retried\t{where}\ttests/test_x.py::test_{n}: assert {n} == 1\n")
if os.environ.get("FAKE_TOX_HANG"):
    # A server that the interrupted run does not stop itself: the script must end it.
    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with log.open("a") as file:
        file.write(f"server {server.pid}\n")
    try:
        time.sleep(600)
    except KeyboardInterrupt:
        with log.open("a") as file:
            file.write("tox interrupted\n")
        sys.exit(2)
if f"{config} {envs}" == os.environ.get("FAKE_TOX_SKIP"):
    print(f"{envs}: skipped because could not find python interpreter with spec(s): cpython3.12")
    sys.exit(1)  # as tox does when every environment of the run was skipped
if f"{config} {envs}" == os.environ.get("FAKE_TOX_FAIL"):
    print("pytest: 1 failed")
    sys.exit(1)
"""


ALL_PYTHONS = ("3.10", "3.11", "3.12", "3.13")


def fake_checkout(
    tmp_path: Path, pythons: tuple[str, ...] = ALL_PYTHONS
) -> tuple[Path, dict[str, str]]:
    """A copy of scripts/ in a tree of two tox configurations (the core with py310 to py313 and
    lint, a provider with py310, py313 and lint), with a tool environment whose "python" runs
    the real one with a fake ``tox`` module; the environment to run it in: a machine without
    pyenv whose CPythons are ``pythons`` (fakes on PATH), whatever this machine has."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    for name in ("test", "_tools.sh", "_testrun.py"):
        shutil.copy2(TOOLS.parent / name, repo / "scripts" / name)
    envlists = {
        repo: "py310\npy311\npy312\npy313\nlint",
        repo / "providers" / "one": "py310\npy313\nlint",
    }
    for folder, envlist in envlists.items():
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("tox.ini", "setup.cfg", "pyproject.toml"):
            (folder / name).write_text("", encoding="utf-8")
        (folder / "envlist").write_text(envlist, encoding="utf-8")
    fake = tmp_path / "fake"
    (fake / "tox").mkdir(parents=True)
    (fake / "tox" / "__init__.py").write_text("", encoding="utf-8")
    (fake / "tox" / "__main__.py").write_text(FAKE_TOX, encoding="utf-8")
    tools = tmp_path / "tools"
    python = tools / "tox" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    (tools / "tox" / ".requirements").write_text("tox>=4.20 tox-uv>=1.11\n", encoding="utf-8")
    env = {
        **os.environ,
        "DSH_TOOLS_DIR": str(tools),
        "PYTHONPATH": str(fake),
        "FAKE_TOX_LOG": str(tmp_path / "tox.log"),
        "DSH_WEB_TEST_CHROMIUM": "/bin/true",
    }
    env.pop("CI", None)
    env.pop("DSH_RERUN_LOG", None)
    only_pythons(tmp_path, env, pythons)
    return repo, env


def only_pythons(tmp_path: Path, env: dict[str, str], versions: tuple[str, ...]) -> None:
    """Make ``env`` a machine without pyenv whose only CPythons are ``python<version>`` on PATH
    (as on Debian 12 with its python3.11 alone), with the usual system tools."""
    bin_dir = tmp_path / "system-bin"
    bin_dir.mkdir(exist_ok=True)
    for version in versions:
        fake_python(bin_dir / f"python{version}", version)
    for tool in ("cat", "cut", "sha256sum", "mktemp", "dirname", "ln", "mkdir", "rm", "sort"):
        found = shutil.which(tool)
        if found and not (bin_dir / tool).exists():
            (bin_dir / tool).symlink_to(found)
    env.update(
        PATH=str(bin_dir),
        HOME=str(tmp_path / "home"),
        PYENV_ROOT=str(tmp_path / "pyenv-root"),
    )


def run_test_script(
    repo: Path, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    """Run the fake checkout's scripts/test to its end."""
    bash = shutil.which("bash")
    assert bash is not None
    return subprocess.run(
        [bash, str(repo / "scripts" / "test"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def tox_calls(tmp_path: Path) -> list[str]:
    """What the fake tox was asked to do, without the process ids."""
    lines = (tmp_path / "tox.log").read_text(encoding="utf-8").splitlines()
    return [" ".join(line.split()[:3]) for line in lines]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


class TestHelp:
    """scripts/test --help."""

    def test_help_prints_the_usage_and_builds_nothing(self, tmp_path: Path) -> None:
        """--help (and -h) print the options, DSH_TEST_JOBS, the environments and what each
        configuration needs, and exit 0 without making the tool environment or running tox."""
        repo, env = fake_checkout(tmp_path)
        shutil.rmtree(tmp_path / "tools")
        for flag in ("--help", "-h"):
            done = run_test_script(repo, env, flag)
            assert done.returncode == 0, done.stderr
            for words in (
                "usage: scripts/test",
                "DSH_TEST_JOBS",
                "-e, --env",
                "chromium",
                "postgresql",
                "CI=true",
                "installs",
                "nginx",
                "openssl",
                "apt-get install python3-venv",
            ):
                assert words in done.stdout
        assert not (tmp_path / "tools").exists()
        assert not (tmp_path / "tox.log").exists()


class TestMatrix:
    """Which environments run on the interpreters found."""

    def test_with_one_python_every_configuration_runs_on_it(self, tmp_path: Path) -> None:
        """Without pyenv and with only python3.11 (Debian 12): the core and the provider both
        run on 3.11 (the provider's envlist names only 3.10 and 3.13), and the end of the run
        says which versions ran and which were not found."""
        repo, env = fake_checkout(tmp_path, ("3.11",))
        done = run_test_script(repo, env)
        assert done.returncode == 0, done.stderr
        tested = [call for call in tox_calls(tmp_path) if call.startswith("test ")]
        assert sorted(tested) == [
            "test providers/one/tox.ini lint",
            "test providers/one/tox.ini py311",
            "test tox.ini lint",
            "test tox.ini py311",
        ]
        assert "all configurations passed on CPython 3.11; not found: 3.10 3.12 3.13" in (
            done.stderr
        )

    def test_with_every_python_the_envlists_run_whole(self, tmp_path: Path) -> None:
        """With 3.10 to 3.13 found, the core runs on all four and the provider on the two its
        envlist names."""
        repo, env = fake_checkout(tmp_path, ALL_PYTHONS)
        done = run_test_script(repo, env)
        assert done.returncode == 0, done.stderr
        tested = sorted(c for c in tox_calls(tmp_path) if c.startswith("test "))
        assert tested == sorted(
            [f"test tox.ini py3{n}" for n in (10, 11, 12, 13)]
            + ["test tox.ini lint"]
            + [f"test providers/one/tox.ini {e}" for e in ("py310", "py313", "lint")]
        )

    @pytest.mark.parametrize(
        "config",
        sorted([REPO / "tox.ini", *REPO.glob("providers/*/tox.ini")], key=str),
        ids=lambda path: path.parent.name if path.parent != REPO else "core",
    )
    def test_no_environment_of_an_envlist_is_pinned_to_a_python(self, config: Path) -> None:
        """Every environment a full run makes runs on a machine with any single supported
        CPython: none sets basepython (frameworks was pinned to 3.12, so a 3.11-only machine
        skipped it)."""
        parser = configparser.ConfigParser(interpolation=None)
        parser.read(config, encoding="utf-8")
        envlist = parser["tox"]["envlist"].replace(",", " ").split()
        for name in envlist:
            section = f"testenv:{name}"
            if parser.has_section(section):
                assert "basepython" not in parser[section], f"{config} [{section}]"
                assert "base_python" not in parser[section], f"{config} [{section}]"


class TestScheduling:
    """Building, the pool of environments, their output."""

    @pytest.mark.parametrize("jobs", [None, "3"])
    def test_environments_are_built_one_at_a_time_and_tested_in_one_pool(
        self, tmp_path: Path, jobs: str | None
    ) -> None:
        """Each environment is built by a tox run of its own (tox --notest -e ENV), one after
        another, the longest first (the core's pyXY before lint); each then runs its tests as
        its own tox run, after its build."""
        repo, env = fake_checkout(tmp_path)
        if jobs is not None:
            env["DSH_TEST_JOBS"] = jobs
        done = run_test_script(repo, env)
        assert done.returncode == 0, done.stderr
        calls = tox_calls(tmp_path)
        builds = [c.removeprefix("build ") for c in calls if c.startswith("build ")]
        tests = [c.removeprefix("test ") for c in calls if c.startswith("test ")]
        assert sorted(builds) == sorted(tests)
        assert len(tests) == 8  # the core on 3.10 to 3.13 and lint, the provider's three
        # By default one environment more than the CPUs, at most 4 (3 on a 2-CPU machine).
        at_once = jobs or str(min((os.cpu_count() or 1) + 1, 4))
        assert f"the tests {at_once} at a time" in done.stderr, done.stderr
        core_py = [i for i, b in enumerate(builds) if b.startswith("tox.ini py3")]
        lints = [i for i, b in enumerate(builds) if b.endswith(" lint")]
        assert max(core_py) < min(lints), builds  # the core's pyXY are guessed longer
        for index, call in enumerate(calls):
            if call.startswith("test "):
                assert call.replace("test ", "build ", 1) in calls[:index]

    def test_tests_run_while_a_slow_environment_is_still_being_built(self, tmp_path: Path) -> None:
        """An environment whose build is slow holds back only its own tests: an environment of
        the same configuration built before it has run its tests by the time it is built."""
        repo, env = fake_checkout(tmp_path, ("3.12",))
        env["FAKE_TOX_SLOW_BUILD"] = "tox.ini lint"
        done = run_test_script(repo, env)
        assert done.returncode == 0, done.stderr
        calls = tox_calls(tmp_path)
        assert calls.index("test tox.ini py312") < calls.index("built tox.ini lint"), calls

    def test_with_one_job_each_configuration_is_one_plain_tox_run(self, tmp_path: Path) -> None:
        """DSH_TEST_JOBS=1: one tox run per configuration, nothing built beforehand."""
        repo, env = fake_checkout(tmp_path)
        env["DSH_TEST_JOBS"] = "1"
        done = run_test_script(repo, env)
        assert done.returncode == 0, done.stderr
        assert [c.split()[:2] for c in tox_calls(tmp_path)] == [
            ["serial", "tox.ini"],
            ["serial", "providers/one/tox.ini"],
        ]

    def test_every_environment_output_is_printed_pass_or_fail(self, tmp_path: Path) -> None:
        """Each environment's output is printed when it ends, a passing one's too, and a failed
        one is named at the end with exit status 1."""
        repo, env = fake_checkout(tmp_path)
        env["FAKE_TOX_FAIL"] = "providers/one/tox.ini lint"
        done = run_test_script(repo, env)
        assert done.returncode == 1
        assert "output of tox.ini lint" in done.stdout
        assert "output of providers/one/tox.ini lint" in done.stdout
        assert "=== tox.ini lint: passed" in done.stderr
        assert "=== providers/one/tox.ini lint: FAILED (exit 1)" in done.stderr
        assert "FAILED: providers/one/tox.ini lint" in done.stderr

    def test_an_environment_without_its_interpreter_is_skipped_not_failed(
        self, tmp_path: Path
    ) -> None:
        """An environment whose pinned Python is missing (tox skips it, and exits 1 for a run
        whose every environment was skipped) is reported skipped; the run passes."""
        repo, env = fake_checkout(tmp_path)
        env["FAKE_TOX_SKIP"] = "tox.ini lint"
        done = run_test_script(repo, env)
        assert done.returncode == 0, done.stderr
        assert "=== tox.ini lint: SKIPPED (its interpreter is not installed)" in done.stderr
        assert "SKIPPED (no interpreter for them here): tox.ini lint" in done.stderr

    def test_a_bad_number_of_jobs_is_refused(self, tmp_path: Path) -> None:
        """DSH_TEST_JOBS takes a positive whole number; anything else stops before tox runs."""
        repo, env = fake_checkout(tmp_path)
        env["DSH_TEST_JOBS"] = "two"
        done = run_test_script(repo, env)
        assert done.returncode == 2
        assert "DSH_TEST_JOBS must be a positive whole number, got 'two'" in done.stderr
        assert not (tmp_path / "tox.log").exists()

    def test_requested_environments_run_where_they_exist(self, tmp_path: Path) -> None:
        """-e py312 runs py312 in each configuration; an environment no configuration has
        stops the run with a clear error."""
        repo, env = fake_checkout(tmp_path)
        done = run_test_script(repo, env, "-e", "py312")
        assert done.returncode == 0, done.stderr
        assert sorted(c for c in tox_calls(tmp_path) if c.startswith("test ")) == [
            "test providers/one/tox.ini py312",
            "test tox.ini py312",
        ]
        done = run_test_script(repo, env, "-e", "nosuch")
        assert done.returncode == 2
        assert "no tox configuration has an environment 'nosuch'" in done.stderr

    def test_the_end_of_the_run_says_how_many_reruns_happened(self, tmp_path: Path) -> None:
        """Each pytest session appends its reruns to $DSH_RERUN_LOG; scripts/test adds them."""
        repo, env = fake_checkout(tmp_path)
        env["FAKE_TOX_RERUNS"] = "2"
        done = run_test_script(repo, env, "-e", "lint")
        assert done.returncode == 0, done.stderr
        assert "scripts/test: reruns: 4 " in done.stderr  # two configurations, two each
        # Then each retried test, where (relative to the checkout) and why its try failed.
        for where in (".", "providers/one"):
            for n in (0, 1):
                why = f"tests/test_x.py::test_{n}: assert {n} == 1"
                line = f"scripts/test:   retried in {where}: {why}"
                assert line in done.stderr.splitlines(), done.stderr


class TestWallTimes:
    """The end of the run says how long each step took."""

    def test_the_end_of_the_run_gives_each_step_s_wall_time(self, tmp_path: Path) -> None:
        """After every environment's output, the end lists each build and each environment with
        its wall time (a failed one says so), then the whole run's."""
        repo, env = fake_checkout(tmp_path, ("3.12",))
        env["FAKE_TOX_FAIL"] = "providers/one/tox.ini lint"
        env["DSH_TEST_JOBS"] = "2"
        done = run_test_script(repo, env)
        assert done.returncode == 1
        lines = done.stderr.splitlines()
        start = lines.index(
            "scripts/test: wall time of each step, longest first (the builds one after"
            " another; the tests 2 at a time, so the steps add up to more than the whole run):"
        )
        assert not [line for line in lines[start:] if line.startswith("scripts/test: ===")]
        steps = [
            line.split(" s  ", 1)[1]
            for line in lines[start + 1 :]
            if re.fullmatch(r"scripts/test:\s+\d+ s  .+", line)
        ]
        assert re.fullmatch(r"the whole run \(\d+\.\d min\)", steps[-1]), steps
        assert sorted(steps[:-1]) == sorted(
            [
                "tox.ini py312 (building)",
                "tox.ini lint (building)",
                "tox.ini py312",
                "tox.ini lint",
                "providers/one/tox.ini py312 (building)",
                "providers/one/tox.ini lint (building)",
                "providers/one/tox.ini py312",
                "providers/one/tox.ini lint  (failed)",
            ]
        )


class TestSignals:
    """One signal stops everything."""

    @pytest.mark.parametrize(
        ("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["INT", "TERM"]
    )
    def test_one_signal_stops_the_whole_run_and_ends_what_tox_started(
        self, tmp_path: Path, signum: int, status: int
    ) -> None:
        """One Ctrl-C (or SIGTERM) ends scripts/test at once with 130 (143): each running tox
        is interrupted, the servers they left running are ended, and no further environment
        starts. The script runs in a session of its own, as a background job would."""
        repo, env = fake_checkout(tmp_path)
        env["FAKE_TOX_HANG"] = "1"
        log = tmp_path / "tox.log"
        bash = shutil.which("bash")
        assert bash is not None
        process = subprocess.Popen(
            [bash, str(repo / "scripts" / "test")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 60
            servers: list[int] = []
            while len(servers) < 2 and time.monotonic() < deadline:  # both of the pool's jobs
                text = log.read_text(encoding="utf-8") if log.exists() else ""
                servers = [int(x.split()[1]) for x in text.splitlines() if x.startswith("server ")]
                time.sleep(0.05)
            assert len(servers) == 2
            process.send_signal(signum)
            _, stderr = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()
        assert process.returncode == status, stderr
        lines = log.read_text(encoding="utf-8").splitlines()
        assert len([line for line in lines if line.startswith("test ")]) == len(servers)
        assert "tox interrupted" in lines
        deadline = time.monotonic() + 10
        while any(alive(server) for server in servers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(server) for server in servers), "a server tox started still runs"
        assert "INTERRUPTED during" in stderr
        assert "FAILED" not in stderr
