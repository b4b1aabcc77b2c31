"""End to end: Python Playwright drives Debian's Chromium against the real provider."""

from __future__ import annotations

import os
from pathlib import Path

import attrs
import pytest
from conftest import OpenPage, card, item, request, start_ask
from dsh_user_questions import (
    AskUserQuestionItem,
    AskUserQuestionOption,
    UserQuestionError,
    UserQuestionErrorCode,
)
from dsh_user_questions.harness import AbortController, Agent
from dsh_user_questions.plan_review import plan_review_question, read_plan_review
from playwright.async_api import Page, expect

from dsh_user_questions_web import WebProvider

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshot.png"
PHONE_SCREENSHOT = SCREENSHOT.with_name("screenshot-phone.png")

pytestmark = pytest.mark.browser

PLAN = """# Ship the web provider

Serve the page from the harness's **own** event loop, then:

1. bind `127.0.0.1` on a free port
2. print the URL with its *token*
   (and expose it as a property)

- never trust <script>alert(1)</script> in a plan
- see [the docs](javascript:alert(2))

```
uvicorn.Server(config).serve()
```
"""


async def test_clicking_an_option_answers_the_ask(web: WebProvider, page: Page) -> None:
    """ask() -> the page shows it -> click an option and Submit -> ask() returns that option."""
    asking = await start_ask(web, request())
    await expect(page.get_by_role("heading", name="Which package manager?")).to_be_visible()
    await page.get_by_role("radio", name="npm", exact=True).check()
    await page.get_by_role("button", name="Submit", exact=True).click()
    answer = await asking.result()
    assert answer.to_dict() == {
        "answers": [{"id": "pkg", "selected": ["npm"]}],
        "answered_by": "token",
    }
    await expect(page.locator("#notice")).to_have_text("Answer sent. Thank you.")
    await expect(page.locator("body")).to_have_attribute("data-state", "waiting")


async def test_the_page_is_usable_with_the_keyboard_alone(web: WebProvider, page: Page) -> None:
    """The arriving question takes focus; Tab, arrow keys and Enter answer it."""
    asking = await start_ask(web, request())
    await expect(page.get_by_role("heading", name="Which package manager?")).to_be_focused()
    await page.keyboard.press("Tab")
    await expect(page.get_by_role("radio", name="pnpm")).to_be_focused()
    await page.keyboard.press("ArrowDown")
    await expect(page.get_by_role("radio", name="npm", exact=True)).to_be_checked()
    await page.keyboard.press("Enter")
    assert (await asking.result()).answers[0].selected == ("npm",)


async def test_multi_select_with_other_sends_both(web: WebProvider, page: Page) -> None:
    """Ticking options and typing in Other sends the selections plus custom text."""
    asking = await start_ask(web, request(item(multi_select=True)))
    await page.get_by_role("checkbox", name="pnpm").check()
    await page.get_by_role("checkbox", name="yarn").check()
    await page.get_by_role("textbox", name="Other answer").fill("bun")
    await expect(page.get_by_role("checkbox", name="Other")).to_be_checked()
    await page.get_by_role("button", name="Submit", exact=True).click()
    assert (await asking.result()).to_dict() == {
        "answered_by": "token",
        "answers": [{"id": "pkg", "selected": ["pnpm", "yarn"], "custom": "bun"}],
    }


async def test_paging_with_skip_back_and_free_text(web: WebProvider, page: Page) -> None:
    """Several questions page one by one; Skip, Back and typed text all end in one answer."""
    asking = await start_ask(
        web,
        request(
            item(header="Tooling"),
            item("tasks", "Which checks run in CI?", ("lint", "test", "docs"), multi_select=True),
            item("why", "Anything else?", ()),
        ),
    )
    await expect(page.get_by_text("Question 1 of 3")).to_be_visible()
    await expect(page.get_by_text("Tooling", exact=True)).to_be_visible()
    await page.get_by_role("button", name="Next", exact=True).click()
    await expect(page.get_by_role("alert").filter(has_text="Choose an option")).to_be_visible()
    await page.get_by_role("radio", name="yarn").check()
    await page.get_by_role("button", name="Next", exact=True).click()
    await expect(page.get_by_text("Question 2 of 3")).to_be_visible()
    await page.get_by_role("button", name="Skip", exact=True).click()
    await page.get_by_role("textbox", name="Your answer").fill("ship it")
    await page.get_by_role("button", name="Back", exact=True).click()
    await expect(page.get_by_role("heading", name="Which checks run in CI?")).to_be_visible()
    await page.get_by_role("button", name="Skip", exact=True).click()
    await expect(page.get_by_role("textbox", name="Your answer")).to_have_value("ship it")
    await page.get_by_role("button", name="Review answers", exact=True).click()
    review = page.locator(".review li")
    await expect(page.get_by_role("heading", name="Review your answers")).to_be_focused()
    await expect(review).to_have_count(3)
    await expect(review.nth(0)).to_contain_text("yarn")
    await expect(review.nth(1)).to_contain_text("Skipped")
    await expect(review.nth(2)).to_contain_text("ship it")
    assert not asking.task.done()
    await review.nth(0).get_by_role("button", name="Change").click()
    await expect(page.get_by_role("heading", name="Which package manager?")).to_be_focused()
    await page.get_by_role("radio", name="npm", exact=True).check()
    await page.get_by_role("button", name="Next", exact=True).click()
    await expect(page.get_by_role("heading", name="Review your answers")).to_be_focused()
    await expect(review.nth(0)).to_contain_text("npm")
    await page.get_by_role("button", name="Submit answers", exact=True).click()
    assert (await asking.result()).to_dict() == {
        "answered_by": "token",
        "answers": [
            {"id": "pkg", "selected": ["npm"]},
            {"id": "tasks", "selected": []},
            {"id": "why", "selected": [], "custom": "ship it"},
        ],
    }


