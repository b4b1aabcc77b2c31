"""The seam's newer words on the page (issue 21) and the core's inert text (issue 22):
recommended options, diff review, secret answers, and `rules.inert_text` stand-ins."""

from __future__ import annotations

import pytest
from axe_playwright_python.async_playwright import Axe
from conftest import OpenPage, item, request, start_ask
from dsh_user_questions import (
    AskUserQuestionIntent,
    AskUserQuestionItem,
    AskUserQuestionOption,
)
from dsh_user_questions._diff import parse_diff
from dsh_user_questions.harness import Agent
from dsh_user_questions.rules import DIFF_REVIEW_INTENT, inert_text
from playwright.async_api import Page, expect

from dsh_user_questions_web import WebProvider

pytestmark = pytest.mark.browser


async def no_axe_violations(page: Page, state: str) -> None:
    results = await Axe().run(page)
    violations = [
        (v["id"], [n["target"] for n in v["nodes"]][:3]) for v in results.response["violations"]
    ]
    assert violations == [], f"{state}: {violations}"


async def no_sideways_scroll(page: Page, state: str) -> None:
    widths = await page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1], f"{state}: the page scrolls sideways ({widths})"


# ---- recommended ----


async def test_the_recommended_option_is_marked_and_focused_never_selected(
    web: WebProvider, page: Page
) -> None:
    """The recommended option says so, takes the focus first, and is not checked."""
    options = (
        AskUserQuestionOption("pnpm"),
        AskUserQuestionOption("npm", recommended=True),
        AskUserQuestionOption("yarn"),
    )
    question = AskUserQuestionItem(id="pkg", question="Which package manager?", options=options)
    asking = await start_ask(web, request(question))
    npm = page.get_by_role("radio", name="npm (Recommended)")
    await expect(npm).to_be_focused()
    await expect(npm).not_to_be_checked()
    await expect(page.locator("input:checked")).to_have_count(0)
    await expect(page.locator(".option.recommended .badge")).to_have_text(" (Recommended)")
    # Submitting without a choice does not pick it.
    await page.get_by_role("button", name="Submit", exact=True).click()
    await expect(page.get_by_role("alert").filter(has_text="Choose an option")).to_be_visible()
    assert not asking.task.done()
    await npm.focus()
    await page.keyboard.press("Space")
    await expect(npm).to_be_checked()
    await page.get_by_role("button", name="Submit", exact=True).click()
    assert (await asking.result()).answers[0].selected == ("npm",)


# ---- diff review ----

DIFF = """diff --git a/src/app.py b/src/app.py
index 3b18e51..a9c2f70 100644
--- a/src/app.py
+++ b/src/app.py
@@ -10,4 +10,5 @@ def serve():
     host = "127.0.0.1"
-    port = 8000
+    port = int(os.environ.get("PORT", "8000"))
+    print("serving\x1b[2J on", port)
     return host, port
"""


def diff_question(diff: str, question_id: str = "edit") -> AskUserQuestionItem:
    return AskUserQuestionItem(
        id=question_id,
        question="Apply this edit to src/app.py?",
        header="Edit",
        detail=diff,
        options=(AskUserQuestionOption("Apply"), AskUserQuestionOption("Reject")),
        intent=AskUserQuestionIntent(DIFF_REVIEW_INTENT, approve="Apply"),
    )


def test_the_diff_is_parsed_with_line_numbers_and_made_inert() -> None:
    """Files, hunk headers, kinds and old/new line numbers; ESC becomes the core's stand-in."""
    parsed = parse_diff(DIFF)
    assert parsed["lines"] == len(DIFF.splitlines())
    (file,) = parsed["files"]
    assert (file["old"], file["new"]) == ("a/src/app.py", "b/src/app.py")
    (hunk,) = file["hunks"]
    assert hunk["header"] == "@@ -10,4 +10,5 @@ def serve():"
    kinds = [(kind, old, new) for kind, old, new, _ in hunk["lines"]]
    assert kinds == [
        ("ctx", 10, 10),
        ("del", 11, None),
        ("add", None, 11),
        ("add", None, 12),
        ("ctx", 12, 13),
    ]
    assert hunk["lines"][3][3] == inert_text('    print("serving\x1b[2J on", port)')
    assert "<U+001B>" in hunk["lines"][3][3]


