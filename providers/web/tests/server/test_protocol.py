"""The web protocol over real HTTP against the real uvicorn server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import pytest
from conftest import EventStream, answer_of, item, payload, request, start_ask, wait_until
from dsh_user_questions import AskUserQuestionAnswer, UserQuestionError, UserQuestionErrorCode
from dsh_user_questions.harness import AbortController, Agent, AgentRegistry, HarnessContext

from dsh_user_questions_web import WebProvider

ROUTES = [
    ("GET", ""),
    ("GET", "app.js"),
    ("GET", "app.css"),
    ("GET", "state"),
    ("GET", "events"),
    ("POST", "answer"),
    ("POST", "cancel"),
]


def by_token(data: dict[str, Any]) -> AskUserQuestionAnswer:
    """What ask() returns for ``data`` answered on the page: the page knows no people, so
    ``answered_by`` is whoever held its token."""
    return payload({**data, "answered_by": "token"})


def origin_of(web: WebProvider) -> str:
    """The page's origin, ``http://127.0.0.1:<port>``."""
    assert web.url is not None
    return web.url.split("/" + web.token, 1)[0]


# ---- the server and its URL ----


async def test_url_is_loopback_with_a_random_token(web: WebProvider) -> None:
    """The URL points at 127.0.0.1 on a real port and carries a long random token."""
    assert web.url is not None
    assert web.url.startswith("http://127.0.0.1:")
    assert web.url.endswith(f"/{web.token}/")
    assert len(web.token) >= 32
    assert WebProvider().token != web.token


async def test_start_prints_the_url_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    """Starting the server prints the page's URL on stderr, nothing on stdout."""
    provider = WebProvider()
    url = await provider.start()
    try:
        captured = capsys.readouterr()
        assert url in captured.err
        assert captured.out == ""
    finally:
        await provider.stop()


async def test_server_starts_lazily_on_the_first_ask() -> None:
    """A provider that was never started serves as soon as something asks."""
    provider = WebProvider(announce=False)
    assert provider.url is None
    asking = await start_ask(provider, request())
    try:
        assert provider.running
        assert provider.url is not None
    finally:
        await provider.stop()
    with pytest.raises(UserQuestionError) as caught:
        await asking.result()
    assert caught.value.code == UserQuestionErrorCode.ASK_ABORTED


async def test_a_stopped_provider_starts_again_on_the_next_ask() -> None:
    """After stop(), the next ask starts a fresh server that answers as usual."""
    provider = WebProvider(announce=False)
    await provider.start()
    await provider.stop()
    assert not provider.running
    asking = await start_ask(provider, request())
    try:
        async with httpx.AsyncClient(base_url=provider.url or "") as http:
            post = {"id": asking.id, "answer": answer_of({"id": "pkg", "selected": ["npm"]})}
            assert (await http.post("answer", json=post)).status_code == 200
        assert (await asking.result()).answers[0].selected == ("npm",)
    finally:
        await provider.stop()


async def test_binding_beyond_loopback_warns() -> None:
    """Binding a non-loopback address is allowed but raises a WebProviderWarning."""
    from dsh_user_questions_web import WebProviderWarning

    provider = WebProvider(host="0.0.0.0", announce=False)
    with pytest.warns(WebProviderWarning, match=r"0\.0\.0\.0"):
        await provider.start()
    try:
        assert provider.url is not None
        assert provider.url.startswith("http://127.0.0.1:")
    finally:
        await provider.stop()


def test_from_env_reads_host_port_and_allowed_hosts() -> None:
    """from_env takes host, port and extra host names from the documented variables."""
    provider = WebProvider.from_env(
        {
            "DSH_USER_QUESTIONS_WEB_HOST": "127.0.0.2",
            "DSH_USER_QUESTIONS_WEB_PORT": "8765",
            "DSH_USER_QUESTIONS_WEB_ALLOWED_HOSTS": "box.local, other:9",
        }
    )
    assert (provider._host, provider._port) == ("127.0.0.2", 8765)
    assert provider._extra_hosts == ("box.local", "other:9")


