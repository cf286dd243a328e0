"""The columnar Vast.ai parser gives exactly the rows of the plain row-by-row reading."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
import polars as pl
from polars.testing import assert_frame_equal

from bench.inflate import inflate_vastai
from contract import RawCapture, rows_frame
from scrapers._json import as_float
from scrapers.vastai import SOURCE, parse


def row_by_row(offers: list[dict[str, Any]]) -> pl.DataFrame:
    """The reference: one dict per row, as the parser was first written."""
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for offer in offers:
        offer_id = offer.get("id", offer.get("ask_contract_id"))
        if offer_id is None or str(offer_id) in seen:
            continue
        seen.add(str(offer_id))
        total, base = as_float(offer.get("dph_total")), as_float(offer.get("dph_base"))
        ram_mb, cpu_ram_mb = as_float(offer.get("gpu_ram")), as_float(offer.get("cpu_ram"))
        common = {
            "provider": "vastai", "offering": str(offer_id),
            "gpu_name": offer.get("gpu_name") if isinstance(offer.get("gpu_name"), str) else None,
            "gpu_count": as_float(offer.get("num_gpus")),
            "gpu_memory_gb": ram_mb / 1024 if ram_mb else None,
            "vcpus": as_float(offer.get("cpu_cores_effective")),
            "ram_gb": cpu_ram_mb / 1024 if cpu_ram_mb else None,
            "region": offer.get("geolocation") or "unknown", "billing_increment_s": 1,
            "available": bool(offer.get("rentable")) and not bool(offer.get("rented")),
        }
        rows.append({**common, "pricing": "on_demand", "price_usd_per_hour": total})
        min_bid = as_float(offer.get("min_bid"))
        if min_bid and min_bid > 0:
            disk = (total - base) if total is not None and base is not None else 0.0
            rows.append({**common, "pricing": "interruptible",
                         "price_usd_per_hour": min_bid + max(disk, 0.0)})
    return rows_frame(rows)


def _raw(body: bytes) -> RawCapture:
    return RawCapture("vastai", SOURCE.url, datetime(2026, 1, 1, tzinfo=UTC), body)


def test_same_rows_as_row_by_row_on_example_and_a_10k_scan() -> None:
    example = SOURCE.example.read_bytes()
    for body in (example, inflate_vastai(example, 10_000)):
        offers = orjson.loads(body)["offers"]
        assert_frame_equal(parse(_raw(body)), row_by_row(offers))


def test_same_rows_on_odd_values() -> None:
    offers = [
        {"id": 1, "gpu_name": "RTX 4090", "num_gpus": 2, "dph_total": 0.8, "dph_base": 0.7,
         "min_bid": 0.5, "gpu_ram": 24564, "cpu_ram": 64000, "rentable": True},
        {"id": "1", "gpu_name": "dup of 1 as a string id", "num_gpus": 1, "dph_total": 9.0},
        {"ask_contract_id": 2, "gpu_name": 7, "num_gpus": "4", "dph_total": "1.5",
         "dph_base": None, "min_bid": True, "gpu_ram": 0, "geolocation": "", "rented": True},
        {"id": None, "num_gpus": 1, "dph_total": 1.0},
        {"id": 3, "num_gpus": 1.0, "dph_total": float("nan"), "dph_base": 2.0, "min_bid": 0.3,
         "cpu_cores_effective": 8, "cpu_ram": 0, "geolocation": "Texas, US"},
        {"id": 4, "num_gpus": True, "dph_total": 2.0, "dph_base": 2.5, "min_bid": 1.0},
    ]
    body = orjson.dumps({"offers": offers}, option=orjson.OPT_SERIALIZE_NUMPY)
    assert_frame_equal(parse(_raw(body)), row_by_row(orjson.loads(body)["offers"]))
    rows = parse(_raw(body))
    assert rows["offering"].to_list() == ["1", "1", "2", "3", "3", "4", "4"]
    # the interruptible row adds the disk share (total - base), never a negative one
    assert rows.filter(pl.col("offering") == "4")["price_usd_per_hour"].to_list() == [2.0, 1.0]


def test_empty_scan_parses_to_no_rows() -> None:
    assert parse(_raw(b'{"offers": []}')).height == 0
