"""The one place sources do HTTP: size cap, redirects that keep keys at their origin, no
secret in a payload or an error, clear errors, retries that respect Retry-After.

Sources call `request`; it raises FetchError with a reason a person understands and
`transient=True` for what is worth retrying. `with_retries` below is the ONE retry layer, on
both ways of running (plain and Prefect; the Prefect tasks have retries=0): only it sees
Retry-After, it retries the fetch alone (never the parse or the warehouse write), and it
stops at the source's deadline.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, TypeVar

from contract import FetchError, HttpSettings, RawCapture, now_utc
from contract.redact import contains_secret, redact, redact_bytes

if TYPE_CHECKING:  # imported where a request is made: `gpuprices sources` reads no page
    import httpx

# httpcore's DEBUG trace prints every response's headers: a key a server echoes in a header
# (a Location carrying it) would be logged before we could redact it. Its INFO and up stay.
logging.getLogger("httpcore").setLevel(logging.INFO)

T = TypeVar("T")
TRANSIENT_STATUS = {408, 425, 429, 500, 502, 503, 504}
MAX_BACKOFF_S = 30.0


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, (parsedate_to_datetime(value) - now_utc()).total_seconds())
        except (TypeError, ValueError):
            return None


MAX_REDIRECTS = 5
REDIRECT_STATUS = {301, 302, 303, 307, 308}
# What may follow a redirect to another origin; every other header (Authorization,
# X-Goog-Api-Key, any key a source adds) stays with the origin it was meant for.
CROSS_ORIGIN_HEADERS = frozenset({"user-agent", "accept", "accept-language", "content-type"})


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port or {"http": 80, "https": 443}.get(url.scheme)


@dataclass(slots=True)
class _Hop:
    """One request of a redirect chain: what to send, and where."""

    method: str
    url: httpx.URL
    headers: dict[str, str]
    json: Any


def _next_hop(hop: _Hop, response: httpx.Response, source: str, shown: str,
              secrets: Mapping[str, str]) -> _Hop:
    """Where a redirect leads, with the headers that may go there (none of the keys when the
    origin changes: httpx itself keeps every header but Authorization)."""
    import httpx

    location = response.headers.get("location", "")
    if contains_secret(location, secrets):
        raise FetchError(source, shown, f"HTTP {response.status_code} redirect to an address "
                         "holding a key; not followed")
    try:
        target = hop.url.join(location)
    except httpx.InvalidURL as exc:
        raise FetchError(source, shown, f"HTTP {response.status_code} redirect to an invalid "
                         f"address ({_short(exc)})") from None
    if target.scheme not in ("http", "https"):
        raise FetchError(source, shown, f"HTTP {response.status_code} redirect to a "
                         f"{target.scheme or 'relative'}: address; not followed")
    headers = hop.headers
    if _origin(target) != _origin(hop.url):
        headers = {k: v for k, v in headers.items()
                   if k.lower() in CROSS_ORIGIN_HEADERS and not contains_secret(v, secrets)}
    method, body = hop.method, hop.json
    if (response.status_code == 303 and method != "HEAD") or \
            (response.status_code in (301, 302) and method == "POST"):
        method, body = "GET", None  # as browsers and httpx do
        headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
    return _Hop(method, target, headers, body)


def request(
    client: httpx.Client,
    settings: HttpSettings,
    source: str,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, Any] | None = None,
    json: Any = None,
    display_url: str | None = None,
) -> RawCapture:
    """Send one request and return its body as a RawCapture, capped at settings.max_bytes.

    Redirects are followed here (at most MAX_REDIRECTS), so that no header but the harmless
    ones (CROSS_ORIGIN_HEADERS) reaches another origin. `display_url` is what errors and the
    capture record show; pass it when `url` or `params` could hold a secret. No secret's value
    (settings.secrets) is left in the body or in an error (contract.redact).
    """
    import httpx

    shown = display_url or url
    secrets = settings.secrets
    target = httpx.URL(url)
    hop = _Hop(method, target.copy_merge_params(params) if params else target,
               {"User-Agent": settings.user_agent, **(headers or {})}, json)
    deadline = time.monotonic() + settings.request_budget_s
    try:
        for _ in range(MAX_REDIRECTS + 1):
            with client.stream(hop.method, hop.url, headers=hop.headers, json=hop.json,
                               timeout=settings.timeout_s, follow_redirects=False) as response:
                if response.status_code in REDIRECT_STATUS and "location" in response.headers:
                    hop = _next_hop(hop, response, source, shown, secrets)
                    continue
                raise_for_status(source, shown, response)
                body = _read_capped(response, settings, source, shown, deadline)
                content_type = response.headers.get("content-type", "application/octet-stream")
                break
        else:
            raise FetchError(source, shown, f"more than {MAX_REDIRECTS} redirects; stopped")
    except httpx.HTTPError as exc:
        raise redacted(fetch_error(source, shown, exc, settings.timeout_s), secrets) from None
    except FetchError as exc:
        raise redacted(exc, secrets) from None
    return RawCapture(source=source, url=redact(shown, secrets), fetched_at=now_utc(),
                      body=redact_bytes(body, secrets), content_type=content_type)


def _read_capped(response: httpx.Response, settings: HttpSettings, source: str, shown: str,
                 deadline: float) -> bytes:
    """The body, read chunk by chunk: never more than max_bytes (+ one chunk) in memory."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > settings.max_bytes:
        raise FetchError(source, shown, f"response of {declared} bytes exceeds the "
                         f"{settings.max_bytes}-byte cap")
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if time.monotonic() > deadline:
            raise FetchError(source, shown, f"response still arriving after "
                             f"{settings.request_budget_s:g} s; gave up", transient=True)
        if size > settings.max_bytes:
            raise FetchError(source, shown, f"response exceeds the {settings.max_bytes}-byte "
                             "cap; stopped reading")
        chunks.append(chunk)
    return b"".join(chunks)