def test_from_env_rejects_a_port_that_is_not_a_number() -> None:
    """A non-numeric port variable is a ValueError naming the variable."""
    with pytest.raises(ValueError, match="DSH_USER_QUESTIONS_WEB_PORT"):
        WebProvider.from_env({"DSH_USER_QUESTIONS_WEB_PORT": "eighty"})


async def test_configured_port_is_used(unused_tcp_port: int) -> None:
    """An explicit port is bound as given."""
    provider = WebProvider(port=unused_tcp_port, announce=False)
    try:
        url = await provider.start()
        assert f":{unused_tcp_port}/" in url
    finally:
        await provider.stop()


async def test_bare_token_path_redirects_to_the_page(
    web: WebProvider, client: httpx.AsyncClient
) -> None:
    """/<token> redirects to <token>/, relative so a proxy's path prefix stays."""
    response = await client.get(f"{origin_of(web)}/{web.token}")
    assert response.status_code == 307
    assert response.headers["location"] == f"{web.token}/"


# ---- security ----


@pytest.mark.parametrize(("method", "route"), ROUTES)
@pytest.mark.parametrize("token", ["", "wrong-token", "x" * 32])
async def test_every_route_needs_the_token(
    web: WebProvider, client: httpx.AsyncClient, method: str, route: str, token: str
) -> None:
    """Every route answers 401 without the right token."""
    response = await client.request(
        method, f"{origin_of(web)}/{token}/{route}", json={"id": "ask-1"}
    )
    assert response.status_code == 401


@pytest.mark.parametrize("path", ["/", "/favicon.ico", "/events"])
async def test_paths_outside_the_token_are_unauthorized(
    web: WebProvider, client: httpx.AsyncClient, path: str
) -> None:
    """Paths that carry no token at all answer 401."""
    assert (await client.get(origin_of(web) + path)).status_code == 401


@pytest.mark.parametrize(("method", "route"), ROUTES)
async def test_a_foreign_host_header_is_refused(
    client: httpx.AsyncClient, method: str, route: str
) -> None:
    """A Host header naming another site (DNS rebinding) gets 403 even with the token."""
    response = await client.request(
        method, route, headers={"Host": "attacker.example"}, json={"id": "ask-1"}
    )
    assert response.status_code == 403


async def test_localhost_host_header_is_accepted(
    web: WebProvider, client: httpx.AsyncClient
) -> None:
    """The page can be reached as localhost:<port> too."""
    port = origin_of(web).rsplit(":", 1)[1]
    response = await client.get("state", headers={"Host": f"localhost:{port}"})
    assert response.status_code == 200


async def test_cross_origin_post_is_refused(web: WebProvider, client: httpx.AsyncClient) -> None:
    """A post whose Origin is another site gets 403 and leaves the question pending."""
    asking = await start_ask(web, request())
    good = {"id": asking.id, "answer": answer_of({"id": "pkg", "selected": ["pnpm"]})}
    response = await client.post("answer", json=good, headers={"Origin": "http://evil.example"})
    assert response.status_code == 403
    assert web.pending_count == 1
    response = await client.post("answer", json=good, headers={"Origin": origin_of(web)})
    assert response.status_code == 200
    await asking.result()


async def test_cross_site_fetch_metadata_is_refused(client: httpx.AsyncClient) -> None:
    """A post the browser marks Sec-Fetch-Site: cross-site gets 403."""
    response = await client.post(
        "cancel", json={"id": "ask-1"}, headers={"Sec-Fetch-Site": "cross-site"}
    )
    assert response.status_code == 403