async def test_reloading_replays_the_pending_question(web: WebProvider, page: Page) -> None:
    """After a reload the same question (same id) is back and can still be answered."""
    asking = await start_ask(web, request())
    await expect(card(page, asking.id)).to_be_visible()
    await page.reload()
    await expect(card(page, asking.id)).to_be_visible()
    await page.get_by_role("radio", name="pnpm").check()
    await page.get_by_role("button", name="Submit", exact=True).click()
    assert (await asking.result()).answers[0].selected == ("pnpm",)


async def test_aborting_withdraws_the_question_from_the_page(web: WebProvider, page: Page) -> None:
    """When the signal aborts, the card goes away, the page says so, and ask() is aborted."""
    controller = AbortController()
    asking = await start_ask(web, request(signal=controller.signal))
    await expect(card(page, asking.id)).to_be_visible()
    controller.abort("the agent moved on")
    await expect(card(page, asking.id)).to_have_count(0)
    await expect(page.locator("#notice")).to_have_text("The agent withdrew this question.")
    await expect(page.locator("body")).to_have_attribute("data-state", "waiting")
    with pytest.raises(UserQuestionError) as caught:
        await asking.result()
    assert caught.value.code == UserQuestionErrorCode.ASK_ABORTED


async def test_two_tabs_first_answer_wins(web: WebProvider, page: Page) -> None:
    """Two tabs show the question; the first to answer wins and the other sees it resolved."""
    other = await page.context.new_page()
    assert web.url is not None
    await other.goto(web.url)
    asking = await start_ask(web, request())
    await expect(card(page, asking.id)).to_be_visible()
    await expect(card(other, asking.id)).to_be_visible()
    await other.get_by_role("radio", name="yarn").check()
    await page.get_by_role("radio", name="pnpm").check()
    await page.get_by_role("button", name="Submit", exact=True).click()
    await expect(other.locator("#notice")).to_have_text(
        "This question was answered in another tab."
    )
    await expect(card(other, asking.id)).to_have_count(0)
    assert (await asking.result()).answers[0].selected == ("pnpm",)


async def test_closing_the_question_cancels_the_ask(web: WebProvider, page: Page) -> None:
    """The Close question button makes ask() raise ASK_CANCELLED."""
    asking = await start_ask(web, request())
    await page.get_by_role("button", name="Close question", exact=True).click()
    with pytest.raises(UserQuestionError) as caught:
        await asking.result()
    assert caught.value.code == UserQuestionErrorCode.ASK_CANCELLED
    await expect(page.locator("#notice")).to_contain_text("Question closed")


async def test_model_text_stays_inert(web: WebProvider, page: Page) -> None:
    """Script and img-onerror markup in every text field is shown as characters, never run."""
    script = "<script>window.__pwned = 1</script>Proceed?"
    image = '<img src=x onerror="window.__pwned = 2">'
    asking = await start_ask(
        web,
        request(
            AskUserQuestionItem(
                id="x",
                question=script,
                header="<b>bold?</b>",
                detail='<iframe src="javascript:window.__pwned=3"></iframe>',
                options=(AskUserQuestionOption(image, description="<u>desc</u>"),),
            ),
            agent=Agent('<img src=x onerror="window.__pwned = 4">'),
        ),
    )
    stage = page.locator("#card-slot")
    await expect(page.get_by_role("heading", name=script)).to_be_visible()
    await expect(stage.get_by_text("<b>bold?</b>")).to_be_visible()
    await expect(stage.get_by_text("<u>desc</u>")).to_be_visible()
    await expect(stage.get_by_text("<iframe", exact=False)).to_be_visible()
    await expect(page.locator("#queue").get_by_text("onerror", exact=False)).to_be_visible()
    for tag in ("script", "img", "iframe", "b", "u"):
        await expect(page.locator(f"#card-slot {tag}, #queue {tag}")).to_have_count(0)
    assert await page.evaluate("window.__pwned") is None
    await page.get_by_role("radio", name=image).check()
    await page.get_by_role("button", name="Submit", exact=True).click()
    assert (await asking.result()).answers[0].selected == (image,)


