"""Who a person on the page is: the one decision whether a logging-in proxy's identity header is
believed (`dsh_user_questions._identity.ProxyIdentity`), used by both pages and both link pages."""

from __future__ import annotations

import logging
import re

import pytest

from dsh_user_questions._identity import (
    TOKEN_HOLDER,
    Caller,
    IdentityRefusal,
    ProxyIdentity,
    caller_of,
)


def identity(*trusted: str, header: str = "X-Forwarded-User") -> ProxyIdentity:
    made = ProxyIdentity.from_settings(header, trusted)
    assert made is not None
    return made


def scope(client: str | None, *headers: tuple[bytes, bytes]) -> dict[str, object]:
    return {
        "type": "http",
        "client": None if client is None else (client, 50000),
        "headers": [(b"host", b"localhost"), *headers],
    }


def test_no_settings_is_no_identity_and_the_token_holder_answers() -> None:
    assert ProxyIdentity.from_settings(None, ()) is None
    assert ProxyIdentity.from_settings("  ", ["", " "]) is None
    forged = scope("10.1.2.3", (b"x-forwarded-user", b"ana"))
    assert caller_of(forged, None) == Caller(TOKEN_HOLDER, "10.1.2.3")


def test_a_trusted_peer_with_the_header_names_the_person() -> None:
    proxy = identity("127.0.0.1/32")
    assert caller_of(scope("127.0.0.1", (b"x-forwarded-user", b"ana")), proxy) == Caller(
        "ana", "127.0.0.1"
    )
    # The header's name is matched whatever its case, as HTTP says.
    assert proxy.caller("127.0.0.1", [b"bo"]) == Caller("bo", "127.0.0.1")


def test_a_trusted_peer_without_the_header_is_refused_401() -> None:
    proxy = identity("127.0.0.1/32")
    refused = caller_of(scope("127.0.0.1"), proxy)
    assert isinstance(refused, IdentityRefusal)
    assert refused.status == 401


@pytest.mark.parametrize(
    "value",
    [b"", b"   ", b"ana bo", b"ana\x1b[31m", b"a" * 65, b"\xff\xfe", b"token", b"group:ops"],
)
def test_a_value_that_is_no_person_id_is_refused_401(
    value: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    proxy = identity("127.0.0.1/32")
    with caplog.at_level(logging.WARNING, "dsh_user_questions.identity"):
        refused = proxy.caller("127.0.0.1", [value])
    assert isinstance(refused, IdentityRefusal)
    assert refused.status == 401
    assert "\x1b" not in caplog.text  # logged as inert text


def test_the_header_twice_is_refused_401() -> None:
    refused = identity("127.0.0.1/32").caller("127.0.0.1", [b"ana", b"bo"])
    assert isinstance(refused, IdentityRefusal)
    assert refused.status == 401


def test_the_header_from_an_untrusted_peer_is_ignored_logged_and_refused_403(
    caplog: pytest.LogCaptureFixture,
) -> None:
    proxy = identity("127.0.0.1/32")
    with caplog.at_level(logging.WARNING, "dsh_user_questions.identity"):
        refused = caller_of(
            scope("127.0.0.2", (b"X-Forwarded-User", b"ana\x1b]0;pwned\x07")), proxy
        )
    assert isinstance(refused, IdentityRefusal)
    assert refused.status == 403
    assert "not a trusted proxy" in caplog.text
    assert "127.0.0.2" in caplog.text
    assert "ana<U+001B>]0;pwned<U+0007>" in caplog.text  # the value as inert text
    assert "\x1b" not in caplog.text
    assert "\x07" not in caplog.text


def test_an_untrusted_peer_without_the_header_is_refused_403_and_nothing_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    proxy = identity("127.0.0.1/32")
    with caplog.at_level(logging.WARNING, "dsh_user_questions.identity"):
        refused = caller_of(scope("192.0.2.7"), proxy)
        unknown = caller_of(scope(None, (b"x-forwarded-user", b"ana")), proxy)
    assert isinstance(refused, IdentityRefusal)
    assert refused.status == 403
    assert isinstance(unknown, IdentityRefusal)
    assert unknown.status == 403
    assert "192.0.2.7" not in caplog.text


def test_x_forwarded_for_never_makes_a_peer_trusted() -> None:
    proxy = identity("127.0.0.1/32")
    forged = scope("203.0.113.9", (b"x-forwarded-for", b"127.0.0.1"), (b"x-forwarded-user", b"ana"))
    refused = caller_of(forged, proxy)
    assert isinstance(refused, IdentityRefusal)
    assert refused.status == 403


def test_ipv4_networks() -> None:
    proxy = identity("10.0.0.0/8", "192.168.1.5")
    assert proxy.trusts("10.200.3.4")
    assert proxy.trusts("192.168.1.5")
    assert not proxy.trusts("192.168.1.6")
    assert not proxy.trusts("11.0.0.1")
    assert not proxy.trusts("not an address")
    assert not proxy.trusts(None)
    # An IPv4 peer seen on a dual-stack socket as IPv4-mapped IPv6 is the same peer.
    assert proxy.trusts("::ffff:10.1.1.1")


def test_ipv6_networks() -> None:
    proxy = identity("::1/128", "fd00:abcd::/32")
    assert proxy.trusts("::1")
    assert proxy.trusts("fd00:abcd:1::9")
    assert proxy.trusts("fe80::1%eth0") is False
    assert not proxy.trusts("fd00:abce::1")
    assert not proxy.trusts("127.0.0.1")
    assert proxy.caller("::1", [b"ana"]) == Caller("ana", "::1")


@pytest.mark.parametrize(
    ("header", "trusted", "names"),
    [
        ("X Forwarded User", ["127.0.0.1"], ("--identity-header", "'X Forwarded User'")),
        ("X-User:", ["127.0.0.1"], ("--identity-header", "not an HTTP header name")),
        ("X-User", ["127.0.0.1/33"], ("--trusted-proxy", "'127.0.0.1/33'")),
        ("X-User", ["localhost"], ("--trusted-proxy", "not an IP address or CIDR")),
        ("X-User", ["::1/129"], ("--trusted-proxy", "'::1/129'")),
        ("X-User", [], ("--identity-header needs --trusted-proxy",)),
        (None, ["127.0.0.1"], ("--trusted-proxy needs --identity-header",)),
    ],
)
def test_bad_settings_name_the_option(
    header: str | None, trusted: list[str], names: tuple[str, ...]
) -> None:
    with pytest.raises(ValueError, match=re.escape(names[0])) as caught:
        ProxyIdentity.from_settings(header, trusted)
    for name in names:
        assert name in str(caught.value)


def test_bad_settings_name_the_callers_spelling_of_the_option() -> None:
    with pytest.raises(ValueError, match="DSH_USER_QUESTIONS_WEB_TRUSTED_PROXIES: 'ten'"):
        ProxyIdentity.from_settings(
            "X-User",
            ["ten"],
            header_option="DSH_USER_QUESTIONS_WEB_IDENTITY_HEADER",
            proxy_option="DSH_USER_QUESTIONS_WEB_TRUSTED_PROXIES",
        )
