"""scrapers.http.request: clear errors, the size cap, the wall-clock budget, Retry-After."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from scrapers.base import FetchError, HttpSettings
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
