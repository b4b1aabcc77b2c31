"""Screenshots of what the human sees, for the docs: ``python tests/capture_pages.py [--write]``.

Serves the repository's package-manager example (examples/package-manager.json) through a
`WebProvider` and photographs, in one headless Chromium, the page and the one-question link
page (the link a notification carries), each at 390 px (a phone) and 1280 px wide, and a number,
a file and an upload question at 390 px. ``--write`` saves them as the repository's
docs/img/web-page-390.png, web-page-1280.png, link-page-390.png, link-page-1280.png,
web-number-390.png, web-files-390.png and web-upload-390.png, and the page a Chinese browser
gets at 390 px as web-page-zh-390.png (needs a CJK font: Debian's fonts-wqy-microhei);
without it, each fresh picture is
compared with the committed one and the number of differing pixels printed.
``test_pictures.py`` fails when they differ.

Deterministic: a fixed page token, the ask's id is never shown, and animations and the text
caret are off. Font rendering may still move a few pixels between machines, so pictures are
compared pixel by pixel with a tolerance (in the page's own canvas: no image library).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
from pathlib import Path
from typing import Any, cast

from dsh_user_questions import AskUserQuestionAnswer, AskUserQuestionRequest
from dsh_user_questions._notify import Notification, Notifier
from playwright.async_api import Browser, Page, async_playwright

from dsh_user_questions_web import WebProvider

ROOT = Path(__file__).resolve().parents[3]
# The repository's docs pictures and examples (absent when the tests run from an unpacked
# sdist).
IMAGES = ROOT / "docs" / "img"
EXAMPLE = ROOT / "examples" / "package-manager.json"
CHROMIUM = os.environ.get("DSH_WEB_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
TOKEN = "docs-screenshot-token-0123456789"
WAIT_SECONDS = 10.0
# Width -> window height: a phone's and a laptop's.
SIZES = {390: 844, 1280: 800}
# A pixel differs when one of its channels moves by more than this (of 255); pictures differ
# when more than MAX_DIFFERING of their pixels do.
CHANNEL_TOLERANCE = 24
MAX_DIFFERING = 0.005


class _Links:
    """A notifier that keeps the notifications' links (no network)."""

    def __init__(self) -> None:
        self.links: list[str] = []

    async def send(self, note: Notification) -> bool:
        if note.link is not None:
            self.links.append(note.link)
        return True


async def _until(condition: Any, what: str) -> None:
    deadline = asyncio.get_running_loop().time() + WAIT_SECONDS
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def _shot(
    browser: Browser, url: str, width: int, *ready: str, locale: str | None = None
) -> bytes:
    """A screenshot of ``url`` in a window ``width`` px wide, once every selector of ``ready``
    matches and the fonts are loaded; an error in the page fails it. ``locale``: the browser's
    language (its Accept-Language), English unless given."""
    errors: list[object] = []
    context = await browser.new_context(
        viewport={"width": width, "height": SIZES[width]},
        color_scheme="light",
        reduced_motion="reduce",
        device_scale_factor=1,
        locale=locale or "en-US",
    )
    try:
        page = await context.new_page()
        page.on("pageerror", lambda error: errors.append(error))
        await page.goto(url)
        for selector in ready:
            await page.locator(selector).first.wait_for(timeout=WAIT_SECONDS * 1000)
        await page.evaluate("document.fonts.ready.then(() => true)")
        shot = await page.screenshot(animations="disabled", caret="hide")
        if errors:
            raise AssertionError(f"{url} at {width} px: errors in the page: {errors}")
        return shot
    finally:
        await context.close()


async def shoot(browser: Browser) -> dict[str, bytes]:
    """The pictures, by file name, taken now."""
    links = _Links()
    provider = WebProvider(announce=False, token=TOKEN, notifier=cast(Notifier, links))
    await provider.start()
    request = AskUserQuestionRequest.from_dict(json.loads(EXAMPLE.read_text(encoding="utf-8")))
    asking: asyncio.Task[AskUserQuestionAnswer] = asyncio.ensure_future(provider.ask(request))
    try:
        await _until(lambda: bool(links.links) or asking.done(), "the question's link")
        if asking.done():
            asking.result()
        assert provider.url is not None
        pictures = {}
        for width in SIZES:
            pictures[f"web-page-{width}.png"] = await _shot(
                browser,
                provider.url,
                width,
                "article[data-ask-id]",
                '#connection[data-state="open"]',
            )
            pictures[f"link-page-{width}.png"] = await _shot(browser, links.links[0], width, "h1")
        # The page a Chinese browser gets (a CJK font: Debian's fonts-wqy-microhei).
        pictures["web-page-zh-390.png"] = await _shot(
            browser,
            provider.url,
            390,
            "article[data-ask-id]",
            '#connection[data-state="open"]',
            locale="zh-CN",
        )
        return pictures
    finally:
        await provider.stop()
        if asking.done() and not asking.cancelled():
            asking.exception()


