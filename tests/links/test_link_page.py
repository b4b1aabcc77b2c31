"""The one-question link page over a provider of the test's own (httpx's ASGI transport)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from dsh_user_questions import AskUserQuestionOption
from dsh_user_questions._identity import Caller, ProxyIdentity
from dsh_user_questions._link_page import LinkedQuestion, link_routes, link_url, with_links
from dsh_user_questions._links import (
    cross_origin_refusal,
    host_allowed,
    make_link_token,
    origin_allowed,
    public_host,
    public_origin,
    public_prefix,
)
from dsh_user_questions.diff_review import diff_review_question
from dsh_user_questions.rules import check_answer
from dsh_user_questions.testing import make_question, make_request

pytest.importorskip("starlette")  # a dependency of the mcp extra, and of both page providers

SECRET = b"s" * 32


class Questions:
    """Two pending questions; ``answers`` and ``cancelled`` record what the page did."""

    def __init__(self) -> None:
        self.linked = {
            "q-1": LinkedQuestion(
                request=make_request(make_question(question="Which <b>one</b>?\x1b[2J")),
                asker="laptop (agent planner)",
            ),
            "q-2": LinkedQuestion(
                request=make_request(make_question(question="Something else entirely?")),
                asker="laptop",
            ),
            "q-3": LinkedQuestion(
                request=make_request(
                    make_question(allow_other=False),
                    make_question(id="os", multi_select=True, allow_other=False),
                ),
                asker="laptop",
            ),
        }
        self.answers: list[tuple[str, dict[str, Any]]] = []
        self.callers: list[Caller] = []

    async def get(self, question_id: str) -> LinkedQuestion | None:
        return self.linked.get(question_id)

    async def answer(self, question_id: str, wire: dict[str, Any], caller: Caller) -> str | None:
        linked = self.linked[question_id]
        assert linked.request is not None
        check_answer(linked.request, wire)  # BAD_ANSWER as the page must show it
        self.answers.append((question_id, wire))
        self.callers.append(caller)
        self.linked[question_id] = LinkedQuestion(None, linked.asker, "answered")
        return None

    async def cancel(self, question_id: str) -> object:
        self.linked[question_id] = LinkedQuestion(None, "laptop", "cancelled")
        return True


@pytest.fixture
def questions() -> Questions:
    return Questions()


@pytest.fixture
async def client(questions: Questions) -> AsyncIterator[httpx.AsyncClient]:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        from starlette.responses import PlainTextResponse

        await PlainTextResponse("the page behind its token")(scope, receive, send)

    routes = link_routes(
        secret=lambda: SECRET, get=questions.get, answer=questions.answer, cancel=questions.cancel
    )
    served = with_links(app, routes, lambda: {"answers.example"})
    transport = httpx.ASGITransport(app=served)
    async with httpx.AsyncClient(transport=transport, base_url="http://answers.example") as c:
        yield c


async def test_a_link_answers_as_its_recipient_or_the_token_holder(
    client: httpx.AsyncClient, questions: Questions
) -> None:
    """Without a logging-in proxy, a link naming its recipient answers as them; one naming
    nobody as ``token``."""
    named = link_url("https://answers.example/", SECRET, "q-1", expires_at=2e9, recipient="ana")
    await client.post(named.removeprefix("https://answers.example"), data={"q0": "1"})
    await client.post(path("q-2"), data={"q0": "0"})
    assert [caller.person for caller in questions.callers] == ["ana", "token"]


async def test_behind_a_logging_in_proxy_a_link_needs_its_word(questions: Questions) -> None:
    """With an identity, the link page answers only a person the trusted proxy names (401
    without the header, 403 from any other peer, nothing taken); that person answers, whoever
    the link was sent to."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("only links are asked for")

    routes = link_routes(
        secret=lambda: SECRET, get=questions.get, answer=questions.answer, cancel=questions.cancel
    )
    identity = ProxyIdentity.from_settings("X-Forwarded-User", ["10.0.0.1/32"])
    served = with_links(app, routes, lambda: {"answers.example"}, identity)
    link = link_url("https://answers.example/", SECRET, "q-1", expires_at=2e9, recipient="bo")
    where = link.removeprefix("https://answers.example")
    for peer, headers, status in (
        ("10.0.0.1", {}, 401),
        ("10.0.0.2", {"X-Forwarded-User": "ana"}, 403),
        ("10.0.0.1", {"X-Forwarded-User": "ana"}, 200),
    ):
        transport = httpx.ASGITransport(app=served, client=(peer, 5000))
        async with httpx.AsyncClient(transport=transport, base_url="http://answers.example") as c:
            sent = await c.post(where, data={"q0": "1"}, headers=headers)
        assert sent.status_code == status, (peer, headers)
        if status != 200:
            assert questions.answers == []
    assert [(caller.person, caller.address) for caller in questions.callers] == [
        ("ana", "10.0.0.1")
    ]


