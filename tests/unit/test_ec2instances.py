"""ec2instances.info generated JSON: linux on-demand rows, GPU specs, CNY regions skipped."""

from __future__ import annotations

import httpx
import orjson
import pytest

from contract import HttpSettings, ParseError, RawCapture, now_utc
from schemas.observation import to_observations, validate
from scrapers import ec2instances


def _raw(body: bytes) -> RawCapture:
    return RawCapture(source="ec2instances", url=ec2instances.URL, fetched_at=now_utc(), body=body)


def _rows() -> dict[tuple[str, str], dict]:
    frame = ec2instances.parse(_raw(ec2instances.SOURCE.example.read_bytes()))
    return {(r["offering"], r["region"]): r for r in frame.iter_rows(named=True)}


def test_example_rows_are_linux_on_demand_in_usd_regions() -> None:
    rows = _rows()
    assert set(rows) == {("g5.xlarge", "us-east-1"), ("g5.xlarge", "eu-west-1"),
                         ("p5.48xlarge", "us-east-1"), ("g6e.12xlarge", "us-east-1"),
                         ("g7e.2xlarge", "us-east-1"), ("g4dn.xlarge", "us-east-1"),
                         ("g5g.xlarge", "us-east-1"), ("g6e.xlarge", "us-east-1")}
    assert rows[("g5.xlarge", "eu-west-1")]["price_usd_per_hour"] == 1.123  # linux, not mswin
    assert ("g4dn.xlarge", "cn-north-1") not in rows  # CNY: never stored as USD
    assert ("p5.48xlarge", "us-west-2") not in rows  # "N/A"
    assert {r["pricing"] for r in rows.values()} == {"on_demand"}


def test_unknown_types_take_gpu_specs_from_the_object() -> None:
    g7e = _rows()[("g7e.2xlarge", "us-east-1")]
    assert g7e["gpu_name"] == "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    assert g7e["gpu_count"] == 1 and g7e["gpu_memory_gb"] == 96
    # a known type follows the repo table (same description as the direct aws source)
    assert _rows()[("p5.48xlarge", "us-east-1")]["gpu_name"] == "NVIDIA H100 SXM"


def test_rows_validate_with_catalog_gpus() -> None:
    raw = _raw(ec2instances.SOURCE.example.read_bytes())
    batch = validate(to_observations(ec2instances.parse(raw), raw, "run"))
    assert batch.quarantined.height == 0
    assert "unknown" not in set(batch.good["gpu_model"])


def test_source_is_a_catalog_ranked_below_the_direct_aws_source() -> None:
    assert ec2instances.SOURCE.provider == "aws"
    assert ec2instances.SOURCE.aggregator is True
    assert ec2instances.SOURCE.kind == "catalog"


def test_wrong_shapes_are_parse_errors() -> None:
    with pytest.raises(ParseError):
        ec2instances.parse(_raw(orjson.dumps({"data": 1})))
    with pytest.raises(ParseError, match="layout"):
        ec2instances.parse(_raw(orjson.dumps([{"name": "g5.xlarge"}])))


def test_fetch_gets_the_generated_json() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, content=ec2instances.SOURCE.example.read_bytes())

    settings = HttpSettings(base_urls={"ec2instances": "http://127.0.0.1:9"})
    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        raw = ec2instances.fetch(client, settings)
    assert seen == ["http://127.0.0.1:9/instances.json"]
    assert ec2instances.parse(raw).height == 8
