"""A stand-in for the Wayback Machine on 127.0.0.1: CDX JSON index + `id_` capture bodies.

Response shapes follow the real interface: the CDX answer is a JSON array whose first row is
the header, timestamps are YYYYMMDDhhmmss, `collapse=digest` folds adjacent duplicates only,
`limit` + `showResumeKey=true` page with an empty row and a one-element resume-key row, and
`/web/<timestamp>id_/<original>` serves the body exactly as captured. A capture can be made
to answer 429 with Retry-After a number of times first.
"""

from __future__ import annotations

import base64
import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import orjson

HEADER = ["urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length"]


def sha1_digest(body: bytes) -> str:
    """The archive's digest: base32 of the SHA-1 of the body."""
    return base64.b32encode(hashlib.sha1(body).digest()).decode()


def urlkey(url: str) -> str:
    host_path = url.split("://", 1)[-1].removeprefix("www.")
    host, _, path = host_path.partition("/")
    return ",".join(reversed(host.split("."))) + ")/" + path


@dataclass
class Snapshot:
    original: str
    timestamp: str
    body: bytes
    status: int = 200
    throttle: int = 0  # answer 429 (Retry-After: 1) this many times before the body


@dataclass
class Archive:
    snapshots: list[Snapshot] = field(default_factory=list)
    page_size: int | None = None  # force CDX paging with resume keys
    requests: list[str] = field(default_factory=list)
    fail_capture: set[str] = field(default_factory=set)  # timestamps answering 503 forever

    def cdx_rows(self, url: str, since: str | None, until: str | None) -> list[list[str]]:
        rows: list[list[str]] = []
        for snap in sorted(self.snapshots, key=lambda s: s.timestamp):
            if urlkey(snap.original) != urlkey(url) or snap.status != 200:
                continue
            if (since and snap.timestamp[:8] < since) or (until and snap.timestamp[:8] > until):
                continue
            digest = sha1_digest(snap.body)
            if rows and rows[-1][5] == digest:
                continue  # collapse=digest: adjacent duplicates only
            rows.append([urlkey(snap.original), snap.timestamp, snap.original, "text/html",
                         "200", digest, str(len(snap.body))])
        return rows


class _Handler(BaseHTTPRequestHandler):
    archive: Archive

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, content_type: str = "text/html",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        archive = self.archive
        archive.requests.append(self.path)
        parts = urlsplit(self.path)
        if parts.path == "/cdx/search/cdx":
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            rows = archive.cdx_rows(query["url"], query.get("from"), query.get("to"))
            start = int(query.get("resumeKey", "0"))
            limit = archive.page_size or len(rows) or 1
            page: list[list[str]] = [HEADER, *rows[start:start + limit]]
            if start + limit < len(rows) and query.get("showResumeKey") == "true":
                page += [[], [str(start + limit)]]
            self._send(200, orjson.dumps(page), "application/json")
            return
        if parts.path.startswith("/web/"):
            stamp, _, original = parts.path[len("/web/"):].partition("id_/")
            if stamp in archive.fail_capture:
                self._send(503, b"unavailable")
                return
            for snap in archive.snapshots:
                if snap.timestamp == stamp and urlkey(snap.original) == urlkey(original):
                    if snap.throttle > 0:
                        snap.throttle -= 1
                        self._send(429, b"slow down", headers={"Retry-After": "1"})
                        return
                    self._send(200, snap.body)
                    return
        self._send(404, b"not in the archive")


@contextmanager
def serve_archive(archive: Archive) -> Iterator[str]:
    """Serve `archive`; yields its base URL (for GPUPRICES_BASE_URL_WAYBACK)."""
    handler = type("Handler", (_Handler,), {"archive": archive})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
