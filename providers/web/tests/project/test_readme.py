"""The README's harness example, run as a user would: in its own process, answered from a tab
of Chromium that stays open, it prints the answer and exits promptly, with ``async with
HarnessContext()`` (as written) and without closing the context at all.

It runs on this interpreter (tox runs it on every CPython of the matrix) and on each extra one
named in ``DSH_WEB_TEST_PYTHONS`` (paths separated by ``os.pathsep``) that has the web provider
installed.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import WAIT_SECONDS, OpenPage

README = Path(__file__).resolve().parents[2] / "README.md"
EXIT_SECONDS = 15.0


def readme_example() -> str:
    """The README's runnable harness example (the block that calls ``asyncio.run``)."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    (example,) = [block for block in blocks if "asyncio.run(main())" in block]
    return example


def without_aclose(example: str) -> str:
    """The example with a context that is never closed (no ``async with``, no ``aclose()``)."""
    opened = "    async with HarnessContext() as ctx:  # closing it stops the page\n"
    assert opened in example
    return example.replace(opened, "    ctx = HarnessContext()\n    if True:\n")


def pythons() -> list[str]:
    extra = [p for p in os.environ.get("DSH_WEB_TEST_PYTHONS", "").split(os.pathsep) if p]
    return [sys.executable, *extra]


@pytest.mark.browser
@pytest.mark.flaky(reruns=2)
@pytest.mark.parametrize("python", pythons())
@pytest.mark.parametrize("closing", ["async-with", "never-closed"])
async def test_the_readme_example_exits_promptly_with_a_tab_open(
    open_page: OpenPage, tmp_path: Path, python: str, closing: str
) -> None:
    """Answer the README example from a tab that stays open: it prints the answer and exits."""
    example = readme_example() if closing == "async-with" else without_aclose(readme_example())
    script = tmp_path / "example.py"
    script.write_text(example, encoding="utf-8")
    env = {
        key: value for key, value in os.environ.items() if not key.startswith("DSH_USER_QUESTIONS")
    }
    env["DSH_USER_QUESTIONS_PROVIDER"] = "web"
    child = await asyncio.create_subprocess_exec(
        python, str(script), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    try:
        assert child.stderr is not None
        assert child.stdout is not None
        url = ""
        while not url:
            line = (await asyncio.wait_for(child.stderr.readline(), 30)).decode()
            assert line, "the example ended before printing its URL"
            found = re.search(r"answer questions at (\S+)", line)
            url = found.group(1) if found else ""
        page = await open_page(url)
        await page.evaluate(
            """() => {
                window.__notices = [];
                const node = document.getElementById("notice");
                new MutationObserver(() => window.__notices.push(node.textContent))
                    .observe(node, { childList: true, characterData: true, subtree: true });
            }"""
        )
        await page.get_by_role("radio", name="pnpm").check()
        await page.get_by_role("button", name="Submit", exact=True).click()
        printed = await asyncio.wait_for(child.stdout.readline(), WAIT_SECONDS)
        assert printed.decode().strip() == (
            "{'answers': [{'id': 'pkg', 'selected': ['pnpm']}], 'answered_by': 'token'}"
        )
        if closing == "async-with":
            # The context closes after ask() returned, so the page hears the answer was taken.
            # (A context never closed ends with asyncio.run cancelling everything: the page may
            # then not hear it, but it is never told "accepted" for an answer not received.)
            for _ in range(100):
                if "Answer sent. Thank you." in await page.evaluate("window.__notices"):
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError(await page.evaluate("window.__notices"))
        # The tab stays open (its stream reconnecting) while the example must end by itself.
        start = asyncio.get_running_loop().time()
        code = await asyncio.wait_for(child.wait(), EXIT_SECONDS)
        took = asyncio.get_running_loop().time() - start
        print(f"{python} {closing}: exited {code} after {took:.2f} s")
        assert code == 0, (await child.stderr.read()).decode()
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