async def test_plan_review_renders_markdown_safely_and_approves(
    web: WebProvider, page: Page
) -> None:
    """The plan card renders headings, lists and code as DOM, keeps markup inert, approves."""
    asking = await start_ask(web, request(plan_review_question(PLAN)))
    plan = page.get_by_role("region", name="The plan")
    await expect(plan.locator("h3")).to_have_text("Ship the web provider")
    await expect(plan.locator("ol > li")).to_have_count(2)
    await expect(plan.locator("ol > li").nth(1)).to_have_text(
        "print the URL with its token (and expose it as a property)"
    )
    await expect(plan.locator("strong")).to_have_text("own")
    await expect(plan.locator("pre code")).to_have_text("uvicorn.Server(config).serve()")
    await expect(plan.get_by_text("never trust <script>alert(1)</script>")).to_be_visible()
    await expect(plan.locator("script, a")).to_have_count(0)
    await page.get_by_role("button", name="Approve", exact=True).click()
    outcome = read_plan_review(await asking.result())
    assert outcome.approved


async def test_plan_review_keep_planning_sends_feedback(web: WebProvider, page: Page) -> None:
    """Keep planning with feedback sends the feedback as the plan-review answer's text."""
    asking = await start_ask(web, request(plan_review_question(PLAN)))
    feedback = page.get_by_role("textbox", name="Feedback for the agent")
    await feedback.fill("Bind IPv6 too.")
    await page.get_by_role("button", name="Approve", exact=True).click()
    await expect(page.get_by_role("alert").filter(has_text="clear it")).to_be_visible()
    await page.get_by_role("button", name="Keep planning", exact=True).click()
    outcome = read_plan_review(await asking.result())
    assert (outcome.approved, outcome.feedback) == (False, "Bind IPv6 too.")


async def test_plan_review_keep_planning_without_feedback(web: WebProvider, page: Page) -> None:
    """Keep planning with no feedback selects the keep-planning option."""
    asking = await start_ask(web, request(plan_review_question(PLAN)))
    await page.get_by_role("button", name="Keep planning", exact=True).click()
    answer = await asking.result()
    assert answer.answers[0].selected == ("Keep planning",)
    assert not read_plan_review(answer).approved


async def test_plan_review_talk_instead_cancels(web: WebProvider, page: Page) -> None:
    """Talk instead closes the question: ask() raises ASK_CANCELLED."""
    asking = await start_ask(web, request(plan_review_question(PLAN)))
    await page.get_by_role("button", name="Talk instead", exact=True).click()
    with pytest.raises(UserQuestionError) as caught:
        await asking.result()
    assert caught.value.code == UserQuestionErrorCode.ASK_CANCELLED


async def test_asks_from_several_agents_queue_by_agent(web: WebProvider, page: Page) -> None:
    """Asks queue labelled by agent; switching between them keeps what was typed."""
    alpha = await start_ask(web, request(item(question="Alpha asks?"), agent=Agent("alpha")))
    beta = await start_ask(web, request(item(question="Beta asks?"), agent=Agent("beta")))
    queue = page.get_by_role("navigation", name="Waiting for you")
    await expect(queue.get_by_role("button")).to_have_count(2)
    await expect(page.locator("#queue-count")).to_have_text("2")
    await expect(queue.get_by_role("button").nth(0)).to_contain_text("From agent alpha")
    await expect(queue.get_by_role("button").nth(1)).to_contain_text("From agent beta")
    await page.get_by_role("textbox", name="Other answer").fill("half typed")
    await queue.get_by_role("button").nth(1).click()
    await expect(page.get_by_role("heading", name="Beta asks?")).to_be_visible()
    await page.get_by_role("radio", name="npm", exact=True).check()
    await page.get_by_role("button", name="Submit", exact=True).click()
    assert (await beta.result()).answers[0].selected == ("npm",)
    await expect(page.get_by_role("heading", name="Alpha asks?")).to_be_visible()
    await expect(page.get_by_role("textbox", name="Other answer")).to_have_value("half typed")
    await page.get_by_role("button", name="Submit", exact=True).click()
    assert (await alpha.result()).answers[0].custom == "half typed"


