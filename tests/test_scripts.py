"""scripts/_tools.sh: how scripts/test finds interpreters and makes its tool environment.

Each test runs the shell functions with a made-up PATH (and a made-up pyenv), where every
"python" is a two-line script that only reports its version, so nothing is installed. They run
from a checkout of the repository (the sdist carries no scripts/).
"""

from __future__ import annotations

import os
import shutil
import subprocess
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
