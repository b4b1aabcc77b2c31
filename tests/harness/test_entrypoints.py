"""Entry-point discovery with real installed distributions: one provider, two, and a choice.

Each test builds tiny provider distributions with pip (a real wheel build and install into a
target folder) and runs a harness in a fresh interpreter with that folder on its path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tool_cli_env import pip_install_to

HARNESS = textwrap.dedent(
    """
    import asyncio, json
    from dsh_user_questions import AskUserQuestionRequest, UserQuestionError
    from dsh_user_questions.harness import HarnessContext

    ctx = HarnessContext()
    try:
        names = ctx.load_entrypoints()
    except UserQuestionError as error:
        print(json.dumps({"code": error.code, "message": str(error),
                          "service": ctx.get("user_questions") is not None}))
        raise SystemExit(0)
    request = AskUserQuestionRequest.from_dict({"questions": [
        {"id": "q", "question": "?", "options": [{"label": "alpha"}, {"label": "beta"}]}]})
    try:
        answer = asyncio.run(ctx.user_questions.ask(request)).to_dict()
    except UserQuestionError as error:
        answer = {"code": error.code, "message": str(error)}
    print(json.dumps({"names": sorted(names), "answer": answer}))
    """
)


def build_provider(root: Path, name: str) -> Path:
    """Write and pip-install a provider distribution answering with its own name."""
    source = root / f"src-{name}"
    package = source / f"dsh_test_provider_{name}"
    package.mkdir(parents=True)
    (source / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
    )
    (source / "setup.cfg").write_text(
        textwrap.dedent(
            f"""
            [metadata]
            name = dsh-test-provider-{name}
            version = 1.0

            [options]
            packages = dsh_test_provider_{name}

            [options.entry_points]
            dsh =
                {name} = dsh_test_provider_{name}
            """
        )
    )
    (package / "__init__.py").write_text(
        textwrap.dedent(
            f"""
            from dsh_user_questions import hookimpl

            @hookimpl
            async def dsh_user_questions_ask(request):
                return {{"answers": [{{"id": request.questions[0].id, "selected": ["{name}"]}}]}}
            """
        )
    )
    target = root / f"site-{name}"
    pip_install_to(source, target)
    return target


@pytest.fixture(scope="module")
def providers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("providers")
    return {name: build_provider(root, name) for name in ("alpha", "beta")}


def run_harness(*paths: Path, choose: str | None = None) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "DSH_USER_QUESTIONS_PROVIDER"}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in paths)
    if choose is not None:
        env["DSH_USER_QUESTIONS_PROVIDER"] = choose
    done = subprocess.run(
        [sys.executable, "-c", HARNESS], env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_an_installed_provider_is_discovered(providers: dict[str, Path]) -> None:
    """With one provider installed, load_entrypoints gives the service and that provider."""
    result = run_harness(providers["alpha"])
    assert {"user_questions", "alpha"} <= set(result["names"])  # type: ignore[arg-type]
    assert result["answer"] == {"answers": [{"id": "q", "selected": ["alpha"]}]}


def test_two_installed_providers_are_a_duplicate_naming_both(providers: dict[str, Path]) -> None:
    """Two installed providers raise DUPLICATE_PROVIDER naming both and how to choose."""
    result = run_harness(providers["alpha"], providers["beta"])
    assert result["code"] == "DUPLICATE_PROVIDER"
    assert result["message"] == (
        "a user-questions provider is already registered: alpha (from dsh-test-provider-alpha"
        " 1.0) and beta (from dsh-test-provider-beta 1.0) are all installed; choose one with"
        " DSH_USER_QUESTIONS_PROVIDER=alpha or DSH_USER_QUESTIONS_PROVIDER=beta, or uninstall"
        " the others"
    )
    assert result["service"] is True


def test_the_environment_variable_chooses_one_provider(providers: dict[str, Path]) -> None:
    """DSH_USER_QUESTIONS_PROVIDER=beta blocks alpha and beta answers."""
    result = run_harness(providers["alpha"], providers["beta"], choose="beta")
    assert "alpha" not in result["names"]  # type: ignore[operator]
    assert result["answer"] == {"answers": [{"id": "q", "selected": ["beta"]}]}


def test_choosing_a_provider_that_is_not_installed(providers: dict[str, Path]) -> None:
    """A chosen name that no installed provider has is NO_PROVIDER listing what is installed."""
    result = run_harness(providers["alpha"], choose="web")
    assert result["code"] == "NO_PROVIDER"
    assert result["message"] == (
        "no user-questions provider is registered: DSH_USER_QUESTIONS_PROVIDER=web names no"
        " installed provider (installed: alpha (from dsh-test-provider-alpha 1.0))"
    )


def test_without_an_installed_provider_ask_says_no_provider() -> None:
    """The core alone loads the service; asking then is NO_PROVIDER."""
    result = run_harness()
    assert "user_questions" in result["names"]  # type: ignore[operator]
    assert result["answer"] == {
        "code": "NO_PROVIDER",
        "message": "no user-questions provider is registered",
    }