def test_a_removed_line_that_looks_like_a_header_stays_in_its_hunk() -> None:
    """A hunk takes the lines its header counts: "--- x" inside it is a removed line."""
    diff = "--- a/n\n+++ b/n\n@@ -1,2 +1,1 @@\n--- not a header\n keep\n"
    (file,) = parse_diff(diff)["files"]
    assert [line[0] for line in file["hunks"][0]["lines"]] == ["del", "ctx"]
    assert file["hunks"][0]["lines"][0][3] == "-- not a header"


@pytest.mark.parametrize("width", [320, 1100])
async def test_a_diff_review_is_a_diff_view_and_approves_once_shown(
    web: WebProvider, open_page: OpenPage, width: int
) -> None:
    """The page shows the diff with paths, hunk header, numbered added/removed lines, inert; it
    fits a phone and passes axe; Approve (the intent's label) sends that option."""
    assert web.url is not None
    page = await open_page(web.url, width=width, height=700)
    asking = await start_ask(web, request(diff_question(DIFF)))
    view = page.get_by_role("region", name="The diff")
    await expect(view).to_be_visible()
    await expect(view.locator(".diff-path")).to_have_text("a/src/app.py \u2192 b/src/app.py")
    await expect(view.locator(".diff-hunk")).to_have_text("@@ -10,4 +10,5 @@ def serve():")
    await expect(view.locator(".diff-line.add")).to_have_count(2)
    await expect(view.locator(".diff-line.del")).to_have_count(1)
    removed = view.locator(".diff-line.del")
    await expect(removed.locator(".ln").nth(0)).to_have_text("11")
    await expect(removed.locator(".ln").nth(1)).to_have_text("")
    await expect(view.locator(".diff-line.add").nth(1).locator(".ln").nth(1)).to_have_text("12")
    await expect(view.locator(".diff-line.add").nth(1)).to_contain_text("serving<U+001B>[2J on")
    assert await view.evaluate("v => v.textContent.includes('\\u001b')") is False
    await no_sideways_scroll(page, f"diff at {width} px")
    await no_axe_violations(page, f"diff at {width} px")
    await page.get_by_role("button", name="Approve", exact=True).click()
    assert (await asking.result()).answers[0].selected == ("Apply",)


async def test_approve_opens_only_after_the_whole_diff_was_shown(
    web: WebProvider, open_page: OpenPage
) -> None:
    """A diff taller than its box: Approve stays disabled until its last line is scrolled in."""
    assert web.url is not None
    page = await open_page(web.url, width=390, height=640)
    lines = "".join(f"+line {n}\n" for n in range(200))
    long_diff = f"--- a/big\n+++ b/big\n@@ -0,0 +1,200 @@\n{lines}"
    asking = await start_ask(web, request(diff_question(long_diff)))
    view = page.get_by_role("region", name="The diff")
    approve = page.get_by_role("button", name="Approve", exact=True)
    await expect(view.locator(".diff-line.add")).to_have_count(200)
    await page.wait_for_timeout(300)
    await expect(approve).to_be_disabled()
    await expect(page.locator(".approve-hint")).to_be_visible()
    await view.evaluate("v => { v.scrollTop = v.scrollHeight / 2; }")
    await page.wait_for_timeout(300)
    await expect(approve).to_be_disabled()
    await view.evaluate("v => { v.scrollTop = v.scrollHeight; }")
    await expect(approve).to_be_enabled()
    await expect(page.locator(".approve-hint")).to_be_hidden()
    await approve.click()
    assert (await asking.result()).answers[0].selected == ("Apply",)


