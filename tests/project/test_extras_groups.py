"""The extras' groups of docs/adapters.md resolve against the package index, as the table says.

The table "Which extras share an environment" lists the groups of extras one environment can
hold, and what each leaves out. Each group is resolved for this Python by ``uv pip compile``
against the package index (a real resolution: every version constraint of every dependency,
nothing installed), and each extra a group leaves out is checked to conflict with it still, so
the table changes when the frameworks' pins do.

Online and slow (a resolution per row and per left-out extra): these tests run only with
``DSH_TEST_EXTRAS=1`` and ``uv`` on PATH (or importable as ``python -m uv``); the table's
coverage of every declared extra is checked always.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "docs" / "adapters.md"
HEADING = "## Which extras share an environment"

online = pytest.mark.skipif(
    os.environ.get("DSH_TEST_EXTRAS") != "1",
    reason="online and slow: set DSH_TEST_EXTRAS=1 (with uv installed)",
)


def groups() -> list[tuple[str, list[str], list[str]]]:
    """Each row of the table: its name, its extras, the extras it leaves out."""
    text = TABLE.read_text("utf-8")
    section = text[text.index(HEADING) :].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and "`" in cells[1]:
            rows.append(
                (cells[0], re.findall(r"`([^`]+)`", cells[1]), re.findall(r"`([^`]+)`", cells[2]))
            )
    return rows


def declared_extras() -> set[str]:
    """The extras setup.cfg declares."""
    text = (ROOT / "setup.cfg").read_text("utf-8")
    block = text.split("[options.extras_require]", 1)[1].split("\n[", 1)[0]
    return set(re.findall(r"^([\w-]+) =", block, re.M))


def uv() -> list[str]:
    found = shutil.which("uv")
    if found is not None:
        return [found]
    probe = subprocess.run([sys.executable, "-m", "uv", "--version"], capture_output=True)
    if probe.returncode == 0:
        return [sys.executable, "-m", "uv"]
    pytest.fail("uv is needed to resolve the extras (pip install uv)")


@pytest.fixture(scope="module")
def index_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """uv's cache for this module's resolutions: empty at the start of each run, so every
    package's metadata comes from the index, and shared by the five resolutions, so each is
    fetched once (``--no-cache`` fetched it five times: about half the module's time)."""
    return tmp_path_factory.mktemp("uv-cache")


def resolve(extras: list[str], tmp_path: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    """``uv pip compile`` of this checkout with ``extras``, for this Python, from the index."""
    wanted = tmp_path / "requirements.in"
    wanted.write_text(f"dsh-user-questions[{','.join(extras)}] @ {ROOT.as_uri()}\n")
    return subprocess.run(
        [
            *uv(),
            "pip",
            "compile",
            "--quiet",
            "--cache-dir",
            str(cache),
            "--python",
            sys.executable,
            str(wanted),
            "--output-file",
            str(tmp_path / "requirements.txt"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, "UV_PYTHON_DOWNLOADS": "never"},
    )


def test_the_table_covers_every_extra() -> None:
    """Each declared extra is in a group; a left-out extra is in another group."""
    rows = groups()
    assert len(rows) >= 2
    grouped = {extra for _, extras, _ in rows for extra in extras}
    assert grouped == declared_extras()
    for name, extras, left_out in rows:
        assert set(left_out) == declared_extras() - set(extras), name


@online
@pytest.mark.parametrize(("name", "extras", "left_out"), groups(), ids=lambda v: str(v)[:24])
def test_a_group_resolves(
    name: str, extras: list[str], left_out: list[str], tmp_path: Path, index_cache: Path
) -> None:
    """Every extra of a row installs into one environment: the resolution succeeds."""
    done = resolve(extras, tmp_path, index_cache)
    assert done.returncode == 0, f"{name}: {done.stderr[-2000:]}"


@online
@pytest.mark.parametrize(
    ("name", "extras", "extra"),
    [(name, extras, extra) for name, extras, left_out in groups() for extra in left_out],
    ids=lambda v: str(v)[:24],
)
def test_a_left_out_extra_still_conflicts(
    name: str, extras: list[str], extra: str, tmp_path: Path, index_cache: Path
) -> None:
    """An extra a row leaves out cannot join that group's environment (else the table is
    stale: move it into the row)."""
    done = resolve([*extras, extra], tmp_path, index_cache)
    assert done.returncode != 0, f"{extra} now resolves with the group {name!r}"
    assert "unsatisfiable" in done.stderr or "No solution" in done.stderr, done.stderr[-2000:]
