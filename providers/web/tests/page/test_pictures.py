"""The docs' pictures of the page and the link page are what capture_pages.py takes now."""

from __future__ import annotations

import pytest
from capture_pages import IMAGES, differing_pixels, shoot, shoot_inputs, too_different
from playwright.async_api import Browser

pytestmark = pytest.mark.browser


class TestThePictures:
    async def test_committed_pictures_match_a_fresh_capture(self, browser: Browser) -> None:
        """docs/img's web-page and link-page pictures (390 and 1280 px) of the package-manager
        example, the typed answers' (number, files, upload at 390 px) and the page in Chinese
        (390 px) match fresh
        screenshots to within 0.5% of their pixels (refresh:
        ``python tests/capture_pages.py --write``)."""
        if not IMAGES.is_dir():
            pytest.skip("not in the repository: docs/img is not here (an unpacked sdist)")
        pictures = {**await shoot(browser), **await shoot_inputs(browser)}
        assert sorted(pictures) == [
            "link-page-1280.png",
            "link-page-390.png",
            "web-files-390.png",
            "web-number-390.png",
            "web-page-1280.png",
            "web-page-390.png",
            "web-page-zh-390.png",
            "web-upload-390.png",
        ]
        page = await browser.new_page()
        try:
            stale = []
            for name, data in pictures.items():
                path = IMAGES / name
                assert path.exists(), f"docs/img/{name} is missing: run capture_pages.py --write"
                differing, total, words = await differing_pixels(page, path.read_bytes(), data)
                if too_different(differing, total):
                    stale.append(f"docs/img/{name}: {words}")
        finally:
            await page.close()
        assert stale == [], f"stale pictures (run capture_pages.py --write): {stale}"

    async def test_the_comparison_counts_the_pixels_that_changed(self, browser: Browser) -> None:
        """Identical pictures differ in no pixel; a square grown by 10x10 pixels differs in
        exactly those 100 of 10,000 (1%: too different); pictures of two sizes never match."""
        context = await browser.new_context(viewport={"width": 100, "height": 100})
        try:
            page = await context.new_page()
            await page.set_content(
                '<body style="margin:0;background:#fff">'
                '<div style="width:10px;height:10px;background:#000"></div></body>'
            )
            small = await page.screenshot()
            await page.locator("div").evaluate("d => { d.style.width = '20px'; }")
            grown = await page.screenshot()
            cropped = await page.screenshot(clip={"x": 0, "y": 0, "width": 50, "height": 50})

            assert (await differing_pixels(page, small, small))[:2] == (0, 10_000)
            differing, total, words = await differing_pixels(page, small, grown)
            assert (differing, total) == (100, 10_000)
            assert words == "100 of 10000 pixels differ (1.00%)"
            assert too_different(differing, total)
            assert not too_different(50, 10_000)
            differing, total, words = await differing_pixels(page, small, cropped)
            assert differing == -1
            assert too_different(differing, total)
            assert words == "the size differs: 100x100 against 50x50"
        finally:
            await context.close()
