"""The guard in front of every route: Host (DNS rebinding), token, Origin, who (behind a
logging-in proxy) and body size."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Collection

from dsh_user_questions._i18n import for_language, language_from_accept
from dsh_user_questions._identity import CALLER_KEY, IdentityRefusal, ProxyIdentity, caller_of
from dsh_user_questions._links import cross_origin_refusal, host_allowed
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self';"
        b" img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


class Guard:
    """ASGI middleware: Host (403), token (401), Origin / Fetch-Metadata (403), size (413).

    ``allowed_hosts()`` are the values the Host header may carry (``name:port``, or a bare
    ``name`` with any port; see `dsh_user_questions._links.host_allowed`), and an Origin must
    be ``http`` or ``https`` on one of them (a TLS proxy in front), or the public URL's own
    origin for its name (`dsh_user_questions._links.cross_origin_refusal`, the check the link
    page makes too); the token is
    the first path segment of every route; the ``streamed`` paths bound their own bodies. A
    refused request's connection is closed after
    its answer; ``on_trusted(client)`` is told of each request that passed (the server then
    keeps that connection over ones that never showed the token).

    With an ``identity`` (`dsh_user_questions._identity.ProxyIdentity`), every request must
    come from a trusted proxy (403) naming its person (401); the `Caller` is put in the
    scope under ``CALLER_KEY`` for the routes (without one: the token holder and the peer address).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str,
        allowed_hosts: Callable[[], Collection[str]],
        max_body_bytes: int,
        streamed: Collection[str] = (),
        on_trusted: Callable[[object], None] | None = None,
        identity: ProxyIdentity | None = None,
    ) -> None:
        self._app = app
        self._identity = identity
        # Routes that read their body as a stream and bound it themselves (an upload, up to
        # its question's max_bytes): the post size limit does not apply to them.
        self._streamed = frozenset(streamed)
        self._on_trusted = on_trusted
        self._prefix = f"/{token}".encode()
        self._allowed_hosts = allowed_hosts
        self._max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return

        async def secured_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message["headers"], *SECURITY_HEADERS]}
            await send(message)

        denial = self._deny(scope)
        if denial is not None:
            # A refused client gets its connection closed after the answer: a flood of them
            # never sits on idle keep-alive connections.
            denial.headers["connection"] = "close"
            await denial(scope, receive, secured_send)
            return
        caller = caller_of(scope, self._identity)
        if isinstance(caller, IdentityRefusal):
            # Nothing of the request is read, so nothing it carries is recorded; the words
            # are the core's (one message for every page and link page).
            accept = dict(scope["headers"]).get(b"accept-language", b"").decode("latin-1")
            text = for_language(language_from_accept(accept))(caller.message)
            refused = PlainTextResponse(text, status_code=caller.status)
            refused.headers["connection"] = "close"
            await refused(scope, receive, secured_send)
            return
        if self._on_trusted is not None:
            self._on_trusted(scope.get("client"))
        await self._app({**scope, CALLER_KEY: caller}, receive, secured_send)

    def _deny(self, scope: Scope) -> Response | None:
        headers = {key.decode("latin-1"): value for key, value in scope["headers"]}
        host = headers.get("host", b"").decode("latin-1").lower()
        allowed = self._allowed_hosts()
        if not host_allowed(host, allowed):
            return PlainTextResponse("forbidden: unexpected Host header", status_code=403)
        raw: bytes = scope.get("raw_path") or scope["path"].encode("utf-8", "replace")
        given = raw.split(b"?", 1)[0].split(b"/", 2)[1] if raw.startswith(b"/") else b""
        if not secrets.compare_digest(b"/" + given, self._prefix):
            return PlainTextResponse("unauthorized: the URL's token is missing or wrong", 401)
        origin = headers.get("origin")
        refusal = cross_origin_refusal(
            scope["method"],
            None if origin is None else origin.decode("latin-1"),
            headers.get("sec-fetch-site", b"").decode("latin-1"),
            allowed,
        )
        if refusal is not None:
            return PlainTextResponse(refusal, status_code=403)
        length = headers.get("content-length")
        if scope["path"] in self._streamed:
            return None
        if length is not None and (not length.isdigit() or int(length) > self._max_body_bytes):
            return PlainTextResponse("request body too large", status_code=413)
        return None
