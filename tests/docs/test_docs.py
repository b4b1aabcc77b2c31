"""The documentation site: its examples print what they say, its error table is the code's, and
``mkdocs build --strict`` fails on a dangling link (the docs tox env builds the real site)."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dsh_user_questions import _cli as cli
from dsh_user_questions import errors
from dsh_user_questions.errors import UserQuestionError, UserQuestionErrorCode

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

pytestmark = pytest.mark.skipif(not DOCS.is_dir(), reason="not a checkout of the repository")

_EXAMPLE = re.compile(r"```python\n((?:(?!```).)*?)```\s*\nprints\s*\n\s*```text\n(.*?)```", re.S)


def examples() -> list[object]:
    """Each python block of a page that is followed by "prints" and the text it prints."""
    found = []
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for number, (code, expected) in enumerate(_EXAMPLE.findall(text), 1):
            found.append(pytest.param(code, expected, id=f"{page.name}-{number}"))
    return found


EXAMPLES = examples()


def test_the_pages_with_claimed_output_are_checked() -> None:
    """The guides that claim output are among the examples run here."""
    pages = {param.id.rsplit("-", 1)[0] for param in EXAMPLES}  # type: ignore[attr-defined]
    assert {"quickstart.md", "harness.md", "errors.md", "questions.md", "tool.md"} <= pages


@pytest.mark.parametrize(("code", "expected"), EXAMPLES)
def test_a_documented_example_prints_what_the_page_says(
    code: str, expected: str, tmp_path: Path
) -> None:
    """The example runs as written, in a process of its own, and prints the page's text."""
    if "import mcp" in code:
        pytest.importorskip("mcp")
    if "claude_agent_sdk" in code:
        pytest.importorskip("claude_agent_sdk")
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-W", "error", str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected


_ROW = re.compile(
    r"^\| `([A-Z_]+)` \| `(\w+)` \| (\d+) \| (\w+) \| (yes|no) \| (yes|no) \| `(.*)` \|$", re.M
)

_SAMPLES = {
    "ASK_ABORTED": lambda: UserQuestionError.aborted(),
    "ASK_TIMED_OUT": lambda: UserQuestionError.timed_out(),
    "EMPTY_QUESTIONS": lambda: UserQuestionError.empty_questions(),
    "CALLER_NOT_LIVE": lambda: UserQuestionError.caller_not_live(),
    "DELEGATED_CALLER": lambda: UserQuestionError.delegated_caller(),
    "BAD_INTENT": lambda: UserQuestionError.bad_intent_label("q", "plan-review", "Go"),
    "NO_PROVIDER": lambda: UserQuestionError.no_provider(),
    "DUPLICATE_PROVIDER": lambda: UserQuestionError.duplicate_provider(),
    "ASK_CANCELLED": lambda: UserQuestionError.cancelled(),
    "BAD_ANSWER": lambda: UserQuestionError.bad_answer("answers[0]: not an option"),
    "INVALID_ARGS": lambda: UserQuestionError.invalid_args("questions: required"),
    "BAD_QUESTION": lambda: UserQuestionError.bad_question("q", "has two options labelled a"),
    "NOT_INTERACTIVE": lambda: UserQuestionError.not_interactive(),
    "STORE_UNUSABLE": lambda: UserQuestionError.store_unusable("the disk is full"),
    "ASKED_ELSEWHERE": lambda: UserQuestionError.asked_elsewhere("k", "label 'h', process p"),
    "CONTEXT_CLOSED": lambda: UserQuestionError.asked_after_close(),
    "BAD_AUDIENCE": lambda: UserQuestionError.bad_audience('entry 0 "group:x" names no group'),
    "NOT_IN_AUDIENCE": lambda: UserQuestionError.not_in_audience("bo", "group:oncall"),
}


def _exit_status(error: UserQuestionError) -> int:
    with contextlib.redirect_stderr(io.StringIO()):
        return cli._report(error, None)


def test_the_error_table_is_the_outcome_table() -> None:
    """docs/errors.md has a row per code, equal to its row of errors.OUTCOMES: the class its
    constructor builds, the exit status dsh-ask gives it, the MCP elicitation's action, whether
    a durable question stays pending, whether it is the user's choice, and its message
    (``<...>`` standing for what is filled in)."""
    rows = {code: rest for code, *rest in _ROW.findall((DOCS / "errors.md").read_text("utf-8"))}
    assert set(rows) == {code.value for code in UserQuestionErrorCode}
    yes = {"yes": True, "no": False}
    for code, (family, status, action, pending, chosen, message) in rows.items():
        row = errors.OUTCOMES[code]
        assert (row.family.__name__, row.exit_status, row.elicitation) == (
            family,
            int(status),
            action,
        ), code
        assert (row.keeps_pending, row.chosen, row.message) == (
            yes[pending],
            yes[chosen],
            message,
        ), code
        error = _SAMPLES[code]()
        assert error.code == code
        assert type(error) is row.family, code
        assert error.outcome is row
        assert _exit_status(error) == row.exit_status, code
        pattern = re.escape(message)
        pattern = re.sub(r"<[^&>]+>", ".+", pattern.replace(r"\<", "<").replace(r"\>", ">"))
        assert re.fullmatch(pattern, str(error)), (code, message, str(error))


def test_the_readme_points_to_the_documentation() -> None:
    """The README links the site's pages (absolute links, which a package index shows)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    site = "https://dsh-user-questions.github.io/dsh-user-questions/"
    linked = set(re.findall(re.escape(site) + r"([\w-]*/)?\)", readme))
    pages = {page.stem for page in DOCS.glob("*.md")} - {"index"}
    assert {f"{page}/" for page in pages} <= linked, "a docs page the README does not link"


def test_every_page_is_in_the_navigation() -> None:
    """mkdocs.yml's nav names every page of docs/ (strict mode fails on one left out)."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in DOCS.rglob("*.md"):
        assert page.relative_to(DOCS).as_posix() in config, page


def _mkdocs(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )


def test_strict_build_fails_on_a_dangling_link(tmp_path: Path) -> None:
    """The site's validation settings turn a link to a missing page or anchor into a failure."""
    pytest.importorskip("mkdocs")
    settings = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    validation = settings[settings.index("validation:") :].split("\nnav:", 1)[0]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the guide](guide.md).\n", encoding="utf-8")
    (docs / "guide.md").write_text("# Guide\n\n[up](index.md#top-of-page)\n", encoding="utf-8")
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        textwrap.dedent(
            """\
            site_name: probe
            nav:
              - index.md
              - guide.md
            """
        )
        + validation,
        encoding="utf-8",
    )
    dangling = _mkdocs(config)
    assert dangling.returncode != 0
    assert "top-of-page" in dangling.stderr + dangling.stdout
    (docs / "guide.md").write_text("# Guide\n\n[up](index.md#home)\n", encoding="utf-8")
    assert _mkdocs(config).returncode == 0
    (docs / "guide.md").write_text("# Guide\n\n[gone](missing.md)\n", encoding="utf-8")
    assert _mkdocs(config).returncode != 0
    shutil.rmtree(tmp_path / "site", ignore_errors=True)
