"""The page on a phone and a desktop, light and dark: layout, markdown, drafts, keys, axe."""

from __future__ import annotations

import pytest
from conftest import (
    OpenPage,
    card,
    item,
    no_axe_violations,
    no_sideways_scroll,
    request,
    start_ask,
)
from dsh_user_questions import AskUserQuestionItem, AskUserQuestionOption
from dsh_user_questions.harness import Agent
from dsh_user_questions.plan_review import plan_review_question, read_plan_review
from playwright.async_api import Page, expect

from dsh_user_questions_web import WebProvider

pytestmark = pytest.mark.browser

PHONES = [(320, 640), (390, 844)]
LONG_TITLE = (
    "Should the release branch be cut from main today, or wait for the flaky integration tests?"
)
NUMBERED_PLAN = """# Release plan

1. freeze main
2. cut the branch
   - from the last green commit
   - tag it `rc1`
3. run the full matrix
4. write the notes
5. publish to the index
6. announce it
10. celebrate (step ten, on purpose)

| step | owner | done |
|:-----|:-----:|-----:|
| 1 | ana | ~~no~~ yes |
| 2 | bo | no |

A very long unbroken token: `{long_token}`

[the docs](https://example.invalid/docs) and [a trap](javascript:alert(1)) and <b>raw</b>
""".replace("{long_token}", "a" * 90)


async def check_state(page: Page, state: str) -> None:
    await no_sideways_scroll(page, state)
    await no_axe_violations(page, state)


@pytest.mark.parametrize(("width", "height"), PHONES)
async def test_a_phone_sees_the_question_first_and_never_scrolls_sideways(
    web: WebProvider, open_page: OpenPage, width: int, height: int
) -> None:
    """At 320 and 390 px every state fits the width and the current question comes first."""
    assert web.url is not None
    page = await open_page(web.url, width=width, height=height)
    await expect(page.locator("body")).to_have_attribute("data-state", "waiting")
    await no_sideways_scroll(page, "waiting")
    first = await start_ask(
        web,
        request(
            item("long", LONG_TITLE, ("yes, cut it now", "no, wait for a green run")),
            item("when", "When?", ("today", "tomorrow")),
            agent=Agent("release-agent-with-a-rather-long-name"),
        ),
    )
    for index in range(21):
        await start_ask(web, request(item(question=f"Queued question {index}?")))
    await expect(page.locator("#queue-count")).to_have_text("22")
    heading = page.get_by_role("heading", name=LONG_TITLE)
    await expect(heading).to_be_visible()
    box = await heading.bounding_box()
    assert box is not None
    assert box["y"] < height / 2, f"the question starts at y={box['y']} of {height}"
    submit_box = await page.get_by_role("button", name="Next", exact=True).bounding_box()
    assert submit_box is not None
    assert submit_box["x"] + submit_box["width"] <= width
    await no_sideways_scroll(page, "22 pending, long title")
    await page.get_by_role("button", name="Next", exact=True).click()
    await no_sideways_scroll(page, "an error shown")
    await page.get_by_role("radio", name="yes, cut it now").check()
    await page.get_by_role("button", name="Next", exact=True).click()
    await page.get_by_role("radio", name="today").check()
    await page.get_by_role("button", name="Review answers").click()
    await no_sideways_scroll(page, "review step")
    await page.get_by_role("button", name="Submit answers").click()
    await expect(card(page, first.id)).to_have_count(0)
    await no_sideways_scroll(page, "after answering")
    for _ in range(21):  # the queued questions, closed one by one
        await page.locator("section:not([hidden]) button.close").click()
    await expect(page.locator("body")).to_have_attribute("data-state", "waiting")
    await start_ask(web, request(plan_review_question(NUMBERED_PLAN)))
    await expect(page.get_by_role("region", name="The plan")).to_be_visible()
    await no_sideways_scroll(page, "plan review with a table and a long token")
    await web.stop("the test ended")
    await expect(page.locator("#notice")).to_contain_text("the test ended")
    await no_sideways_scroll(page, "stopped")
    await expect(page.locator("#offline")).to_be_visible(timeout=30_000)
    await no_sideways_scroll(page, "harness unreachable")


