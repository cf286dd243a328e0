"""A local HTTP receiver on 127.0.0.1 that records every POST (stands in for a webhook)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@contextmanager
def http_receiver() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Yields (base URL without scheme, received bodies); stops the server on exit."""
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            received.append({"path": self.path, "json": json.loads(body or b"null")})
            self.send_response(200)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