# The typed answers' pictures (issue 36): one question each, on a phone.
INPUTS: dict[str, dict[str, Any]] = {
    "web-number-390.png": {
        "id": "workers",
        "header": "Workers",
        "question": "How many test workers should CI run?",
        "input": {"type": "number", "min": 1, "max": 16, "step": 1, "unit": "workers"},
    },
    "web-files-390.png": {
        "id": "read",
        "header": "Context",
        "question": "Which files should I read before changing the parser?",
        "input": {
            "type": "files",
            "root": "/",
            "max_count": 3,
            "candidates": [
                "README.md",
                "docs/parser.md",
                "src/lexer.py",
                "src/parser.py",
                "src/tokens.py",
                "tests/test_lexer.py",
                "tests/test_parser.py",
            ],
        },
    },
    "web-upload-390.png": {
        "id": "shot",
        "header": "Screenshot",
        "question": "Can you send a screenshot of the broken dialog?",
        "input": {"type": "upload", "accept": ["image/*"], "max_bytes": 5242880, "max_count": 1},
    },
}


async def shoot_inputs(browser: Browser) -> dict[str, bytes]:
    """The typed answers' pictures, by file name, taken now (one provider each)."""
    pictures = {}
    for name, question in INPUTS.items():
        provider = WebProvider(announce=False, token=TOKEN)
        await provider.start()
        request = AskUserQuestionRequest.from_dict({"questions": [question]})
        asking = asyncio.ensure_future(provider.ask(request))
        try:
            await _until(
                lambda p=provider, a=asking: p.pending_count > 0 or a.done(), "the question"
            )
            if asking.done():
                asking.result()
            assert provider.url is not None
            ready = ["article[data-ask-id]", '#connection[data-state="open"]']
            if question["input"]["type"] == "files":
                ready.append(".file-row")
            pictures[name] = await _shot(browser, provider.url, 390, *ready)
        finally:
            await provider.stop()
            if asking.done() and not asking.cancelled():
                asking.exception()
    return pictures


_COUNT_DIFFERING = """async ([a, b, tolerance]) => {
  const load = (data) => new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => resolve(image);
    image.onerror = () => reject(new Error("not a PNG"));
    image.src = "data:image/png;base64," + data;
  });
  const pixels = (image) => {
    const canvas = document.createElement("canvas");
    canvas.width = image.width;
    canvas.height = image.height;
    const context = canvas.getContext("2d");
    context.drawImage(image, 0, 0);
    return context.getImageData(0, 0, image.width, image.height).data;
  };
  const [first, second] = [await load(a), await load(b)];
  if (first.width !== second.width || first.height !== second.height) {
    return {size: [[first.width, first.height], [second.width, second.height]], differing: -1,
            total: first.width * first.height};
  }
  const [p, q] = [pixels(first), pixels(second)];
  let differing = 0;
  for (let i = 0; i < p.length; i += 4) {
    if (Math.abs(p[i] - q[i]) > tolerance || Math.abs(p[i + 1] - q[i + 1]) > tolerance ||
        Math.abs(p[i + 2] - q[i + 2]) > tolerance || Math.abs(p[i + 3] - q[i + 3]) > tolerance) {
      differing++;
    }
  }
  return {size: null, differing, total: first.width * first.height};
}"""


async def differing_pixels(page: Page, first: bytes, second: bytes) -> tuple[int, int, str]:
    """How many pixels of two PNGs differ (beyond the tolerance), of how many, and what the
    difference is in words; -1 differing when their sizes differ."""
    result = await page.evaluate(
        _COUNT_DIFFERING,
        [base64.b64encode(first).decode(), base64.b64encode(second).decode(), CHANNEL_TOLERANCE],
    )
    differing, total = int(result["differing"]), int(result["total"])
    if result["size"] is not None:
        (w1, h1), (w2, h2) = result["size"]
        return differing, total, f"the size differs: {w1}x{h1} against {w2}x{h2}"
    share = differing / total if total else 0.0
    return differing, total, f"{differing} of {total} pixels differ ({share:.2%})"


def too_different(differing: int, total: int) -> bool:
    """Whether pictures differing in ``differing`` of ``total`` pixels no longer match."""
    return differing < 0 or differing > MAX_DIFFERING * total


async def main(argv: list[str]) -> int:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            pictures = await shoot(browser)
            pictures.update(await shoot_inputs(browser))
            if "--write" in argv:
                IMAGES.mkdir(parents=True, exist_ok=True)
                for name, data in pictures.items():
                    (IMAGES / name).write_bytes(data)
                    print(f"wrote docs/img/{name}")
                return 0
            blank = await browser.new_page()
            stale = 0
            for name, data in pictures.items():
                path = IMAGES / name
                if not path.exists():
                    print(f"docs/img/{name}: missing")
                    stale += 1
                    continue
                differing, total, words = await differing_pixels(blank, path.read_bytes(), data)
                stale += too_different(differing, total)
                print(f"docs/img/{name}: {words}")
            return 1 if stale else 0
        finally:
            await browser.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
