"""The Internet Archive's Wayback Machine as a source of dated page captures (HTTP only).

Facts about its public interface:
- CDX index: `GET {base}/cdx/search/cdx?url=<page>&output=json&from=YYYYMMDD&to=YYYYMMDD
  &filter=statuscode:200&collapse=digest` returns a JSON array whose first row is the header
  `["urlkey","timestamp","original","mimetype","statuscode","digest","length"]`; `timestamp`
  is `YYYYMMDDhhmmss` UTC. With `limit=N&showResumeKey=true` a page that stops early ends with
  an empty row and then `[<resume key>]`, passed back as `resumeKey=` for the next page.
- A capture's raw body, without the archive's banner or rewritten links:
  `GET {base}/web/<timestamp>id_/<original>`.

`collapse=digest` only folds *adjacent* identical captures, so the same page content can come
back later in the list; callers fetch each digest once. One capture per week or month is
picked here, client-side (the first of each period), so the rule is the same for every page.
The base URL is `GPUPRICES_BASE_URL_WAYBACK` (a mirror or a test server), default
https://web.archive.org. Requests are paced (at most one per `interval_s`, 1 s by default)
and transient errors (429 honouring Retry-After, 5xx, timeouts) retried with backoff.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Literal

import orjson

from contract import HttpSettings, ParseError, RawCapture
from scrapers.http import request, with_retries

if TYPE_CHECKING:
    import httpx

__all__ = [
    "DEFAULT_BASE", "DEFAULT_INTERVAL_S", "INTERVAL_RANGE_S", "NAME", "ArchiveClient",
    "ArchivedCapture", "Every", "Pacer", "fetch_capture", "list_captures", "parse_cdx",
    "pick_every",
]

NAME = "wayback"  # the settings key: GPUPRICES_BASE_URL_WAYBACK
DEFAULT_BASE = "https://web.archive.org"
DEFAULT_INTERVAL_S = 1.0
INTERVAL_RANGE_S = (0.2, 60.0)  # what the command line accepts: polite, never a flood
PAGE_SIZE = 5000
CDX_FIELDS = ("timestamp", "original", "digest")
Every = Literal["capture", "week", "month"]


@dataclass(frozen=True, slots=True)
class ArchivedCapture:
    """One row of the CDX index: a page as the archive saw it at `timestamp` (UTC)."""

    timestamp: str  # YYYYMMDDhhmmss
    original: str
    digest: str  # the archive's hash of the body: same digest, same bytes
    mimetype: str = ""
    length: str = ""

    @property
    def observed_at(self) -> datetime:
        return datetime.strptime(self.timestamp[:14].ljust(14, "0"),
                                 "%Y%m%d%H%M%S").replace(tzinfo=UTC)

    @property
    def raw_path(self) -> str:
        """The `id_` address: the body as first served, no banner, links not rewritten."""
        return f"/web/{self.timestamp}id_/{self.original}"


@dataclass(slots=True)
class Pacer:
    """At most one request per `interval_s`, whatever mix of index and capture requests."""

    interval_s: float = DEFAULT_INTERVAL_S
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    _last: float | None = None

    def wait(self) -> None:
        if self._last is not None:
            remaining = self._last + self.interval_s - self.clock()
            if remaining > 0:
                self.sleep(remaining)
        self._last = self.clock()


@dataclass(slots=True)
class ArchiveClient:
    """What talking to the archive needs: one HTTP client, settings, pacing, retry policy."""

    client: httpx.Client
    http: HttpSettings
    retries: int = 3
    backoff_base_s: float = 1.0
    pacer: Pacer = field(default_factory=Pacer)
    sleep: Callable[[float], None] = time.sleep
    requests: int = 0  # sent, retries included (for the progress display and tests)

    @property
    def base(self) -> str:
        return self.http.base_url(NAME, DEFAULT_BASE)

    def get(self, source: str, url: str, params: dict[str, str] | None = None,
            shown: str | None = None, http: HttpSettings | None = None) -> RawCapture:
        def once() -> RawCapture:
            self.pacer.wait()
            self.requests += 1
            return request(self.client, http or self.http, source, "GET", url, params=params,
                           display_url=shown)

        return with_retries(once, attempts=self.retries, base_s=self.backoff_base_s,
                            sleep=self.sleep)


def parse_cdx(body: bytes) -> tuple[list[ArchivedCapture], str | None]:
    """CDX JSON rows (header first, by name) and the resume key, if the page has one."""
    try:
        rows = orjson.loads(body) if body.strip() else []
    except orjson.JSONDecodeError as exc:
        raise ParseError(f"wayback: the CDX index is not JSON ({exc})") from None
    if not isinstance(rows, list) or any(not isinstance(r, list) for r in rows):
        raise ParseError("wayback: the CDX index is not a JSON array of rows")
    if not rows:
        return [], None
    header = [str(h) for h in rows[0]]
    missing = [f for f in CDX_FIELDS if f not in header]
    if missing:
        raise ParseError(f"wayback: CDX header {header} lacks {', '.join(missing)}")
    resume_key = None
    body_rows = rows[1:]
    if len(body_rows) >= 2 and body_rows[-2] == [] and len(body_rows[-1]) == 1:
        resume_key = str(body_rows[-1][0])
        body_rows = body_rows[:-2]
    at = {name: header.index(name) for name in header}
    captures = []
    for row in body_rows:
        if len(row) != len(header):
            continue  # the empty separator row, or a truncated line
        value = {name: str(row[i]) for name, i in at.items()}
        if not value["timestamp"].isdigit() or len(value["timestamp"]) < 8:
            raise ParseError(f"wayback: CDX timestamp {value['timestamp']!r} is not YYYYMMDD...")
        captures.append(ArchivedCapture(value["timestamp"], value["original"], value["digest"],
                                        value.get("mimetype", ""), value.get("length", "")))
    return captures, resume_key


def list_captures(archive: ArchiveClient, source: str, urls: Iterable[str], *,
                  since: date | None = None, until: date | None = None) -> list[ArchivedCapture]:
    """Every distinct capture (status 200) of `urls` in [since, until], oldest first."""
    found: dict[tuple[str, str], ArchivedCapture] = {}
    endpoint = f"{archive.base}/cdx/search/cdx"
    for url in urls:
        params = {"url": url, "output": "json", "filter": "statuscode:200",
                  "collapse": "digest", "limit": str(PAGE_SIZE), "showResumeKey": "true"}
        if since:
            params["from"] = since.strftime("%Y%m%d")
        if until:
            params["to"] = until.strftime("%Y%m%d")
        while True:
            raw = archive.get(source, endpoint, params, shown=f"{endpoint}?url={url}")
            captures, resume_key = parse_cdx(raw.body)
            for capture in captures:
                found.setdefault((capture.timestamp, capture.digest), capture)
            if not resume_key:
                break
            params = {**params, "resumeKey": resume_key}
    return sorted(found.values(), key=lambda c: (c.timestamp, c.original))


def _period(capture: ArchivedCapture, every: Every) -> tuple[int, ...] | str:
    moment = capture.observed_at
    if every == "week":
        year, week, _ = moment.isocalendar()
        return (year, week)
    if every == "month":
        return (moment.year, moment.month)
    return capture.timestamp


def pick_every(captures: list[ArchivedCapture], every: Every) -> list[ArchivedCapture]:
    """The first capture of each week or month (all of them for 'capture'), oldest first."""
    chosen: dict[object, ArchivedCapture] = {}
    for capture in sorted(captures, key=lambda c: c.timestamp):
        chosen.setdefault(_period(capture, every), capture)
    return list(chosen.values())


def fetch_capture(archive: ArchiveClient, source: str, capture: ArchivedCapture) -> RawCapture:
    """The capture's raw body as a RawCapture of `source`, observed at the capture's time."""
    url = archive.base + capture.raw_path
    # An archived HTML page gets the page cap, as the live page does (HttpSettings.for_kind).
    http = archive.http.for_kind("page") if "html" in capture.mimetype.lower() else None
    raw = archive.get(source, url, http=http)
    return RawCapture(source=source, url=url, fetched_at=capture.observed_at, body=raw.body,
                      content_type=capture.mimetype or raw.content_type)
