"""Debian's nginx with TLS and a headless Chromium, for the tests that run a documented nginx
block in front of the pages (``surfaces/test_proxy.py``, ``surfaces/test_identity_proxy.py``).

Each test module writes its own block (from its own page of the docs) and starts it with
`running_nginx`; the certificate is a throwaway one made by ``openssl`` for ``localhost``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from dsh_user_questions import AskUserQuestionItem, AskUserQuestionOption, AskUserQuestionRequest
from playwright.async_api import Browser, Page, async_playwright, expect

CHROMIUM = os.environ.get("DSH_WEB_TEST_CHROMIUM", "/usr/bin/chromium")
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
HAVE_CHROMIUM = os.path.exists(CHROMIUM)

CONFIG = """
daemon off;
master_process off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
{server}
}}
"""


def missing(what: str, hint: str) -> None:
    """Skip for want of ``what``; under CI (``CI=true``) fail instead."""
    message = f"{what} is not installed ({hint})"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def nginx_block(doc: Path, section: str | None = None) -> str:
    """The first ```nginx block of ``doc`` (under the ``## section`` heading when given)."""
    if not doc.is_file():
        pytest.skip(f"not a checkout of the repository (no docs/{doc.name})")
    text = doc.read_text(encoding="utf-8")
    if section is not None:
        text = text.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```nginx\n(.*?)```", text, re.S)
    where = doc.name if section is None else f"{doc.name} under {section!r}"
    assert found is not None, f"{where} has no nginx block"
    return found.group(1)


def on_this_machine(block: str, changes: Sequence[tuple[str, str]]) -> str:
    """``block`` with each documented value replaced by this machine's (each must be there)."""
    for old, new in changes:
        assert old in block, f"the documented block changed: {old!r} is gone"
        block = block.replace(old, new)
    return block


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def wait_listening(port: int, process: subprocess.Popen[Any], what: str) -> None:
    """Return once ``port`` accepts connections; fail with the output if ``process`` ends."""
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if process.poll() is not None:
                _, err = process.communicate()
                raise AssertionError(f"{what} ended: {err}") from None
            time.sleep(0.05)


def throwaway_certificate(where: Path) -> None:
    """``where/cert.pem`` and ``where/key.pem`` for ``localhost``, valid for a day."""
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(where / "key.pem"), "-out", str(where / "cert.pem"),
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
        check=True, capture_output=True,
    )  # fmt: skip


def need_nginx_and_openssl() -> None:
    if not os.path.exists(NGINX):
        missing("nginx", "apt-get install nginx")
    if shutil.which("openssl") is None:
        missing("openssl", "apt-get install openssl")


@contextlib.contextmanager
def running_nginx(where: Path, server: str, port: int) -> Iterator[None]:
    """nginx in the foreground with ``server`` (a ``server { ... }`` block listening on
    ``port``) in a configuration of its own under ``where``; stopped on leaving."""
    (where / "nginx.conf").write_text(CONFIG.format(dir=where, server=server))
    process = subprocess.Popen(
        [NGINX, "-p", str(where), "-c", str(where / "nginx.conf"), "-e", str(where / "err.log")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_listening(port, process, "nginx")
        yield
    finally:
        process.terminate()
        process.communicate(timeout=30)


@contextlib.asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    """One headless Debian Chromium (never a downloaded one)."""
    if not HAVE_CHROMIUM:
        missing("Chromium", "apt-get install chromium")
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            yield launched
        finally:
            await launched.close()


def pkg_request() -> AskUserQuestionRequest:
    return AskUserQuestionRequest(
        questions=[
            AskUserQuestionItem(
                id="pkg",
                header="Tooling",
                question="Which package manager?",
                options=(AskUserQuestionOption("pnpm"), AskUserQuestionOption("npm")),
            )
        ]
    )


async def answer_on_the_page(page: Page, ask_id: str, label: str) -> None:
    """Pick ``label`` on the card of ``ask_id`` and submit; the card goes."""
    card = page.locator(f'article[data-ask-id="{ask_id}"]')
    await card.get_by_role("radio", name=label, exact=True).check()
    await card.get_by_role("button", name="Submit", exact=True).click()
    await expect(card).to_have_count(0)
