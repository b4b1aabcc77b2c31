"""Load and faults on 127.0.0.1: connection and stream caps, timeouts, slow pages, fuzzed
bodies, and the abort-versus-answer race."""

from __future__ import annotations

import asyncio
import json
import random
import socket
import threading
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import httpx
import pytest
from conftest import (
    STARTED_ASKS,
    WAIT_SECONDS,
    EventStream,
    answer_of,
    item,
    request,
    start_ask,
    wait_until,
)
from dsh_user_questions import UserQuestionError, UserQuestionErrorCode
from dsh_user_questions.harness import AbortController, HarnessContext
from dsh_user_questions.rules import check_answer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_user_questions_web import Limits, WebProvider


def address(provider: WebProvider) -> tuple[str, int, str]:
    """Host, port and token path of a serving provider."""
    assert provider.url is not None
    parts = urlsplit(provider.url)
    assert parts.hostname is not None
    assert parts.port is not None
    return parts.hostname, parts.port, parts.path


async def raw_connection(
    provider: WebProvider,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A bare TCP connection to the provider."""
    host, port, _ = address(provider)
    return await asyncio.open_connection(host, port)


async def closed_by_server(reader: asyncio.StreamReader) -> bool:
    """Whether the server closes the connection (within the wait) after what it sent."""
    try:
        while await asyncio.wait_for(reader.read(65536), WAIT_SECONDS):
            pass
    except (asyncio.TimeoutError, ConnectionError):
        return False
    return True


@pytest.fixture
async def bounded() -> AsyncIterator[WebProvider]:
    """A provider with small, quick limits."""
    limits = Limits(
        max_connections=32,
        max_streams=4,
        header_timeout=1.0,
        body_timeout=1.0,
        write_timeout=1.0,
        stream_buffer_bytes=128 * 1024,
    )
    provider = WebProvider(announce=False, limits=limits)
    await provider.start()
    yield provider
    await provider.stop()


async def test_idle_connections_without_the_token_leave_posts_working(web: WebProvider) -> None:
    """200 idle and half-sent connections (no token) do not keep a token holder from answering."""
    held = []
    for index in range(200):
        reader, writer = await raw_connection(web)
        if index % 2:
            writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # a head never finished
        held.append((reader, writer))
    asking = await start_ask(web, request())
    async with httpx.AsyncClient(base_url=web.url or "", timeout=WAIT_SECONDS) as client:
        wire = answer_of({"id": "pkg", "selected": ["npm"]})
        response = await client.post("answer", json={"id": asking.id, "answer": wire})
    assert response.status_code == 200
    assert (await asking.result()).answers[0].selected == ("npm",)
    closed = 0
    for reader, writer in held:
        if reader.at_eof() or await closed_by_server(reader):
            closed += 1
        writer.close()
    # At most max_connections stay open; the rest were closed to make room.
    assert closed >= 200 - web.limits.max_connections


async def test_a_connection_that_sends_no_request_is_closed(bounded: WebProvider) -> None:
    """A connection that never completes a request head is closed after header_timeout."""
    reader, writer = await raw_connection(bounded)
    writer.write(b"GET /")
    assert await closed_by_server(reader)
    writer.close()


async def test_a_body_sent_too_slowly_gets_408(bounded: WebProvider) -> None:
    """A post whose body does not arrive within body_timeout is answered 408."""
    reader, writer = await raw_connection(bounded)
    host, port, path = address(bounded)
    writer.write(
        f"POST {path}answer HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{".encode()
    )
    status = await asyncio.wait_for(reader.readline(), WAIT_SECONDS)
    assert status.split()[1] == b"408"
    writer.close()


async def test_event_streams_are_capped(bounded: WebProvider) -> None:
    """Beyond max_streams an event stream is refused with 503; closing one makes room."""
    async with httpx.AsyncClient(base_url=bounded.url or "", timeout=WAIT_SECONDS) as client:
        streams = []
        for _ in range(bounded.limits.max_streams):
            stream = client.stream("GET", "events")
            response = await stream.__aenter__()
            assert response.status_code == 200
            streams.append(stream)
        refused = await client.get("events")
        assert refused.status_code == 503
        await streams.pop().__aexit__(None, None, None)

        async def one_more() -> int:
            async with client.stream("GET", "events") as response:
                return response.status_code

        for _ in range(50):
            if await one_more() == 200:
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("no stream was accepted after one closed")
        for stream in streams:
            await stream.__aexit__(None, None, None)


async def test_a_page_that_never_reads_is_dropped(bounded: WebProvider) -> None:
    """A stream that reads nothing while 6 MB of events pile up for it is closed by the server
    (what it costs in memory meanwhile is a benchmark: benchmarks/bench_slow_page.py)."""
    host, port, path = address(bounded)
    sock = socket.create_connection((host, port))
    sock.sendall(f"GET {path}events HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    await asyncio.sleep(0.2)
    for index in range(300):  # about 6 MB of events for the page that does not read
        detail = f"{index} " + "x" * 20_000
        asked = bounded.ask(request(item(question=f"Question {index}?", detail=detail)))
        await asyncio.sleep(0)
        asked.cancel()
        await asyncio.sleep(0)
    sock.setblocking(False)

    def server_closed() -> bool:
        try:
            while True:
                data = sock.recv(1 << 20)
                if not data:
                    return True
        except BlockingIOError:
            return False
        except ConnectionError:
            return True

    await wait_until(server_closed, "the server to drop the page that does not read")
    sock.close()


async def test_a_slow_page_is_dropped_and_resnapshots_on_reconnect(bounded: WebProvider) -> None:
    """A page that falls behind loses its stream; its reconnect starts with a full snapshot."""
    host, port, path = address(bounded)
    reader, writer = await asyncio.open_connection(host, port, limit=1 << 22)
    writer.transport.pause_reading()  # reads nothing while events pile up
    writer.write(f"GET {path}events HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    await asyncio.sleep(0.2)
    asks = [
        asyncio.ensure_future(bounded.ask(request(item(question=f"Q{index}?", detail="y" * 5000))))
        for index in range(100)
    ]
    await asyncio.sleep(0.5)
    writer.transport.resume_reading()
    received = b""
    while chunk := await asyncio.wait_for(reader.read(1 << 20), WAIT_SECONDS):
        received += chunk
    # The stream ended before all 100 added events reached this page.
    assert received.count(b"event: added") < 100
    writer.close()
    async with (
        httpx.AsyncClient(base_url=bounded.url or "", timeout=WAIT_SECONDS) as client,
        client.stream("GET", "events") as response,
    ):
        event, data = await EventStream(response).next()
    assert event == "snapshot"
    assert len(data["pending"]) == 100
    for ask in asks:
        ask.cancel()


async def test_stop_ends_every_event_stream(web: WebProvider) -> None:
    """stop() sends bye and then ends the stream, so the browser's connection closes."""
    async with (
        httpx.AsyncClient(base_url=web.url or "", timeout=WAIT_SECONDS) as client,
        client.stream("GET", "events") as response,
    ):
        lines = response.aiter_lines()
        assert await anext(lines) == "retry: 2000"
        await web.stop("done")
        rest = [line async for line in lines]
    assert "event: bye" in rest
    assert json.loads(rest[rest.index("event: bye") + 1][5:]) == {"reason": "done"}


# ---- bodies from the network never give 500 ----

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
ANSWER_ITEMS = st.fixed_dictionaries(
    {"id": st.sampled_from(["pkg", "other", "\ud800"]) | st.text(max_size=4)},
    optional={
        "selected": st.lists(st.sampled_from(["pnpm", "npm", "yarn"]) | st.text(max_size=4)),
        "custom": st.text(max_size=40) | JSON_VALUES,
    },
)
BODIES = st.one_of(
    st.binary(max_size=200),
    JSON_VALUES.map(lambda value: json.dumps(value).encode()),
    st.fixed_dictionaries(
        {
            "id": st.text(max_size=10) | JSON_VALUES,
            "answer": st.fixed_dictionaries({"answers": st.lists(ANSWER_ITEMS, max_size=3)})
            | JSON_VALUES,
        }
    ).map(lambda value: json.dumps(value).encode()),
    st.integers(1, 120_000).map(lambda depth: b"[" * depth + b"]" * depth),
    st.integers(1, 120_000).map(lambda depth: b'{"id":"ask-1","answer":' + b"[" * depth),
    st.text().map(lambda text: json.dumps({"id": text, "answer": {}}).encode()),
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=BODIES, route=st.sampled_from(["answer", "cancel"]))
async def test_no_body_gives_500(web: WebProvider, body: bytes, route: str) -> None:
    """Whatever bytes a client posts, the answer is a 4xx (or 200), never a 500."""
    if web.pending_count == 0:
        STARTED_ASKS.append(web.ask(request()))
        await wait_until(lambda: web.pending_count == 1 and web.url is not None, "a question")
    async with httpx.AsyncClient(base_url=web.url or "", timeout=WAIT_SECONDS) as client:
        response = await client.post(
            route, content=body, headers={"Content-Type": "application/json"}
        )
    assert response.status_code in (200, 400, 409, 413, 422), response.text
    response.json()  # always JSON, always decodable


@pytest.mark.parametrize(
    "custom",
    ["x" * 10_001, "bell \x07", "escape \x1b[2J", "lone \ud800", "bidi \u202e", "  "],
)
async def test_answer_text_is_refused_exactly_as_the_core_refuses_it(
    web: WebProvider, client: httpx.AsyncClient, custom: str
) -> None:
    """Typed text the core's `rules.check_answer` refuses gets 422 with the core's problems."""
    asking = await start_ask(web, request())
    wire = answer_of({"id": "pkg", "selected": [], "custom": custom})
    with pytest.raises(UserQuestionError) as core:
        check_answer(request().questions, wire)
    body = json.dumps({"id": asking.id, "answer": wire})
    response = await client.post(
        "answer", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["problems"] == [f"answer.{p}" for p in core.value.problems]
    assert not asking.task.done()


# ---- the abort-versus-answer race ----


async def test_accepted_always_means_the_agent_got_the_answer(web: WebProvider) -> None:
    """In 600 races of an answer post against an abort (on the loop and from a thread), the page
    hears "accepted" exactly when ask() returns that answer, and ASK_ABORTED otherwise."""
    ctx = HarnessContext()
    ctx.load_entrypoints = None  # type: ignore[method-assign]  # only this provider
    from dsh_user_questions import plugin as core_plugin

    ctx.register(core_plugin, name="user_questions")
    dispose = ctx.user_questions.register_provider(web)
    rng = random.Random(12)
    outcomes: dict[tuple[str, str], int] = {}
    try:
        async with httpx.AsyncClient(base_url=web.url or "", timeout=WAIT_SECONDS) as client:
            for trial in range(600):
                controller = AbortController()
                before = web.pending_count
                task = asyncio.ensure_future(
                    ctx.user_questions.ask(request(signal=controller.signal))
                )
                await wait_until(
                    lambda before=before: web.pending_count > before,  # type: ignore[misc]
                    "the question",
                )
                ask_id = (await client.get("state")).json()["pending"][-1]["id"]
                wire = answer_of({"id": "pkg", "selected": ["npm"]})
                post = asyncio.ensure_future(
                    client.post("answer", json={"id": ask_id, "answer": wire})
                )
                from_thread = trial % 2 == 1
                delay = rng.random() * 0.004
                if from_thread:
                    timer = threading.Timer(delay, controller.abort, ("race",))
                    timer.start()
                else:
                    await asyncio.sleep(delay)
                    controller.abort("race")
                response = await post
                receipt = response.json()["status"]
                assert response.status_code in (200, 409), response.text
                await asyncio.wait({task}, timeout=WAIT_SECONDS)
                error = task.exception()
                if error is None:
                    result = "answered"
                    assert task.result().answers[0].selected == ("npm",)
                else:
                    assert isinstance(error, UserQuestionError), error
                    assert error.code == UserQuestionErrorCode.ASK_ABORTED
                    result = "aborted"
                if from_thread:
                    timer.join()
                assert (receipt == "accepted") == (result == "answered"), (trial, receipt, result)
                outcomes[(receipt, result)] = outcomes.get((receipt, result), 0) + 1
    finally:
        dispose()
    # Both sides of the race happened, so the check above was exercised both ways.
    assert outcomes.get(("accepted", "answered"), 0) > 0, outcomes
    assert outcomes.get(("not-pending", "aborted"), 0) > 0, outcomes


async def test_accepted_only_when_the_asker_got_it_also_when_its_task_is_cancelled(
    web: WebProvider,
) -> None:
    """In 200 random trials the task awaiting ask() is cancelled as the answer lands (right as
    the provider's future takes it, or after a random few milliseconds): the poster hears
    "accepted" exactly when ask() returned that answer to its caller."""
    ctx = HarnessContext()
    ctx.load_entrypoints = None  # type: ignore[method-assign]  # only this provider
    from dsh_user_questions import plugin as core_plugin

    ctx.register(core_plugin, name="user_questions")
    dispose = ctx.user_questions.register_provider(web)
    rng = random.Random(22)
    outcomes: dict[tuple[str, str], int] = {}
    try:
        async with httpx.AsyncClient(base_url=web.url or "", timeout=WAIT_SECONDS) as client:
            for trial in range(200):
                before = web.pending_count
                task = asyncio.ensure_future(ctx.user_questions.ask(request()))
                await wait_until(
                    lambda before=before: web.pending_count > before,  # type: ignore[misc]
                    "the question",
                )
                ask_id = (await client.get("state")).json()["pending"][-1]["id"]
                future = web._board._pending[ask_id].future
                if trial % 2 == 0:
                    # Cancelled in the very step the answer lands.
                    future.add_done_callback(lambda _, task=task: task.cancel())  # type: ignore[misc]
                wire = answer_of({"id": "pkg", "selected": ["npm"]})
                post = asyncio.ensure_future(
                    client.post("answer", json={"id": ask_id, "answer": wire})
                )
                if trial % 2 == 1:
                    await asyncio.sleep(rng.random() * 0.006)
                    task.cancel()
                response = await post
                assert response.status_code in (200, 409), response.text
                receipt = response.json()["status"]
                await asyncio.wait({task}, timeout=WAIT_SECONDS)
                if task.cancelled():
                    result = "cancelled"
                else:
                    error = task.exception()
                    assert error is None, error
                    assert task.result().answers[0].selected == ("npm",)
                    result = "answered"
                assert (receipt == "accepted") == (result == "answered"), (trial, receipt, result)
                if receipt != "accepted":
                    assert response.json()["outcome"] == "withdrawn"
                outcomes[(receipt, result)] = outcomes.get((receipt, result), 0) + 1
                await wait_until(
                    lambda ask_id=ask_id: ask_id not in web._board._pending,  # type: ignore[misc]
                    "the ask to settle",
                )
    finally:
        dispose()
    print(outcomes)
    # Both sides of the race happened, so the check above was exercised both ways.
    assert outcomes.get(("not-pending", "cancelled"), 0) > 0, outcomes
    assert outcomes.get(("accepted", "answered"), 0) > 0, outcomes