async def test_plan_numbers_tables_and_strikethrough_render_as_written(
    web: WebProvider, page: Page
) -> None:
    """A plan numbered 1..6, 10 with nested bullets keeps its numbers; tables and ~~ render."""
    asking = await start_ask(web, request(plan_review_question(NUMBERED_PLAN)))
    plan = page.get_by_role("region", name="The plan")
    items = plan.locator(":scope > ol > li")
    numbers = await items.evaluate_all("items => items.map(i => i.value)")
    assert numbers == [1, 2, 3, 4, 5, 6, 10]
    await expect(plan.locator(":scope > ol > li").nth(1).locator("ul > li")).to_have_count(2)
    await expect(plan.locator("table th")).to_have_text(["step", "owner", "done"])
    await expect(plan.locator("table td").nth(2)).to_have_text("no yes")
    await expect(plan.locator("table s")).to_have_text("no")
    link = plan.get_by_role("link", name="the docs")
    await expect(link).to_have_attribute("href", "https://example.invalid/docs")
    await expect(link).to_have_attribute("rel", "noopener noreferrer")
    await expect(plan.locator("a")).to_have_count(1)
    await expect(plan.get_by_text("[a trap](javascript:alert(1))", exact=False)).to_be_visible()
    await expect(plan.locator("b, script")).to_have_count(0)
    approve = page.get_by_role("button", name="Approve", exact=True)
    if await plan.evaluate("box => box.scrollHeight > box.clientHeight + 2"):
        # A plan taller than its box: Approve opens only once its end was shown.
        await expect(approve).to_be_disabled()
        await plan.evaluate("box => { box.scrollTop = box.scrollHeight; }")
    await approve.click()
    assert read_plan_review(await asking.result()).approved


async def test_question_details_are_rendered_as_markdown(web: WebProvider, page: Page) -> None:
    """An ordinary question's detail gets the same safe markdown as a plan."""
    await start_ask(
        web,
        request(
            AskUserQuestionItem(
                id="db",
                question="Which database?",
                detail="Pick one:\n\n- **SQLite** for tests\n- `postgres` in production",
                options=(AskUserQuestionOption("sqlite"), AskUserQuestionOption("postgres")),
            )
        ),
    )
    detail = page.locator(".detail")
    await expect(detail.locator("li")).to_have_count(2)
    await expect(detail.locator("strong")).to_have_text("SQLite")
    await expect(detail.locator("code")).to_have_text("postgres")


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_axe_finds_nothing_in_any_state(
    web: WebProvider, open_page: OpenPage, scheme: str
) -> None:
    """axe-core reports no violation in each state of the page, light and dark."""
    assert web.url is not None
    page = await open_page(web.url, width=1100, height=760, color_scheme=scheme)  # type: ignore[arg-type]
    await expect(page.locator("body")).to_have_attribute("data-state", "waiting")
    await check_state(page, f"{scheme} waiting")
    phone = await open_page(web.url, width=320, height=640, color_scheme=scheme)  # type: ignore[arg-type]
    await start_ask(
        web,
        request(
            AskUserQuestionItem(
                id="db",
                header="Storage",
                question="Which database?",
                detail="| engine | use |\n|---|---|\n| sqlite | tests |",
                options=(
                    AskUserQuestionOption("sqlite", "small and local"),
                    AskUserQuestionOption("postgres", "the real one"),
                ),
            ),
            item("free", "Anything else?", ()),
            agent=Agent("builder"),
        ),
    )
    await expect(page.get_by_role("heading", name="Which database?")).to_be_visible()
    await check_state(page, f"{scheme} question with a table")
    await page.get_by_role("button", name="Next", exact=True).click()
    await expect(page.get_by_role("alert").filter(has_text="Choose an option")).to_be_visible()
    await check_state(page, f"{scheme} error shown")
    await page.get_by_role("radio", name="sqlite").check()
    await page.get_by_role("button", name="Next", exact=True).click()
    await page.get_by_role("button", name="Skip", exact=True).click()
    await expect(page.get_by_role("heading", name="Review your answers")).to_be_visible()
    await check_state(page, f"{scheme} review")
    await start_ask(web, request(plan_review_question(NUMBERED_PLAN), agent=Agent("planner")))
    await expect(page.locator("#queue-count")).to_have_text("2")
    await page.locator("#queue button").nth(1).click()
    await expect(page.get_by_role("region", name="The plan")).to_be_visible()
    await check_state(page, f"{scheme} plan review")
    await expect(phone.get_by_role("heading", name="Which database?")).to_be_visible()
    await check_state(phone, f"{scheme} phone")
    await page.get_by_role("button", name="Keep planning", exact=True).click()
    await expect(page.locator("#notice")).to_be_visible()
    await check_state(page, f"{scheme} notice")
    await web.stop("the harness went away")
    await expect(page.locator("#offline")).to_be_visible(timeout=20_000)
    await expect(page.locator("#connection")).to_have_attribute("data-state", "unreachable")
    await check_state(page, f"{scheme} unreachable")


