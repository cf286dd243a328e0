"""Lambda page parser against the real prices of ../shared/captures/lambda-page.

That file is not the page: it is a third-party scraper's output table (becloudready/gpu-price,
generated 2026-02-11) with one row per table row of lambda.ai/pricing, per-GPU prices, no GPU
count, and six empty "On-Demand"/"Reserved" heading rows. It is not a source format (it loses
the GPU count and depends on someone else's scraper), so it is used here to run Lambda's real
names and prices through our page parser: the rows are rendered back into the page's tab/table
layout and parsed. Tab boundaries, checked by hand: the data rows come in page order, 8x (5
rows), 4x (4), 2x (4), 1x (9); vCPUs scale with the count (B200 208/104/52/26, H100 the same).
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime

import polars as pl
import pytest

from contract import RawCapture
from schemas.observation import to_observations, validate
from scrapers import lambda_page
from tests.conftest import CAPTURES, shared_file

TABS = (("8x", 5), ("4x", 4), ("2x", 4), ("1x", 9))


def _capture_rows() -> list[dict[str, str]]:
    path = shared_file("captures", "lambda-page", "scraped_lambda_ai_pricing_table_2026-02-11.csv")
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _as_page(rows: list[dict[str, str]]) -> str:
    parts = ['<h2>Instances pricing</h2><div role="tablist">']
    parts += [f'<button role="tab" id="tab-{label}">{label}</button>' for label, _ in TABS]
    parts.append("</div>")
    start = 0
    for label, size in TABS:
        parts.append(f'<div role="tabpanel" aria-labelledby="tab-{label}"><table>')
        for row in rows[start:start + size]:
            parts.append(
                f'<tr><th>{row["product"]}</th><td data-label="VRAM/GPU">{row["vram_gb"]} GB</td>'
                f'<td data-label="vCPUs">{row["vcpus"]}</td>'
                f'<td data-label="PRICE/GPU/HR">${row["price_per_hour_usd"]}</td></tr>')
        parts.append("</table></div>")
        start += size
    return "".join(parts)


@pytest.fixture(scope="module")
def parsed() -> tuple[list[dict[str, str]], pl.DataFrame]:
    all_rows = _capture_rows()
    data_rows = [r for r in all_rows if r["price_per_hour_usd"]]
    assert (len(all_rows), len(data_rows)) == (28, 22)
    raw = RawCapture(source="lambda-page", url=lambda_page.URL,
                     fetched_at=datetime(2026, 2, 11, 7, 11, tzinfo=UTC),
                     body=_as_page(data_rows).encode())
    return data_rows, to_observations(lambda_page.SOURCE.parse(raw), raw, run_id="conformance")


def test_every_priced_row_of_the_capture_becomes_one_observation(parsed) -> None:  # type: ignore[no-untyped-def]
    data_rows, obs = parsed
    assert obs.height == 22
    assert obs["offering"].n_unique() == 22
    # Per-GPU price x tab count, row by row in page order.
    counts = [int(label[:-1]) for label, size in TABS for _ in range(size)]
    expected = [round(float(r["price_per_hour_usd"]) * n, 6)
                for r, n in zip(data_rows, counts, strict=True)]
    assert obs["price_usd_per_hour"].to_list() == pytest.approx(expected)


def test_known_prices_checked_by_hand(parsed) -> None:  # type: ignore[no-untyped-def]
    _, obs = parsed
    by_offering = dict(zip(obs["offering"], obs["price_usd_per_gpu_hour"], strict=True))
    assert by_offering["gpu_8x_b200_sxm6"] == pytest.approx(4.99)
    assert by_offering["gpu_1x_b200_sxm6"] == pytest.approx(5.29)
    assert by_offering["gpu_8x_h100_sxm5"] == pytest.approx(2.99)
    assert by_offering["gpu_1x_h100_sxm5"] == pytest.approx(3.29)
    assert by_offering["gpu_1x_h100_pcie"] == pytest.approx(2.49)
    assert by_offering["gpu_8x_a100_80gb_sxm4"] == pytest.approx(1.79)
    assert by_offering["gpu_8x_a100"] == pytest.approx(1.29)  # 8x A100 SXM 40 GB
    assert by_offering["gpu_8x_v100"] == pytest.approx(0.55)
    assert by_offering["gpu_1x_gh200"] == pytest.approx(1.99)
    assert by_offering["gpu_1x_rtx6000"] == pytest.approx(0.50)


def test_every_gpu_maps_to_the_catalog_and_every_row_validates(parsed) -> None:  # type: ignore[no-untyped-def]
    _, obs = parsed
    assert dict(zip(obs["gpu_name"], obs["gpu_model"], strict=True)) == {
        "NVIDIA B200 SXM6": "B200",
        "NVIDIA H100 SXM": "H100 SXM",
        "NVIDIA H100 PCIe": "H100 PCIe",
        "NVIDIA A100 SXM": "A100 40GB",  # last seen with 40 GB; the 80 GB row is checked below
        "NVIDIA A100 PCIe": "A100 40GB",
        "NVIDIA Tesla V100": "V100 16GB",
        "NVIDIA A6000": "RTX A6000",
        "NVIDIA GH200": "GH200",
        "NVIDIA A10": "A10",
        "NVIDIA Quadro RTX 6000": "Quadro RTX 6000",
    }
    a100_80 = obs.filter(pl.col("offering") == "gpu_8x_a100_80gb_sxm4")
    assert a100_80["gpu_model"].item() == "A100 80GB"
    batch = validate(obs)
    assert batch.quarantined.height == 0, batch.quarantined.select("offering", "failed_check")


def test_the_capture_itself_is_not_accepted_as_a_page() -> None:
    path = shared_file("captures", "lambda-page", "scraped_lambda_ai_pricing_table_2026-02-11.csv")
    raw = RawCapture(source="lambda-page", url=lambda_page.URL,
                     fetched_at=datetime(2026, 2, 11, tzinfo=UTC), body=path.read_bytes())
    from contract import ParseError

    with pytest.raises(ParseError, match="third-party scraper's CSV"):
        lambda_page.SOURCE.parse(raw)


# --- the real 2024 page (HubSpot table, per GPU-hour) -----------------------------------------

WAYBACK_2024 = "lambda-page_wayback-20241103180910_lambdalabs.com-service-gpu-cloud_excerpt.html"


def _real(name: str) -> tuple[pl.DataFrame, str]:
    path = shared_file("captures", "lambda-page", name)
    raw = RawCapture(source="lambda-page", url=lambda_page.URL, body=path.read_bytes(),
                     fetched_at=datetime(2024, 11, 3, 18, 9, tzinfo=UTC))
    report = lambda_page.SOURCE.parse_report(raw)
    frame, strategy = report.frame, report.strategy
    return to_observations(frame, raw, run_id="conformance"), strategy


def test_wayback_2024_hubspot_table_per_gpu_hour() -> None:
    """Read by hand from the file: 18 rows, 17 "On-demand Nx ..." priced "$x / GPU / hr" and one
    "Reserved 8x NVIDIA H100 SXM" with CONTACT SALES (no price, no row). The excerpt starts
    inside the header row, so only the cells' own words ("/ GPU / hr") say per GPU."""
    obs, strategy = _real(WAYBACK_2024)
    assert strategy == "table/rows"
    assert obs.height == 17 and obs["offering"].n_unique() == 17
    assert set(obs["pricing"]) == {"on_demand"}
    rows = {r["offering"]: r for r in obs.iter_rows(named=True)}
    checked = {  # offering: (GPU model, count, $/GPU-hour on the page, vCPUs, RAM GiB)
        "gpu_8x_h100_sxm5": ("H100 SXM", 8, 2.99, 208, 1800),
        "gpu_4x_h100_sxm5": ("H100 SXM", 4, 3.09, 104, 900),
        "gpu_1x_h100_sxm5": ("H100 SXM", 1, 3.29, 26, 225),
        "gpu_1x_h100_pcie": ("H100 PCIe", 1, 2.49, 26, 225),
        "gpu_8x_a100_80gb_sxm4": ("A100 80GB", 8, 1.79, 240, 1800),
        "gpu_8x_a100": ("A100 40GB", 8, 1.29, 124, 1800),  # 8x A100 SXM, 40 GB
        "gpu_4x_a100": ("A100 40GB", 4, 1.29, 120, 900),  # 4x A100 PCIe
        "gpu_1x_a10": ("A10", 1, 0.75, 30, 226),
        "gpu_2x_a6000": ("RTX A6000", 2, 0.80, 28, 200),
        "gpu_8x_v100": ("V100 16GB", 8, 0.55, 88, 448),
        "gpu_1x_rtx6000": ("Quadro RTX 6000", 1, 0.50, 14, 46),
    }
    for offering, (model, count, per_gpu, vcpus, ram) in checked.items():
        row = rows[offering]
        assert (row["gpu_model"], row["gpu_count"], row["vcpus"], row["ram_gb"]) == (
            model, count, vcpus, ram), offering
        assert row["price_usd_per_gpu_hour"] == pytest.approx(per_gpu), offering
        assert row["price_usd_per_hour"] == pytest.approx(per_gpu * count), offering
    assert rows["gpu_8x_h100_sxm5"]["price_usd_per_hour"] == pytest.approx(23.92)
    assert validate(obs).quarantined.height == 0


@pytest.mark.parametrize("path", sorted((CAPTURES / "lambda-page").glob("*.html")) or
                         [CAPTURES / "lambda-page" / "missing.html"], ids=lambda p: p.name)
def test_every_real_lambda_page_parses_to_known_valid_rows(path) -> None:  # type: ignore[no-untyped-def]
    obs, _ = _real(path.name)
    assert obs.height > 0 and "unknown" not in obs["gpu_model"].to_list()
    assert validate(obs).quarantined.height == 0
    # The same offerings as the Lambda API: gpu_<n>x_<stem> (or a reserved term appended).
    assert all(o.startswith(("gpu_", "reserved_")) for o in obs["offering"])
