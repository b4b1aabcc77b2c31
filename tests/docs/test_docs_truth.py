"""The docs tell the truth: names that exist, every distribution, every shortcut around pluggy."""

from __future__ import annotations

import ast
import asyncio
import configparser
import importlib
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CORE_API = ROOT / "docs" / "CORE_API.md"
LAYOUT = ROOT / "docs" / "layout.md"
PACKAGE = ROOT / "dsh_user_questions"


def _resolve(dotted: str) -> object:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name)
        return found
    raise ImportError(dotted)


def test_core_api_cites_only_names_that_exist() -> None:
    """Every dsh_user_questions.<...> name written in docs/CORE_API.md imports."""
    text = CORE_API.read_text("utf-8")
    names = set(re.findall(r"`(dsh_user_questions(?:\.\w+)+)", text))
    for module, imported in re.findall(r"`from (dsh_user_questions[\w.]*) import ([^`]*)`", text):
        names.update(f"{module}.{name.strip()}" for name in imported.split(","))
    for constructor in re.findall(r"`(\w+)\(", text.split("Build them", 1)[1].split("##")[0]):
        names.add(f"dsh_user_questions.errors.UserQuestionError.{constructor}")
    assert len(names) >= 40
    missing = []
    for name in sorted(names):
        try:
            _resolve(name)
        except (ImportError, AttributeError):
            missing.append(name)
    assert missing == []


def test_core_api_service_and_context_signatures_are_todays() -> None:
    """The signatures docs/CORE_API.md gives for aclose, ask and load_entrypoints are real."""
    import inspect

    from dsh_user_questions import UserQuestionService
    from dsh_user_questions.harness import HarnessContext

    text = CORE_API.read_text("utf-8")
    assert "async aclose(*, grace=5.0)" in text
    assert (
        str(inspect.signature(HarnessContext.aclose)) == "(self, *, grace: 'float' = 5.0) -> 'None'"
    )
    assert "async ask(request, timeout=None)" in text
    assert list(inspect.signature(UserQuestionService.ask).parameters) == [
        "self",
        "request",
        "timeout",
    ]
    assert 'load_entrypoints(group="dsh")' in text
    assert "group" in inspect.signature(HarnessContext.load_entrypoints).parameters


async def test_the_core_api_example_runs() -> None:
    """The SharedProvider and receipt example of docs/CORE_API.md works as it says."""
    from dsh_user_questions import plugin
    from dsh_user_questions.harness import HarnessContext
    from dsh_user_questions.testing import make_request

    code = re.search(r"```python\n(.*?)```", CORE_API.read_text("utf-8"), re.S)
    assert code is not None
    namespace: dict[str, Any] = {}
    exec(compile(code.group(1), str(CORE_API), "exec"), namespace)
    page = namespace["plugin"]
    async with HarnessContext() as ctx:
        ctx.register(plugin)
        ctx.register(page, name="page")
        answer = await ctx.user_questions.ask(make_request())
        assert answer.answers[0].selected == ("pnpm",)
        for _ in range(3):
            await asyncio.sleep(0)
    assert page.confirmations == ["Answer sent. Thank you."]
    assert page.contexts == []


def _section(title: str) -> str:
    text = LAYOUT.read_text("utf-8")
    return text.split(title, 1)[1].split("\n## ", 1)[0]


def test_the_layout_lists_every_distribution() -> None:
    """Each setup.cfg's distribution name (the core's and every provider's) is in docs/layout.md."""
    layout = _section("# Layout")
    names = []
    for setup in [ROOT / "setup.cfg", *sorted(ROOT.glob("providers/*/setup.cfg"))]:
        config = configparser.ConfigParser(interpolation=None)
        config.read(setup, encoding="utf-8")
        names.append(config["metadata"]["name"])
    assert len(names) >= 4
    assert [name for name in names if f"`{name}`" not in layout] == []


PLUGGY_PRIVATE = re.compile(r"\b(_hookimpls|_inner_hookexec|_hookexec|_multicall|_name2plugin)\b")
# OpenTelemetry's private module and the globals its setters keep.
OTEL_PRIVATE = re.compile(r"\b(_internal|_TRACER_PROVIDER|_METER_PROVIDER|_ProxyMeterProvider)\b")


def test_no_core_module_reaches_into_pluggy_s_internals() -> None:
    """The core uses only pluggy's public API (no _hookimpls, _hookexec, _multicall...)."""
    reaching = sorted(
        path.stem
        for path in PACKAGE.rglob("*.py")
        if PLUGGY_PRIVATE.search(
            "\n".join(
                line
                for line in path.read_text("utf-8").splitlines()
                if not line.lstrip().startswith("#")
            )
        )
    )
    assert reaching == []


def test_no_core_module_reaches_into_opentelemetry_s_internals() -> None:
    """The tracer asks OpenTelemetry's public getters whether an SDK is set, never the API's
    private module or the globals its setters keep."""
    reaching = sorted(
        path.stem for path in PACKAGE.rglob("*.py") if OTEL_PRIVATE.search(path.read_text("utf-8"))
    )
    assert reaching == []


def test_no_error_message_is_built_outside_errors_py() -> None:
    """Outside errors.py the core builds its errors with errors.py's constructors only."""
    built = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in {"UserQuestionError", "HarnessError"}
            ):
                built.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert built == []