def path(question_id: str, expires_at: float | None = None) -> str:
    url = link_url("https://answers.example/", SECRET, question_id, expires_at=expires_at or 2e9)
    return url.removeprefix("https://answers.example")


async def test_a_link_shows_its_one_question_as_inert_escaped_text(
    client: httpx.AsyncClient,
) -> None:
    """The page names who asks and shows the question escaped, without control characters,
    and nothing of the other question; it loads no script."""
    page = await client.get(path("q-1"))
    assert page.status_code == 200
    assert "Which &lt;b&gt;one&lt;/b&gt;?" in page.text
    assert "\x1b" not in page.text
    assert "<script" not in page.text
    assert "laptop (agent planner)" in page.text
    assert "Something else" not in page.text
    assert "default-src 'none'" in page.headers["content-security-policy"]


async def test_an_answer_is_taken_once_and_then_the_outcome_is_shown(
    client: httpx.AsyncClient, questions: Questions
) -> None:
    """The form's pick becomes a wire answer; afterwards the link shows the outcome."""
    sent = await client.post(path("q-1"), data={"q0": "1", "action": "answer"})
    assert "Your answer was recorded." in sent.text
    assert questions.answers == [("q-1", {"answers": [{"id": "pkg", "selected": ["npm"]}]})]
    again = await client.get(path("q-1"))
    assert "This question has been answered." in again.text
    assert "<form" not in again.text


async def test_a_refused_answer_shows_the_problems_and_the_form_again(
    client: httpx.AsyncClient,
) -> None:
    """Text typed with a control character is refused with the rule's words (422)."""
    sent = await client.post(path("q-1"), data={"q0-custom": "bad\x07", "action": "answer"})
    assert sent.status_code == 422
    assert "control character U+0007" in sent.text
    assert "<form" in sent.text


async def test_close_without_answering(client: httpx.AsyncClient) -> None:
    """Close asks once more; the confirmation closes the question."""
    asked = await client.post(path("q-2"), data={"action": "cancel"})
    assert "Close without answering?" in asked.text
    closed = await client.post(path("q-2"), data={"action": "close"})
    assert "You closed the question." in closed.text
    assert "closed without an answer" in closed.text


@pytest.mark.parametrize(
    ("make", "status", "words"),
    [
        (lambda: path("q-1")[:-3] + "xyz", 403, "not valid"),
        (lambda: "/q/" + make_link_token(b"o" * 32, "q-1", expires_at=2e9), 403, "not valid"),
        (lambda: path("q-1", expires_at=time.time() - 1), 410, "expired"),
        (lambda: path("nobody"), 410, "gone"),
    ],
    ids=["tampered", "another-server", "expired", "unknown"],
)
async def test_a_bad_link_is_refused_with_a_clear_page(
    client: httpx.AsyncClient, make: Any, status: int, words: str
) -> None:
    page = await client.get(make())
    assert page.status_code == status
    assert words in page.text


async def test_only_links_pass_without_the_token_and_only_for_allowed_hosts(
    client: httpx.AsyncClient,
) -> None:
    """Anything but /q/ goes to the app; a link for a Host not allowed gets 421."""
    assert (await client.get("/anything")).text == "the page behind its token"
    refused = await client.get(path("q-1"), headers={"Host": "evil.example"})
    assert refused.status_code == 421


