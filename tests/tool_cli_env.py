"""A hermetic Python environment for running ``dsh-ask`` in a real subprocess.

The subprocess runs ``python -S`` (no site-packages) with ``PYTHONPATH`` set to a folder of
symlinks to this package and its runtime dependencies, plus the ``--target`` folders of tiny
scripted provider distributions built and installed here with pip. So the providers it sees
are exactly the ones a test installs, whatever else is installed on the machine.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path

import dsh_user_questions

# What the package needs at run time, also when it is not installed (a source checkout).
_FALLBACK_REQUIREMENTS = ("attrs", "pluggy", "fastjsonschema", "jsonschema")

SCRIPT_ENV = "DSH_TOOL_TEST_SCRIPT"
"""JSON list of steps for the scripted providers, one per ask: ``{"answer": <wire form>}``,
``{"cancel": true}``, ``{"hang": true}``, ``{"not_interactive": true}`` or
``{"crash": "<message>"}``."""
LOG_ENV = "DSH_TOOL_TEST_LOG"
"""A file each scripted provider appends ``{"provider": name, "request": <wire form>}`` to."""

_PROVIDER_MODULE = '''\
"""Scripted user-questions provider {name!r} for the dsh-ask subprocess tests."""

import asyncio
import json
import os

from dsh_user_questions import UserQuestionError, hookimpl

_steps = None


def _next_step():
    global _steps
    if _steps is None:
        _steps = json.loads(os.environ.get("{script_env}", "[]"))
    return _steps.pop(0) if _steps else {{"cancel": True}}


@hookimpl
async def dsh_user_questions_ask(request):
    log = os.environ.get("{log_env}")
    if log:
        with open(log, "a", encoding="utf-8") as file:
            record = {{
                "provider": {name!r},
                "request": request.to_dict(),
                "plain": os.environ.get("DSH_USER_QUESTIONS_PLAIN"),
            }}
            file.write(json.dumps(record) + "\\n")
    step = _next_step()
    if "answer" in step:
        return step["answer"]
    if step.get("hang"):
        await asyncio.Event().wait()
    if "crash" in step:
        raise RuntimeError(step["crash"])
    if step.get("not_interactive"):
        raise UserQuestionError.not_interactive("no terminal here")
    raise UserQuestionError.cancelled()
'''

_SETUP_CFG = """\
[metadata]
name = dsh-tool-test-provider-{name}
version = 1.0

[options]
py_modules = {module}

[options.entry_points]
dsh =
    {name} = {module}
"""


def build_site(root: Path) -> Path:
    """A folder of symlinks to this package and its runtime dependencies."""
    site = root / "site"
    site.mkdir()
    package_dir = Path(dsh_user_questions.__file__).parent
    (site / package_dir.name).symlink_to(package_dir, target_is_directory=True)
    requirements: list[str] = list(_FALLBACK_REQUIREMENTS)
    try:
        core = metadata.distribution("dsh-user-questions")
    except metadata.PackageNotFoundError:
        pass
    else:
        requirements.extend(core.requires or ())
        if Path(str(core.locate_file("dsh_user_questions"))).resolve() == package_dir.resolve():
            # Installed for real: bring its dist-info, and so its own "dsh" entry point.
            _link_tops(site, core, only_metadata=True)
    for dist in _closure(requirements):
        _link_tops(site, dist, only_metadata=False)
    return site


def _closure(requirements: Iterable[str]) -> list[metadata.Distribution]:
    found: dict[str, metadata.Distribution] = {}
    pending = list(requirements)
    while pending:
        requirement = pending.pop()
        if "extra ==" in requirement or "extra==" in requirement:
            continue
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
        if match is None:
            continue
        key = re.sub(r"[-_.]+", "-", match.group()).lower()
        if key in found:
            continue
        try:
            dist = metadata.distribution(key)
        except metadata.PackageNotFoundError:
            continue  # e.g. a backport this Python does not need
        found[key] = dist
        pending.extend(dist.requires or ())
    return list(found.values())


def _link_tops(site: Path, dist: metadata.Distribution, *, only_metadata: bool) -> None:
    for file in dist.files or ():
        top = file.parts[0]
        if top in ("..", "__pycache__") or (site / top).exists():
            continue
        is_metadata = top.endswith((".dist-info", ".egg-info"))
        if only_metadata and not is_metadata:
            continue
        source = Path(str(dist.locate_file(top)))
        if source.exists():
            (site / top).symlink_to(source, target_is_directory=source.is_dir())


def pip_install_to(project: Path, target: Path) -> None:
    """pip-install the distribution in ``project`` into the folder ``target``, offline."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--disable-pip-version-check",
            "--target",
            str(target),
            str(project),
        ],
        check=True,
        capture_output=True,
        cwd=project.parent,
    )


def install_provider(root: Path, name: str) -> Path:
    """Build the scripted provider ``name`` as a distribution and pip-install it to a folder."""
    module = f"dsh_tool_test_provider_{name}"
    project = root / f"project-{name}"
    project.mkdir()
    (project / f"{module}.py").write_text(
        _PROVIDER_MODULE.format(name=name, script_env=SCRIPT_ENV, log_env=LOG_ENV),
        encoding="utf-8",
    )
    (project / "setup.cfg").write_text(_SETUP_CFG.format(name=name, module=module))
    (project / "pyproject.toml").write_text(
        textwrap.dedent(
            """\
            [build-system]
            requires = ["setuptools", "wheel"]
            build-backend = "setuptools.build_meta"
            """
        )
    )
    target = root / f"provider-{name}"
    pip_install_to(project, target)
    return target


def run_cli(
    site: Path,
    providers: Sequence[Path],
    args: Sequence[str],
    *,
    cwd: Path,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -S -m dsh_user_questions._cli ARGS`` in the hermetic environment."""
    return subprocess.run(
        cli_command(args),
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        env=cli_env(site, providers, env),
        timeout=timeout,
    )


def cli_command(args: Sequence[str]) -> list[str]:
    """The command line running the CLI module without site-packages."""
    return [sys.executable, "-S", "-m", "dsh_user_questions._cli", *args]


def cli_env(site: Path, providers: Sequence[Path], extra: dict[str, str] | None) -> dict[str, str]:
    """The subprocess environment: this one, less provider choices, with the hermetic path."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key
        not in (
            "DSH_USER_QUESTIONS_PROVIDER",
            "DSH_USER_QUESTIONS_PLAIN",
            "PYTHONPATH",
            SCRIPT_ENV,
            LOG_ENV,
        )
    }
    env["PYTHONPATH"] = os.pathsep.join([str(site), *(str(p) for p in providers)])
    env["PYTHONIOENCODING"] = "utf-8"
    env.update(extra or {})
    return env