async def test_a_draft_survives_a_reload(web: WebProvider, page: Page) -> None:
    """What was picked and typed, and the page reached, come back after a reload."""
    asking = await start_ask(web, request(item(multi_select=True), item("why", "Why?", ())))
    await page.get_by_role("checkbox", name="npm", exact=True).check()
    await page.get_by_role("textbox", name="Other answer").fill("bun")
    await page.get_by_role("button", name="Next", exact=True).click()
    await page.get_by_role("textbox", name="Your answer").fill("speed")
    await page.reload()
    await expect(page.get_by_role("textbox", name="Your answer")).to_have_value("speed")
    await page.get_by_role("button", name="Back", exact=True).click()
    await expect(page.get_by_role("checkbox", name="npm", exact=True)).to_be_checked()
    await expect(page.get_by_role("textbox", name="Other answer")).to_have_value("bun")
    await page.get_by_role("button", name="Next", exact=True).click()
    await page.get_by_role("button", name="Review answers").click()
    await page.get_by_role("button", name="Submit answers").click()
    assert (await asking.result()).to_dict() == {
        "answered_by": "token",
        "answers": [
            {"id": "pkg", "selected": ["npm"], "custom": "bun"},
            {"id": "why", "selected": [], "custom": "speed"},
        ],
    }
    # The settled question's draft is forgotten.
    await page.wait_for_function("sessionStorage.length === 0")


async def test_number_keys_pick_options(web: WebProvider, page: Page) -> None:
    """Options are numbered; pressing a number picks that option, Enter sends it."""
    asking = await start_ask(web, request())
    await expect(page.locator(".option .key")).to_have_text(["1", "2", "3", "4"])
    await page.keyboard.press("3")
    await expect(page.get_by_role("radio", name="yarn")).to_be_checked()
    await page.keyboard.press("2")
    await expect(page.get_by_role("radio", name="npm", exact=True)).to_be_checked()
    await page.keyboard.press("Enter")
    assert (await asking.result()).answers[0].selected == ("npm",)


async def test_notices_clear_and_focus_lands_on_the_waiting_heading(
    web: WebProvider, page: Page
) -> None:
    """After the last answer focus moves to the waiting heading, and the notice goes away."""
    asking = await start_ask(web, request())
    await page.get_by_role("radio", name="pnpm").check()
    await page.get_by_role("button", name="Submit", exact=True).click()
    await asking.result()
    await expect(page.locator("#notice")).to_have_text("Answer sent. Thank you.")
    await expect(page.get_by_role("heading", name="No questions right now")).to_be_focused()
    await expect(page.locator("#notice")).to_be_hidden(timeout=20_000)