def h1_count(page: httpx.Response) -> int:
    return page.text.count("<h1>")


class TestTheLinkPageTellsTheTruth:
    """The form sends what it shows, refuses what it cannot send, and every page has a title."""

    async def test_a_pick_beside_typed_words_on_a_single_select_is_refused(
        self, client: httpx.AsyncClient, questions: Questions
    ) -> None:
        """A single-select pick plus typed words is refused with the reason (nothing sent);
        the form comes back with both kept, so one can be changed."""
        sent = await client.post(
            path("q-1"), data={"q0": "1", "q0-custom": "my words", "action": "answer"}
        )
        assert sent.status_code == 422
        assert "you chose \u201cnpm\u201d and typed your own words" in sent.text
        assert questions.answers == []
        assert 'value="1" checked' in sent.text
        assert ">my words</textarea>" in sent.text

    async def test_other_sends_the_typed_words_only(
        self, client: httpx.AsyncClient, questions: Questions
    ) -> None:
        """Choosing Other sends the typed words as the answer, no option."""
        sent = await client.post(
            path("q-1"), data={"q0": "other", "q0-custom": "my words", "action": "answer"}
        )
        assert "Your answer was recorded." in sent.text
        assert questions.answers == [
            ("q-1", {"answers": [{"id": "pkg", "selected": [], "custom": "my words"}]})
        ]

    async def test_other_without_words_is_refused(
        self, client: httpx.AsyncClient, questions: Questions
    ) -> None:
        """Other chosen with the box empty is refused, saying what is missing."""
        sent = await client.post(path("q-1"), data={"q0": "other", "action": "answer"})
        assert sent.status_code == 422
        assert "type your answer below Other" in sent.text
        assert questions.answers == []

    async def test_an_empty_send_is_refused(
        self, client: httpx.AsyncClient, questions: Questions
    ) -> None:
        """Send with nothing chosen or typed is refused, not recorded as a skip."""
        sent = await client.post(path("q-1"), data={"q0-custom": "  ", "action": "answer"})
        assert sent.status_code == 422
        assert "Nothing to send" in sent.text
        assert questions.answers == []

    async def test_close_asks_for_confirmation_first(
        self, client: httpx.AsyncClient, questions: Questions
    ) -> None:
        """One tap on Close leaves the question pending and asks; only the confirmation
        closes it."""
        asked = await client.post(path("q-2"), data={"action": "cancel"})
        assert "Yes, close it" in asked.text
        assert questions.linked["q-2"].outcome is None
        await client.post(path("q-2"), data={"action": "close"})
        assert questions.linked["q-2"].outcome == "cancelled"

    async def test_every_page_has_exactly_one_h1(self, client: httpx.AsyncClient) -> None:
        """The form, its refusal, the confirmation, the outcome and each bad-link page have a
        level-one heading."""
        pages = [
            await client.get(path("q-1")),
            await client.post(path("q-1"), data={"action": "answer"}),
            await client.post(path("q-1"), data={"action": "cancel"}),
            await client.get(path("q-1")[:-3] + "xyz"),
            await client.get(path("q-1", expires_at=time.time() - 1)),
            await client.get(path("nobody")),
            await client.post(path("q-1"), data={"q0": "0", "action": "answer"}),
            await client.get(path("q-1")),
        ]
        assert [h1_count(page) for page in pages] == [1] * len(pages)
        assert "This question has been answered." in pages[-1].text


