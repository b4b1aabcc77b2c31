"""README.zh.md keeps in step with README.md: the same commands, the same links."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")
BLOCK = re.compile(r"```(?:sh|bash)\n(.*?)```", re.S)
SWITCH = "https://github.com/dsh-user-questions/dsh-user-questions/blob/main/README"


def read(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def two_commands(text: str) -> list[str]:
    """The shell blocks of the first section (the two commands), in order."""
    section = text.split("\n## ", 2)[1]
    return BLOCK.findall(section)


def links(text: str) -> set[str]:
    return {link for link in LINK.findall(text) if not link.startswith(SWITCH)}


def test_the_chinese_readme_gives_the_same_two_commands() -> None:
    """The commands to run it and to test it are the English README's, byte for byte."""
    english = two_commands(read("README.md"))
    assert len(english) == 2
    assert two_commands(read("README.zh.md")) == english


def test_the_chinese_readme_has_the_same_links() -> None:
    """Every link of one README is in the other (the language switch aside), so a page added
    to the English README's list is added to the Chinese one too."""
    assert links(read("README.zh.md")) == links(read("README.md"))


def test_each_readme_links_the_other() -> None:
    """English | 中文 at the top of both."""
    assert f"{SWITCH}.zh.md" in read("README.md")
    assert f"{SWITCH}.md" in read("README.zh.md")


QUICKSTART = ROOT / "docs" / "quickstart.md"
QUICKSTART_ZH = ROOT / "docs" / "quickstart.zh.md"
PYTHON = re.compile(r"```(?:python|text)\n(.*?)```", re.S)
SHELL = re.compile(r"```(?:sh|bash)\n(.*?)```", re.S)
PAGE_LINK = re.compile(r"\]\(([\w.-]+\.md(?:#[\w-]+)?)\)")


def test_the_chinese_quickstart_gives_the_same_commands_and_example() -> None:
    """Every shell block of the quickstart is in the Chinese one, in order (which adds its
    language's block), and the Python example and what it prints are the same bytes."""
    english = QUICKSTART.read_text(encoding="utf-8")
    chinese = QUICKSTART_ZH.read_text(encoding="utf-8")
    shell = SHELL.findall(chinese)
    assert [block for block in shell if block in SHELL.findall(english)] == SHELL.findall(english)
    assert any("LANG=zh_CN.UTF-8" in block for block in shell)
    assert PYTHON.findall(chinese) == PYTHON.findall(english)


def test_the_quickstarts_link_the_same_pages_and_each_other() -> None:
    """The same pages of the site are linked from both (the Chinese one adds the languages
    page), each links the other, and the site's navigation has both."""
    english = set(PAGE_LINK.findall(QUICKSTART.read_text(encoding="utf-8")))
    chinese = set(PAGE_LINK.findall(QUICKSTART_ZH.read_text(encoding="utf-8")))
    assert "quickstart.zh.md" in english
    assert "quickstart.md" in chinese
    assert english - {"quickstart.zh.md"} == chinese - {"quickstart.md", "i18n.md"}
    nav = read("mkdocs.yml")
    assert "quickstart.md" in nav
    assert "quickstart.zh.md" in nav
