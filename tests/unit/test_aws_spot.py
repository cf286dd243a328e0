"""AWS spot feed (spot.js): JSONP unwrapping, legacy region names, N/A prices, Linux only.

The fixture encodes the documented shape (SOURCES.md §5): callback({...}) with
config.regions[].instanceTypes[].sizes[].valueColumns[{name, prices: {USD}}].
"""

from __future__ import annotations

import httpx
import orjson
import pytest

from contract import HttpSettings, ParseError, RawCapture, now_utc
from schemas.observation import to_observations, validate
from scrapers import aws_spot


def _raw(body: bytes) -> RawCapture:
    return RawCapture(source="aws-spot", url=aws_spot.URL, fetched_at=now_utc(), body=body)


def _example() -> RawCapture:
    return _raw(aws_spot.SOURCE.example.read_bytes())


def test_example_gives_linux_spot_rows_for_gpu_types_only() -> None:
    frame = aws_spot.parse(_example())
    prices = {(r["offering"], r["region"]): r["price_usd_per_hour"]
              for r in frame.iter_rows(named=True)}
    assert frame.height == 9
    assert prices[("g5.xlarge", "us-east-1")] == 0.4378  # linux, not mswin 0.6218
    assert prices[("g5.xlarge", "ap-northeast-1")] == 0.5163  # "apac-tokyo"
    assert ("p4d.24xlarge", "us-east-1") not in prices  # "N/A*"
    assert ("p5.48xlarge", "us-west-2") not in prices
    assert ("m5.large", "us-east-1") not in prices
    assert set(frame["pricing"]) == {"spot"}


def test_rows_validate_against_the_catalog() -> None:
    raw = _example()
    batch = validate(to_observations(aws_spot.parse(raw), raw, "run"))
    assert batch.quarantined.height == 0
    assert "unknown" not in set(batch.good["gpu_model"])


def test_plain_json_is_accepted_and_other_shapes_are_rejected() -> None:
    body = aws_spot.SOURCE.example.read_bytes()
    inner = body[body.index(b"(") + 1:body.rindex(b")")]
    assert aws_spot.parse(_raw(inner)).height == 9
    with pytest.raises(ParseError, match="regions"):
        aws_spot.parse(_raw(orjson.dumps({"config": {}})))
    with pytest.raises(ParseError):
        aws_spot.parse(_raw(b"<html>NoSuchKey</html>"))


def test_fetch_gets_spot_js_from_the_configured_base() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=aws_spot.SOURCE.example.read_bytes())

    settings = HttpSettings(base_urls={"aws-spot": "http://127.0.0.1:9"})
    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        raw = aws_spot.fetch(client, settings)
    assert [(r.method, str(r.url)) for r in seen] == [("GET", "http://127.0.0.1:9/spot.js")]
    assert aws_spot.parse(raw).height == 9