class TestTheLinkPageShowsTheView:
    """The page renders the core's view of a question (`dsh_user_questions.view`): markdown as
    safe HTML, a diff from the one diff parser, shown labels and previews; all text escaped."""

    async def test_a_markdown_detail_is_safe_html(
        self, client: httpx.AsyncClient, questions: Questions
    ) -> None:
        """A detail's markdown becomes elements (a heading under the question's, emphasis, a
        list keeping its numbers, a safe link showing its target); raw HTML and a
        ``javascript:`` link stay text."""
        detail = (
            "# Plan\n\n**Bold** <script>alert(1)</script>\n\n3. third\n4. fourth\n\n"
            "[docs](https://docs.example/a?b=1&c=2) [bad](javascript:alert(1))"
        )
        request = make_request(make_question(detail=detail))
        questions.linked["q-view"] = LinkedQuestion(request=request, asker="laptop")
        page = (await client.get(path("q-view"))).text
        assert "<h3>Plan</h3>" in page
        assert "<strong>Bold</strong> &lt;script&gt;alert(1)&lt;/script&gt;" in page
        assert "<ol start=3><li value=3>third</li><li value=4>fourth</li></ol>" in page
        assert (
            '<a href="https://docs.example/a?b=1&amp;c=2" rel="noreferrer nofollow">docs</a>'
            in page
        )
        assert 'href="javascript' not in page
        assert "<script" not in page

    async def test_a_diff_review_shows_each_line_as_the_parser_reads_it(
        self, client: httpx.AsyncClient, questions: Questions
    ) -> None:
        """A diff-review's removed line reading ``--- x`` is a removed line, not a file header;
        the headers, the hunk header and added lines are marked; control characters are
        stand-ins and markup is escaped."""
        diff = "--- a/x.md\n+++ b/x.md\n@@ -1,2 +1,2 @@\n--- x\n+<b>new</b>\x1b[2J\n ctx\n"
        request = make_request(diff_review_question(diff))
        questions.linked["q-view"] = LinkedQuestion(request=request, asker="laptop")
        page = (await client.get(path("q-view"))).text
        assert '<span class="file">--- a/x.md</span>' in page
        assert '<span class="file">+++ b/x.md</span>' in page
        assert '<span class="hunk">@@ -1,2 +1,2 @@</span>' in page
        assert '<span class="del">--- x</span>' in page
        assert '<span class="add">+&lt;b&gt;new&lt;/b&gt;&lt;U+001B&gt;[2J</span>' in page
        assert '<span class="ctx"> ctx</span>' in page
        assert "review asked by" in page

    async def test_options_show_their_shown_label_description_and_preview(
        self, client: httpx.AsyncClient, questions: Questions
    ) -> None:
        """An option shows its label inert and escaped, its description and its preview's
        markdown; the answer still names the wire label."""
        label = "use <npm>\u202e"
        option = AskUserQuestionOption(label, "The *default*", preview="## Lockfile\n\n`npm ci`")
        request = make_request(make_question(options=(option, AskUserQuestionOption("pnpm"))))
        questions.linked["q-view"] = LinkedQuestion(request=request, asker="laptop")
        page = (await client.get(path("q-view"))).text
        assert '<span>use &lt;npm&gt;&lt;U+202E&gt;<span class="desc">' in page
        assert '<span class="desc">The *default*</span>' in page
        assert "<h4>Lockfile</h4><p><code>npm ci</code></p>" in page
        assert "\u202e" not in page
        await client.post(path("q-view"), data={"q0": "0", "action": "answer"})
        assert questions.answers == [("q-view", {"answers": [{"id": "pkg", "selected": [label]}]})]

    def test_the_tree_becomes_only_listed_elements_and_safe_links(self) -> None:
        """Whatever a tree holds, only listed elements with their own attributes and
        http/https/mailto links come out; every text is escaped."""
        from dsh_user_questions._link_page import _tree_html

        tree = [
            ["script", {}, "alert(1)"],
            ["a", {"href": "javascript:alert(1)", "onclick": "x"}, "<i>"],
            ["p", {"style": "x", "class": "y"}, ["a", {"href": "mailto:a@b.example"}, "mail"]],
            ["ol", {"start": '3" onload="x'}, ["li", {"value": 2}, "two"]],
        ]
        assert _tree_html(tree) == (
            "alert(1)<a>&lt;i&gt;</a>"
            '<p><a href="mailto:a@b.example" rel="noreferrer nofollow">mail</a></p>'
            "<ol><li value=2>two</li></ol>"
        )


