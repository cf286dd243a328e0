"""The one place sources do HTTP: size cap, clear errors, retries that respect Retry-After.

Sources call `get`/`post`; these raise FetchError with a reason a person understands and
`transient=True` for what is worth retrying. `with_retries` below is the ONE retry layer, on
both ways of running (plain and Prefect; the Prefect tasks have retries=0): only it sees
Retry-After, it retries the fetch alone (never the parse or the warehouse write), and it
stops at the source's deadline.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import httpx

from scrapers.base import FetchError, HttpSettings, RawCapture, now_utc

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

    `display_url` is what errors and the capture record show; pass it when `url` or `params`
    could hold a secret (GCP's ?key=).
    """
    shown = display_url or url
    all_headers = {"User-Agent": settings.user_agent, **(headers or {})}
    try:
        with client.stream(method, url, headers=all_headers, params=params, json=json,
                           timeout=settings.timeout_s) as response:
            raise_for_status(source, shown, response)
            declared = int(response.headers.get("content-length") or 0)
            if declared > settings.max_bytes:
                raise FetchError(source, shown, f"response of {declared} bytes exceeds the "
                                 f"{settings.max_bytes}-byte cap")
            chunks: list[bytes] = []
            size = 0
            deadline = time.monotonic() + settings.request_budget_s
            for chunk in response.iter_bytes():
                size += len(chunk)
                if time.monotonic() > deadline:
                    raise FetchError(source, shown, f"response still arriving after "
                                     f"{settings.request_budget_s:g} s; gave up",
                                     transient=True)
                if size > settings.max_bytes:
                    raise FetchError(source, shown, f"response exceeds the "
                                     f"{settings.max_bytes}-byte cap; stopped reading")
                chunks.append(chunk)
            content_type = response.headers.get("content-type", "application/octet-stream")
    except httpx.HTTPError as exc:
        raise fetch_error(source, shown, exc, settings.timeout_s) from None
    return RawCapture(source=source, url=shown, fetched_at=now_utc(), body=b"".join(chunks),
                      content_type=content_type)


def raise_for_status(source: str, url: str, response: httpx.Response) -> None:
    """A FetchError for an HTTP error status (transient for 408/425/429/5xx, with Retry-After)."""
    if response.status_code >= 400:
        raise FetchError(source, url, f"HTTP {response.status_code}",
                         transient=response.status_code in TRANSIENT_STATUS,
                         retry_after_s=_retry_after(response))


def fetch_error(source: str, url: str, exc: httpx.HTTPError, timeout_s: float) -> FetchError:
    """The FetchError for an httpx failure: timeouts and broken connections are transient."""
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
    """Run `call`, retrying transient FetchErrors with bounded backoff.

    `deadline` (a `clock()` reading): no retry whose wait would end past it; the last error
    is raised instead. `on_retry(attempt, error, wait_s)` is told before each wait.
    """
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
