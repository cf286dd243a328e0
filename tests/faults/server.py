"""A fault-injecting HTTP server on 127.0.0.1 that stands in for every provider at once.

Each source gets its own prefix (`http://127.0.0.1:PORT/<source>`), handed to the scrapers
through `HttpSettings.base_urls` exactly as a user would point one at a proxy. Whatever path or
method a source asks for, it gets that source's bundled example (through a small per-source
adapter when the API is paged), with the planned fault injected. Every request is recorded
(method, path, headers, time) so tests can check what was sent and when.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from scrapers.base import Source
from tests.faults import payloads
from tests.faults.adapters import ADAPTERS, DEFAULT, Request, Serve

FAULTS: tuple[str, ...] = (
    "healthy", "timeout", "refused", "http500", "http502", "http503", "flaky503",
    "retry_after429", "truncated", "empty", "layout", "prices_x100", "garbage", "huge", "replay",
)
HANG_S = 4.0  # the "timeout" fault answers after this long: far beyond the client timeout
RETRY_AFTER_S = 1  # what the 429 fault asks for (whole seconds, as real servers send)
HUGE_BYTES = 400 * 1024 * 1024  # what the "huge" fault would send if the client let it
_CHUNK = b" " * (1024 * 1024)
CONTENT_TYPES = {"json": "application/json", "csv": "text/csv; charset=utf-8",
                 "html": "text/html; charset=utf-8", "markdown": "text/markdown; charset=utf-8",
                 "text": "text/plain; charset=utf-8", "jsonp": "application/javascript"}


@dataclass(slots=True)
class Plan:
    """What one source's prefix serves during one test."""

    source: Source
    fault: str
    parts: dict[str, tuple[bytes, str]]  # route key -> (body, content type), fault applied
    serve: Serve
    hits: int = 0
    sent_bytes: int = 0


@dataclass(frozen=True, slots=True)
class Seen:
    source: str
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic()
    status: int


def faulty_part(part: bytes, fault: str, path: Path | None) -> tuple[bytes, str]:
    kind = payloads.kind_of(part, path)
    if fault in payloads.BODY_TRANSFORMS:
        return payloads.BODY_TRANSFORMS[fault](part, kind), CONTENT_TYPES[kind]
    if fault == "garbage":
        return payloads.garbage(part, kind)
    return payloads.healthy(part, kind), CONTENT_TYPES[kind]


def plan_for(source: Source, fault: str) -> Plan:
    serve = ADAPTERS.get(source.name, DEFAULT)
    parts = serve.split(source.example.read_bytes())
    faulty = {key: faulty_part(part, fault, source.example) for key, part in parts.items()}
    if fault in payloads.BODY_TRANSFORMS and all(
            faulty[k][0].strip() == part.strip() for k, part in parts.items()):
        raise AssertionError(f"the {fault} fault leaves {source.name}'s example unchanged: "
                             "give the source an adapter in tests/faults/adapters.py")
    return Plan(source, fault, faulty, serve)


@dataclass
class FaultServer:
    """Start with `running()`; `plan(source, fault)` before each refresh."""

    plans: dict[str, Plan] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    port: int = 0
    closed_port: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, source: str) -> str:
        plan = self.plans.get(source)
        if plan and plan.fault == "refused":
            return f"http://127.0.0.1:{self.closed_port}/{source}"
        return f"http://127.0.0.1:{self.port}/{source}"

    def plan(self, source: Source, fault: str) -> Plan:
        plan = plan_for(source, fault)
        self.plans[source.name] = plan
        return plan

    def reset(self) -> None:
        with self._lock:
            self.plans.clear()
            self.seen.clear()

    def requests_of(self, source: str) -> list[Seen]:
        with self._lock:
            return [s for s in self.seen if s.source == source]

    def record(self, seen: Seen) -> None:
        with self._lock:
            self.seen.append(seen)


def _free_closed_port() -> int:
    """A port nothing listens on: bind, read the number, close."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _handler(state: FaultServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # one request per connection: a broken one ends cleanly

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            source, _, rest = parts.path.lstrip("/").partition("/")
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            plan = state.plans.get(source)
            if plan is None:
                self._record(source, body, 404)
                self._send(404, b"no plan for this source", "text/plain")
                return
            with state._lock:
                plan.hits += 1
                hit = plan.hits
            request = Request(method=self.command, path="/" + rest,
                              query=parse_qs(parts.query), body=body,
                              base=f"http://127.0.0.1:{state.port}/{source}", hit=hit)
            status = self._status_for(plan, hit)
            self._record(source, body, status)
            self._respond(plan, request, status)

        @staticmethod
        def _status_for(plan: Plan, hit: int) -> int:
            fault = plan.fault
            if fault.startswith("http"):
                return int(fault[4:])
            if fault == "flaky503" and hit == 1:
                return 503
            if fault == "retry_after429" and hit == 1:
                return 429
            return 200

        def _respond(self, plan: Plan, request: Request, status: int) -> None:
            if plan.fault == "timeout":
                state.stop.wait(HANG_S)
                return  # close without a word
            if status == 429:
                self._send(429, b"slow down", "text/plain",
                           {"Retry-After": str(RETRY_AFTER_S)})
                return
            if status >= 400:
                self._send(status, f"<html><body>{status} error</body></html>".encode(),
                           "text/html")
                return
            if plan.fault == "huge":
                self._stream_huge(plan)
                return
            key = plan.serve.route(request)
            if key not in plan.parts:
                key = "*" if key is not None and "*" in plan.parts else None
            if key is None:
                self._send(404, b"Not Found", "text/plain")
                return
            body, content_type = plan.parts[key]
            body = plan.serve.finish(body, request)
            if plan.fault == "truncated":
                self._send_truncated(body, content_type)
                return
            self._send(200, body, content_type)

        def _send(self, status: int, body: bytes, content_type: str,
                  extra: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for key, value in (extra or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def _send_truncated(self, body: bytes, content_type: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body) * 2 + 4096))
            self.end_headers()
            self.wfile.write(body[: max(1, len(body) // 2)])
            self.wfile.flush()
            self.close_connection = True

        def _stream_huge(self, plan: Plan) -> None:
            """No Content-Length, bytes until the client hangs up: it must stop at its cap."""
            self.send_response(200)
            self.send_header("Content-Type", next(iter(plan.parts.values()))[1])
            self.end_headers()
            try:
                while plan.sent_bytes < HUGE_BYTES and not state.stop.is_set():
                    self.wfile.write(_CHUNK)
                    plan.sent_bytes += len(_CHUNK)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _record(self, source: str, body: bytes, status: int) -> None:
            state.record(Seen(source, self.command, self.path, dict(self.headers.items()),
                              body, time.monotonic(), status))

        do_GET = do_POST = do_PUT = do_HEAD = do_PATCH = do_DELETE = _serve

    return Handler


@contextmanager
def running() -> Iterator[FaultServer]:
    state = FaultServer()
    # Every source connects at once: the default backlog of 5 drops SYNs (a 1 s stall).
    ThreadingHTTPServer.request_queue_size = 128
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    server.block_on_close = False
    state.port = int(server.server_address[1])
    state.closed_port = _free_closed_port()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.stop.set()
        server.shutdown()
        server.server_close()


def serve_all(state: FaultServer, sources: list[Source], fault_of: Callable[[str], str]) -> None:
    for source in sources:
        state.plan(source, fault_of(source.name))