class TestHostsAndOrigins:
    """One rule for the Host and Origin a page server accepts, behind a proxy or not."""

    @pytest.mark.parametrize(
        ("host", "ok"),
        [
            ("box.example", True),
            ("box.example:443", True),
            ("BOX.example:8443", True),
            ("127.0.0.1:8765", True),
            ("127.0.0.1", False),
            ("127.0.0.1:9999", False),
            ("[::1]:8765", True),
            ("[::1]", False),
            ("evil.example", False),
            ("box.example.evil.example", False),
            ("", False),
        ],
    )
    def test_a_bare_name_allows_any_port_a_name_with_a_port_that_port(
        self, host: str, ok: bool
    ) -> None:
        """``box.example`` allows that name with any port or none; ``name:port`` that port."""
        allowed = {"box.example", "127.0.0.1:8765", "[::1]:8765"}
        assert host_allowed(host, allowed) is ok

    @pytest.mark.parametrize(
        ("origin", "ok"),
        [
            ("https://box.example", True),
            ("http://box.example:8080", True),
            ("https://127.0.0.1:8765", True),
            ("null", False),
            ("https://evil.example", False),
            ("ftp://box.example", False),
            ("https://box.example/path", False),
        ],
    )
    def test_an_origin_is_http_or_https_on_an_allowed_host(self, origin: str, ok: bool) -> None:
        """A TLS proxy's ``https://`` origin passes like ``http://``; other origins do not."""
        assert origin_allowed(origin, {"box.example", "127.0.0.1:8765"}) is ok

    @pytest.mark.parametrize(
        ("origin", "ok"),
        [
            ("https://box.example", True),
            ("https://box.example:443", True),
            ("http://box.example", False),
            ("http://box.example:8080", False),
            ("https://box.example:8443", False),
            ("http://127.0.0.1:8765", True),
            ("http://lan.example:8080", True),
            ("https://lan.example", True),
        ],
    )
    def test_an_https_public_urls_name_admits_only_its_https_origin(
        self, origin: str, ok: bool
    ) -> None:
        """With ``https://box.example`` public, an http origin of that name (or another port of
        it: a plain-http proxy port) is refused; loopback and another allowed name keep both."""
        allowed = {
            "box.example",
            public_origin("https://box.example/inbox"),
            "127.0.0.1:8765",
            "lan.example",
        }
        assert origin_allowed(origin, allowed) is ok

    def test_one_check_refuses_another_origin_and_another_site(self) -> None:
        """The check both pages make: a foreign origin, or a post from another site."""
        allowed = {"box.example", "https://box.example"}
        assert cross_origin_refusal("POST", "https://box.example", "same-origin", allowed) is None
        assert cross_origin_refusal("POST", None, "", allowed) is None
        assert cross_origin_refusal("POST", "http://box.example", "", allowed) == (
            "forbidden: cross-origin request"
        )
        assert cross_origin_refusal("POST", None, "cross-site", allowed) == (
            "forbidden: cross-site request"
        )
        assert cross_origin_refusal("GET", None, "cross-site", allowed) is None

    def test_a_public_url_gives_its_origin(self) -> None:
        """The origin as a browser writes it: lower case, no default port."""
        assert public_origin("https://Box.Example:443/questions/") == "https://box.example"
        assert public_origin("https://box.example:8443/q") == "https://box.example:8443"
        assert public_origin("http://[::1]:80") == "http://[::1]"

    def test_a_public_url_gives_its_host_name_and_prefix(self) -> None:
        """The public URL's host is allowed by name; its path is the prefix; a URL that is
        not http(s) is a ValueError naming it."""
        assert public_host("https://Box.Example:8443/questions/") == "box.example"
        assert public_host("https://[::1]:8443") == "[::1]"
        assert public_prefix("https://box.example:8443/questions/") == "/questions"
        assert public_prefix("https://box.example") == ""
        with pytest.raises(ValueError, match="ftp://box"):
            public_host("ftp://box")


