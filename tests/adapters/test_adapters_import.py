"""The adapters and MCP stay optional: the core imports none of their frameworks."""

from __future__ import annotations

import subprocess
import sys

import pytest

FRAMEWORKS = (
    "mcp",
    "mcp_types",
    "pydantic_ai",
    "agents",
    "langchain_core",
    "langgraph",
    "llm",
    "smolagents",
    "autogen_agentchat",
    "crewai",
    "agno",
    "openai",
    "pydantic",
    "claude_agent_sdk",
)


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


def test_the_core_imports_no_framework() -> None:
    """``import dsh_user_questions`` (with the tool and the adapters package) loads no framework."""
    done = _python(
        "import sys, dsh_user_questions, dsh_user_questions.tool, dsh_user_questions.adapters\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({FRAMEWORKS!r})))"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("dsh_user_questions.adapters.pydantic_ai", "pydantic_ai", "pydantic-ai"),
        ("dsh_user_questions.adapters.openai_agents", "agents", "openai-agents"),
        ("dsh_user_questions.adapters.langchain", "langchain_core", "langchain"),
        ("dsh_user_questions.adapters.langgraph", "langgraph", "langgraph"),
        ("dsh_user_questions.adapters.llm", "llm", "llm"),
        ("dsh_user_questions.adapters.smolagents", "smolagents", "smolagents"),
        ("dsh_user_questions.adapters.autogen", "autogen_agentchat", "autogen"),
        ("dsh_user_questions.adapters.crewai", "crewai", "crewai"),
        ("dsh_user_questions.adapters.agno", "agno", "agno"),
        ("dsh_user_questions.adapters.google_adk", "google.adk", "google-adk"),
        (
            "dsh_user_questions.adapters.claude_agent_sdk",
            "claude_agent_sdk",
            "claude-agent-sdk",
        ),
        ("dsh_user_questions.mcp", "mcp", "mcp"),
    ],
)
def test_a_missing_framework_says_which_extra_to_install(
    module: str, framework: str, extra: str
) -> None:
    """Importing an adapter without its framework raises ImportError naming the extra."""
    done = _python(f"import sys; sys.modules[{framework!r}] = None; import {module}")
    assert done.returncode == 1
    assert f"pip install 'dsh-user-questions[{extra}]'" in done.stderr
