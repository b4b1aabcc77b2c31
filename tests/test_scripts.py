"""scripts/_tools.sh: how scripts/test finds interpreters and makes its tool environment.

Each test runs the shell functions with a made-up PATH (and a made-up pyenv), where every
"python" is a two-line script that only reports its version, so nothing is installed. They run
from a checkout of the repository (the sdist carries no scripts/).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parent.parent / "scripts" / "_tools.sh"

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


def test_without_pyenv_the_pythons_come_from_path_and_the_missing_are_named(
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


def test_a_python_that_does_not_run_as_its_version_is_not_found(tmp_path: Path) -> None:
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


def test_with_pyenv_each_version_is_its_newest_release_build(tmp_path: Path) -> None:
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


def test_a_python_without_venv_stops_with_what_to_install(tmp_path: Path) -> None:
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
if args[:1] == ["list"]:
    print("py313")
    sys.exit(0)
config = args[args.index("-c") + 1]
if "--notest" in args:
    with log.open("a") as file:
        file.write(f"build {config}\n")
    sys.exit(0)
jobs = args[args.index("-p") + 1] if args[0] == "run-parallel" else "1"
with log.open("a") as file:
    file.write(f"run {config} {os.getpid()} {args[0]} {jobs}\n")
with open(os.environ["DSH_RERUN_LOG"], "a") as file:
    file.write(f"{os.environ.get('FAKE_TOX_RERUNS', '0')} {config}\n")
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
"""


def fake_checkout(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A copy of scripts/ in a tree of two tox configurations, with a tool environment whose
    "python" runs the real one with a fake ``tox`` module; the environment to run it in."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    for name in ("test", "_tools.sh"):
        shutil.copy2(TOOLS.parent / name, repo / "scripts" / name)
    for folder in (repo, repo / "providers" / "one"):
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("tox.ini", "setup.cfg", "pyproject.toml"):
            (folder / name).write_text("", encoding="utf-8")
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
    return repo, env


def run_test_script(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run the fake checkout's scripts/test to its end."""
    return subprocess.run(
        ["bash", str(repo / "scripts" / "test")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def wait_for(path: Path, text: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in (found := path.read_text(encoding="utf-8")):
            return found
        time.sleep(0.05)
    raise AssertionError(f"{text!r} never appeared in {path}")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


@pytest.mark.parametrize(
    ("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["INT", "TERM"]
)
def test_one_signal_stops_the_whole_run_and_ends_what_tox_started(
    tmp_path: Path, signum: int, status: int
) -> None:
    """One Ctrl-C (or SIGTERM) ends scripts/test at once with 130 (143): tox is interrupted,
    the server it left running is ended, and the next configuration never starts. The script
    runs with SIGINT ignored by its parent's background job (it must still reach tox)."""
    repo, env = fake_checkout(tmp_path)
    env["FAKE_TOX_HANG"] = "1"
    log = tmp_path / "tox.log"
    process = subprocess.Popen(
        ["bash", str(repo / "scripts" / "test")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        found = wait_for(log, "server ")
        server = int(found.split("server ")[1].split()[0])
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert process.returncode == status, stderr
    lines = log.read_text(encoding="utf-8").splitlines()
    assert [line.split()[1] for line in lines if line.startswith("run ")] == ["tox.ini"]
    assert "tox interrupted" in lines
    deadline = time.monotonic() + 10
    while alive(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(server), "the server tox started is still running"
    assert "INTERRUPTED during tox.ini" in stderr
    assert "FAILED" not in stderr


def test_the_end_of_the_run_says_how_many_reruns_happened(tmp_path: Path) -> None:
    """Each pytest session appends its reruns to $DSH_RERUN_LOG; scripts/test adds them up."""
    repo, env = fake_checkout(tmp_path)
    env["FAKE_TOX_RERUNS"] = "2"
    done = run_test_script(repo, env)
    assert done.returncode == 0, done.stderr
    assert "scripts/test: reruns: 4 " in done.stderr  # two configurations, two reruns each


@pytest.mark.parametrize(
    ("jobs", "expected"),
    [
        (
            None,
            ["build tox.ini", "run-parallel 2", "build providers/one/tox.ini", "run-parallel 2"],
        ),
        ("3", ["build tox.ini", "run-parallel 3", "build providers/one/tox.ini", "run-parallel 3"]),
        ("1", ["run 1", "run 1"]),
    ],
)
def test_environments_are_built_one_at_a_time_then_tested_in_parallel(
    tmp_path: Path, jobs: str | None, expected: list[str]
) -> None:
    """Each configuration: tox --notest first, then run-parallel -p DSH_TEST_JOBS (default 2);
    DSH_TEST_JOBS=1 is one plain tox run per configuration."""
    repo, env = fake_checkout(tmp_path)
    if jobs is not None:
        env["DSH_TEST_JOBS"] = jobs
    done = run_test_script(repo, env)
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "tox.log").read_text(encoding="utf-8").splitlines()
    assert [
        line if line.startswith("build ") else " ".join(line.split()[3:]) for line in lines
    ] == expected


def test_a_bad_number_of_jobs_is_refused(tmp_path: Path) -> None:
    """DSH_TEST_JOBS takes a positive whole number; anything else stops before tox runs."""
    repo, env = fake_checkout(tmp_path)
    env["DSH_TEST_JOBS"] = "two"
    done = run_test_script(repo, env)
    assert done.returncode == 2
    assert "DSH_TEST_JOBS must be a positive whole number, got 'two'" in done.stderr
    assert not (tmp_path / "tox.log").exists()
