"""A small scripted HTTP server on 127.0.0.1 for the hostile-server tests.

Each server answers every request with what its `answer` function returns (status, headers,
body chunks: a generator can stream 200 MB without holding it) and records what it was sent.
Two servers on two ports are two origins.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True, slots=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


Answer = tuple[int, dict[str, str], Iterable[bytes]]


@dataclass
class Scripted:
    answer: Callable[[Received], Answer]
    received: list[Received] = field(default_factory=list)
    sent_bytes: int = 0
    port: int = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _handler(state: Scripted) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            got = Received(self.command, self.path, dict(self.headers.items()),
                           self.rfile.read(length) if length else b"")
            state.received.append(got)
            status, headers, chunks = state.answer(got)
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            try:
                for chunk in chunks:
                    self.wfile.write(chunk)
                    state.sent_bytes += len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client stopped reading: what a cap does

        do_GET = do_POST = do_HEAD = _serve

    return Handler


@contextmanager
def scripted(answer: Callable[[Received], Answer]) -> Iterator[Scripted]:
    state = Scripted(answer)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    state.port = int(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def repeat(chunk: bytes, total: int) -> Iterator[bytes]:
    """`total` bytes of `chunk` repeated, made as they are sent (never held whole)."""
    sent = 0
    while sent < total:
        piece = chunk[: total - sent]
        sent += len(piece)
        yield piece
