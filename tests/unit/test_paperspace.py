"""Paperspace pricing page (`paperspace`).

No raw copy of paperspace.com/pricing exists (PAGES.md §3), so the example page is built from
documented facts, and its HTML layout (a plain table with header words) is our assumption;
the parser therefore keys on header words, not CSS classes. Facts encoded in the example:
- machine names, GPU counts, vCPUs, RAM and hourly prices of H100 ($5.95), H100x8 ($47.60),
  A100-80G ($3.18), A100-80Gx8 ($25.44), A4000 ($0.76), A4000x2 ($1.52), V100 ($2.29),
  V100-32G ($2.30), P4000 ($0.51), GPU+ (M4000, $0.45): SkyPilot's Paperspace catalog rows of
  2026-03-21 in ../shared/captures/opencomputeprices/ocp_skypilot_subset_2026-03-21.csv
  (H100 $5.95 also in OpenComputePrices' own Paperspace row of 2026-03-22);
- A100 (40 GB) $3.09, A6000 $1.89, A5000 $1.38: the seeds (../shared/seeds), older;
- RTX4000 $0.56, P5000 $0.78, RTX5000 $0.82: cloudypad docs, "Paperspace pricing as of
  September 2024" (PAGES.md §3); these rows leave vCPU and RAM blank (not documented);
- hourly machines also pay a monthly storage & access fee from $5/month for 50 GB
  (support.paperspace.com, Virtual Machine Billing Overview) -> monthly_fee_usd, not hourly.
The CPU-only C5 row is filler (its price is not a fact) that the parser must leave out.
"""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import polars as pl
import pytest

from contract import HttpSettings, ParseError, RawCapture
from schemas.observation import to_observations, validate
from scrapers import paperspace

FETCHED = datetime(2026, 3, 22, tzinfo=UTC)


def raw(body: str) -> RawCapture:
    return RawCapture(source="paperspace", url=paperspace.URL, fetched_at=FETCHED,
                      body=body.encode())


def example() -> pl.DataFrame:
    return paperspace.SOURCE.parse(paperspace.SOURCE.example_capture(FETCHED))


def test_example_one_hourly_row_per_gpu_machine() -> None:
    rows = example()
    assert rows.height == 16  # the CPU-only C5 machine is left out
    assert set(rows["pricing"]) == {"on_demand"}
    prices = dict(zip(rows["offering"], rows["price_usd_per_hour"], strict=True))
    assert prices["H100"] == 5.95
    assert prices["H100x8"] == 47.60
    assert prices["A100-80G"] == 3.18
    assert prices["A100"] == 3.09
    assert prices["P4000"] == 0.51
    assert prices["RTX5000"] == 0.82
    assert set(rows["region"]) == {"global"}


def test_monthly_fee_is_recorded_beside_the_hourly_price_not_added_to_it() -> None:
    h100 = example().filter(pl.col("offering") == "H100").row(0, named=True)
    assert h100["price_usd_per_hour"] == 5.95
    assert h100["monthly_fee_usd"] == 5.0


def test_gpu_counts_from_machine_names_but_not_from_model_numbers() -> None:
    counts = dict(zip(example()["offering"], example()["gpu_count"], strict=True))
    assert (counts["H100x8"], counts["A100-80Gx8"], counts["A4000x2"]) == (8, 8, 2)
    assert counts["RTX5000"] == counts["RTX4000"] == counts["GPU+"] == 1  # not 5000 GPUs


def test_multi_gpu_machines_take_the_count_from_name_or_gpu_cell() -> None:
    page = ("<table><tr><th>Machine</th><th>GPU</th><th>GPU memory</th><th>Hourly</th></tr>"
            "<tr><td>A100-80Gx8</td><td>NVIDIA A100</td><td>80 GB</td><td>$24.72/hr</td></tr>"
            "<tr><td>H100x8</td><td>8x NVIDIA H100</td><td>80 GB</td><td>$47.60/hr</td></tr>"
            "</table>")
    rows = paperspace.SOURCE.parse(raw(page))
    assert rows.select("offering", "gpu_name", "gpu_count", "price_usd_per_hour").rows() == [
        ("A100-80Gx8", "NVIDIA A100", 8.0, 24.72),
        ("H100x8", "NVIDIA H100", 8.0, 47.60),
    ]


def test_monthly_subscription_price_is_a_reserved_row_at_its_hourly_equivalent() -> None:
    # Layout variant with a monthly plan column (figures illustrative, not Paperspace's).
    page = ("<table><thead><tr><th>GPU</th><th>Per hour</th><th>Per month</th></tr></thead>"
            "<tbody><tr><td>A4000</td><td>$0.76</td><td>$365.00</td></tr></tbody></table>")
    rows = paperspace.SOURCE.parse(raw(page)).sort("pricing")
    assert rows.select("pricing", "price_usd_per_hour", "monthly_fee_usd").rows() == [
        ("on_demand", 0.76, None),
        ("reserved", pytest.approx(365 / 730), None),
    ]


def test_page_without_an_hourly_price_table_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="tried table, cards"):
        paperspace.SOURCE.parse(raw("<html><table><tr><th>Plan</th><th>Storage</th></tr></table>"))


def test_every_example_row_validates_and_maps_to_a_catalog_gpu() -> None:
    capture = paperspace.SOURCE.example_capture(FETCHED)
    batch = validate(to_observations(paperspace.SOURCE.parse(capture), capture, run_id="t"))
    assert batch.quarantined.height == 0, batch.quarantined.select("offering", "failed_check")
    models = dict(zip(batch.good["offering"], batch.good["gpu_model"], strict=True))
    assert models["A100"] == "A100 40GB"
    assert models["A100-80G"] == "A100 80GB"
    assert models["RTX4000"] == "Quadro RTX 4000"
    assert models["V100-32G"] == "V100 32GB"
    assert models["GPU+"] == "Quadro M4000"
    assert "unknown" not in models.values()


def test_fetch_is_a_plain_get_of_the_pricing_page() -> None:
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, content=paperspace.SOURCE.example.read_bytes())

    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        capture = paperspace.fetch(client, HttpSettings(secrets={"RUNPOD_API_KEY": "k"}))
    assert [(r.method, str(r.url)) for r in sent] == [("GET", "https://www.paperspace.com/pricing")]
    assert "authorization" not in sent[0].headers
    assert capture.url == "https://www.paperspace.com/pricing"
    assert paperspace.SOURCE.parse(capture).height == 16