async def test_request_changes_sends_the_feedback(web: WebProvider, page: Page) -> None:
    """Request changes with feedback sends the feedback as custom text, no option."""
    asking = await start_ask(web, request(diff_question(DIFF)))
    await page.get_by_role("textbox", name="Feedback for the agent (optional)").fill("keep 8000")
    await page.get_by_role("button", name="Request changes").click()
    assert (await asking.result()).to_dict() == {
        "answered_by": "token",
        "answers": [{"id": "edit", "selected": [], "custom": "keep 8000"}],
    }


# ---- secret ----


async def test_a_secret_is_typed_masked_and_never_kept_by_the_page(
    web: WebProvider, page: Page
) -> None:
    """A secret question has a password-like field without autocomplete; the typed text is in
    no draft, review or notice of the page; the asker gets it in clear."""
    secret = "hunter2-s3cr3t-value"
    asking = await start_ask(
        web,
        request(
            item("token", "Paste the deploy token", (), secret=True),
            item("why", "Anything else?", ()),
        ),
    )
    field = page.get_by_label("Your answer (secret: hidden as you type)")
    await expect(field).to_have_attribute("type", "password")
    await expect(field).to_have_attribute("autocomplete", "off")
    await field.fill(secret)
    await page.get_by_role("button", name="Next", exact=True).click()
    await page.get_by_label("Your answer", exact=True).fill("no")
    await page.get_by_role("button", name="Review answers").click()
    await expect(page.get_by_text("Secret given (hidden)")).to_be_visible()
    stored = await page.evaluate(
        "JSON.stringify(Object.fromEntries(Object.entries(sessionStorage)))"
        " + JSON.stringify(Object.fromEntries(Object.entries(localStorage)))"
    )
    assert secret not in stored
    assert secret not in await page.evaluate("document.body.innerText")
    await page.get_by_role("button", name="Submit answers").click()
    answer = await asking.result()
    assert answer.answers[0].custom == secret
    await expect(page.locator("#notice")).to_have_text("Answer sent. Thank you.")
    assert secret not in await page.evaluate("document.documentElement.outerHTML")


# ---- inert text: the core's stand-ins ----


async def test_model_text_shows_the_cores_stand_ins(web: WebProvider, page: Page) -> None:
    """Look-alike letters, zero-width and bidi characters in every field read as the core's
    `inert_text` shows them; the answer still names the option exactly."""
    lookalike = "n\u0440m"  # a Cyrillic er in "npm"
    hidden = "npm\u200b"
    asking = await start_ask(
        web,
        request(
            AskUserQuestionItem(
                id="pkg",
                question="Install with \u202eevil\u202c?",
                header="Pkg\u200d",
                detail="Run `n\u0440m ci` first",
                options=(
                    AskUserQuestionOption(lookalike, description="zero\u200bwidth"),
                    AskUserQuestionOption(hidden),
                    AskUserQuestionOption("npm"),
                ),
            ),
            agent=Agent("agent\u202e"),
        ),
    )
    stage = page.locator("#card-slot")
    await expect(
        page.get_by_role("heading", name=inert_text("Install with \u202eevil\u202c?"))
    ).to_be_visible()
    await expect(stage.get_by_text(inert_text(lookalike), exact=True)).to_be_visible()
    await expect(stage.get_by_text(inert_text(hidden), exact=True)).to_be_visible()
    await expect(stage.get_by_text("zero<U+200B>width")).to_be_visible()
    await expect(stage.locator(".detail code")).to_have_text(inert_text("n\u0440m ci"))
    await expect(page.locator("#queue .agent")).to_have_text("From agent agent<U+202E>")
    await page.get_by_role("radio", name=inert_text(lookalike)).check()
    await page.get_by_role("button", name="Submit", exact=True).click()
    assert (await asking.result()).answers[0].selected == (lookalike,)
