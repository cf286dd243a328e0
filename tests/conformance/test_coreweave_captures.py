"""CoreWeave page parser against the real prices in ../shared/captures/coreweave.

scraped_coreweave_pricing_table_2026-02-11.csv is a third-party scraper's output table for
coreweave.com/pricing (becloudready/gpu-price), not the page: 8 GPU instances with count, VRAM,
vCPUs, RAM, storage and the instance price ("$68.80"). It is not a source format; its rows are
rendered back into the page's Webflow layout (PAGES.md §7, header grid + rows) and parsed, so
CoreWeave's real names and prices run through our parser. Checked by hand: all prices are per
instance; the GB200 NVL72 row has no GPU count (filled in as 4, see scrapers/coreweave.py).
The real 2026 page (REAL_PAGES.md) is parsed directly: 34 prices in two regional grids.
The OpenComputePrices sample (ocp_coreweave.csv, 2026-03-23) quotes the same instance prices
for the four instances it has, which cross-checks the figures.
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime

import polars as pl
import pytest

from contract import ParseError, RawCapture
from schemas.observation import to_observations, validate
from scrapers import coreweave
from tests.conftest import shared_file


def _read(*parts: str) -> list[dict[str, str]]:
    with shared_file(*parts).open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def obs() -> pl.DataFrame:
    rows = _read("captures", "coreweave", "scraped_coreweave_pricing_table_2026-02-11.csv")
    assert len(rows) == 8
    headers = ("GPU Model", "GPU Count", "VRAM (GB)", "vCPUs", "System RAM (GB)",
               "Local Storage (TB)", "Instance Price")
    html = '<div><div class="table-header-v2"><div class="table-grid">' + "".join(
        f'<div class="table-header-cell">{h}</div>' for h in headers) + "</div></div>" + "".join(
        '<div class="table-row-v2 w-dyn-item kubernetes-gpu-pricing"><div class="table-grid">'
        f'<h3 class="table-model-name">{r["product"]}</h3>'
        + "".join(f'<div class="table-v2-cell">{r[k]}</div>' for k in (
            "gpu_count", "vram_gb", "vcpus", "system_ram_gb", "local_storage_tb", "raw_price"))
        + "</div></div>" for r in rows) + "</div>"
    raw = RawCapture(source="coreweave", url=coreweave.URL,
                     fetched_at=datetime(2026, 2, 11, tzinfo=UTC), body=html.encode())
    return to_observations(coreweave.SOURCE.parse(raw), raw, run_id="conformance")


def test_all_eight_instances_parse_with_their_instance_prices(obs: pl.DataFrame) -> None:
    assert obs.height == 8
    prices = dict(zip(obs["offering"], obs["price_usd_per_hour"], strict=True))
    assert prices == {
        "NVIDIA GB200 NVL72": 42.0, "NVIDIA B200": 68.8,
        "NVIDIA RTX PRO 6000 Blackwell Server Edition": 20.0, "NVIDIA HGX H200": 50.44,
        "NVIDIA GH200": 6.5, "NVIDIA L40": 10.0, "NVIDIA L40S": 18.0, "NVIDIA A100": 21.6}
    per_gpu = dict(zip(obs["offering"], obs["price_usd_per_gpu_hour"], strict=True))
    assert per_gpu["NVIDIA B200"] == pytest.approx(8.60)
    assert per_gpu["NVIDIA HGX H200"] == pytest.approx(6.305)
    assert per_gpu["NVIDIA GB200 NVL72"] == pytest.approx(10.50)  # 4 GPUs (assumed count)


def test_gpus_map_to_the_catalog_and_rows_validate(obs: pl.DataFrame) -> None:
    models = dict(zip(obs["offering"], obs["gpu_model"], strict=True))
    assert models == {
        "NVIDIA GB200 NVL72": "GB200", "NVIDIA B200": "B200",
        "NVIDIA RTX PRO 6000 Blackwell Server Edition": "RTX PRO 6000",
        "NVIDIA HGX H200": "H200 SXM", "NVIDIA GH200": "GH200", "NVIDIA L40": "L40",
        "NVIDIA L40S": "L40S", "NVIDIA A100": "A100 80GB"}
    assert validate(obs).quarantined.height == 0


def test_opencomputeprices_quotes_the_same_instance_prices(obs: pl.DataFrame) -> None:
    ocp = _read("captures", "opencomputeprices", "ocp_coreweave.csv")
    ours = {o.removeprefix("NVIDIA "): p
            for o, p in zip(obs["offering"], obs["price_usd_per_hour"], strict=True)}
    theirs = {r["instance_type"]: float(r["price_per_hour"]) for r in ocp}
    assert theirs == {"GB200 NVL72": 42.0, "L40": 10.0, "L40S": 18.0, "A100": 21.6}
    assert {name: ours[name] for name in theirs} == theirs


def test_the_scraped_table_itself_is_refused_with_a_clear_reason() -> None:
    path = shared_file("captures", "coreweave", "scraped_coreweave_pricing_table_2026-02-11.csv")
    raw = RawCapture(source="coreweave", url=coreweave.URL,
                     fetched_at=datetime(2026, 2, 11, tzinfo=UTC), body=path.read_bytes())
    with pytest.raises(ParseError, match="third-party scraper's CSV"):
        coreweave.SOURCE.parse(raw)


# ---- the real 2026 page (REAL_PAGES.md): two regional grids -------------------------------

PAGE_2026 = "coreweave_pricing_2026-06-or-later_gpu-section-excerpt_chars40287-95097.html"


@pytest.fixture(scope="module")
def page_2026() -> tuple[pl.DataFrame, dict[str, int]]:
    path = shared_file("captures", "coreweave", PAGE_2026)
    raw = RawCapture(source="coreweave", url=coreweave.URL,
                     fetched_at=datetime(2026, 6, 12, tzinfo=UTC), body=path.read_bytes())
    report = coreweave.SOURCE.parse_report(raw)
    frame, skipped = report.frame, report.skips
    assert report.strategy == "table"
    return to_observations(frame, raw, run_id="conformance"), dict(skipped)


def test_2026_page_has_34_prices_by_region_and_kind(
        page_2026: tuple[pl.DataFrame, dict[str, int]]) -> None:
    obs, skipped = page_2026
    counts = obs.group_by("region", "pricing").len().sort("region", "pricing").rows()
    # Checked by hand: NA 9 on-demand + 9 spot + 9 inference (single GPU), Europe 9
    # on-demand + 7 spot.
    assert counts == [("europe", "on_demand", 9), ("europe", "spot", 7),
                      ("north-america", "inference", 9), ("north-america", "on_demand", 9),
                      ("north-america", "spot", 9)]
    assert skipped.get(coreweave.INFERENCE_SKIP, 0) == 0
    assert validate(obs).quarantined.height == 0


def test_2026_page_prices_checked_by_hand(page_2026: tuple[pl.DataFrame, dict[str, int]]) -> None:
    obs, _ = page_2026
    got = {(o, r, p): (c, v, g) for o, r, p, c, v, g in obs.select(
        "offering", "region", "pricing", "gpu_count", "price_usd_per_hour",
        "price_usd_per_gpu_hour").iter_rows()}
    gb200 = got[("NVIDIA GB200 NVL72", "north-america", "on_demand")]
    assert gb200[:2] == (4.0, 42.00) and gb200[2] == pytest.approx(10.50)  # "4^1", $42.00
    assert got[("NVIDIA A100", "north-america", "on_demand")][:2] == (8.0, 21.60)
    assert got[("NVIDIA HGX H100", "north-america", "spot")][:2] == (8.0, 19.71)
    assert got[("NVIDIA HGX H100", "europe", "spot")][:2] == (8.0, 19.51)
    assert got[("NVIDIA HGX B300", "europe", "spot")][:2] == (8.0, 36.70)
    assert got[("NVIDIA L40S", "north-america", "spot")][:2] == (8.0, 7.88)
    # Contact-sales and N/A cells are not prices.
    assert ("NVIDIA HGX B300", "north-america", "on_demand") not in got
    assert ("NVIDIA L40", "europe", "spot") not in got
    assert not any(o.startswith("NVIDIA GB300") for o, _, _ in got)


def test_2026_page_gpus_map_to_the_catalog(page_2026: tuple[pl.DataFrame, dict[str, int]]) -> None:
    obs, _ = page_2026
    models = dict(zip(obs["offering"], obs["gpu_model"], strict=False))
    models = {o: m for o, m in models.items() if "(inference" not in o}
    assert models == {
        "NVIDIA GB200 NVL72": "GB200", "NVIDIA HGX B300": "B300", "NVIDIA HGX B200": "B200",
        "NVIDIA RTX PRO 6000 Blackwell Server Edition (High Memory)": "RTX PRO 6000",
        "NVIDIA RTX PRO 6000 Blackwell Server Edition (Standard Memory)": "RTX PRO 6000",
        "NVIDIA GH200": "GH200", "NVIDIA HGX H100": "H100 SXM", "NVIDIA L40": "L40",
        "NVIDIA HGX H200": "H200 SXM", "NVIDIA L40S": "L40S", "NVIDIA A100": "A100 80GB"}