async def test_a_declared_oversized_body_is_refused(client: httpx.AsyncClient) -> None:
    """A body whose Content-Length passes the limit gets 413 before it is read."""
    body = b'{"id":"' + b"a" * (300 * 1024) + b'"}'
    response = await client.post(
        "answer", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413


async def test_a_chunked_oversized_body_is_refused(client: httpx.AsyncClient) -> None:
    """A streamed body without Content-Length is cut off at the limit with 413."""

    async def chunks() -> Any:
        for _ in range(400):
            yield b"x" * 1024

    response = await client.post(
        "answer", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413


async def test_posts_must_be_json(client: httpx.AsyncClient) -> None:
    """A form-encoded post (what a cross-site form can send) gets 415."""
    response = await client.post("cancel", data={"id": "ask-1"})
    assert response.status_code == 415


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"{not json", "not JSON"),
        (b"[1, 2]", "JSON object"),
        (b'{"id": "ask-1"}', "answer: missing"),
        (b'{"id": 5, "answer": {}}', "id: must be a question id"),
        (b'{"id": "ask-1", "answer": {}, "extra": 1}', "extra: unknown key"),
    ],
)
async def test_malformed_posts_get_400_with_the_problem(
    client: httpx.AsyncClient, body: bytes, problem: str
) -> None:
    """A post that is not {id, answer} gets 400 naming what is wrong."""
    response = await client.post(
        "answer", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert any(problem in text for text in response.json()["problems"])


async def test_responses_carry_protective_headers(client: httpx.AsyncClient) -> None:
    """The page is served with a strict CSP, nosniff, no-referrer and no framing."""
    response = await client.get("")
    assert response.status_code == 200
    csp = response.headers["content-security-policy"]
    assert "default-src 'none'" in csp
    assert "script-src 'self'" in csp
    assert "frame-ancestors 'none'" in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"


async def test_page_loads_no_external_asset(client: httpx.AsyncClient) -> None:
    """The page references only its own two assets: it works offline."""
    page = (await client.get("")).text
    assert "http://" not in page
    assert "https://" not in page
    assert "//" not in page.replace("<!--", "")
    assert (await client.get("app.js")).status_code == 200
    assert (await client.get("app.css")).status_code == 200


async def test_websocket_upgrades_are_not_served(
    web: WebProvider, client: httpx.AsyncClient
) -> None:
    """A WebSocket handshake does not get a socket (the page uses server-sent events)."""
    response = await client.get(
        "state",
        headers={
            "Connection": "Upgrade",
            "Upgrade": "websocket",
            "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        },
    )
    assert response.status_code != 101


# ---- pushing questions to pages ----


async def test_events_start_with_a_snapshot_of_every_pending_ask(
    web: WebProvider, client: httpx.AsyncClient
) -> None:
    """A page connecting late gets every pending ask, in arrival order, in the snapshot."""
    first = await start_ask(web, request(item("a")))
    second = await start_ask(web, request(item("b")))
    async with client.stream("GET", "events") as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        name, data = await EventStream(response).next()
    assert name == "snapshot"
    assert [ask["id"] for ask in data["pending"]] == [first.id, second.id]
    assert data["pending"][0]["questions"][0]["id"] == "a"
    await web.stop()


async def test_reconnecting_replays_the_same_ids(
    web: WebProvider, client: httpx.AsyncClient
) -> None:
    """A second connection (a reload) sees the same pending asks under the same ids."""
    asking = await start_ask(web, request())
    snapshots = []
    for _ in range(2):
        async with client.stream("GET", "events") as response:
            name, data = await EventStream(response).next()
            snapshots.append((name, data["pending"]))
    assert snapshots[0] == snapshots[1]
    assert snapshots[0][1][0]["id"] == asking.id
    await web.stop()


async def test_new_and_resolved_asks_are_pushed(
    web: WebProvider, client: httpx.AsyncClient
) -> None:
    """An open page is told when an ask arrives and when it is answered."""
    async with client.stream("GET", "events") as response:
        events = EventStream(response)
        name, data = await events.next()
        assert (name, data["pending"]) == ("snapshot", [])
        asking = await start_ask(web, request())
        name, data = await events.next()
        assert (name, data["id"], data["agent"]) == ("added", asking.id, None)
        post = {"id": asking.id, "answer": answer_of({"id": "pkg", "selected": ["yarn"]})}
        assert (await client.post("answer", json=post)).status_code == 200
        assert await events.next() == ("resolved", {"id": asking.id, "outcome": "answered"})
    await asking.result()


async def test_asks_from_several_agents_queue_with_their_labels(
    web: WebProvider, client: httpx.AsyncClient
) -> None:
    """Pending asks queue in order, each labelled with its agent's id (or its text)."""

    class Anonymous:
        def __str__(self) -> str:
            return "reviewer bot"

    first = await start_ask(web, request(agent=Agent("planner")))
    second = await start_ask(web, request(agent=Anonymous()))
    third = await start_ask(web, request())
    pending = (await client.get("state")).json()["pending"]
    assert [(ask["id"], ask["agent"]) for ask in pending] == [
        (first.id, "planner"),
        (second.id, "reviewer bot"),
        (third.id, None),
    ]
    await web.stop()


# ---- answering ----


async def test_a_valid_answer_is_what_ask_returns(
    web: WebProvider, client: httpx.AsyncClient
) -> None:
    """The first valid post settles the question and ask() returns exactly that answer."""
    asking = await start_ask(web, request(item(multi_select=True), item("why", options=())))
    wire = answer_of(
        {"id": "pkg", "selected": ["npm", "yarn"], "custom": "bun"},
        {"id": "why", "selected": [], "custom": "speed"},
    )
    response = await client.post("answer", json={"id": asking.id, "answer": wire})
    assert response.json() == {"status": "accepted", "id": asking.id}
    assert await asking.result() == by_token(wire)
    assert web.pending_count == 0


@pytest.mark.parametrize(
    ("items", "reason"),
    [
        ([{"id": "pkg", "selected": ["bun"]}], "not one of its options"),
        ([{"id": "pkg", "selected": ["npm", "yarn"]}], "single-select"),
        ([{"id": "pkg", "selected": ["npm"], "custom": "x"}], "both a selection and custom"),
        ([{"id": "pkg", "selected": [], "custom": "  "}], "blank custom"),
        ([{"id": "pkg", "selected": ["npm", "npm"]}], "more than once"),
        ([{"id": "other", "selected": []}], "no question that was asked"),
        ([], "exactly one item per asked question"),
        ([{"id": "pkg", "selected": []}, {"id": "pkg", "selected": []}], "second time"),
        ([{"id": "pkg", "selected": "npm"}], "answer.answers[0].selected"),
        ([{"id": "pkg", "selected": [], "colour": "red"}], "answer.answers[0].colour"),
    ],
)
async def test_a_bad_answer_gets_a_reason_and_the_question_stays_pending(
    web: WebProvider, client: httpx.AsyncClient, items: list[dict[str, Any]], reason: str
) -> None:
    """A post breaking a rule gets 422 with the reason; a later valid post still wins."""
    asking = await start_ask(web, request())
    response = await client.post("answer", json={"id": asking.id, "answer": answer_of(*items)})
    assert response.status_code == 422
    body = response.json()
    assert body["status"] == "rejected"
    assert any(reason in problem for problem in body["problems"]), body
    assert not asking.task.done()
    good = {"id": asking.id, "answer": answer_of({"id": "pkg", "selected": []})}
    assert (await client.post("answer", json=good)).status_code == 200
    assert (await asking.result()).answers[0].selected == ()


async def test_answers_must_follow_the_asked_order(
    web: WebProvider, client: httpx.AsyncClient
) -> None:
    """Items in another order than asked are rejected, naming the expected order."""
    asking = await start_ask(web, request(item("a"), item("b")))
    wire = answer_of({"id": "b", "selected": []}, {"id": "a", "selected": []})
    response = await client.post("answer", json={"id": asking.id, "answer": wire})
    assert response.status_code == 422
    assert '["a", "b"]' in response.json()["problems"][0]
    await web.stop()


async def test_a_late_or_duplicate_answer_gets_a_not_pending_receipt(
    web: WebProvider, client: httpx.AsyncClient
) -> None:
    """Only the first valid answer counts; the next gets 409 saying it was answered."""
    asking = await start_ask(web, request())
    first = {"id": asking.id, "answer": answer_of({"id": "pkg", "selected": ["pnpm"]})}
    second = {"id": asking.id, "answer": answer_of({"id": "pkg", "selected": ["npm"]})}
    results = await asyncio.gather(
        client.post("answer", json=first), client.post("answer", json=second)
    )
    assert sorted(r.status_code for r in results) == [200, 409]
    late = next(r for r in results if r.status_code == 409).json()
    assert late["status"] == "not-pending"
    assert late["outcome"] == "answered"
    assert "already answered" in late["message"]
    winner = next(r for r in results if r.status_code == 200)
    expected = first if winner.request.content == results[0].request.content else second
    assert await asking.result() == by_token(expected["answer"])


async def test_an_unknown_id_gets_a_not_pending_receipt(client: httpx.AsyncClient) -> None:
    """Answering an id that was never asked gets 409, not an error page."""
    post = {"id": "ask-999", "answer": answer_of()}
    response = await client.post("answer", json=post)
    assert response.status_code == 409
    assert response.json()["message"] == "This question is no longer pending: it is not known here."
    assert "ask-999" not in response.json()["message"]


# ---- closing, withdrawing, stopping ----


async def test_closing_the_question_raises_ask_cancelled(
    web: WebProvider, client: httpx.AsyncClient
) -> None:
    """A cancel post makes ask() raise ASK_CANCELLED; a second one is not pending."""
    asking = await start_ask(web, request())
    response = await client.post("cancel", json={"id": asking.id})
    assert response.json() == {"status": "cancelled", "id": asking.id}
    with pytest.raises(UserQuestionError) as caught:
        await asking.result()
    assert caught.value.code == UserQuestionErrorCode.ASK_CANCELLED
    again = await client.post("cancel", json={"id": asking.id})
    assert again.status_code == 409
    assert again.json()["outcome"] == "cancelled"


@pytest.mark.parametrize("from_thread", [False, True])
async def test_the_signal_withdraws_the_question_from_every_page(
    web: WebProvider, client: httpx.AsyncClient, from_thread: bool
) -> None:
    """Aborting the signal (on the loop or another thread) withdraws the ask everywhere."""
    controller = AbortController()
    async with client.stream("GET", "events") as response:
        events = EventStream(response)
        await events.next()
        asking = await start_ask(web, request(signal=controller.signal))
        await events.next()
        if from_thread:
            thread = threading.Thread(target=controller.abort, args=("user left",))
            thread.start()
            thread.join()
        else:
            controller.abort("user left")
        assert await events.next() == ("resolved", {"id": asking.id, "outcome": "withdrawn"})
    with pytest.raises(UserQuestionError) as caught:
        await asking.result()
    assert caught.value.code == UserQuestionErrorCode.ASK_ABORTED
    assert (await client.get("state")).json() == {"pending": []}
    late = {"id": asking.id, "answer": answer_of({"id": "pkg", "selected": []})}
    assert (await client.post("answer", json=late)).json()["outcome"] == "withdrawn"


async def test_an_already_aborted_signal_never_reaches_the_page(web: WebProvider) -> None:
    """ask() with an aborted signal raises ASK_ABORTED without showing anything."""
    controller = AbortController()
    controller.abort()
    with pytest.raises(UserQuestionError) as caught:
        await web.ask(request(signal=controller.signal))
    assert caught.value.code == UserQuestionErrorCode.ASK_ABORTED
    assert web.pending_count == 0


async def test_cancelling_the_asking_task_withdraws_the_question(web: WebProvider) -> None:
    """Cancelling the task awaiting ask() takes the question off the board."""
    asking = await start_ask(web, request())
    asking.task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking.task
    await wait_until(lambda: web.pending_count == 0, "the question to leave the board")


async def test_stop_fails_every_pending_ask_saying_why(
    web: WebProvider, client: httpx.AsyncClient
) -> None:
    """stop(reason) fails each pending ask with ASK_ABORTED and tells the pages why."""
    first = await start_ask(web, request(item("a")))
    second = await start_ask(web, request(item("b")))
    async with client.stream("GET", "events") as response:
        events = EventStream(response)
        await events.next()
        stopping = asyncio.ensure_future(web.stop("the harness is shutting down"))
        seen = [await events.next() for _ in range(3)]
        await stopping
    assert seen == [
        ("resolved", {"id": first.id, "outcome": "stopped"}),
        ("resolved", {"id": second.id, "outcome": "stopped"}),
        ("bye", {"reason": "the harness is shutting down"}),
    ]
    for asking in (first, second):
        with pytest.raises(UserQuestionError) as caught:
            await asking.result()
        assert caught.value.code == UserQuestionErrorCode.ASK_ABORTED
        assert caught.value.message == (
            "ask_user_question was aborted before the user answered: the harness is shutting down"
        )
    assert not web.running


# ---- through the service and the entry point ----


async def test_the_service_asks_through_a_registered_web_provider(web: WebProvider) -> None:
    """register_provider(WebProvider) makes ctx.user_questions.ask answer from the page."""
    from dsh_user_questions import plugin

    agents = AgentRegistry()
    ctx = HarnessContext(agents=agents)
    ctx.register(plugin)
    agent = Agent("main")
    agents.enter(agent)
    dispose = ctx.user_questions.register_provider(web)
    try:
        task = asyncio.ensure_future(ctx.user_questions.ask(request(agent=agent)))
        await wait_until(lambda: web.pending_count == 1, "the service's question")
        async with httpx.AsyncClient(base_url=web.url or "") as http:
            pending = (await http.get("state")).json()["pending"]
            assert pending[0]["agent"] == "main"
            wire = answer_of({"id": "pkg", "selected": ["pnpm"]})
            await http.post("answer", json={"id": pending[0]["id"], "answer": wire})
        assert await asyncio.wait_for(task, 10) == by_token(wire)
    finally:
        dispose()


async def test_an_abort_through_the_service_withdraws_the_page_question(
    web: WebProvider,
) -> None:
    """When the service gives up on an aborted ask, the question leaves the page too."""
    from dsh_user_questions import plugin

    ctx = HarnessContext()
    ctx.register(plugin)
    dispose = ctx.user_questions.register_provider(web)
    controller = AbortController()
    try:
        task = asyncio.ensure_future(ctx.user_questions.ask(request(signal=controller.signal)))
        await wait_until(lambda: web.pending_count == 1, "the service's question")
        controller.abort()
        with pytest.raises(UserQuestionError) as caught:
            await asyncio.wait_for(task, 10)
        assert caught.value.code == UserQuestionErrorCode.ASK_ABORTED
        await wait_until(lambda: web.pending_count == 0, "the question to be withdrawn")
    finally:
        dispose()


async def test_a_timed_out_ask_leaves_the_page_and_refuses_a_late_answer(
    web: WebProvider, client: httpx.AsyncClient
) -> None:
    """ask(timeout=) expiring takes the question off the page (ASK_TIMED_OUT for the agent);
    an answer posted afterwards gets a not-pending receipt, never "accepted"."""
    from dsh_user_questions import plugin

    ctx = HarnessContext()
    ctx.register(plugin)
    dispose = ctx.user_questions.register_provider(web)
    try:
        task = asyncio.ensure_future(ctx.user_questions.ask(request(), timeout=0.5))
        await wait_until(lambda: web.pending_count == 1, "the service's question")
        ask_id = (await client.get("state")).json()["pending"][0]["id"]
        with pytest.raises(UserQuestionError) as caught:
            await asyncio.wait_for(task, 10)
        assert caught.value.code == UserQuestionErrorCode.ASK_TIMED_OUT
        await wait_until(lambda: web.pending_count == 0, "the question to be withdrawn")
        wire = answer_of({"id": "pkg", "selected": ["npm"]})
        late = await client.post("answer", json={"id": ask_id, "answer": wire})
        assert late.status_code == 409
        assert late.json()["outcome"] == "withdrawn"
    finally:
        dispose()


def test_the_distribution_declares_its_dsh_entry_point() -> None:
    """The installed distribution registers dsh_user_questions_web.plugin's plugin as 'web'."""
    from importlib.metadata import entry_points

    found = {ep.name: ep.value for ep in entry_points(group="dsh")}
    assert found.get("web") == "dsh_user_questions_web.plugin:plugin"


async def _ask_through_entry_point(
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[HarnessContext, WebProvider, asyncio.Future[Any]]:
    """Load the dsh entry points with the web provider chosen, and ask until it is pending."""
    from dsh_user_questions_web import plugin

    monkeypatch.setenv("DSH_USER_QUESTIONS_PROVIDER", "web")
    monkeypatch.setattr(plugin, "_provider", WebProvider(announce=False))
    monkeypatch.setattr(plugin, "plugin", plugin.WebPlugin())
    ctx = HarnessContext()
    ctx.load_entrypoints()
    provider = plugin.get_provider()
    task = asyncio.ensure_future(ctx.user_questions.ask(request()))
    try:
        await wait_until(
            lambda: provider.pending_count == 1 and provider.url is not None,
            "the plugin's question",
        )
    except BaseException:
        await provider.stop()
        raise
    return ctx, provider, task


async def test_loading_entry_points_makes_the_web_page_the_provider(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A harness that loads the dsh entry points asks through the web page."""
    _, provider, task = await _ask_through_entry_point(monkeypatch)
    try:
        async with httpx.AsyncClient(base_url=provider.url or "") as http:
            pending = (await http.get("state")).json()["pending"]
            wire = answer_of({"id": "pkg", "selected": ["yarn"]})
            await http.post("answer", json={"id": pending[0]["id"], "answer": wire})
        assert await asyncio.wait_for(task, 10) == by_token(wire)
    finally:
        await provider.stop()


async def test_closing_the_harness_stops_the_page(monkeypatch: pytest.MonkeyPatch) -> None:
    """ctx.aclose() settles its pending ask (ASK_ABORTED: the context closed), then stops the
    plugin's server."""
    ctx, provider, task = await _ask_through_entry_point(monkeypatch)
    try:
        await ctx.aclose()
        with pytest.raises(UserQuestionError) as info:
            await asyncio.wait_for(task, 10)
        assert info.value.code == "ASK_ABORTED"
        assert str(info.value) == str(UserQuestionError.context_closed())
        assert provider.pending_count == 0
        assert provider.url is None
    finally:
        await provider.stop()


async def test_the_page_lives_as_long_as_the_last_context_using_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Closing one of two contexts keeps the page serving; closing the second stops it."""
    ctx, provider, task = await _ask_through_entry_point(monkeypatch)
    other = HarnessContext()
    other.load_entrypoints()
    try:
        await other.aclose()
        assert provider.running
        assert not task.done()
        await ctx.aclose()
        with pytest.raises(UserQuestionError) as info:
            await asyncio.wait_for(task, 10)
        assert info.value.code == "ASK_ABORTED"
        assert not provider.running
    finally:
        await provider.stop()


class TestBehindAProxy:
    """What a reverse proxy sends passes: a bare allowed name with any port, an https origin,
    the public URL's path prefix; everything else is still refused."""

    async def test_a_bare_allowed_name_passes_with_or_without_a_port(self) -> None:
        """``allowed_hosts=["box.local"]`` lets ``Host: box.local`` and ``box.local:443`` in,
        and a post whose Origin is ``https://box.local``; another origin is still 403."""
        provider = WebProvider(announce=False, allowed_hosts=["box.local"])
        await provider.start()
        try:
            async with httpx.AsyncClient(base_url=provider.url or "") as client:
                for host in ("box.local", "box.local:443"):
                    response = await client.get("state", headers={"Host": host})
                    assert response.status_code == 200, host
                asking = await start_ask(provider, request())
                body = {"id": asking.id}
                evil = {"Host": "box.local", "Origin": "https://evil.example"}
                assert (await client.post("cancel", json=body, headers=evil)).status_code == 403
                own = {"Host": "box.local", "Origin": "https://box.local"}
                assert (await client.post("cancel", json=body, headers=own)).status_code == 200
            with pytest.raises(UserQuestionError) as info:
                await asking.result()
            assert info.value.code == "ASK_CANCELLED"
        finally:
            await provider.stop()

    async def test_the_public_urls_prefix_and_host_are_served(self) -> None:
        """With ``public_url="https://proxy.example/agent"`` the page answers under /agent (a
        proxy passing the prefix on) and without it, for Host proxy.example with any port."""
        provider = WebProvider(announce=False, public_url="https://proxy.example/agent")
        await provider.start()
        try:
            origin = (provider.url or "").removesuffix(f"/{provider.token}/")
            async with httpx.AsyncClient(base_url=origin) as client:
                for path in (f"/agent/{provider.token}/state", f"/{provider.token}/state"):
                    for host in ("proxy.example", "proxy.example:8443"):
                        response = await client.get(path, headers={"Host": host})
                        assert response.status_code == 200, (path, host)
                refused = await client.get(
                    f"/agent/{provider.token}/state", headers={"Host": "other.example"}
                )
                assert refused.status_code == 403
        finally:
            await provider.stop()

    async def test_an_https_public_name_answers_only_over_https(self) -> None:
        """With ``public_url="https://proxy.example"``, a post on that name from its http
        origin (or a plain-http proxy port of it) is 403, on the page and on the link page;
        its https origin, the loopback address and another allowed name keep working."""
        provider = WebProvider(
            announce=False, public_url="https://proxy.example", allowed_hosts=["box.local"]
        )
        await provider.start()
        try:
            loopback = (provider.url or "").removesuffix(f"/{provider.token}/")
            async with httpx.AsyncClient(base_url=provider.url or "") as client:
                asking = await start_ask(provider, request())
                body = {"id": "no-such-ask"}
                for origin in ("http://proxy.example", "http://proxy.example:8080"):
                    headers = {"Host": "proxy.example", "Origin": origin}
                    refused = await client.post("cancel", json=body, headers=headers)
                    assert refused.status_code == 403, origin
                    assert refused.text == "forbidden: cross-origin request"
                    link = await client.post(
                        f"{loopback}/q/any-token", data={"action": "cancel"}, headers=headers
                    )
                    assert (link.status_code, link.text) == (403, refused.text), origin
                for host, origin in [
                    ("proxy.example", "https://proxy.example"),
                    (loopback.removeprefix("http://"), loopback),
                    ("box.local", "http://box.local:8080"),
                ]:
                    taken = await client.post(
                        "cancel", json=body, headers={"Host": host, "Origin": origin}
                    )
                    assert taken.status_code != 403, (host, origin, taken.text)
                own = {"Host": "proxy.example", "Origin": "https://proxy.example"}
                cancelled = await client.post("cancel", json={"id": asking.id}, headers=own)
                assert cancelled.status_code == 200
            with pytest.raises(UserQuestionError) as info:
                await asking.result()
            assert info.value.code == "ASK_CANCELLED"
        finally:
            await provider.stop()