def redacted(error: FetchError, secrets: Mapping[str, str]) -> FetchError:
    """The error with no secret's value in its address or reason."""
    if not contains_secret(str(error), secrets):
        return error
    return FetchError(error.source, redact(error.url, secrets), redact(error.reason, secrets),
                      transient=error.transient, retry_after_s=error.retry_after_s)


def raise_for_status(source: str, url: str, response: httpx.Response) -> None:
    """A FetchError for an HTTP error status (transient for 408/425/429/5xx, with Retry-After)."""
    if response.status_code >= 400:
        raise FetchError(source, url, f"HTTP {response.status_code}",
                         transient=response.status_code in TRANSIENT_STATUS,
                         retry_after_s=_retry_after(response))


def fetch_error(source: str, url: str, exc: httpx.HTTPError, timeout_s: float) -> FetchError:
    """The FetchError for an httpx failure: timeouts and broken connections are transient."""
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return FetchError(source, url, f"timed out after {timeout_s:g} s", transient=True)
    if isinstance(exc, httpx.ConnectError):
        return FetchError(source, url, f"cannot connect ({_short(exc)})", transient=True)
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
        return FetchError(source, url, f"connection broke mid-response ({_short(exc)})",
                          transient=True)
    return FetchError(source, url, f"HTTP error ({_short(exc)})")


def _short(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:200]


def backoff_s(attempt: int, error: FetchError, base_s: float = 1.0) -> float:
    """Seconds to wait before retry number `attempt` (1-based): Retry-After wins, capped."""
    if error.retry_after_s is not None:
        return min(error.retry_after_s, MAX_BACKOFF_S)
    return min(base_s * 2 ** (attempt - 1), MAX_BACKOFF_S)


def with_retries(
    call: Callable[[], T], *, attempts: int = 3, base_s: float = 1.0,
    sleep: Callable[[float], None] = time.sleep,
    deadline: float | None = None, clock: Callable[[], float] = time.monotonic,
    on_retry: Callable[[int, FetchError, float], None] | None = None,
) -> T:
    """Run `call` up to `attempts` times (at least 1), retrying transient FetchErrors with
    bounded backoff.

    `deadline` (a `clock()` reading): no retry whose wait would end past it; the last error
    is raised instead. `on_retry(attempt, error, wait_s)` is told before each wait.
    """
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, not {attempts}")
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except FetchError as error:
            if not error.transient or attempt == attempts:
                raise
            wait = backoff_s(attempt, error, base_s)
            if deadline is not None and clock() + wait >= deadline:
                raise
            if on_retry is not None:
                on_retry(attempt, error, wait)
            sleep(wait)
    raise AssertionError("unreachable")