async def test_stopping_the_provider_tells_the_page(web: WebProvider, page: Page) -> None:
    """stop(reason) clears the page and shows why."""
    asking = await start_ask(web, request())
    await expect(card(page, asking.id)).to_be_visible()
    await web.stop("the session ended")
    await expect(page.locator("#notice")).to_have_text(
        "The question server stopped: the session ended"
    )
    await expect(card(page, asking.id)).to_have_count(0)
    with pytest.raises(UserQuestionError) as caught:
        await asking.result()
    assert caught.value.code == UserQuestionErrorCode.ASK_ABORTED


async def test_screenshot_for_the_readme(
    web: WebProvider, page: Page, open_page: OpenPage, tmp_path: Path
) -> None:
    """The suite renders a realistic page, on a desktop and on a phone (saved as
    docs/screenshot.png and docs/screenshot-phone.png on request)."""
    first = await start_ask(
        web,
        request(
            AskUserQuestionItem(
                id="pkg",
                header="Package manager",
                question="Which package manager should the new workspace use?",
                detail="The repository has **no lockfile** yet; CI caches whichever you pick.",
                options=(
                    AskUserQuestionOption("pnpm", "Fast, strict, disk-efficient (recommended)"),
                    AskUserQuestionOption("npm", "Ships with Node; no extra install"),
                    AskUserQuestionOption("yarn", "Plug'n'Play, zero-installs"),
                ),
            ),
            item("ci", "Which checks should CI run?", ("lint", "test"), multi_select=True),
            agent=Agent("builder"),
        ),
    )
    await start_ask(web, request(plan_review_question(PLAN), agent=Agent("planner")))
    await start_ask(web, request(item("name", "What should the release be called?", ())))
    await expect(page.locator("#queue-count")).to_have_text("3")
    await page.get_by_role("radio", name="pnpm").check()
    await expect(card(page, first.id)).to_be_visible()
    assert web.url is not None
    phone = await open_page(web.url, width=390, height=844)
    await phone.get_by_role("radio", name="pnpm").check()
    # Rendering differs by a few bytes from run to run: refresh the committed pictures only
    # when asked (or when missing), so running the tests leaves the work tree clean.
    for shown, path in ((page, SCREENSHOT), (phone, PHONE_SCREENSHOT)):
        refresh = os.environ.get("DSH_WEB_UPDATE_SCREENSHOT") == "1" or not path.exists()
        target = path if refresh else tmp_path / path.name
        target.parent.mkdir(exist_ok=True)
        await shown.screenshot(path=str(target), animations="disabled", caret="hide")
        assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert target.stat().st_size > 20_000  # a blank page compresses far smaller
    await web.stop()


class TestNoOther:
    """A question with ``allow_other`` false shows its options only: no "Other" row."""

    async def test_a_single_select_has_no_other_row(self, web: WebProvider, page: Page) -> None:
        """No Other radio or text box; the fourth number key picks nothing; an option answers."""
        asking = await start_ask(web, request(item(allow_other=False)))
        await expect(page.get_by_role("radio", name="yarn")).to_be_visible()
        await expect(page.get_by_role("radio")).to_have_count(3)
        await expect(page.get_by_role("textbox", name="Other answer")).to_have_count(0)
        await page.keyboard.press("4")
        await page.keyboard.press("2")
        await expect(page.get_by_role("radio", name="npm", exact=True)).to_be_checked()
        await page.get_by_role("button", name="Submit", exact=True).click()
        assert (await asking.result()).to_dict() == {
            "answered_by": "token",
            "answers": [{"id": "pkg", "selected": ["npm"]}],
        }

    async def test_a_multi_select_has_no_other_row(self, web: WebProvider, page: Page) -> None:
        """On a multi-select, the options are the only boxes; ticked ones are the answer."""
        asking = await start_ask(web, request(item(multi_select=True, allow_other=False)))
        await expect(page.get_by_role("checkbox", name="yarn")).to_be_visible()
        await expect(page.get_by_role("checkbox")).to_have_count(3)
        await expect(page.get_by_role("textbox", name="Other answer")).to_have_count(0)
        await page.get_by_role("checkbox", name="pnpm").check()
        await page.get_by_role("button", name="Submit", exact=True).click()
        assert (await asking.result()).to_dict() == {
            "answered_by": "token",
            "answers": [{"id": "pkg", "selected": ["pnpm"]}],
        }

    async def test_a_plan_review_has_no_feedback_box(self, web: WebProvider, page: Page) -> None:
        """A plan review that allows no own words offers no feedback; Keep planning picks it."""
        question = attrs.evolve(plan_review_question(PLAN), allow_other=False)
        asking = await start_ask(web, request(question))
        await expect(page.get_by_role("button", name="Keep planning", exact=True)).to_be_visible()
        await expect(page.get_by_role("textbox", name="Feedback for the agent")).to_have_count(0)
        await page.get_by_role("button", name="Keep planning", exact=True).click()
        assert (await asking.result()).answers[0].selected == ("Keep planning",)
