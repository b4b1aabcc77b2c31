"""Who answered: the names the shipped surfaces record as ``answered_by``.

Private to this repository's distributions (the terminal, web and inbox providers import it);
released with the core. A surface a person uses as themselves (a terminal, a command line)
records their login name; a page that knows no people records `TOKEN_HOLDER`. Whoever can run
such a surface, or write the inbox's store, is trusted to be who it says: these are names, not
checks (docs/team.md).

A page behind a reverse proxy that logs people in learns who they are from `ProxyIdentity`:
the one decision (for the web provider's page, ``dsh-inbox serve`` and both one-question link
pages) of whether a request's identity header is believed. It is believed only from a trusted
proxy, judged by the TCP peer's address (the ASGI ``client``), never by a header a client
could write (``X-Forwarded-For``): the proxy is the peer the app sees.
"""

from __future__ import annotations

import getpass
import ipaddress
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ._i18n import N_
from .rules import inert_text

__all__ = [
    "CALLER_KEY",
    "TOKEN_HOLDER",
    "Caller",
    "IdentityRefusal",
    "ProxyIdentity",
    "caller_of",
    "login_name",
]

TOKEN_HOLDER = "token"
"""``answered_by`` of an answer given on a page that knows no people: whoever held its token."""


def login_name() -> str | None:
    """The login name of this process's user (`getpass.getuser`), or ``None`` when unknown."""
    try:
        return getpass.getuser() or None
    except (OSError, KeyError, ImportError):
        return None


_log = logging.getLogger("dsh_user_questions.identity")

CALLER_KEY = "dsh_user_questions.caller"
"""The ASGI scope key under which a page's guard leaves the request's `Caller` for its routes."""

# RFC 9110 token characters: what an HTTP header name may be made of.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_SHOWN = 128  # characters of a refused value put in the log
_Network = ipaddress.IPv4Network | ipaddress.IPv6Network

NO_IDENTITY = N_("sign in first: this page answers only people its proxy has logged in")
"""The body of a 401: the request came from the trusted proxy without a person named."""
UNTRUSTED_PEER = N_("forbidden: this page answers only through its logging-in proxy")
"""The body of a 403: the request did not come from a trusted proxy."""


@attrs.frozen
class Caller:
    """Who a page request comes from: ``person`` (recorded as ``answered_by``) and the TCP
    peer's ``address`` (the proxy's, behind one)."""

    person: str
    address: str | None = None


@attrs.frozen
class IdentityRefusal:
    """Why a request is refused: ``status`` 401 (no person named) or 403 (not from a trusted
    proxy), ``message`` (English, marked for translation where it is shown)."""

    status: int
    message: str


@attrs.frozen
class ProxyIdentity:
    """A page's trust in a logging-in proxy: ``header`` (lower case) names the person, believed
    only from a peer in one of the ``trusted`` networks."""

    header: str
    trusted: tuple[_Network, ...]

    @classmethod
    def from_settings(
        cls,
        header: str | None,
        trusted: Iterable[str],
        *,
        header_option: str = "--identity-header",
        proxy_option: str = "--trusted-proxy",
    ) -> ProxyIdentity | None:
        """The identity from a page's settings, or ``None`` when neither is given (the page
        knows no people: `TOKEN_HOLDER`).

        ``ValueError`` naming the option (``header_option``, ``proxy_option``: how the caller's
        settings spell them) for a header name that is not an HTTP token, a proxy that is not
        an IPv4/IPv6 address or CIDR network, or one given without the other.
        """
        name = (header or "").strip()
        networks = [entry.strip() for entry in trusted if entry.strip()]
        if not name and not networks:
            return None
        if not name:
            raise ValueError(f"{proxy_option} needs {header_option}: the header naming the person")
        if not networks:
            raise ValueError(
                f"{header_option} needs {proxy_option}: the address or network of the proxy"
                " whose header is believed"
            )
        if not _HEADER_NAME.fullmatch(name):
            raise ValueError(
                f"{header_option}: {name!r} is not an HTTP header name (letters, digits and"
                " !#$%&'*+-.^_`|~ only)"
            )
        parsed = []
        for entry in networks:
            try:
                parsed.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                raise ValueError(
                    f"{proxy_option}: {entry!r} is not an IP address or CIDR network"
                    " (e.g. 127.0.0.1/32, 10.0.0.0/8, ::1/128)"
                ) from None
        return cls(name.lower(), tuple(parsed))

    def trusts(self, address: str | None) -> bool:
        """Whether ``address`` (a peer's IP address) is in a trusted network."""
        if not address:
            return False
        try:
            peer = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return False
        if isinstance(peer, ipaddress.IPv6Address) and peer.ipv4_mapped is not None:
            peer = peer.ipv4_mapped
        return any(peer.version == net.version and peer in net for net in self.trusted)

    def caller(self, address: str | None, values: Iterable[bytes]) -> Caller | IdentityRefusal:
        """Who a request from peer ``address`` carrying the header ``values`` (every occurrence
        of `header`, raw) is, or why it is refused.

        From a trusted peer: the one value, a person id (UTF-8, `team.is_person_id`, not
        ``token``), else 401. From any other peer: 403, and a header
        it carried is ignored and logged (its value as inert text), never believed.
        """
        given = list(values)
        if not self.trusts(address):
            if given:
                _log.warning(
                    "ignored the identity header %s from %s, which is not a trusted proxy: %s",
                    self.header,
                    inert_text(str(address)),
                    inert_text(given[0].decode("utf-8", "replace")[:_SHOWN]),
                )
            return IdentityRefusal(403, UNTRUSTED_PEER)
        if len(given) != 1:
            return IdentityRefusal(401, NO_IDENTITY)
        try:
            person = given[0].decode("utf-8").strip()
        except UnicodeDecodeError:
            person = ""
        if not _person_id(person):
            _log.warning(
                "refused the identity header %s from %s: not a person id: %s",
                self.header,
                inert_text(str(address)),
                inert_text(given[0].decode("utf-8", "replace")[:_SHOWN]),
            )
            return IdentityRefusal(401, NO_IDENTITY)
        return Caller(person, address)


def _person_id(text: str) -> bool:
    # The core's one rule for a person id (`team.is_person_id`); ``token`` names no person.
    from .team import is_person_id

    return text != TOKEN_HOLDER and is_person_id(text)


def caller_of(scope: Mapping[str, Any], identity: ProxyIdentity | None) -> Caller | IdentityRefusal:
    """Who the ASGI request ``scope`` comes from: with no ``identity``, the token holder."""
    client = scope.get("client")
    address = str(client[0]) if client else None
    if identity is None:
        return Caller(TOKEN_HOLDER, address)
    values = [
        value
        for key, value in scope.get("headers", ())
        if key.lower() == identity.header.encode("latin-1")
    ]
    return identity.caller(address, values)