class TestNoOtherOnTheLinkPage:
    """A question with ``allow_other`` false shows its options only."""

    async def test_no_other_choice_and_no_box_for_own_words(
        self, client: httpx.AsyncClient
    ) -> None:
        """Neither the single- nor the multi-select has an Other choice or a text box."""
        page = await client.get(path("q-3"))
        assert page.status_code == 200
        assert 'name="q0"' in page.text
        assert 'name="q1"' in page.text
        assert "Other" not in page.text
        assert "<textarea" not in page.text
        assert "-custom" not in page.text

    async def test_its_options_answer_and_forged_words_are_refused(
        self, client: httpx.AsyncClient, questions: Questions
    ) -> None:
        """Picks are sent; words posted anyway are refused by the answer rules (422)."""
        forged = await client.post(path("q-3"), data={"q1-custom": "bsd", "action": "answer"})
        assert forged.status_code == 422
        assert "takes only its options" in forged.text
        sent = await client.post(path("q-3"), data={"q0": "0", "q1": "1", "action": "answer"})
        assert "Your answer was recorded." in sent.text
        assert questions.answers == [
            (
                "q-3",
                {
                    "answers": [
                        {"id": "pkg", "selected": ["pnpm"]},
                        {"id": "os", "selected": ["npm"]},
                    ]
                },
            )
        ]


class TestTheLinkPageChecksOriginLikeThePage:
    """The one-question page refuses a post from another origin (or from the public name over
    http) as the page does, and lets its own form's post through."""

    @pytest.fixture
    async def public(self, questions: Questions) -> AsyncIterator[httpx.AsyncClient]:
        """The link page of a server whose public URL is ``https://answers.example``."""
        routes = link_routes(
            secret=lambda: SECRET,
            get=questions.get,
            answer=questions.answer,
            cancel=questions.cancel,
        )
        hosts = {"answers.example", public_origin("https://answers.example"), "127.0.0.1:8765"}

        async def page(scope: Any, receive: Any, send: Any) -> None:  # pragma: no cover
            raise AssertionError("only links are asked for")

        transport = httpx.ASGITransport(app=with_links(page, routes, lambda: hosts))
        async with httpx.AsyncClient(transport=transport, base_url="http://answers.example") as c:
            yield c

    @pytest.mark.parametrize(
        "headers",
        [
            {"Origin": "https://evil.example"},
            {"Origin": "http://answers.example"},
            {"Origin": "http://answers.example:8080"},
            {"Origin": "null"},
            {"Sec-Fetch-Site": "cross-site"},
        ],
    )
    async def test_a_post_from_elsewhere_is_refused(
        self, public: httpx.AsyncClient, questions: Questions, headers: dict[str, str]
    ) -> None:
        """403 naming why; the question is not answered."""
        sent = await public.post(
            path("q-3"), data={"q0": "0", "q1": "1", "action": "answer"}, headers=headers
        )
        assert sent.status_code == 403
        assert "forbidden: cross-" in sent.text
        assert questions.answers == []

    @pytest.mark.parametrize(
        "headers",
        [
            {"Origin": "https://answers.example", "Sec-Fetch-Site": "same-origin"},
            {"Host": "127.0.0.1:8765", "Origin": "http://127.0.0.1:8765"},
            {},
        ],
    )
    async def test_its_own_post_is_taken(
        self, public: httpx.AsyncClient, questions: Questions, headers: dict[str, str]
    ) -> None:
        """The public https origin, the loopback address, or no Origin at all (no browser)."""
        sent = await public.post(
            path("q-3"), data={"q0": "0", "q1": "1", "action": "answer"}, headers=headers
        )
        assert sent.status_code == 200
        assert "Your answer was recorded." in sent.text
        assert len(questions.answers) == 1

    async def test_the_page_asks_the_browser_to_send_its_origin(
        self, public: httpx.AsyncClient
    ) -> None:
        """Under ``no-referrer`` a browser posts a form with ``Origin: null``; the page's policy
        is ``same-origin`` (still no Referer to any other site), so its own post passes."""
        page = await public.get(path("q-3"))
        assert page.headers["referrer-policy"] == "same-origin"
        assert '<meta name=referrer content="same-origin">' in page.text
        assert "no-referrer" not in page.text
