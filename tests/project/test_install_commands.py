"""Every ``pip install`` the READMEs and the docs give works as written, in a fresh venv, offline.

The commands are read from README.md, providers/*/README.md and docs/*.md (shell blocks and
inline code). A command naming a path (``.``, ``./providers/web``) is the form for a clone:
it runs in a copy of this checkout with pip finding the third-party dependencies in a local
wheelhouse only (``--no-index``), so a distribution of this repository that pip would have to
find by name fails it, as it would for a newcomer. A command naming distributions is the form
for a release: it runs with this repository's wheels (built here) in the wheelhouse too. The
wheelhouse is this environment's own installed dependencies, packed back into wheels: nothing
is downloaded.

Slow (a venv and an install per command): these tests run only with ``DSH_TEST_INSTALLS=1``,
which the `installs` tox environment sets (one run per CI, beside the others).
"""

from __future__ import annotations

import base64
import configparser
import csv
import hashlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.tags import sys_tags
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [
    ROOT / "README.md",
    *sorted(ROOT.glob("providers/*/README.md")),
    *sorted(ROOT.glob("docs/*.md")),
]
OURS = "dsh-user-questions"

pytestmark = [
    pytest.mark.skipif(
        not (ROOT / "providers").is_dir(), reason="not a checkout of the repository"
    ),
    pytest.mark.skipif(
        os.environ.get("DSH_TEST_INSTALLS") != "1",
        reason="slow: set DSH_TEST_INSTALLS=1 (the installs tox environment does)",
    ),
]

_SHELL_BLOCK = re.compile(r"```(?:sh|bash|shell|console)\n(.*?)```", re.S)
_INLINE = re.compile(r"`((?:\S*/)?pip install [^`]+)`")


def documented_commands() -> list[tuple[str, str]]:
    """``(document, command)`` for each install command the documents give, once each."""
    found: dict[str, str] = {}
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        name = document.relative_to(ROOT).as_posix()
        lines = [line for block in _SHELL_BLOCK.findall(text) for line in block.splitlines()]
        for line in lines:
            if "pip install" in line:
                found.setdefault(re.sub(r"\s+#.*$", "", line).strip(), name)
        for command in _INLINE.findall(text):
            found.setdefault(command.strip(), name)
    return sorted((name, command) for command, name in found.items())


def pip_arguments(command: str) -> list[str]:
    """The requirement arguments of the ``pip install`` in ``command``."""
    words = shlex.split(command.split("pip install", 1)[1].split("&&", 1)[0])
    return [word for word in words if not word.startswith("-")]


def is_clone_form(command: str) -> bool:
    return any(arg.startswith((".", "/")) for arg in pip_arguments(command))


def test_the_documents_give_install_commands_and_say_which_form_each_is() -> None:
    """Both forms are documented, and each command is introduced as one of them."""
    commands = documented_commands()
    assert any(is_clone_form(command) for _, command in commands)
    assert any(not is_clone_form(command) for _, command in commands)
    for name, command in commands:
        text = (ROOT / name).read_text(encoding="utf-8")
        at = text.index(command.split(" #")[0])
        context = text[max(0, at - 400) : at + len(command) + 120].lower()
        assert "clone" in context or "release" in context, f"{name}: {command!r} says no form"


# The wheelhouse -------------------------------------------------------------------------------


def _requirements_of(command: str) -> list[Requirement]:
    """What a command asks for, as requirements (a path becomes its distribution's name)."""
    wanted = []
    for arg in pip_arguments(command):
        path, _, extras = arg.partition("[")
        if arg.startswith((".", "/")):
            config = configparser.ConfigParser()
            config.read(ROOT / path / "setup.cfg", encoding="utf-8")
            arg = config["metadata"]["name"] + (f"[{extras}" if extras else "")
        wanted.append(Requirement(arg))
    return wanted


def _our_requirements() -> dict[str, list[str]]:
    """Each distribution of this checkout: its requirements as its setup.cfg states them now
    (the installed metadata may be older), extras as ``extra == "name"`` markers."""
    ours: dict[str, list[str]] = {}
    for project in [ROOT, *sorted(ROOT.glob("providers/*"))]:
        config = configparser.ConfigParser()
        config.read(project / "setup.cfg", encoding="utf-8")
        wanted = [line for line in config["options"]["install_requires"].splitlines() if line]
        section = "options.extras_require"
        extras = dict(config[section]) if config.has_section(section) else {}
        for extra, text in extras.items():
            for line in text.splitlines():
                if line.strip() and not line.strip().startswith("#"):
                    wanted.append(f'{line.strip()} ; extra == "{extra}"')
        ours[canonicalize_name(config["metadata"]["name"])] = wanted
    return ours


def _closure(requirements: list[Requirement]) -> dict[str, metadata.Distribution]:
    """The installed distributions ``requirements`` need, recursively, with their extras."""
    ours = _our_requirements()
    dists: dict[str, metadata.Distribution] = {}
    extras_seen: dict[str, set[str]] = {}
    todo = list(requirements)
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        extras = set(requirement.extras)
        if name in extras_seen and extras <= extras_seen[name]:
            continue
        try:
            dist: metadata.Distribution | None = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            dist = None
        if dist is None and name not in ours:
            continue  # only wanted under a marker this Python does not meet
        extras_seen[name] = extras_seen.get(name, set()) | extras
        if dist is not None:
            dists[name] = dist
        # Ours come from this tree's setup.cfg, installed here or not (the providers are not).
        lines = ours.get(name, [])
        if dist is not None and name not in ours:
            lines = dist.requires or []
        for line in lines:
            needed = Requirement(line)
            environments = [{"extra": extra} for extra in extras_seen[name] | {""}]
            if needed.marker is None or any(needed.marker.evaluate(e) for e in environments):
                todo.append(needed)
    return dists


