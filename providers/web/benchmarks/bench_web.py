"""Figures for the web provider, printed (never asserted).

- ask() -> question visible: from calling ``ask()`` until the question's heading is visible in
  an open page (measured from Python, so one Playwright round trip is included);
- click -> ask() returns: from clicking Submit until ``ask()`` returns the answer;
- page load with N pending: from navigating a fresh tab until it shows all N queued asks.

Run: ``python benchmarks/bench_web.py [--rounds 30] [--pending 1000]`` with Debian's Chromium
at /usr/bin/chromium (or DSH_WEB_TEST_CHROMIUM) and the ``tests`` extra installed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
)
from dsh_user_questions.harness import Agent
from playwright.async_api import Page, async_playwright, expect

from dsh_user_questions_web import WebProvider

CHROMIUM = os.environ.get("DSH_WEB_TEST_CHROMIUM", "/usr/bin/chromium")
OPTIONS = tuple(AskUserQuestionOption(label) for label in ("pnpm", "npm", "yarn"))


def question(text: str, agent: str | None = None) -> AskUserQuestionRequest:
    """A one-question request whose text is unique, so the page can be waited on."""
    item = AskUserQuestionItem(id="pkg", question=text, options=OPTIONS)
    return AskUserQuestionRequest(questions=(item,), agent=None if agent is None else Agent(agent))


def summary(name: str, seconds: list[float]) -> str:
    """One printed line: median, p95 and max in milliseconds."""
    ms = sorted(value * 1000 for value in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return (
        f"{name:<34} median {statistics.median(ms):8.1f} ms   p95 {p95:8.1f} ms"
        f"   max {ms[-1]:8.1f} ms   (n={len(ms)})"
    )


async def round_trip(provider: WebProvider, page: Page, index: int) -> tuple[float, float]:
    """One ask answered in the page: (ask -> visible, click -> returned) in seconds."""
    text = f"Benchmark question {index}?"
    started = time.perf_counter()
    task: asyncio.Task[AskUserQuestionAnswer] = asyncio.ensure_future(provider.ask(question(text)))
    await expect(page.get_by_role("heading", name=text)).to_be_visible()
    visible = time.perf_counter() - started
    await page.get_by_role("radio", name="yarn").check()
    clicked = time.perf_counter()
    await page.get_by_role("button", name="Submit", exact=True).click()
    answer = await task
    returned = time.perf_counter() - clicked
    assert answer.answers[0].selected == ("yarn",)
    return visible, returned


async def main(rounds: int, pending: int, loads: int) -> None:
    provider = WebProvider(announce=False)
    url = await provider.start()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        context = await browser.new_context()
        page = await context.new_page()
        await page.goto(url)
        await expect(page.locator("body")).to_have_attribute("data-state", "waiting")
        await round_trip(provider, page, -1)  # warm-up, not counted
        visible, returned = [], []
        for index in range(rounds):
            shown, answered = await round_trip(provider, page, index)
            visible.append(shown)
            returned.append(answered)

        asks = [
            asyncio.ensure_future(provider.ask(question(f"Queued {n}?", agent=f"agent-{n % 7}")))
            for n in range(pending)
        ]
        while provider.pending_count < pending:  # noqa: ASYNC110 (no event to wait on)
            await asyncio.sleep(0.01)
        load_times = []
        for _ in range(loads):
            fresh = await context.new_page()
            started = time.perf_counter()
            await fresh.goto(url)
            await expect(fresh.locator("#queue-count")).to_have_text(str(pending), timeout=60_000)
            await expect(fresh.get_by_role("heading", name="Queued 0?")).to_be_visible()
            load_times.append(time.perf_counter() - started)
            await fresh.close()
        await browser.close()
    await provider.stop("benchmark finished")
    await asyncio.gather(*asks, return_exceptions=True)

    print(f"dsh-user-questions-web benchmark (Chromium at {CHROMIUM})")
    print(summary("ask() -> question visible", visible))
    print(summary("click Submit -> ask() returns", returned))
    print(summary(f"page load with {pending} pending", load_times))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="answered asks to time")
    parser.add_argument("--pending", type=int, default=1000, help="asks queued for page load")
    parser.add_argument("--loads", type=int, default=5, help="page loads to time")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.rounds, arguments.pending, arguments.loads))
