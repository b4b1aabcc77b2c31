"""How fast a file question over a large tree lists and opens on the page, printed (never
asserted): ``python benchmarks/bench_files.py [--files 100000] [--rounds 5]``.

Makes a tree of ``--files`` empty files (1,000 folders), then times:

- listing it: `AskUserQuestionInput.files` (the asker's one walk; at most
  ``MAX_FILE_CANDIDATES`` candidates kept);
- opening it on the page: from calling ``ask()`` until an open page (Chromium, 390 px) shows
  the list drawn (its file list fetched from the ``files`` route, the first rows drawn);
- a filter keystroke: from typing into the filter until the narrowed count shows.

Needs Debian's Chromium at /usr/bin/chromium (or DSH_WEB_TEST_CHROMIUM) and the ``tests``
extra.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from dsh_user_questions import AskUserQuestionInput, AskUserQuestionItem, AskUserQuestionRequest
from playwright.async_api import async_playwright, expect

from dsh_user_questions_web import WebProvider

CHROMIUM = os.environ.get("DSH_WEB_TEST_CHROMIUM", "/usr/bin/chromium")


def make_tree(root: Path, count: int) -> None:
    folders = 1000
    for number in range(count):
        folder = root / f"pkg{number % folders}"
        if number < folders:
            folder.mkdir(parents=True)
        (folder / f"module_{number}.py").touch()


async def measure(root: Path, rounds: int) -> tuple[list[float], list[float], list[float], int]:
    provider = WebProvider(announce=False)
    url = await provider.start()
    listed: list[float] = []
    opened: list[float] = []
    filtered: list[float] = []
    count = 0
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        page = await (await browser.new_context(viewport={"width": 390, "height": 800})).new_page()
        await page.goto(url)
        await expect(page.locator("body")).to_have_attribute("data-state", "waiting")
        for index in range(rounds + 1):  # the first round warms up, not counted
            started = time.perf_counter()
            field = AskUserQuestionInput.files(root)
            walked = time.perf_counter() - started
            count = len(field.candidates or ())
            item = AskUserQuestionItem(id="q", question=f"Which files? ({index})", input=field)
            started = time.perf_counter()
            task = asyncio.ensure_future(provider.ask(AskUserQuestionRequest(questions=[item])))
            status = page.locator(".files-status")
            await expect(status).to_contain_text(f"of {count:,} files match", timeout=30_000)
            shown = time.perf_counter() - started
            started = time.perf_counter()
            await page.locator(".files-filter").fill("pkg7/")
            await expect(status).to_contain_text(" of ", timeout=30_000)
            await expect(status).not_to_contain_text(f"{count:,} of {count:,}", timeout=30_000)
            narrowed = time.perf_counter() - started
            await page.get_by_role("button", name="Skip").click()
            await task
            if index:
                listed.append(walked)
                opened.append(shown)
                filtered.append(narrowed)
        await browser.close()
    await provider.stop()
    return listed, opened, filtered, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        make_tree(root, args.files)
        listed, opened, filtered, count = asyncio.run(measure(root, args.rounds))
    ms = statistics.median
    print(
        f"CPython {platform.python_version()}, load average {os.getloadavg()[0]:.2f}, median of"
        f" {args.rounds}: a tree of {args.files:,} files listed in {ms(listed) * 1000:.0f} ms"
        f" ({count:,} candidates kept); ask() -> the page shows the list in"
        f" {ms(opened) * 1000:.0f} ms; a filter keystroke -> the narrowed list in"
        f" {ms(filtered) * 1000:.0f} ms; list and open: {(ms(listed) + ms(opened)) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