def _pack(dist: metadata.Distribution, into: Path) -> None:
    """Write the installed ``dist`` back into a wheel in ``into``."""
    files = [f for f in dist.files or [] if not str(f).startswith("..")]
    info = next(f for f in files if f.name == "METADATA").parent
    tags = [
        line.split(":", 1)[1].strip()
        for line in (dist.read_text("WHEEL") or "").splitlines()
        if line.startswith("Tag:")
    ]
    supported = {str(tag) for tag in sys_tags()}
    tag = next((tag for tag in tags if tag in supported), "py3-none-any")
    name = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    wheel = into / f"{name}-{dist.version}-{tag}.whl"
    skip = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as archive:
        for file in files:
            if file.suffix == ".pyc" or (file.parent == info and file.name in skip):
                continue
            data = Path(str(file.locate())).read_bytes()
            arcname = str(file).replace(os.sep, "/")
            archive.writestr(arcname, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            writer.writerow([arcname, f"sha256={digest.decode()}", len(data)])
        writer.writerow([f"{info}/RECORD", "", ""])
        archive.writestr(f"{info}/RECORD", record.getvalue())


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The third-party wheels every documented command needs (and setuptools to build)."""
    house = tmp_path_factory.mktemp("wheelhouse")
    wanted = [Requirement("setuptools>=77")]
    for _, command in documented_commands():
        wanted += _requirements_of(command)
    for name, dist in _closure(wanted).items():
        if not name.startswith(OURS):
            _pack(dist, house)
    return house


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of this checkout's sources (no environments, caches or builds)."""
    copy = tmp_path_factory.mktemp("clone") / "dsh-user-questions"
    ignore = shutil.ignore_patterns(
        ".git", ".tox", ".venv*", ".cache", "build", "dist", "*.egg-info", "__pycache__", ".*_cache"
    )
    shutil.copytree(ROOT, copy, ignore=ignore)
    return copy


@pytest.fixture(scope="module")
def release_wheels(
    wheelhouse: Path, checkout: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """This repository's four distributions as wheels: what a release would publish."""
    out = tmp_path_factory.mktemp("release")
    projects = [checkout, *sorted(checkout.glob("providers/*"))]
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out), *map(str, projects)],
        env=pip_env([wheelhouse]),
        check=True,
        capture_output=True,
        timeout=600,
    )
    return out


def pip_env(find_links: list[Path]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL"))}
    env.update(
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=" ".join(str(path) for path in find_links),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_CACHE_DIR="1",
        PIP_NO_COMPILE="1",  # no bytecode: it only costs time here
        PIP_PROGRESS_BAR="off",
    )
    return env


def fresh_venv(where: Path) -> Path:
    """A venv without pip of its own; its ``pip`` runs this environment's pip for it."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120
    )
    pip = where / "bin" / "pip"
    python = where / "bin" / "python"
    pip.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pip --python "{python}" "$@"\n')
    pip.chmod(0o755)
    return where


def run(command: str, cwd: Path, env: dict[str, str], stdin: str = "") -> str:
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=600,
        start_new_session=True,  # no controlling terminal: dsh-ask reads its answers on stdin
        check=False,
    )
    assert done.returncode == 0, f"{command!r} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


COMMANDS = [
    pytest.param(command, id=f"{name}: {command}") for name, command in documented_commands()
]


@pytest.mark.parametrize("command", COMMANDS)
def test_the_documented_command_installs_in_a_fresh_venv(
    command: str,
    wheelhouse: Path,
    release_wheels: Path,
    checkout: Path,
    tmp_path: Path,
) -> None:
    """The command runs as written; what it installs is consistent and imports."""
    clone = is_clone_form(command)
    env = pip_env([wheelhouse] if clone else [wheelhouse, release_wheels])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    if command.startswith("python3 -m venv .venv"):
        venv = checkout / ".venv"
        shutil.rmtree(venv, ignore_errors=True)
        env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
        # The line ends by asking in the terminal provider's line mode: answer with "1".
        out = run(command, checkout, env, stdin="1\n")
        assert '"answers"' in out
    else:
        venv = fresh_venv(tmp_path / "venv")
        env["PATH"] = os.pathsep.join([str(venv / "bin"), str(bin_dir), env.get("PATH", "")])
        run(command, checkout, env)
    pip = venv / "bin" / "pip"
    run(f'"{pip}" check', checkout, env)
    names = [canonicalize_name(r.name) for r in _requirements_of(command)]
    listed = run(f'"{pip}" list --format freeze', checkout, env).lower()
    for name in names:
        assert f"{name}==" in listed.replace("_", "-"), f"{name} was not installed"
    if OURS in names or any(n.startswith(OURS) for n in names):
        providers = run(f'"{venv}/bin/dsh-ask" --list-providers || true', checkout, env)
        for name in names:
            if name.startswith(f"{OURS}-"):
                assert name.removeprefix(f"{OURS}-") in providers
    if any("testing" in r.extras for r in _requirements_of(command)):
        # The README's own test of a provider runs with only what this install brought.
        example = (
            f'"{venv}/bin/python" -m pytest -q -p no:cacheprovider examples/test_board_provider.py'
        )
        assert " passed" in run(example, checkout, env)
