"""An Apprise ``json://`` receiver on 127.0.0.1 for the notification tests."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def json_receiver() -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """Its port and the JSON messages it got, as they come."""
    got: list[dict[str, Any]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            got.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], got
    finally:
        server.shutdown()
        server.server_close()