async def test_a_new_question_is_announced_while_one_is_open(web: WebProvider, page: Page) -> None:
    """A question arriving behind the open one is announced in a polite live region."""
    await start_ask(web, request(item(question="First?")))
    await expect(page.get_by_role("heading", name="First?")).to_be_visible()
    await start_ask(web, request(item(question="Second?"), agent=Agent("reviewer")))
    await expect(page.locator("#announcer")).to_have_text(
        "New question from agent reviewer. 2 waiting."
    )
    await expect(page.get_by_role("heading", name="First?")).to_be_visible()


async def test_closing_several_questions_says_it_closes_them_all(
    web: WebProvider, page: Page
) -> None:
    """On page 2 of 3 the close button names all three questions it closes."""
    await start_ask(web, request(item(), item("b", "B?", ("x", "y")), item("c", "C?", ("z",))))
    await page.get_by_role("button", name="Skip", exact=True).click()
    await expect(page.get_by_text("Question 2 of 3")).to_be_visible()
    close = page.locator("section:not([hidden]) button.close")
    await expect(close).to_have_text("Close all 3 questions")


async def test_the_axe_check_sees_a_planted_violation(page: Page) -> None:
    """The axe run is real: a low-contrast, unlabelled control planted in the page is reported."""
    await page.evaluate(
        """() => {
            const input = document.createElement("input");
            input.type = "text";
            const faint = document.createElement("p");
            faint.textContent = "faint";
            faint.style.color = "#eeeeee";
            document.querySelector("#stage").append(input, faint);
        }"""
    )
    with pytest.raises(AssertionError, match="label"):
        await no_axe_violations(page, "planted")


def _luminance(rgb: list[float]) -> float:
    def channel(value: float) -> float:
        value /= 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    red, green, blue = (channel(value) for value in rgb[:3])
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def _contrast(one: list[float], two: list[float]) -> float:
    light, dark = sorted((_luminance(one), _luminance(two)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_the_focus_ring_stands_out_and_descriptions_are_read_once(
    web: WebProvider, open_page: OpenPage, scheme: str
) -> None:
    """The keyboard focus ring has at least 3:1 contrast with the card behind it, and an
    option's description is part of its label only (not announced a second time)."""
    assert web.url is not None
    page = await open_page(web.url, color_scheme=scheme)  # type: ignore[arg-type]
    await start_ask(web, request())
    await expect(page.get_by_role("heading", name="Which package manager?")).to_be_focused()
    await page.keyboard.press("Tab")
    colours = await page.evaluate(
        """() => {
            const rgb = (text) => text.match(/[\\d.]+/g).map(Number);
            const focused = document.activeElement;
            const card = focused.closest(".card");
            return [rgb(getComputedStyle(focused).outlineColor),
                    rgb(getComputedStyle(card).backgroundColor),
                    getComputedStyle(focused).outlineStyle];
        }"""
    )
    ring, background, style = colours
    assert style == "solid"
    assert _contrast(ring, background) >= 3, (ring, background)
    await expect(page.locator("input.choice[aria-describedby]")).to_have_count(0)


async def test_a_detail_too_deep_to_render_is_shown_as_text(web: WebProvider, page: Page) -> None:
    """Emphasis nested 5,000 deep (which overflows the markdown parser) still reaches the page,
    as plain inert text, and the ask is answered as usual."""
    deep = "*" * 5000 + "deep" + "*" * 5000
    asking = await start_ask(
        web,
        request(
            AskUserQuestionItem(
                id="x",
                question="Deep?",
                detail=deep,
                options=(AskUserQuestionOption("yes"), AskUserQuestionOption("no")),
            )
        ),
    )
    await expect(page.locator(".detail")).to_have_text(deep)
    await page.get_by_role("radio", name="yes").check()
    await page.get_by_role("button", name="Submit", exact=True).click()
    assert (await asking.result()).answers[0].selected == ("yes",)
