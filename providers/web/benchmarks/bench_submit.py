"""With many questions pending, how long a Submit takes to take its card off the page (printed,
never asserted).

One Chromium tab shows N pending asks (default 10,000). Each round clicks Submit on the open
question and measures, inside the page with ``performance.now()``: from the click until the
card's element leaves the document ("card gone"), and until the next frame after that is
painted ("next frame"). It also prints how long ``ask()`` took to return after the click,
measured from Python.

Run: ``python benchmarks/bench_submit.py [--pending 10000] [--rounds 15]`` with Debian's
Chromium at /usr/bin/chromium (or DSH_WEB_TEST_CHROMIUM) and the ``tests`` extra installed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from dsh_user_questions import AskUserQuestionItem, AskUserQuestionOption, AskUserQuestionRequest
from playwright.async_api import Browser, Playwright, async_playwright, expect

from dsh_user_questions_web import WebProvider

CHROMIUM = os.environ.get("DSH_WEB_TEST_CHROMIUM", "/usr/bin/chromium")
OPTIONS = tuple(AskUserQuestionOption(label) for label in ("pnpm", "npm", "yarn"))

# Installed in the page: times each Submit click until its card leaves the document.
PROBE = """() => {
  window.__marks = [];
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button.next");
    if (!button) return;
    const card = button.closest("article.card");
    const started = performance.now();
    const observer = new MutationObserver(() => {
      if (card.isConnected) return;
      observer.disconnect();
      const gone = performance.now() - started;
      requestAnimationFrame(() => setTimeout(() => {
        window.__marks.push([gone, performance.now() - started]);
      }, 0));
    });
    observer.observe(document.getElementById("card-slot"), { childList: true });
  }, true);
}"""


async def launch(playwright: Playwright) -> Browser:
    """Debian's headless Chromium, as the tests run it."""
    return await playwright.chromium.launch(
        executable_path=CHROMIUM,
        headless=True,
        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    )


def line(name: str, values: list[float]) -> str:
    """Median, p95 and max in milliseconds."""
    ms = sorted(values)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return (
        f"{name:<28} median {statistics.median(ms):8.1f} ms   p95 {p95:8.1f} ms"
        f"   max {ms[-1]:8.1f} ms   (n={len(ms)})"
    )


async def main(pending: int, rounds: int) -> None:
    provider = WebProvider(announce=False)
    url = await provider.start()
    asks = []
    for n in range(pending):
        item = AskUserQuestionItem(id="pkg", question=f"Queued {n}?", options=OPTIONS)
        asks.append(asyncio.ensure_future(provider.ask(AskUserQuestionRequest(questions=(item,)))))
    while provider.pending_count < pending:  # noqa: ASYNC110 (no event to wait on)
        await asyncio.sleep(0.01)
    returned: list[float] = []
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        page = await browser.new_page()
        await page.goto(url)
        await expect(page.locator("#queue-count")).to_have_text(str(pending), timeout=120_000)
        await page.evaluate(PROBE)
        for index in range(rounds + 1):  # the first round warms up and is not counted
            # CSS selectors: Playwright's role queries walk the whole queue's accessible names.
            card = page.locator("#card-slot article.card")
            await expect(card.locator("h2.question-text")).to_have_text(f"Queued {index}?")
            await card.locator('input[value="yarn"]').check()
            clicked = time.perf_counter()
            await card.locator("button.next").click()
            await asks[index]
            if index:
                returned.append((time.perf_counter() - clicked) * 1000)
            await page.wait_for_function(f"window.__marks.length > {index}")
        marks = (await page.evaluate("window.__marks"))[1:]
        await browser.close()
    await provider.stop("benchmark finished")
    await asyncio.gather(*asks, return_exceptions=True)
    print(f"dsh-user-questions-web: Submit with {pending} pending (Chromium at {CHROMIUM})")
    print(line("click -> card gone", [gone for gone, _ in marks]))
    print(line("click -> next frame", [frame for _, frame in marks]))
    print(line("click -> ask() returns", returned))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pending", type=int, default=10_000, help="asks pending in the page")
    parser.add_argument("--rounds", type=int, default=15, help="Submits to time")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.pending, arguments.rounds))
