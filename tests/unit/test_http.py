"""scrapers.http.request: clear errors, the size cap, the wall-clock budget, Retry-After."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from contract import FetchError, HttpSettings
from scrapers.http import backoff_s, request


def client_for(handler: httpx.MockTransport) -> httpx.Client:
    return httpx.Client(transport=handler)


class Drip(httpx.SyncByteStream):
    """A body that arrives one small chunk at a time, forever (until the client stops)."""

    def __iter__(self) -> Iterator[bytes]:
        while True:
            time.sleep(0.05)
            yield b"x" * 10


def test_a_response_that_never_finishes_is_cut_off_by_the_budget() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, stream=Drip()))
    settings = HttpSettings(request_budget_s=0.3)
    started = time.monotonic()
    with pytest.raises(FetchError) as caught, client_for(transport) as client:
        request(client, settings, "demo", "GET", "https://example.test/prices")
    assert time.monotonic() - started < 3
    assert caught.value.transient
    assert "still arriving after 0.3 s" in str(caught.value)


def test_a_body_over_the_cap_is_refused_without_reading_it_all() -> None:
    transport = httpx.MockTransport(
        lambda request: httpx.Response(200, content=b"y" * 5000))
    with pytest.raises(FetchError, match="exceeds the 1000-byte cap"), \
            client_for(transport) as client:
        request(client, HttpSettings(max_bytes=1000), "demo", "GET", "https://example.test/")


def test_429_carries_retry_after_and_is_transient() -> None:
    transport = httpx.MockTransport(
        lambda request: httpx.Response(429, headers={"Retry-After": "7"}))
    with pytest.raises(FetchError) as caught, client_for(transport) as client:
        request(client, HttpSettings(), "demo", "GET", "https://example.test/")
    error = caught.value
    assert error.transient and error.retry_after_s == 7
    assert backoff_s(1, error) == 7
    assert str(error) == "demo: https://example.test/: HTTP 429"


def test_display_url_hides_the_real_url_in_errors() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(403))
    with pytest.raises(FetchError) as caught, client_for(transport) as client:
        request(client, HttpSettings(), "demo", "GET", "https://example.test/?key=SECRET",
                display_url="https://example.test/")
    assert "SECRET" not in str(caught.value) and not caught.value.transient


# ---- redirects: followed here, keys never cross to another origin --------------------------

KEY = "sk-live-0123456789abcdef"


def _redirecting(status: int, location: str, seen: list[httpx.Request]) -> httpx.MockTransport:
    """example.test redirects its first request to `location`; everything else answers 200."""
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.host == "example.test" and request.url.path == "/start":
            return httpx.Response(status, headers={"Location": location})
        return httpx.Response(200, json={"ok": True})
    return httpx.MockTransport(handler)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("location", ["https://evil.test/steal", "http://example.test/start2",
                                      "https://example.test:8443/x"])
def test_a_cross_origin_redirect_drops_every_key_header(status: int, location: str) -> None:
    """Another host, the same host over http, another port: each is another origin."""
    seen: list[httpx.Request] = []
    headers = {"Authorization": f"Bearer {KEY}", "X-Goog-Api-Key": KEY, "X-Custom-Token": KEY,
               "Accept": "application/json"}
    settings = HttpSettings(secrets={"DEMO_KEY": KEY})
    with httpx.Client(transport=_redirecting(status, location, seen),
                      follow_redirects=True) as client:
        raw = request(client, settings, "demo", "GET", "https://example.test/start",
                      headers=headers)
    first, second = seen
    assert first.headers["x-goog-api-key"] == KEY  # the control: the origin got it
    assert str(second.url) == location
    assert not any(KEY in value for value in second.headers.values()), second.headers
    assert second.headers["accept"] == "application/json"
    assert raw.body == b'{"ok":true}'


def test_a_same_origin_redirect_keeps_the_key() -> None:
    seen: list[httpx.Request] = []
    with httpx.Client(transport=_redirecting(307, "/elsewhere", seen)) as client:
        request(client, HttpSettings(), "demo", "GET", "https://example.test/start",
                headers={"X-Goog-Api-Key": KEY})
    assert [r.headers.get("x-goog-api-key") for r in seen] == [KEY, KEY]
    assert seen[1].url == "https://example.test/elsewhere"


@pytest.mark.parametrize("status,method", [(303, "GET"), (302, "GET"), (307, "POST"),
                                           (308, "POST")])
def test_a_post_redirect_keeps_or_drops_its_body_as_browsers_do(status: int, method: str) -> None:
    seen: list[httpx.Request] = []
    with httpx.Client(transport=_redirecting(status, "/next", seen)) as client:
        request(client, HttpSettings(), "demo", "POST", "https://example.test/start",
                json={"query": "x"})
    assert seen[1].method == method
    assert (seen[1].content == b'{"query":"x"}') == (method == "POST")


def test_a_redirect_loop_stops_with_one_line() -> None:
    transport = httpx.MockTransport(
        lambda r: httpx.Response(302, headers={"Location": "/again"}))
    with pytest.raises(FetchError, match="more than 5 redirects"), \
            client_for(transport) as client:
        request(client, HttpSettings(), "demo", "GET", "https://example.test/")


@pytest.mark.parametrize("location", ["file:///etc/passwd", "ftp://example.test/x"])
def test_a_redirect_off_http_is_not_followed(location: str) -> None:
    transport = httpx.MockTransport(
        lambda r: httpx.Response(302, headers={"Location": location}))
    with pytest.raises(FetchError, match="not followed"), client_for(transport) as client:
        request(client, HttpSettings(), "demo", "GET", "https://example.test/")


def test_a_redirect_carrying_the_key_is_not_followed_and_not_shown() -> None:
    seen: list[httpx.Request] = []
    transport = _redirecting(302, f"https://evil.test/?k={KEY}", seen)
    with pytest.raises(FetchError) as caught, client_for(transport) as client:
        request(client, HttpSettings(secrets={"DEMO_KEY": KEY}), "demo", "GET",
                "https://example.test/start", headers={"X-Goog-Api-Key": KEY})
    assert len(seen) == 1 and KEY not in str(caught.value)


def test_a_body_echoing_the_key_comes_back_redacted() -> None:
    body = f'{{"error": "bad key {KEY}", "again": "{KEY}"}}'.encode()
    transport = httpx.MockTransport(lambda r: httpx.Response(200, content=body))
    with client_for(transport) as client:
        raw = request(client, HttpSettings(secrets={"DEMO_KEY": KEY}), "demo", "GET",
                      "https://example.test/")
    assert KEY.encode() not in raw.body
    assert raw.body == b'{"error": "bad key [DEMO_KEY redacted]", "again": "[DEMO_KEY redacted]"}'


def test_zero_attempts_is_a_value_error_not_unreachable() -> None:
    from scrapers.http import with_retries

    with pytest.raises(ValueError, match="at least 1"):
        with_retries(lambda: 1, attempts=0)
